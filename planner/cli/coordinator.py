"""`kafka-planner coordinator`: compute, then write what planner/formats/clients.py renders (table, tsv, json)."""

from __future__ import annotations

import sys

from planner.coordinator import DEFAULT_PARTITIONS, internal_topic, partition_for
from planner.model import NO_LEADER, PlannerError


def run(ids, transactional, partitions, topology, offline_brokers, fmt) -> None:
    topic_name = internal_topic(transactional)
    leader_of = replicas_of = None
    note = None
    if topology:
        from planner.cli.common import load_cluster
        from planner.leadership import topic_states

        cluster = load_cluster(topology, offline_brokers)
        if cluster.has_topic(topic_name):
            topic = cluster.topic(topic_name)
            if partitions is not None and partitions != topic.partition_count:
                raise PlannerError(
                    f"--partitions {partitions} contradicts {topology}: {topic_name} has {topic.partition_count} "
                    f"partitions, and Kafka hashes over the topic's actual partition count; drop --partitions"
                )
            partitions = topic.partition_count
            states = topic_states(cluster, topic)
            leader_of = {p.id: s.leader for p, s in zip(topic.partitions, states)}
            replicas_of = {p.id: p.replicas for p in topic.partitions}
        else:
            note = (
                f"{topology} has no {topic_name} topic: Kafka creates it on first use "
                f"(until then FindCoordinator answers COORDINATOR_NOT_AVAILABLE)"
            )
    elif offline_brokers:
        raise PlannerError("--offline-brokers needs --topology")
    if partitions is None:
        partitions = DEFAULT_PARTITIONS
    rows = []
    for key in ids:
        p = partition_for(key, partitions)
        row = {"id": key, "partition": p}
        if leader_of is not None and replicas_of is not None:
            row["coordinator"] = leader_of[p] if leader_of[p] != NO_LEADER else None
            row["replicas"] = list(replicas_of[p])
        rows.append(row)
    if note:
        print(f"note: {note}", file=sys.stderr)
    from planner.formats.clients import coordinator_text

    sys.stdout.write(coordinator_text(rows, topic_name, partitions, transactional, leader_of is not None, fmt))
