"""Load-aware placement of a new topic or new partitions (`--placer load-aware`): not Kafka's algorithm, an
alternative under the rebalancer's goals for clusters whose load is uneven (new brokers, say).

Partition by partition, replica by replica, in the rebalancer's goal order: the broker holding fewest replicas
overall (the lightest brokers, new ones first, fill up), then fewest replicas of this topic (the topic spreads), then
the lowest id. Of the replicas chosen, the preferred leader is the one leading fewest partitions, then fewest of this
topic. With racks, each replica goes to a rack the partition does not use yet while one is left (rack-safe:
min(RF, racks) racks). Deterministic; the result prints as Kafka's `--replica-assignment`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.model import Cluster, PlannerError
from planner.placement.adminutils import validate_increase


class _Load:
    def __init__(self, cluster: Cluster, brokers: Sequence[int], topic: str | None):
        self.replicas = {b: 0 for b in brokers}
        self.leaders = {b: 0 for b in brokers}
        self.t_replicas = {b: 0 for b in brokers}
        self.t_leaders = {b: 0 for b in brokers}
        for p in cluster.partitions():
            for pos, b in enumerate(p.replicas):
                if b in self.replicas:
                    self.replicas[b] += 1
                    self.leaders[b] += pos == 0
                    if p.topic == topic:
                        self.t_replicas[b] += 1
                        self.t_leaders[b] += pos == 0

    def add(self, replicas: Sequence[int]) -> None:
        for pos, b in enumerate(replicas):
            self.replicas[b] += 1
            self.t_replicas[b] += 1
            self.leaders[b] += pos == 0
            self.t_leaders[b] += pos == 0


def _pick(pool: Sequence[int], load: _Load) -> int:
    return min(pool, key=lambda b: (load.replicas[b], load.t_replicas[b], b))


def _partition(brokers: Sequence[int], rack_of: Mapping[int, str | None], rf: int, load: _Load) -> list[int]:
    chosen: list[int] = []
    racks = {rack_of[b] for b in brokers} if all(rack_of[b] is not None for b in brokers) else set()
    for _ in range(rf):
        used = {rack_of[b] for b in chosen}
        pool = [b for b in brokers if b not in chosen]
        fresh = [b for b in pool if rack_of[b] not in used]
        if racks and len(used) < len(racks) and fresh:
            pool = fresh
        chosen.append(_pick(pool, load))
    head = min(chosen, key=lambda b: (load.leaders[b], load.t_leaders[b], b))
    chosen.remove(head)
    chosen.insert(0, head)
    load.add(chosen)
    return chosen


def place_load_aware(
    cluster: Cluster,
    n_partitions: int,
    replication_factor: int,
    *,
    topic: str | None = None,
    start_partition_id: int = 0,
    rack_aware: bool = True,
) -> dict[int, list[int]]:
    """Replica lists of partitions start_partition_id .. +n_partitions-1 on the brokers that take new replicas, as
    the rebalancer's targets and Kafka's placer (`policy.registered_brokers`): online (not offline, not fenced: a
    fenced broker cannot lead, and the controller's placer puts nothing there while unfenced brokers suffice) and not
    cordoned (KIP-1066), counting the load the cluster already carries (and, for new partitions, the topic's existing
    ones)."""
    brokers = sorted(b.id for b in cluster.brokers if b.placeable)
    if n_partitions <= 0:
        raise PlannerError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise PlannerError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise PlannerError(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    rack_of = {b.id: (b.rack if rack_aware else None) for b in cluster.brokers}
    load = _Load(cluster, brokers, topic)
    return {start_partition_id + p: _partition(brokers, rack_of, replication_factor, load) for p in range(n_partitions)}


class LoadAwarePlacer:
    """`load-aware`: not Kafka's; the lightest brokers first (new ones first), rack-safe."""

    name = "load-aware"
    description = (
        "not Kafka's; fills the lightest brokers (new ones first), rack-safe; "
        "print it with --format replica-assignment for kafka-topics --create"
    )
    how = "load-aware placement (not Kafka's): lightest brokers first, rack-safe"

    def new_topic(
        self,
        cluster: Cluster,
        n_partitions: int,
        replication_factor: int,
        *,
        start_index: int | None,
        seed: int | None,
        rack_aware: bool,
    ) -> tuple[dict[int, list[int]], str]:
        return place_load_aware(cluster, n_partitions, replication_factor, rack_aware=rack_aware), self.how

    def new_partitions(
        self, cluster: Cluster, topic: str, new_total: int, *, rack_aware: bool, seed: int | None
    ) -> tuple[dict[int, list[int]], str]:
        t = cluster.topic(topic)
        validate_increase(topic, t.partition_count, new_total)
        assignment = place_load_aware(
            cluster,
            new_total - t.partition_count,
            t.replication_factor,
            topic=topic,
            start_partition_id=t.partition_count,
            rack_aware=rack_aware,
        )
        return assignment, self.how
