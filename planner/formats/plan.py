"""Plan summaries: moves against the lower bound, rack safety, per-broker before→after table, throttles; which
files of an --output-dir belong to an earlier plan."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Mapping, Sequence

from planner.formats.tables import bar, human_bytes
from planner.model import Cluster, PlannerError
from planner.rebalance.moves import Plan, rack_count, rack_safe


def _per_broker(cluster: Cluster) -> dict[int, tuple[int, int, int]]:
    """broker → (replicas, preferred leaders, bytes)."""
    out = {b: [0, 0, 0] for b in cluster.broker_ids}
    for p in cluster.partitions():
        out[p.replicas[0]][1] += 1
        for b in p.replicas:
            out[b][0] += 1
            out[b][2] += p.size or 0
    return {b: tuple(v) for b, v in out.items()}


def _unsafe(cluster: Cluster, n_racks: int) -> int:
    rack_of = cluster.rack_of()
    return sum(1 for p in cluster.partitions() if not rack_safe(p.replicas, rack_of, n_racks))


def _spread(values: Sequence[int]) -> int:
    return max(values) - min(values) if values else 0


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s" if m else f"{s}s"


def plan_stats(plan: Plan) -> dict:
    before, after = plan.before, plan.after
    n_racks = rack_count(before, plan.brokers or None)
    b0, b1 = _per_broker(before), _per_broker(after)
    members = list(plan.brokers) or list(before.broker_ids)
    return {
        "goal": plan.goal,
        "replica_moves": plan.replica_moves,
        "lower_bound": plan.lower_bound,
        "partitions_touched": len(plan.proposed),
        "bytes_to_move": plan.moved_bytes(),
        "leader_changes": plan.leader_changes,
        "rack_unsafe_before": _unsafe(before, n_racks),
        "rack_unsafe_after": _unsafe(after, n_racks),
        "brokers": [
            {"id": b, "replicas": [b0[b][0], b1[b][0]], "preferred_leaders": [b0[b][1], b1[b][1]],
             "bytes": [b0[b][2], b1[b][2]]}
            for b in before.broker_ids
        ],
        "spread": {
            "replicas": [_spread([b0[b][0] for b in members]), _spread([b1[b][0] for b in members])],
            "preferred_leaders": [_spread([b0[b][1] for b in members]), _spread([b1[b][1] for b in members])],
            "bytes": [_spread([b0[b][2] for b in members]), _spread([b1[b][2] for b in members])],
        },
        "notes": list(plan.notes) + _tiered_notes(plan),
    }


def _tiered_notes(plan: Plan) -> list[str]:
    """Topics with tiered storage (KIP-405, `remote.storage.enable=true`): a reassignment copies only local bytes."""
    names = sorted({tp.topic for tp in plan.proposed if plan.before.has_topic(tp.topic)
                    and plan.before.topic(tp.topic).config_bool("remote.storage.enable", False)})
    if not names:
        return []
    return [f"remote.storage.enable=true on {', '.join(names)}: only local log segments move (the sizes are local "
            "bytes); tiered segments stay in remote storage"]


def render_plan_text(plan: Plan, throttle=None, batches: int | None = None) -> str:
    """The human summary (also written as plan.txt)."""
    from tabulate import tabulate

    s = plan_stats(plan)
    has_bytes = s["bytes_to_move"] is not None
    lines = [f"Plan: {plan.goal}"]
    lb = s["lower_bound"]
    moves = s["replica_moves"]
    if lb is not None:
        gap = "optimal" if moves == lb else f"{moves - lb} above the bound"
        if any(n.startswith("replica counts") for n in plan.notes):
            gap += "; the count goal is out of reach here, see the note"
        elif any("byte-balancing swaps" in n for n in plan.notes) and moves > lb:
            gap += ", byte swaps"
        lines.append(f"Replica moves:          {moves} (lower bound {lb}: {gap})")
    else:
        lines.append(f"Replica moves:          {moves}")
    lines.append(f"Partitions touched:     {s['partitions_touched']}")
    if has_bytes:
        lines.append(f"Bytes to move:          {human_bytes(s['bytes_to_move'])} ({s['bytes_to_move']} B)")
    lines.append(f"Preferred-leader changes: {s['leader_changes']}")
    lines.append(f"Rack-unsafe partitions: {s['rack_unsafe_before']} -> {s['rack_unsafe_after']}")
    if batches is not None and batches > 1:
        lines.append(f"Batches:                {batches}")
    lines.append("")
    rows = []
    peak = max((max(x["replicas"]) for x in s["brokers"]), default=0)
    rack_of = plan.before.rack_of()
    state = {b.id: b.state for b in plan.before.brokers}
    members = set(plan.brokers) or set(plan.before.broker_ids)
    for x in s["brokers"]:
        r0, r1 = x["replicas"]
        l0, l1 = x["preferred_leaders"]
        # outside the brokers the plan places on: "leaving" when the plan empties it, "unused" when it held nothing
        # (an offline broker that keeps its replicas, as under set-replication-factor, is neither)
        label = state[x["id"]]
        if x["id"] not in members and r1 == 0:
            label += ", leaving" if r0 else ", unused"
        row = [x["id"], rack_of.get(x["id"]) or "-", label,
               f"{r0} -> {r1}", bar(r1, peak, 12), f"{l0} -> {l1}"]
        if has_bytes:
            row.append(f"{human_bytes(x['bytes'][0])} -> {human_bytes(x['bytes'][1])}")
        rows.append(row)
    sp = s["spread"]
    spread_row = ["spread", "", "(targets)", f"{sp['replicas'][0]} -> {sp['replicas'][1]}", "",
                  f"{sp['preferred_leaders'][0]} -> {sp['preferred_leaders'][1]}"]
    headers = ["broker", "rack", "state", "replicas", "", "preferred leaders"]
    if has_bytes:
        headers.append("bytes")
        spread_row.append(f"{human_bytes(sp['bytes'][0])} -> {human_bytes(sp['bytes'][1])}")
    lines.append(tabulate(rows + [spread_row], headers=headers, tablefmt="simple"))
    if throttle is not None:
        lines.append("")
        lines.append(f"Throttle: {throttle.rate} B/s on brokers {','.join(map(str, throttle.brokers))} "
                     "(leader.replication.throttled.rate, follower.replication.throttled.rate)")
        if throttle.seconds is not None:
            lines.append(f"Estimated time at that rate: {_duration(throttle.seconds)}")
        for topic in sorted(throttle.leader):
            lines.append(f"  {topic}: leader.replication.throttled.replicas={throttle.leader[topic]}")
            lines.append(f"  {topic}: follower.replication.throttled.replicas={throttle.follower[topic]}")
    for note in s["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


PLAN_FILE = re.compile(r"(current|proposed|proposed-\d{3}|leader-election)\.json|plan\.txt")


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
        raise PlannerError(f"--output-dir {directory} holds an earlier plan whose rollback (current.json) differs "
                           "from this plan's; that plan may have been executed: move the folder away or choose "
                           "another --output-dir")
    sub = sorted(p.name for p in d.iterdir() if p.is_dir() and not p.is_symlink())
    if sub:
        raise PlannerError(f"--output-dir {directory} holds the folder {sub[0]}; give the plan a folder of its own "
                           "(its files are swapped in as one set)")
    return lambda name: not PLAN_FILE.fullmatch(name)


def render_plan_json(plan: Plan, throttle=None, elect=None) -> str:
    """The summary, every changed partition's current and proposed replicas, and, when given, the throttle and the
    partitions to elect (what leader-election.json lists)."""
    from planner.model import tp_sort_key

    s = plan_stats(plan)
    cur = plan.current
    s["partitions"] = [
        {"topic": tp.topic, "partition": tp.partition, "current": list(cur[tp]), "proposed": list(plan.proposed[tp])}
        for tp in sorted(plan.proposed, key=tp_sort_key)
    ]
    if elect is not None:
        s["leader_election"] = [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(elect, key=tp_sort_key)]
    if throttle is not None:
        s["throttle"] = {"rate": throttle.rate, "brokers": list(throttle.brokers), "seconds": throttle.seconds,
                         "leader.replication.throttled.replicas": throttle.leader,
                         "follower.replication.throttled.replicas": throttle.follower}
    return json.dumps(s, indent=2) + "\n"


def render_failures_table(impacts, partitions: int) -> str:
    from tabulate import tabulate

    peak = max((i.leaderless for i in impacts), default=0)
    rows = [[i.label, i.leaderless, bar(i.leaderless, peak, 12), i.under_min_isr] for i in impacts]
    # the labels are text ("1,2", "rack a"): a lone broker id must not be right-aligned as a number
    return (tabulate(rows, headers=["failed", "leaderless", "", "under min ISR"], tablefmt="simple",
                     disable_numparse=[0])
            + f"\n({partitions} partitions; worst first)\n")
