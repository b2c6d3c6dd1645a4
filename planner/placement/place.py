"""Placing a new topic or new partitions on a cluster: which brokers, which placer, which start.

Policy (the algorithms themselves live in kafka.py, kraft.py and balanced.py):
* Kafka's placer (AdminUtils) gets the registered brokers (state not `offline`) sorted by id, as the ZooKeeper tools
  pass them. `rack_aware` follows the tools' Enforced mode (mixed racks are Kafka's error) unless disabled.
* `start_index` given → Kafka's fixed start (start = shift = index). `seed` given → start and shift drawn from a
  java.util.Random(seed) exactly as a broker draws them. Neither → the balanced choice (balanced.py): the (start, shift)
  a Kafka broker could have drawn that best balances the whole cluster, existing topics included.
* KRaft's placer gets every registered broker with its fenced flag and a java.util.Random(seed or 0).
"""
from __future__ import annotations

from planner.java import JavaRandom
from planner.model import FENCED, OFFLINE, Cluster, PlannerError
from planner.placement import kafka


def registered_brokers(cluster: Cluster) -> list[tuple[int, str | None]]:
    return [(b.id, b.rack) for b in cluster.brokers if b.state != OFFLINE]


def place_new_topic(
    cluster: Cluster,
    n_partitions: int,
    replication_factor: int,
    *,
    placer: str = "kafka",
    start_index: int | None = None,
    seed: int | None = None,
    rack_aware: bool = True,
) -> dict[int, list[int]]:
    if placer == "kraft":
        from planner.placement.kraft import place_striped

        brokers = [(b.id, b.rack, b.state == FENCED) for b in cluster.brokers if b.state != OFFLINE]
        return place_striped(brokers, n_partitions, replication_factor, JavaRandom(seed or 0))
    if placer != "kafka":
        raise PlannerError(f"unknown placer {placer!r}: use kafka or kraft")
    metadatas = kafka.broker_metadatas(registered_brokers(cluster), rack_aware)
    if start_index is not None:
        if not 0 <= start_index < max(1, len(metadatas)):
            raise PlannerError(f"--start-index {start_index} must be between 0 and {len(metadatas) - 1} (the broker count minus one)")
        return kafka.assign_replicas_to_brokers(metadatas, n_partitions, replication_factor, start_index)
    if seed is not None:
        return kafka.assign_replicas_to_brokers(metadatas, n_partitions, replication_factor, rnd=JavaRandom(seed))
    from planner.placement.balanced import choose_start

    kafka.validate(n_partitions, replication_factor, len(metadatas))
    assignment, _start, _shift = choose_start(cluster, metadatas, n_partitions, replication_factor)
    return assignment


def place_new_partitions(
    cluster: Cluster, topic: str, new_total: int, *, rack_aware: bool = True
) -> dict[int, list[int]]:
    """Kafka's rule for adding partitions (ZK `AdminZkClient.addPartitions`): start from partition 0's leader."""
    t = cluster.topic(topic)
    kafka.validate_increase(topic, t.partition_count, new_total)
    p0 = t.partitions[0].replicas
    metadatas = kafka.broker_metadatas(registered_brokers(cluster), rack_aware)
    start = kafka.add_partitions_start([b for b, _ in metadatas], p0)
    return kafka.assign_replicas_to_brokers(
        metadatas, new_total - t.partition_count, len(p0), start, t.partition_count
    )
