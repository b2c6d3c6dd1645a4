"""Replica placers: one small interface and one registry (in the spirit of Kafka's
metadata/src/main/java/org/apache/kafka/metadata/placement/ReplicaPlacer.java).

A `ReplicaPlacer` places a new topic, or the new partitions of an existing topic, on a `Cluster` and says how it
chose. Registered (policy.py and load_aware.py hold the classes):

* `kafka`: `AdminUtils.assignReplicasToBrokers` as ZooKeeper-mode brokers and the tools run it;
* `kraft`: the KRaft controller's `StripedReplicaPlacer`;
* `load-aware`: not Kafka's; the lightest brokers first, rack-safe.

The CLI builds its `--placer` choices and help from `PLACERS`; `register_placer` adds one.
"""

from __future__ import annotations

from typing import Mapping, Protocol

from planner.model import Cluster, PlannerError
from planner.placement.load_aware import LoadAwarePlacer
from planner.placement.policy import AdminUtilsPlacer, StripedPlacer

Assignment = Mapping[int, list[int]]  # a large Kafka placement is a bulk.Rows over its replica matrix


class ReplicaPlacer(Protocol):
    name: str
    description: str

    def new_topic(
        self,
        cluster: Cluster,
        n_partitions: int,
        replication_factor: int,
        *,
        start_index: int | None,
        seed: int | None,
        rack_aware: bool,
    ) -> tuple[Assignment, str]:
        """(assignment, how it was chosen) for a new topic."""
        ...

    def new_partitions(
        self, cluster: Cluster, topic: str, new_total: int, *, rack_aware: bool, seed: int | None
    ) -> tuple[Assignment, str]:
        """(assignment of the added partitions, how) growing `topic` to `new_total` partitions."""
        ...


PLACERS: dict[str, ReplicaPlacer] = {}


def register_placer(placer: ReplicaPlacer) -> None:
    PLACERS[placer.name] = placer


def get_placer(name: str) -> ReplicaPlacer:
    try:
        return PLACERS[name]
    except KeyError:
        raise PlannerError(f"unknown placer {name!r}: use {', '.join(PLACERS)}") from None


def plan_new_topic(
    cluster: Cluster,
    n_partitions: int,
    replication_factor: int,
    *,
    placer: str = "kafka",
    start_index: int | None = None,
    seed: int | None = None,
    rack_aware: bool = True,
) -> tuple[Assignment, str]:
    """(assignment, how it was chosen) for a new topic, by the named placer."""
    return get_placer(placer).new_topic(
        cluster, n_partitions, replication_factor, start_index=start_index, seed=seed, rack_aware=rack_aware
    )


def place_new_partitions(
    cluster: Cluster,
    topic: str,
    new_total: int,
    *,
    rack_aware: bool = True,
    placer: str = "kafka",
    seed: int | None = None,
) -> tuple[Assignment, str]:
    """(assignment of the added partitions, how) growing `topic` to `new_total` partitions, by the named placer."""
    return get_placer(placer).new_partitions(cluster, topic, new_total, rack_aware=rack_aware, seed=seed)


for _placer in (AdminUtilsPlacer(), StripedPlacer(), LoadAwarePlacer()):
    register_placer(_placer)
