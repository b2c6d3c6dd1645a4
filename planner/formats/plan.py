"""Plan summaries: moves against the lower bound, rack safety, per-broker before→after table, throttles; which
files of an --output-dir belong to an earlier plan."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Mapping, Sequence

from planner.formats.runbook import DAY, duration
from planner.formats.tables import bar
from planner.model import PlannerError, human_bytes
from planner.rebalance.moves import Plan


def _spread(values: Sequence[int]) -> int:
    return max(values) - min(values) if values else 0


def _duration(seconds: float) -> str:
    return duration(seconds)


def _names(items, limit: int = 10) -> str:
    items = [str(x) for x in items]
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


_GOAL_WORDS = {
    "hard": "hard constraints",
    "empty-source": "emptying the source broker",
    "replication-factor": "the new replication factor on every partition",
    "replica-count": "replica counts",
    "topic-spread": "topic spread",
    "preferred-leaders": "preferred leaders",
    "bytes": "bytes",
}


_PLACED = "racks or replica placement constrain the moves"
# where some partitions never move (excluded topics, reassignments in progress), they may be what keeps a goal out
# of reach: the words name them beside racks and placement rather than blame racks alone
_PLACED_OR_FIXED = "racks, replica placement or the partitions that never move (see the notes) constrain the moves"


def _why(n, placement: str) -> str:
    return "--max-moves was reached" if n.kind == "unmet-capped" else placement


def _ratio(v: float) -> str:
    """A max/mean limit (1 + the byte tolerance) with the decimals it has, at least 2: --byte-tolerance 0.5 is
    1.005, not 1.00 (the limit of --byte-tolerance 0)."""
    for digits in range(2, 7):
        if abs(round(v, digits) - v) < 1e-12:
            return f"{v:.{digits}f}"
    return f"{v:.6f}"


def _word_counts(n, fixed: bool = False) -> str | None:
    if n.kind.startswith("unmet"):
        where = f" in rack {n.topics[0]}" if n.topics else ""
        why = _PLACED_OR_FIXED if fixed else _PLACED
        if len(n.values) > 2 and n.values[2]:
            why = "racks of different sizes allow no narrower range: no rack-safe plan reaches one"
        return f"replica counts{where} could not be brought within 1 ({n.values[0]}..{n.values[1]}): " + _why(n, why)
    sizes = ", ".join(f"{r}: {k}" for r, k in zip(n.topics, n.values[2:]))
    return (
        f"every partition keeps one replica per rack and racks differ in size ({sizes} brokers), so counts are "
        f"balanced within each rack ({n.values[0]}..{n.values[1]} overall)"
    )


def _word_topics(n, fixed: bool = False) -> str | None:
    if n.kind == "other-topics":
        return (
            f"{n.count} other topic(s) keep a replica spread above 1 per broker ({_names(n.topics)}): a "
            "replication-factor change moves only the topic it changes; `kafka-planner reassign rebalance` spreads them"
        )
    if n.kind.startswith("unmet"):
        return f"{n.count} topic(s) keep a replica spread above 1 per broker ({_names(n.topics)}): " + _why(
            n, _PLACED_OR_FIXED if fixed else _PLACED
        )
    if n.kind == "count-forced":  # each topic's spread over all brokers (`topic_keep.count_forced`)
        return (
            f"{n.count} topic(s) spread more than 1 over all brokers (up to {int(max(n.values))}) because racks "
            "differ in size and the replica counts leave no room: no rack-safe plan that keeps every broker's replica "
            "count in the range the replica-count goal reached and every other topic within 1 where it is balanced "
            f"keeps any one of them within 1 too ({_names(n.topics)})"
        )
    if n.values:  # each topic's lower bound (`geometry.forced_topics`)
        low, high = int(min(n.values)), int(max(n.values))
        return (
            f"{n.count} topic(s) spread more than 1 over all brokers because racks differ in size: no rack-safe plan "
            "that keeps every broker's replica count in the range the replica-count goal reached spreads them less "
            f"than {low if low == high else f'{low} to {high}'} (each topic's lower bound); each is within 1 inside "
            f"every rack that forces it and over the other racks together ({_names(n.topics)})"
        )
    return (
        f"{n.count} topic(s) spread more than 1 over all brokers because every partition keeps one replica per "
        f"rack and racks differ in size; each is within 1 inside every rack ({_names(n.topics)})"
    )


def _word_leaders(n, fixed: bool = False) -> str | None:
    if n.kind == "unmet":
        return (
            f"preferred-leader counts could not be brought within 1 ({n.values[0]}..{n.values[1]}): replica "
            "placement or ISR membership limits which broker can lead"
            + (" (and the partitions that never move, see the notes, keep their leaders)" if fixed else "")
        )
    if n.kind == "topics-unmet":
        return (
            f"{n.count} topic(s) keep a preferred-leader spread above 1 (up to {n.values[0]}): "
            f"{_names(n.topics)}; replica placement, ISR membership or every broker's leader balance limits which "
            "broker can lead"
        )
    if n.kind == "topics-placed":
        return (
            f"{n.count} topic(s) keep a preferred-leader spread above 1 (up to {n.values[0]}) because of where their "
            "replicas are: no choice of leaders among each partition's replicas (in its ISR) brings them within 1, "
            f"reordering replica lists changes nothing there ({_names(n.topics)})"
        )
    return (
        f"internal topic(s) {_names(n.topics)} keep a preferred-leader spread of {n.values[0]}: they decide "
        "which broker coordinates which consumer group or transaction"
    )


def _word_bytes(n, fixed: bool = False) -> str | None:
    if n.kind == "unknown-sizes":
        return (
            f"{n.count} topic(s) have no known size ({_names(n.topics)}): counted as unknown, not 0 B, and never "
            "moved to balance bytes"
        )
    if n.kind == "giants":
        return (
            f"{n.count} partition(s) have replicas larger than the byte limit ({_ratio(n.values[0])} × the mean) "
            f"({_names(n.partitions)}): no broker holding one can be within it, so those replicas stay where they "
            "are and their brokers are held to the limit beside them"
        )
    if n.kind.startswith("unmet-floor"):
        return (
            f"bytes per broker could not be brought within the tolerance: the smallest broker holds "
            f"{n.values[0]:.3f} × the mean, against {_ratio(n.values[1])}"
            + (" (--max-moves was reached)" if n.kind == "unmet-floor-capped" else "")
        )
    return (
        f"bytes per broker could not be brought within the tolerance: the largest broker holds "
        f"{n.values[0]:.3f} × the mean, against {_ratio(n.values[1])}"
        + (" (--max-moves was reached)" if n.kind == "unmet-capped" else "")
    )


def _word_hard(n, fixed: bool = False) -> str | None:
    if n.kind == "rack-repaired":
        return (
            f"{n.count} rack-unsafe partition(s) repaired with {int(n.values[0])} move(s) (a replica sharing its "
            "rack with another replica of the partition goes to a rack the partition does not use); the lower "
            "bound includes them; --no-rack-repair leaves unsafe partitions as they are"
        )
    if n.kind == "unrepaired":
        return (
            f"{n.count} rack-unsafe partition(s) could not be repaired ({_names(n.partitions)}): every broker of the "
            "racks they lack has all its log dirs cordoned or too few usable bytes for the copy"
        )
    if n.kind == "in-progress":
        return (
            f"{n.count} partition(s) have a reassignment in progress and were left as they are "
            f"({_names(n.partitions)}); Kafka needs --additional to execute this plan while they run"
        )
    if n.kind == "rackless":
        return (
            f"broker(s) {_ids(n.values)} have no rack while the others have one: the plan ignores racks (it neither "
            "keeps nor counts rack safety); give every broker its broker.rack (Kafka's --generate refuses such "
            "brokers unless --disable-rack-aware)"
        )
    if n.kind == "cordoned":
        return (
            f"broker(s) {','.join(str(int(b)) for b in n.values)} have every log dir cordoned (cordoned.log.dirs, "
            "KIP-1066): they keep their replicas or give some up, and take none"
        )
    if n.kind == "disk-space":
        full = [f"{int(b)} ({human_bytes(int(u))} usable)" for b, u in zip(n.values[: n.count], n.values[n.count :])]
        return (
            f"broker(s) {', '.join(full)} would have taken more copies but their log dirs have no usable space left "
            "for them (DescribeLogDirs): no plan copies more bytes onto a broker than it reports usable"
        )
    if n.kind == "excluded":
        return f"{n.count} topic(s) excluded: never moved, still counted as load ({_names(n.topics)})"
    if n.kind == "offline":
        return (
            f"{n.count} partition(s) keep a replica on a broker that is not online and were left as they are "
            f"({_names(n.partitions)}): Kafka's --execute refuses a replica list naming one (Unknown broker id)"
        )
    if n.kind == "becomes-unsafe":
        each = [f"{tp} (broker {int(b)} is in rack {r})" for tp, b, r in zip(n.partitions, n.values, n.names)]
        return f"{n.count} partition(s) become rack-unsafe: {_names(each)}"
    if n.kind == "fewer-racks":
        each = [f"{tp} {int(n.values[2 * i])} -> {int(n.values[2 * i + 1])}" for i, tp in enumerate(n.partitions[:10])]
        more = " ..." if n.count > 10 else ""
        return (
            f"{n.count} partition(s) span fewer racks than their new replication factor allows (replicas out of the "
            "ISR or offline went first), so a rack failure can take more than one of their replicas: "
            f"{', '.join(each)}{more}"
        )
    if n.kind == "excluded-kept":
        return f"{n.count} partition(s) of excluded topics keep their replica on broker {int(n.values[0])}"
    if n.kind == "cap-left":
        return f"the move cap left {n.count} partition(s) on broker {int(n.values[0])}: it is not empty yet"
    if n.kind == "stranded":
        return (
            f"{n.count} excluded or in-progress partition(s) keep replicas on brokers outside the target set "
            f"({_names(n.partitions)})"
        )
    return (
        f"{n.count} moved partition(s) have no leader now ({_names(n.partitions)}): their new replicas cannot "
        "copy data, so those reassignments will not complete until a replica comes back"
    )


def _word_rf(n, fixed: bool = False) -> str | None:
    if n.kind == "dead-replaced":
        return (
            f"{n.count} partition(s) kept a replica on broker(s) {_ids(n.values)}, which are not online: each was "
            f"replaced by a live broker along with the new replication factor ({_names(n.partitions)})"
        )
    if n.kind == "rack-unsafe":
        k = int(n.values[0])
        closed, full = n.values[1 : 1 + k], n.values[1 + k :]
        why = ([f"{_ids(closed)} have every log dir cordoned (cordoned.log.dirs, KIP-1066)"] if closed else []) + (
            [f"{_ids(full)} report too few usable bytes for the copy (DescribeLogDirs)"] if full else []
        )
        return (
            f"{n.count} partition(s) are rack-unsafe at the new replication factor ({_names(n.partitions)}): no "
            f"broker of rack(s) {', '.join(n.topics)}, which they lack, can take a replica: broker(s) "
            + "; broker(s) ".join(why)
        )
    return (
        f"--max-moves left {n.count} partition(s) at their replication factor ({_names(n.partitions)}): planning "
        f"the applied plan again with the same cap takes the next of them to {int(n.values[0])}"
    )


def _ids(values) -> str:
    return ",".join(str(int(b)) for b in values)


def word_note(n, fixed: bool = False) -> str | None:
    """A note in words (plans from elsewhere may carry plain text). `fixed`: the plan leaves some partitions where
    they are whatever the goals (excluded topics, reassignments in progress: `_fixed`)."""
    if isinstance(n, str):
        return n
    if n.goal == "max-moves":
        return "--max-moves left these goals unmet: " + ", ".join(_GOAL_WORDS.get(g, g) for g in n.topics)
    if n.goal == "time":
        return f"time limit of {n.values[0]:g} s reached in {n.names[0]}; the plan is the best found so far"
    words = {
        "replica-count": _word_counts,
        "topic-spread": _word_topics,
        "preferred-leaders": _word_leaders,
        "bytes": _word_bytes,
        "hard": _word_hard,
        "replication-factor": _word_rf,
    }[n.goal]
    return words(n, fixed)


def _fixed(notes) -> bool:
    """Whether the plan's notes say some partitions never move (excluded topics, reassignments in progress)."""
    return any(getattr(n, "goal", None) == "hard" and n.kind in ("excluded", "in-progress") for n in notes)


def _note_json(n, fixed: bool = False) -> dict:
    if isinstance(n, str):
        return {"text": n}
    return {
        "goal": n.goal,
        "kind": n.kind,
        "count": n.count,
        "partitions": [str(tp) for tp in n.partitions],
        "topics": list(n.topics),
        "values": list(n.values),
        **({"names": list(n.names)} if n.names else {}),
        "text": word_note(n, fixed),
    }


def plan_stats(plan: Plan) -> dict:
    before = plan.before
    members = list(plan.brokers) or list(before.broker_ids)
    m, t0, t1 = plan.scored
    b0 = {b: (t0.replicas[b], t0.leaders[b], t0.data[b]) for b in before.broker_ids}
    b1 = {b: (t1.replicas[b], t1.leaders[b], t1.data[b]) for b in before.broker_ids}
    stats = {
        "goal": plan.goal,
        "replica_moves": m.replica_moves,  # Plan.replica_moves, counted in the same pass as the figures
        "lower_bound": plan.lower_bound,
        "bytes_lower_bound": plan.bytes_lower_bound,
        "unknown_size_moves": m.unknown_size_moves,
        "unmet_by_max_moves": list(plan.unmet),
        "strategy": plan.strategy,  # the search's strategy that made the plan (rebalance, decommission), else None
        "metrics": {"before": m.before.__dict__, "after": m.after.__dict__},
        "partitions_touched": len(plan.proposed),
        "bytes_to_move": m.bytes_moved,  # Plan.moved_bytes()
        "leader_changes": plan.leader_changes,
        "rack_unsafe_before": m.before.rack_unsafe,
        "rack_unsafe_after": m.after.rack_unsafe,
        "brokers": [
            {
                "id": b,
                "cordoned": before.broker(b).cordoned,
                "replicas": [b0[b][0], b1[b][0]],
                "preferred_leaders": [b0[b][1], b1[b][1]],
                "bytes": [b0[b][2], b1[b][2]],
            }
            for b in before.broker_ids
        ],
        "spread": {
            "replicas": [_spread([b0[b][0] for b in members]), _spread([b1[b][0] for b in members])],
            "preferred_leaders": [_spread([b0[b][1] for b in members]), _spread([b1[b][1] for b in members])],
            "bytes": [_spread([b0[b][2] for b in members]), _spread([b1[b][2] for b in members])],
        },
        "notes": [
            _note_json(n, _fixed(plan.notes))
            for n in list(plan.notes)
            + _unknown_size_notes(plan, m.unknown_size_moves)
            + _tiered_notes(plan)
            + _state_notes(plan)
        ],
    }
    if plan.leader_bounds is not None:  # only plans that bound them (elect-leaders): the others' JSON as it was
        stats["leader_bounds"] = {"leader_spread": plan.leader_bounds[0], "topic_leader_spread": plan.leader_bounds[1]}
    return stats


_METRIC_ROWS = (
    ("replica spread", "replica_spread", None),
    ("preferred-leader spread", "leader_spread", None),
    ("largest topic replica spread", "topic_replica_spread", "topics_replica_spread_over_1"),
    ("largest topic leader spread", "topic_leader_spread", "topics_leader_spread_over_1"),
    ("internal-topic leader spread", "internal_leader_spread", None),
    ("bytes max/mean", "bytes_max_over_mean", None),
    ("bytes min/mean", "bytes_min_over_mean", None),
    ("rack-unsafe partitions", "rack_unsafe", None),
)


def _fig(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _metric_lines(s: dict) -> list[str]:
    m0, m1 = s["metrics"]["before"], s["metrics"]["after"]
    out = ["Goals (before -> after, over the target brokers):"]
    for label, key, over in _METRIC_ROWS:
        if m0[key] is None:
            continue
        line = f"  {label + ':':31} {_fig(m0[key])} -> {_fig(m1[key])}"
        bound = s.get("leader_bounds", {}).get(key)
        if over:
            line += f" ({m0[over]} -> {m1[over]} topics above 1{'' if bound is None else f'; lower bound {bound}'})"
        elif bound is not None:
            line += f" (lower bound {bound})"
        out.append(line)
    return out


def _moves_line(plan: Plan, s: dict) -> str:
    lb = s["lower_bound"]
    moves = s["replica_moves"]
    if lb is None:
        return f"Replica moves:          {moves}"
    if plan.unmet:
        gap = "--max-moves left unmet: " + ", ".join(_GOAL_WORDS.get(g, g) for g in plan.unmet)
    elif moves == lb:
        gap = "optimal"
    elif moves < lb:
        gap = "the goals are out of reach here, see the notes"
    else:
        gap = f"{moves - lb} above the bound"
    # a plan above its bound whose count goal is out of reach (below it, `gap` says so already)
    if moves > lb and any(getattr(n, "goal", None) == "replica-count" and n.kind == "unmet" for n in plan.notes):
        gap += "; the count goal is out of reach here, see the note"
    return f"Replica moves:          {moves} (lower bound {lb}: {gap})"


def _bytes_line(plan: Plan, s: dict) -> str:
    moved = s["bytes_to_move"]
    line = f"Bytes to move:          {human_bytes(moved)} ({moved} B"
    if s["bytes_lower_bound"] is not None:
        line += f"; lower bound {human_bytes(s['bytes_lower_bound'])}"
        if moved < s["bytes_lower_bound"]:  # the bound is that of a plan reaching every goal, which this one does not
            if plan.unmet:  # because of the cap, not because the goals are out of reach
                line += ": --max-moves left unmet: " + ", ".join(_GOAL_WORDS.get(g, g) for g in plan.unmet)
            else:
                line += ": the goals are out of reach here, see the notes"
    if s["unknown_size_moves"]:
        line += f"; plus {s['unknown_size_moves']} replica(s) of unknown size"
    return line + ")"


def _unknown_size_notes(plan: Plan, copies: int) -> list[str]:
    """Where sizes are known for some topics and the plan copies replicas of others (replace-broker,
    set-replication-factor, a checked file; the goals' plans name them already, `byte_balance.ByteGoal.notes`): which
    topics, so that "plus N replica(s) of unknown size" is not read as 0 B."""
    if not copies or any(getattr(n, "kind", None) == "unknown-sizes" for n in plan.notes):
        return []
    before, cur = plan.before, plan.current
    names = sorted(
        {
            tp.topic
            for tp, r in plan.proposed.items()
            if before.topic(tp.topic).partitions[tp.partition].size is None and set(r) - set(cur[tp])
        }
    )
    return [
        f"{len(names)} topic(s) copied by this plan have no known size ({_names(names)}): their {copies} copied "
        "replica(s) are counted as unknown, not 0 B, in the bytes to move"
    ]


def _state_notes(plan: Plan) -> list[str]:
    """Moved partitions that are under-replicated now (a leader, but an ISR short of the replicas): a reassignment
    completes only when every target replica is in the ISR. (Moved partitions without a leader have the goals'
    "leaderless" note instead.)"""
    from planner.leadership import partition_state
    from planner.model import NO_LEADER

    before = plan.before
    live = before.online_ids
    under = []
    topics: dict = {}
    for tp in plan.proposed:
        if tp.topic not in topics:
            t = before.topic(tp.topic)
            topics[tp.topic] = t, t.config_bool("unclean.leader.election.enable", False)
        t, unclean = topics[tp.topic]
        p = t.partitions[tp.partition]
        st = partition_state(p, live, unclean)
        if st.leader != NO_LEADER and set(p.replicas) - set(st.isr) - set(p.adding):
            under.append((tp, p.replicas, st.isr))
    out = []
    if under:
        under.sort(key=lambda x: (x[0].topic, x[0].partition))
        shown = [f"{tp} (replicas {_ids(r)}, ISR {_ids(i)})" for tp, r, i in under]
        out.append(
            f"{len(under)} moved partition(s) are under-replicated now: {_names(shown, 5)}; they stay so while "
            "their new replicas copy from the leader, and a move completes only when every replica it keeps or adds "
            "is in the ISR"
        )
    return out


def _tiered_notes(plan: Plan) -> list[str]:
    """Topics with tiered storage (KIP-405, `remote.storage.enable=true`): a reassignment copies only local bytes."""
    before = plan.before
    touched = {tp.topic for tp in plan.proposed}  # each topic once (a plan may touch a million partitions)
    names = sorted(
        name
        for name in touched
        if before.has_topic(name) and before.topic(name).config_bool("remote.storage.enable", False)
    )
    if not names:
        return []
    return [
        f"remote.storage.enable=true on {', '.join(names)}: only local log segments move (the sizes are local "
        "bytes); tiered segments stay in remote storage"
    ]


def _batch_lines(batches: int | None, figures, canary: bool) -> list[str]:
    from planner.formats.runbook import Batch, batch_words

    if batches is None or batches <= 1:
        return []
    head = f"Batches:                {batches}"
    if figures is None:
        return [head]
    if canary:
        head += " (the first a one-partition canary; --no-canary cuts them without it)"
    lines = [head]
    for i, f in enumerate(figures[:_BATCH_LINES], 1):
        lines.append(f"  batch {i}: {batch_words(Batch('', f.partitions, f.bytes, f.seconds))}")
    if len(figures) > _BATCH_LINES:
        lines.append(f"  and {len(figures) - _BATCH_LINES} more batches (RUNBOOK.md lists every one)")
    return lines


_BATCH_LINES = 20  # batches the summary lists one by one


def render_plan_text(plan: Plan, throttle=None, batches: int | None = None, figures=None, canary: bool = False) -> str:
    """The human summary (also written as plan.txt); `figures`: each batch's `BatchFigures`, when known."""
    from tabulate import tabulate

    s = plan_stats(plan)
    has_bytes = s["bytes_to_move"] is not None
    lines = [f"Plan: {plan.goal}", _moves_line(plan, s)]
    lines.append(f"Partitions touched:     {s['partitions_touched']}")
    if has_bytes:
        lines.append(_bytes_line(plan, s))
    lines.append(f"Preferred-leader changes: {s['leader_changes']}")
    lines.append(f"Rack-unsafe partitions: {s['rack_unsafe_before']} -> {s['rack_unsafe_after']}")
    lines += _batch_lines(batches, figures, canary)
    lines += _metric_lines(s)
    lines.append("")
    rows = []
    peak = max((max(x["replicas"]) for x in s["brokers"]), default=0)
    rack_of = plan.before.rack_of()
    state = {b.id: b.label for b in plan.before.brokers}
    members = set(plan.brokers) or set(plan.before.broker_ids)
    for x in s["brokers"]:
        r0, r1 = x["replicas"]
        l0, l1 = x["preferred_leaders"]
        # outside the brokers the plan places on: "leaving" when the plan empties it, "unused" when it held nothing
        # (an offline broker that keeps its replicas, as under set-replication-factor, is neither)
        label = state[x["id"]]
        if x["id"] not in members and r1 == 0:
            label += ", leaving" if r0 else ", unused"
        row = [x["id"], rack_of.get(x["id"]) or "-", label, f"{r0} -> {r1}", bar(r1, peak, 12), f"{l0} -> {l1}"]
        if has_bytes:
            row.append(f"{human_bytes(x['bytes'][0])} -> {human_bytes(x['bytes'][1])}")
        rows.append(row)
    sp = s["spread"]
    spread_row = [
        "spread",
        "",
        "(targets)",
        f"{sp['replicas'][0]} -> {sp['replicas'][1]}",
        "",
        f"{sp['preferred_leaders'][0]} -> {sp['preferred_leaders'][1]}",
    ]
    headers = ["broker", "rack", "state", "replicas", "", "preferred leaders"]
    if has_bytes:
        headers.append("bytes")
        spread_row.append(f"{human_bytes(sp['bytes'][0])} -> {human_bytes(sp['bytes'][1])}")
    lines.append(tabulate(rows + [spread_row], headers=headers, tablefmt="simple"))
    if throttle is not None:
        lines.append("")
        lines.append(
            f"Throttle: {throttle.rate} B/s on brokers {','.join(map(str, throttle.brokers))} "
            "(leader.replication.throttled.rate, follower.replication.throttled.rate)"
        )
        if throttle.seconds is not None:
            lines.append(f"Estimated time at that rate: {_duration(throttle.seconds)}")
            if throttle.seconds > DAY:
                lines.append(
                    f"warning: more than a day at {throttle.rate} B/s: check the throttle's unit "
                    "(MB = 10^6, MiB = 2^20 bytes per second)"
                )
        if throttle.leader:
            lines.append(
                f"Throttled replicas on {len(throttle.leader)} topic{'s' if len(throttle.leader) != 1 else ''} "
                "(leader/follower.replication.throttled.replicas): throttles.txt of --output-dir"
            )
    for note in s["notes"]:
        lines.append(f"note: {note['text']}")
    return "\n".join(lines) + "\n"


PLAN_FILE = re.compile(r"(current|proposed|proposed-\d{3}|leader-election)\.json|plan\.txt|throttles\.txt|RUNBOOK\.md")


def plan_folder_keep(directory: str, files: Mapping[str, str]) -> Callable[[str], bool]:
    """Check that the plan `files` may replace what `directory` holds, and say which of its entries to carry over.

    Refused: a folder whose current.json differs from this plan's (the rollback of an earlier plan, which may have
    been executed), and a folder holding sub-folders. Carried over: files that are not a plan's (notes.txt); the
    earlier plan's other files (proposed-004.json of a longer plan, say) go, so the folder never mixes two plans."""
    d = Path(directory)
    if not d.is_dir():
        return lambda name: False
    earlier = d / "current.json"
    if earlier.is_file() and earlier.read_bytes() != files.get("current.json", "").encode("utf-8"):
        raise PlannerError(
            f"--output-dir {directory} holds an earlier plan whose rollback (current.json) differs "
            "from this plan's; that plan may have been executed: move the folder away or choose "
            "another --output-dir"
        )
    sub = sorted(p.name for p in d.iterdir() if p.is_dir() and not p.is_symlink())
    if sub:
        raise PlannerError(
            f"--output-dir {directory} holds the folder {sub[0]}; give the plan a folder of its own "
            "(its files are swapped in as one set)"
        )
    return lambda name: not PLAN_FILE.fullmatch(name)


def render_plan_json(plan: Plan, throttle=None, elect=None) -> str:
    """The summary, every changed partition's current and proposed replicas, and, when given, the throttle and the
    partitions to elect (what leader-election.json lists)."""
    from planner.model import TopicPartition, tp_sort_key

    s = plan_stats(plan)
    cur, proposed = plan.current, plan.proposed
    # the lists of partitions (a million for a large plan) are rendered apart, line by line as json.dumps(indent=2)
    # renders them there (its indenting encoder is pure Python), and put in place of a marker
    names: dict[str, str] = {}
    keys: dict[str, bytes] = {}  # each topic's `tp_sort_key`, computed once

    def order(tp: TopicPartition) -> tuple[bytes, int]:
        key = keys.get(tp.topic)
        if key is None:
            key = keys[tp.topic] = tp_sort_key(tp)[0]
        return key, tp.partition

    rows = [
        _row(names, tp, f',\n      "current": {_ints(cur[tp])},\n      "proposed": {_ints(proposed[tp])}')
        for tp in sorted(proposed, key=order)
    ]
    lists = {"partitions": rows}
    s["partitions"] = _MARK + "partitions"
    if elect is not None:
        s["leader_election"] = _MARK + "leader_election"
        lists["leader_election"] = [_row(names, tp, "") for tp in sorted(elect, key=order)]
    if throttle is not None:
        s["throttle"] = {
            "rate": throttle.rate,
            "brokers": list(throttle.brokers),
            "seconds": throttle.seconds,
            "leader.replication.throttled.replicas": throttle.leader,
            "follower.replication.throttled.replicas": throttle.follower,
        }
    text = json.dumps(s, indent=2)
    for key, items in lists.items():
        head, _, tail = text.rpartition(json.dumps(_MARK + key))
        text = head + ("[\n" + ",\n".join(items) + "\n  ]" if items else "[]") + tail
    return text + "\n"


_MARK = "\0"  # starts the placeholder strings render_plan_json replaces (json.dumps writes them as "\u0000...")


def _row(names: dict[str, str], tp, rest: str) -> str:
    """One partition of a list in the plan JSON, as json.dumps(indent=2) writes it two levels deep."""
    name = names.get(tp.topic)
    if name is None:
        name = names[tp.topic] = json.dumps(tp.topic)
    return f'    {{\n      "topic": {name},\n      "partition": {tp.partition}{rest}\n    }}'


def _ints(values) -> str:
    """A list of broker ids three levels deep, as json.dumps(indent=2) writes it."""
    if not values:
        return "[]"
    return "[\n        " + ",\n        ".join(map(str, values)) + "\n      ]"


def render_failures_table(impacts, partitions: int) -> str:
    from tabulate import tabulate

    peak = max((i.leaderless for i in impacts), default=0)
    rows = [[i.label, i.leaderless, bar(i.leaderless, peak, 12), i.under_min_isr] for i in impacts]
    # the labels are text ("1,2", "rack a"): a lone broker id must not be right-aligned as a number
    return (
        tabulate(rows, headers=["failed", "leaderless", "", "under min ISR"], tablefmt="simple", disable_numparse=[0])
        + f"\n({partitions} partitions; worst first)\n"
    )


def render_throttles(throttle) -> str:
    """throttles.txt: the configs `kafka-reassign-partitions.sh --execute --throttle` sets for the whole plan (each
    batch's --execute sets those of its own partitions; --verify clears them once its batch is complete)."""
    lines = [
        f"# set by kafka-reassign-partitions.sh --execute --throttle {throttle.rate} (each batch: its partitions);",
        "# cleared by --verify once the batch is complete",
    ]
    for b in throttle.brokers:
        lines.append(f"broker {b}: leader.replication.throttled.rate={throttle.rate}")
        lines.append(f"broker {b}: follower.replication.throttled.rate={throttle.rate}")
    for topic in sorted(throttle.leader):
        lines.append(f"topic {topic}: leader.replication.throttled.replicas={throttle.leader[topic]}")
        lines.append(f"topic {topic}: follower.replication.throttled.replicas={throttle.follower[topic]}")
    return "\n".join(lines) + "\n"


def batch_file_names(count: int) -> list[str]:
    """proposed.json for one batch, proposed-001.json … for more."""
    return ["proposed.json"] if count == 1 else [f"proposed-{n:03d}.json" for n in range(1, count + 1)]


def plan_runbook(ex, figures, bootstrap: str, canary: bool):
    """The `runbook.Runbook` of an execution (`rebalance.execution.Execution`) and its `batch_figures`."""
    from planner.formats.runbook import Batch, Runbook

    names = batch_file_names(len(ex.batches))
    return Runbook(
        bootstrap=bootstrap,
        batches=tuple(Batch(n, f.partitions, f.bytes, f.seconds) for n, f in zip(names, figures)),
        rollback="current.json" if ex.plan.proposed else None,
        election="leader-election.json" if ex.elect else None,
        throttle=ex.throttle.rate if ex.throttle else None,
        canary=canary,
    )


def plan_files(ex, summary: str, runbook=None) -> dict[str, str]:
    """The files of a plan (`rebalance.execution.Execution`) for `--output-dir`: `current.json` (the rollback) and
    `proposed.json`, or one `proposed-NNN.json` per batch, when the plan changes a replica list (Kafka refuses an
    empty list: "Partition reassignment list cannot be empty"); `leader-election.json` when partitions need electing
    (the pre-2.4 tool refuses an empty list too); `plan.txt`."""
    from planner.formats.kafka_json import render_election_json, render_reassignment_json

    files = {}
    if ex.plan.proposed:
        files["current.json"] = render_reassignment_json(ex.plan.current) + "\n"
    if len(ex.batches) == 1:
        files["proposed.json"] = render_reassignment_json(ex.plan.proposed) + "\n"
    elif len(ex.batches) > 1:
        for n, batch in enumerate(ex.batches, 1):
            files[f"proposed-{n:03d}.json"] = render_reassignment_json(batch) + "\n"
    if ex.elect:
        files["leader-election.json"] = render_election_json(ex.elect) + "\n"
    files["plan.txt"] = summary
    if ex.throttle is not None and ex.throttle.leader:
        files["throttles.txt"] = render_throttles(ex.throttle)
    if runbook is not None and (ex.batches or ex.elect):
        from planner.formats.runbook import render_markdown

        files["RUNBOOK.md"] = render_markdown(runbook, ex.plan.goal)
    return files


def render_failures_json(impacts) -> str:
    """`failures --format json`: per failing set its brokers, label, leaderless and under-min-ISR partitions."""
    rows = [
        {"brokers": list(i.brokers), "label": i.label, "leaderless": i.leaderless, "under_min_isr": i.under_min_isr}
        for i in impacts
    ]
    return json.dumps(rows, indent=2) + "\n"
