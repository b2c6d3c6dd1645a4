"""Text, TSV and JSON renderings of partitioner, consumer-group and coordinator results.

Every function returns the text to print; the commands in planner/cli write it.
"""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from planner.model import NO_LEADER, TopicPartition


def compact(tps: Iterable[TopicPartition]) -> str:
    """[orders-0, orders-1, orders-2, orders-5, pay-1] → "orders 0-2,5; pay 1"."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    parts = []
    for topic, ids in by_topic.items():
        ids = sorted(ids)
        runs, start, prev = [], ids[0], ids[0]
        for i in ids[1:]:
            if i == prev + 1:
                prev = i
                continue
            runs.append(f"{start}-{prev}" if prev > start else str(start))
            start = prev = i
        runs.append(f"{start}-{prev}" if prev > start else str(start))
        parts.append(f"{topic} {','.join(runs)}")
    return "; ".join(parts) if parts else "-"


def dumps(data) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def leader_text(leader: int) -> str:
    return "none" if leader == NO_LEADER else str(leader)


# -- partition -------------------------------------------------------------------------------------------------------


def rule_text(partitioner: str) -> str:
    if partitioner == "legacy-scala":
        return "Utils.abs(key.hashCode) % partitions (Scala producer, 0.8.0-1.1)"
    return "toPositive(murmur2(key)) % partitions"


def keys_text(target, rows, fmt: str, partitioner: str, key_type: str, header: bool, width: int = 0) -> tuple[str, int]:
    """One chunk of (key, partition) rows of `target` (a planner.producer.partitioner.Target). Streams: the first chunk
    carries the header (`header=True`), `keys_end(fmt)` closes the stream. Returns the text and the key column width
    (table), to pass back in for the next chunk so that every chunk lines up under one header."""
    with_topo = target.leaders is not None
    if fmt == "tsv":
        lines = []
        for key, p in rows:
            if with_topo:
                lines.append(
                    f"{key}\t{p}\t{leader_text(target.leaders[p])}\t{','.join(map(str, target.replicas[p]))}\n"
                )
            else:
                lines.append(f"{key}\t{p}\n")
        return "".join(lines), width
    if fmt == "json":
        out = []
        if header:
            meta = {
                "topic": target.topic,
                "partitions": target.partitions,
                "key_type": key_type,
                "rule": rule_text(partitioner),
            }
            out.append(json.dumps(meta)[:-1] + ', "keys": [')
        items = []
        for key, p in rows:
            item = {"key": key, "partition": p}
            if with_topo:
                item["leader"] = None if target.leaders[p] == NO_LEADER else target.leaders[p]
                item["replicas"] = list(target.replicas[p])
            items.append(json.dumps(item))
        if items:
            out.append(("\n" if header else ",\n") + ",\n".join(items))
        return "".join(out), width
    # fixed columns (not tabulate) so that a keys file streams chunk by chunk under one header
    shown = [(key if key != "" else '""', p) for key, p in rows]
    out = []
    if header:
        where = f"topic {target.topic}, " if target.topic else ""
        out.append(f"# {where}{target.partitions} partitions, {key_type} keys, {rule_text(partitioner)}\n")
        width = max([3] + [len(k) for k, _ in shown[:10000]])
        cols = ["key".ljust(width), "partition"] + (["leader  ", "replicas"] if with_topo else [])
        out.append("  ".join(cols).rstrip() + "\n")
        out.append("  ".join("-" * len(c) for c in cols) + "\n")
    width = max(width, 3)
    for key, p in shown:
        line = f"{key.ljust(width)}  {p:<9}"
        if with_topo:
            line += f"  {leader_text(target.leaders[p]):<8}  {','.join(map(str, target.replicas[p]))}"
        out.append(line.rstrip() + "\n")
    return "".join(out), width


def keys_end(fmt: str) -> str:
    """What closes a stream of `keys_text` chunks."""
    return "\n]}\n" if fmt == "json" else ""


def summary_text(target, counts: Sequence[int], summary, fmt: str, partitioner: str) -> str:
    """`partition --summary`: the per-partition histogram and its skew (`summary`: a partitioner.KeySummary)."""
    s = summary
    if fmt == "json":
        stats = {
            "keys": s.keys,
            "partitions": s.partitions,
            "mean": round(s.mean, 3),
            "max": s.max,
            "min": s.min,
            "max_partition": s.max_partition,
            "skew_max_over_mean": round(s.skew, 4),
            "empty_partitions": s.empty_partitions,
        }
        return dumps({"topic": target.topic, "rule": rule_text(partitioner), "summary": stats, "counts": list(counts)})
    if fmt == "tsv":
        return "".join(f"{p}\t{c}\n" for p, c in enumerate(counts))
    from tabulate import tabulate

    from planner.formats.tables import bar

    headers = ["partition", "keys", "share", ""] + (["leader"] if target.leaders is not None else [])
    rows = []
    for p, c in enumerate(counts):
        row = [p, c, f"{100 * c / s.keys:.2f}%" if s.keys else "-", bar(c, s.max, 20)]
        if target.leaders is not None:
            row.append(leader_text(target.leaders[p]))
        rows.append(row)
    return (
        tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
        + "\n"
        + f"keys {s.keys:,} over {s.partitions} partitions: mean {s.mean:,.1f}, "
        + f"max {s.max:,} (partition {s.max_partition}), "
        f"min {s.min:,}, skew max/mean {s.skew:.3f}, empty partitions {s.empty_partitions}\n"
    )


def null_key_text(
    target, sims, era_versions: dict, records: int, batch_size: int, seed: int, available, fmt: str
) -> str:
    """`partition --null-key-simulation`: records per partition under each producer era (`sims`: NullKeySimulation)."""
    if fmt == "json":
        return dumps(
            {
                "topic": target.topic,
                "partitions": target.partitions,
                "records": records,
                "batch_size": batch_size,
                "seed": seed,
                "available": available if available is not None else list(range(target.partitions)),
                "eras": {
                    s.era: {
                        "versions": era_versions[s.era],
                        "counts": list(s.counts),
                        "switches": s.switches,
                        "skew_max_over_mean": round(s.skew, 4),
                    }
                    for s in sims
                },
            }
        )
    if fmt == "tsv":
        lines = ["partition\t" + "\t".join(s.era for s in sims) + "\n"]
        for p in range(target.partitions):
            lines.append(f"{p}\t" + "\t".join(str(s.counts[p]) for s in sims) + "\n")
        return "".join(lines)
    from tabulate import tabulate

    with_topo = target.leaders is not None
    headers = ["partition"] + [f"{s.era} ({era_versions[s.era]})" for s in sims] + (["leader"] if with_topo else [])
    rows = []
    for p in range(target.partitions):
        rows.append([p] + [s.counts[p] for s in sims] + ([leader_text(target.leaders[p])] if with_topo else []))
    rows.append(["max/mean"] + [f"{s.skew:.3f}" for s in sims] + ([""] if with_topo else []))
    rows.append(["switches"] + [s.switches for s in sims] + ([""] if with_topo else []))
    return (
        f"# {records:,} keyless records of 1 byte, batch.size {batch_size:,}, seed {seed}\n"
        + tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
        + "\n"
    )


# -- consumers -------------------------------------------------------------------------------------------------------


def group_text(group, counts: dict, results, leader_of: dict, fmt: str) -> str:
    """`consumers`: per strategy (`results`: consumers.StrategyResult) each member's partitions, count and the brokers
    it fetches from, and the spread."""
    if fmt == "json":
        return dumps(_group_json(group, counts, results, leader_of))
    return _group_table(group, counts, results, leader_of)


def _group_json(group, counts, results, leader_of):
    from planner.assignors.evaluation import fetch_brokers
    from planner.assignors.registry import get_assignor

    out = {"group": group.name, "topics": counts, "strategies": {}}
    for r in results:
        brokers = fetch_brokers(r.assignment, leader_of)
        entry = {
            "description": get_assignor(r.strategy).description,
            "exact": r.exact,
            **({"not_exact_because": r.note} if not r.exact else {}),
            "members": {
                m: {"partitions": [str(tp) for tp in tps], "count": len(tps), "fetch_from": brokers[m]}
                for m, tps in r.assignment.items()
            },
            "spread": r.spread,
        }
        if r.first_round is not None:
            entry["first_round"] = {m: [str(tp) for tp in tps] for m, tps in r.first_round.items()}
            entry["withheld_in_first_round"] = {str(tp): m for tp, m in sorted(r.withheld.items())}
            entry["rebalances_to_converge"] = None if r.never_settles else r.rounds
            if r.never_settles:
                entry["never_converges"] = r.never_settles
        elif r.withheld:
            entry["moved_from_previous_owner"] = {str(tp): m for tp, m in sorted(r.withheld.items())}
        out["strategies"][r.strategy] = entry
    return out


def _group_table(group, counts, results, leader_of) -> str:
    from tabulate import tabulate

    from planner.assignors.evaluation import fetch_brokers
    from planner.assignors.registry import get_assignor

    members = {m.id: m for m in group.members}
    total = sum(counts.values())
    lines = [f"group {group.name or '(unnamed)'}: {len(members)} members, {len(counts)} topic(s), {total} partitions"]
    for r in results:
        brokers = fetch_brokers(r.assignment, leader_of)
        note = "" if r.exact else f"  [{r.note}]"
        lines.append("")
        lines.append(f"== {r.strategy}: {get_assignor(r.strategy).description}{note}")
        headers = ["member", "instance", "rack", "count", "partitions", "fetches from"]
        if r.first_round is not None:
            last = f"after {r.rounds} rebalances" if r.never_settles else "converged"
            headers = ["member", "instance", "rack", "count", "first round", last, f"fetches from ({last})"]
        rows = []
        for mid, tps in r.assignment.items():
            m = members[mid]
            row = [mid, m.instance_id or "-", m.rack or "-", len(tps)]
            if r.first_round is not None:
                row.append(compact(r.first_round[mid]))
            row += [compact(tps), ",".join(str(b) if b >= 0 else "none" for b in brokers[mid]) or "-"]
            rows.append(row)
        lines.append(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
        c = list(r.counts.values())
        lines.append(f"spread (max-min partitions per member): {r.spread}  (min {min(c)}, max {max(c)})")
        if r.first_round is not None:
            if r.withheld:
                moved = ", ".join(f"{tp}->{m}" for tp, m in sorted(r.withheld.items()))
                settled = r.never_settles or f"converged after {r.rounds} rebalances"
                lines.append(f"withheld in the first round until revoked: {moved}; {settled}")
            else:
                lines.append("nothing changes owner: the first round is final")
        elif r.withheld:
            lines.append(
                "moved from their previous owner: " + ", ".join(f"{tp}->{m}" for tp, m in sorted(r.withheld.items()))
            )
    return "\n".join(lines) + "\n"


# -- coordinator -----------------------------------------------------------------------------------------------------


def coordinator_text(rows, topic_name: str, partitions: int, transactional: bool, with_topology: bool, fmt: str) -> str:
    """`coordinator`: rows of {id, partition[, coordinator (None: no leader), replicas]}."""
    if fmt == "json":
        return dumps({"topic": topic_name, "partitions": partitions, "ids": rows})
    if fmt == "tsv":
        out = []
        for r in rows:
            extra = ""
            if with_topology:
                coordinator = r["coordinator"] if r["coordinator"] is not None else "none"
                extra = f"\t{coordinator}\t{','.join(map(str, r['replicas']))}"
            out.append(f"{r['id']}\t{r['partition']}{extra}\n")
        return "".join(out)
    from tabulate import tabulate

    label = "transactional id" if transactional else "group id"
    headers = [label, f"{topic_name} partition (of {partitions})"]
    if with_topology:
        headers += ["coordinator (leader)", "replicas"]
    table = []
    for r in rows:
        line = [r["id"], r["partition"]]
        if with_topology:
            line += [
                r["coordinator"] if r["coordinator"] is not None else "none (COORDINATOR_NOT_AVAILABLE)",
                ",".join(map(str, r["replicas"])),
            ]
        table.append(line)
    return tabulate(table, headers=headers, tablefmt="simple", disable_numparse=True) + "\n"
