"""`kafka-planner consumers`: load the topology and GROUP.yaml, run the strategies, render."""
from __future__ import annotations

import sys

from planner.clients.consumers import DESCRIPTIONS, STRATEGIES, fetch_brokers, leaders, partition_counts, replica_racks, run_strategy
from planner.formats.clients import compact, dumps


def run(topology, group_file, strategies, offline_brokers, fmt) -> None:
    from planner.cli.common import load_cluster
    from planner.formats.group import load_group

    group = load_group(group_file)
    cluster = load_cluster(topology, offline_brokers)
    counts, missing = partition_counts(cluster, group.members)
    for topic in missing:
        print(f"note: {group_file}: subscribed topic {topic!r} is not in {topology}; "
              f"Kafka assigns nothing for it until it exists", file=sys.stderr)
    racks = replica_racks(cluster)
    leader_of = leaders(cluster, counts)
    chosen = list(dict.fromkeys(strategies)) or list(STRATEGIES)
    topic_ids = {t: cluster.topic(t).topic_id for t in counts if cluster.topic(t).topic_id}
    results = [run_strategy(s, group.members, counts, racks, topic_ids) for s in chosen]
    if fmt == "json":
        sys.stdout.write(dumps(_json(group, counts, results, leader_of)))
    else:
        sys.stdout.write(_table(group, counts, results, leader_of))


def _json(group, counts, results, leader_of):
    out = {"group": group.name, "topics": counts, "strategies": {}}
    for r in results:
        brokers = fetch_brokers(r.assignment, leader_of)
        entry = {
            "description": DESCRIPTIONS[r.strategy],
            "exact": r.exact,
            "members": {m: {"partitions": [str(tp) for tp in tps], "count": len(tps), "fetch_from": brokers[m]}
                        for m, tps in r.assignment.items()},
            "spread": r.spread,
        }
        if r.first_round is not None:
            entry["first_round"] = {m: [str(tp) for tp in tps] for m, tps in r.first_round.items()}
            entry["withheld_in_first_round"] = {str(tp): m for tp, m in sorted(r.withheld.items())}
            entry["rebalances_to_converge"] = r.rounds
        elif r.withheld:
            entry["moved_from_previous_owner"] = {str(tp): m for tp, m in sorted(r.withheld.items())}
        out["strategies"][r.strategy] = entry
    return out


def _table(group, counts, results, leader_of) -> str:
    from tabulate import tabulate

    members = {m.id: m for m in group.members}
    total = sum(counts.values())
    lines = [f"group {group.name or '(unnamed)'}: {len(members)} members, {len(counts)} topic(s), {total} partitions"]
    for r in results:
        brokers = fetch_brokers(r.assignment, leader_of)
        note = "" if r.exact else ("  [heterogeneous subscriptions: the planner's balanced sticky algorithm, "
                                     "not Kafka's UniformHeterogeneousAssignmentBuilder tie-breaking]")
        lines.append("")
        lines.append(f"== {r.strategy}: {DESCRIPTIONS[r.strategy]}{note}")
        headers = ["member", "instance", "rack", "count", "partitions", "fetches from"]
        if r.first_round is not None:
            headers = ["member", "instance", "rack", "count", "first round", "converged", "fetches from (converged)"]
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
                lines.append(f"withheld in the first round until revoked: {moved}; converged after {r.rounds} rebalances")
            else:
                lines.append("nothing changes owner: the first round is final")
        elif r.withheld:
            lines.append("moved from their previous owner: " + ", ".join(f"{tp}->{m}" for tp, m in sorted(r.withheld.items())))
    return "\n".join(lines) + "\n"
