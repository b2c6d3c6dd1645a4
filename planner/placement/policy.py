"""Placing a new topic or new partitions on a cluster: which brokers, which placer, which start.

Policy (the placers are registered in placer.py; the algorithms live in adminutils.py, striped.py and balanced.py):
* Kafka's placer (AdminUtils) gets the registered, unfenced brokers (state `online`) sorted by id, as the ZooKeeper
  tools pass them. `rack_aware` follows the tools' Enforced mode (mixed racks are Kafka's error) unless disabled.
* `start_index` given → Kafka's fixed start (start = shift = index). `seed` given → start and shift drawn from a
  java.util.Random(seed) exactly as a broker draws them. Neither → the balanced choice (balanced.py): the (start, shift)
  a Kafka broker could have drawn that best balances the whole cluster, existing topics included.
* KRaft's placer gets every registered broker with its fenced flag and a java.util.Random(seed or 0).
"""

from __future__ import annotations

from typing import Mapping

from planner.java import JavaRandom
from planner.model import FENCED, OFFLINE, Cluster, PlannerError
from planner.placement import adminutils
from planner.placement.balanced import choose_start


def registered_brokers(cluster: Cluster) -> list[tuple[int, str | None]]:
    """The brokers AdminUtils places on: registered (not `offline`), not `fenced` (a fenced KRaft broker is
    registered but cannot take new replicas until it is unfenced; the controller's placer puts none there while
    unfenced brokers suffice) and not cordoned (KIP-1066: every log dir cordoned)."""
    return [(b.id, b.rack) for b in cluster.brokers if b.placeable]


class AdminUtilsPlacer:
    """`kafka`: AdminUtils with a fixed start, a seeded draw, or the balanced choice."""

    name = "kafka"
    description = "AdminUtils (ZK mode, tools; adding partitions: ZK addPartitions rule)"

    def new_topic(
        self,
        cluster: Cluster,
        n_partitions: int,
        replication_factor: int,
        *,
        start_index: int | None,
        seed: int | None,
        rack_aware: bool,
    ) -> tuple[Mapping[int, list[int]], str]:
        metadatas = adminutils.broker_metadatas(registered_brokers(cluster), rack_aware)
        racks = "rack-aware" if any(r is not None for _, r in metadatas) else "rack-unaware"
        if start_index is not None:
            adminutils.validate(n_partitions, replication_factor, len(metadatas))
            if not 0 <= start_index < len(metadatas):
                raise PlannerError(
                    f"--start-index {start_index} must be between 0 and {len(metadatas) - 1} "
                    "(the broker count minus one)"
                )
            assignment = adminutils.assign_replicas_to_brokers(metadatas, n_partitions, replication_factor, start_index)
            return assignment, f"Kafka AdminUtils, {racks}, fixed start index {start_index}"
        if seed is not None:
            assignment = adminutils.assign_replicas_to_brokers(
                metadatas, n_partitions, replication_factor, rnd=JavaRandom(seed)
            )
            return assignment, f"Kafka AdminUtils, {racks}, start and shift drawn from java.util.Random({seed})"
        adminutils.validate(n_partitions, replication_factor, len(metadatas))
        adminutils.assign_replicas_to_brokers(metadatas, 1, replication_factor, 0)  # Kafka's rack checks, same texts
        assignment, start, shift = choose_start(cluster, metadatas, n_partitions, replication_factor)
        return assignment, f"Kafka AdminUtils, {racks}, balanced choice: start index {start}, replica shift {shift}"

    def new_partitions(
        self, cluster: Cluster, topic: str, new_total: int, *, rack_aware: bool, seed: int | None
    ) -> tuple[Mapping[int, list[int]], str]:
        """ZK `AdminZkClient.addPartitions`: fixed start at partition 0's leader, startPartitionId = current count."""
        t = cluster.topic(topic)
        adminutils.validate_increase(topic, t.partition_count, new_total)
        p0 = t.partitions[0].replicas
        metadatas = adminutils.broker_metadatas(registered_brokers(cluster), rack_aware)
        start = adminutils.add_partitions_start([b for b, _ in metadatas], p0)
        assignment = adminutils.assign_replicas_to_brokers(
            metadatas, new_total - t.partition_count, len(p0), start, t.partition_count
        )
        return assignment, "Kafka addPartitions: fixed start at partition 0's leader"


class StripedPlacer:
    """`kraft`: the controller's StripedReplicaPlacer with a java.util.Random(seed or 0)."""

    name = "kraft"
    description = "StripedReplicaPlacer (KRaft controller)"

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
        if n_partitions <= 0:
            raise PlannerError("Number of partitions was set to an invalid non-positive value.")
        if replication_factor <= 0:
            raise PlannerError("Replication factor must be larger than 0, or -1 to use the default value.")
        return _kraft(cluster, n_partitions, replication_factor, seed, ()), f"KRaft striped placer, seed {seed or 0}"

    def new_partitions(
        self, cluster: Cluster, topic: str, new_total: int, *, rack_aware: bool, seed: int | None
    ) -> tuple[dict[int, list[int]], str]:
        """The striped placer continuing after the topic's last partition (trunk `RackList` with existing ones)."""
        t = cluster.topic(topic)
        if new_total <= t.partition_count:
            raise PlannerError(
                f"The topic {topic} currently has {t.partition_count} partition(s); "
                f"{new_total} would not be an increase."
            )
        existing = [p.replicas for p in t.partitions]
        assignment = _kraft(cluster, new_total - t.partition_count, len(existing[0]), seed, existing)
        return assignment, "KRaft striped placer continuing after the last partition"


def kraft_brokers(cluster: Cluster) -> list[tuple[int, str | None, bool]]:
    """Usable brokers for the striped placer, in id order (the controller's registration map iterates ids ascending
    for ids below its capacity); KIP-1066's `usableBrokers` leaves out brokers whose log dirs are all cordoned."""
    return [
        (b.id, b.rack, b.state == FENCED)
        for b in sorted(cluster.brokers, key=lambda b: b.id)
        if b.state != OFFLINE and not b.cordoned
    ]


def _kraft(cluster: Cluster, n: int, rf: int, seed: int | None, existing) -> dict[int, list[int]]:
    from planner.placement.striped import place_striped

    try:
        return place_striped(kraft_brokers(cluster), n, rf, JavaRandom(seed or 0), existing, bool(cluster.cordoned_ids))
    except PlannerError as exc:  # the controller wraps placer errors (ReplicationControlManager)
        raise PlannerError(f"Unable to replicate the partition {rf} time(s): {exc}") from None
