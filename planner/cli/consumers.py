"""`kafka-planner consumers`: load the topology and GROUP.yaml, run the strategies, write what
planner/formats/clients.py renders."""

from __future__ import annotations

import sys

from planner.assignors.registry import STRATEGIES, leaders, partition_counts, replica_racks, run_strategy


def run(topology, group_file, strategies, offline_brokers, fmt) -> None:
    from planner.cli.common import load_cluster
    from planner.formats.clients import group_text
    from planner.formats.group import load_group

    group = load_group(group_file)
    cluster = load_cluster(topology, offline_brokers)
    counts, missing = partition_counts(cluster, group.members)
    for topic in missing:
        print(
            f"note: {group_file}: subscribed topic {topic!r} is not in {topology}; "
            f"Kafka assigns nothing for it until it exists",
            file=sys.stderr,
        )
    for m in group.members:
        for tp in m.owned:
            if tp.topic not in m.topics:
                print(
                    f"note: {group_file}: {m.id} owns {tp} but does not subscribe {tp.topic}: no strategy keeps it "
                    f"there",
                    file=sys.stderr,
                )
            elif tp.topic in counts and tp.partition >= counts[tp.topic]:
                print(
                    f"note: {group_file}: {m.id} owns {tp}, but {tp.topic} has {counts[tp.topic]} partitions in "
                    f"{topology}: ignored",
                    file=sys.stderr,
                )
    racks = replica_racks(cluster)
    leader_of = leaders(cluster, counts)
    chosen = list(dict.fromkeys(strategies)) or list(STRATEGIES)
    topic_ids = {t: tid for t in counts if (tid := cluster.topic(t).topic_id)}
    results = [run_strategy(s, group.members, counts, racks, topic_ids) for s in chosen]
    sys.stdout.write(group_text(group, counts, results, leader_of, fmt))
