"""Kafka's `AdminUtils.assignReplicasToBrokers` (ZooKeeper-mode creation, `--generate`, adding partitions).

Pure and exact, as `server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java` (earlier releases:
`core/src/main/scala/kafka/admin/AdminUtils.scala`): rack-unaware round robin with a start index and a follower shift
that grows every n partitions, and the rack-aware variant over the rack-alternated broker list. Randomness only
through `rnd` (a `planner.java.JavaRandom`), or none when `fixed_start_index >= 0`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.java import JavaRandom, string_sort_key
from planner.model import PlannerError

# Kafka 1.0+ texts (InvalidPartitionsException / InvalidReplicationFactorException / AdminOperationException).
NOT_ALL_RACKS = "Not all brokers have rack information for replica rack aware assignment."
NOT_ALL_RACKS_TOOL = (
    "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
    "assignment without rack information."
)

Assignment = dict[int, list[int]]


def replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def validate(n_partitions: int, replication_factor: int, n_brokers: int) -> None:
    if n_partitions <= 0:
        raise PlannerError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise PlannerError("Replication factor must be larger than 0.")
    if replication_factor > n_brokers:
        raise PlannerError(f"Replication factor: {replication_factor} larger than available brokers: {n_brokers}.")


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """`getRackAlternatedBrokerList`: one broker per rack in turn, racks in String order, ids ascending in a rack."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    iterators = [iter(sorted(by_rack[r])) for r in sorted(by_rack, key=string_sort_key)]
    result: list[int] = []
    while len(result) < len(racks):
        for it in iterators:
            b = next(it, None)
            if b is not None:
                result.append(b)
    return result


BULK_PARTITIONS = 2_000  # from this many partitions on, placement runs vectorised (NumPy)


def _start_and_shift(n: int, fixed_start_index: int, rnd: JavaRandom | None) -> tuple[int, int]:
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    if rnd is None:
        raise ValueError("a random start needs rnd (or pass fixed_start_index >= 0)")
    return rnd.next_int(n), rnd.next_int(n)


def place_unaware(
    brokers: Sequence[int],
    n_partitions: int,
    replication_factor: int,
    start: int,
    shift: int,
    start_partition_id: int = -1,
) -> Assignment:
    """The rack-unaware loop for a given start index and initial shift (what the random draws or fixedStartIndex
    set)."""
    n = len(brokers)
    pid = max(0, start_partition_id)
    result: Assignment = {}
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start) % n
        replicas = [brokers[first]]
        replicas.extend(brokers[replica_index(first, shift, j, n)] for j in range(replication_factor - 1))
        result[pid] = replicas
        pid += 1
    return result


def place_aware(
    racks: Mapping[int, str],
    n_partitions: int,
    replication_factor: int,
    start: int,
    shift: int,
    start_partition_id: int = -1,
) -> Assignment:
    """The rack-aware loop over the rack-alternated list for a given start index and initial shift."""
    arranged = rack_alternated_brokers(racks)
    n = len(arranged)
    num_racks = len(set(racks.values()))
    pid = max(0, start_partition_id)
    result: Assignment = {}
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        brokers_used = {leader}
        k = 0
        for _f in range(replication_factor - 1):
            while True:
                b = arranged[replica_index(first, shift * num_racks, k, n)]
                k += 1
                rack_ok = racks[b] not in racks_used or len(racks_used) == num_racks
                broker_ok = b not in brokers_used or len(brokers_used) == n
                if rack_ok and broker_ok:
                    replicas.append(b)
                    racks_used.add(racks[b])
                    brokers_used.add(b)
                    break
        result[pid] = replicas
        pid += 1
    return result


def assign_replicas_to_brokers(
    brokers: Sequence[tuple[int, str | None]],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rnd: JavaRandom | None = None,
) -> Mapping[int, list[int]]:
    """`AdminUtils.assignReplicasToBrokers(brokerMetadatas, ...)`: (id, rack or None) pairs in the caller's order."""
    validate(n_partitions, replication_factor, len(brokers))
    with_rack = [b for b in brokers if b[1] is not None]
    racked = {b: r for b, r in brokers if r is not None}
    if with_rack and len(with_rack) != len(brokers):
        raise PlannerError(NOT_ALL_RACKS)
    start, shift = _start_and_shift(len(brokers), fixed_start_index, rnd)
    if n_partitions >= BULK_PARTITIONS:  # the same loops, vectorised (bulk.py; tests compare them element by element)
        from planner.placement import bulk

        matrix = (
            bulk.unaware_matrix(
                [b for b, _ in brokers], n_partitions, replication_factor, start, shift, start_partition_id
            )
            if not with_rack
            else bulk.aware_matrix(racked, n_partitions, replication_factor, start, shift, start_partition_id)
        )
        return bulk.Rows(matrix, start_partition_id)  # a Mapping over the matrix: no list per partition yet
    if not with_rack:
        return place_unaware(
            [b for b, _ in brokers], n_partitions, replication_factor, start, shift, start_partition_id
        )
    return place_aware(racked, n_partitions, replication_factor, start, shift, start_partition_id)


def broker_metadatas(
    brokers: Sequence[tuple[int, str | None]], rack_aware: bool = True
) -> list[tuple[int, str | None]]:
    """ZooKeeper tools' `getBrokerMetadatas`: sorted by id; Enforced mode errors on mixed racks, Disabled drops
    racks."""
    ordered = sorted(brokers)
    if not rack_aware:
        return [(b, None) for b, _ in ordered]
    racked = sum(1 for _, r in ordered if r is not None)
    if 0 < racked < len(ordered):
        raise PlannerError(NOT_ALL_RACKS_TOOL)
    return list(ordered)


def add_partitions_start(broker_ids: Sequence[int], partition0_replicas: Sequence[int]) -> int:
    """`fixedStartIndex` for adding partitions: index of the first id-sorted broker with id >= partition 0's leader."""
    ordered = sorted(broker_ids)
    first = partition0_replicas[0]
    for i, b in enumerate(ordered):
        if b >= first:
            return i
    return 0


def validate_increase(topic: str, current: int, new_total: int) -> None:
    if new_total <= current:
        raise PlannerError(
            "The number of partitions for a topic can only be increased. "
            f"Topic {topic} currently has {current} partitions, {new_total} would not be an increase."
        )
