"""Kafka's `kafka-reassign-partitions.sh --generate`, computed from a topology (trunk `generateAssignment`)."""

from __future__ import annotations

from planner.java import JavaRandom, hashmap_order
from planner.model import Cluster, PlannerError, TopicPartition, tp_hash
from planner.placement.adminutils import NOT_ALL_RACKS_TOOL, assign_replicas_to_brokers


def generate(
    cluster: Cluster,
    brokers: list[int],
    topics: list[str],
    rack_aware: bool = True,
    start_index: int | None = None,
    seed: int = 0,
) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[TopicPartition, tuple[int, ...]]]:
    """(current, proposed) for the listed topics, as `--generate` computes them.

    `brokers` and `topics` come checked from `parseGenerateAssignmentArgs` (`formats.kafka_json.parse_generate_args`).
    Order of checks as Kafka: every topic must exist
    ("Topic T not found.", first missing in Java HashSet order), then the rack check over the listed brokers that
    exist (unknown ids are dropped, as `describeCluster` filtering does). Each topic is placed by
    `AdminUtils.assignReplicasToBrokers` with its partition count and the RF of its first partition in Java HashMap
    order. Kafka draws the start index from an unseeded Random; here `start_index` fixes it (start = shift, as
    Kafka's tests do) and otherwise a `java.util.Random(seed)` shared by the topics in HashMap order draws it.
    """
    for name in hashmap_order(topics):
        if not cluster.has_topic(name):
            raise PlannerError(f"Topic {name} not found.")
    current: dict[TopicPartition, tuple[int, ...]] = {}
    for name in topics:
        for p in cluster.topic(name).partitions:
            current[p.tp] = p.replicas
    wanted = set(brokers)
    live = cluster.online_ids
    metas = [(b.id, b.rack if rack_aware else None) for b in cluster.brokers if b.id in wanted and b.id in live]
    rackless = sum(1 for _, r in metas if r is None)
    if rack_aware and rackless and rackless != len(metas):
        raise PlannerError(NOT_ALL_RACKS_TOOL)
    rnd = JavaRandom(seed)
    proposed: dict[TopicPartition, tuple[int, ...]] = {}
    order = hashmap_order(current, hash_of=tp_hash)
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in order:
        by_topic.setdefault(tp.topic, []).append(tp)
    for name in hashmap_order(by_topic):
        tps = by_topic[name]
        rf = len(current[tps[0]])
        assigned = assign_replicas_to_brokers(
            metas, len(tps), rf, fixed_start_index=start_index if start_index is not None else -1, rnd=rnd
        )
        for pid, replicas in assigned.items():
            proposed[TopicPartition(name, pid)] = tuple(replicas)
    return current, proposed
