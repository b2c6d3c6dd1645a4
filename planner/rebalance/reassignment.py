"""Reassignments as Kafka's `kafka-reassign-partitions.sh` models them, independent of any file format.

The checks of `parseExecuteAssignmentArgs` and of `executeAssignment` (in Kafka's order, with its texts), the move
map and the throttles it derives (`calculateProposedMoveMap`, `calculateLeaderThrottles`,
`calculateFollowerThrottles`, `calculateReassigningBrokers`) and the per-partition states `--verify` reports
(`findPartitionReassignmentStates`), all from trunk `tools/src/main/java/org/apache/kafka/tools/reassign/
ReassignPartitionsCommand.java`. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from planner.java import duplicates, hashmap_order
from planner.model import Cluster, PlannerError, TopicPartition, tp_hash, tp_sort_key

CANNOT_EXECUTE_BECAUSE_OF_EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used to "
    "change the throttle by resubmitting the current reassignment."
)


def check_entries(entries: list[tuple[TopicPartition, tuple[int, ...]]]) -> None:
    """The checks of `parseExecuteAssignmentArgs`, in Kafka's order."""
    if not entries:
        raise PlannerError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in entries):
        raise PlannerError("Partition replica list cannot be empty")
    dup_tps = duplicates([tp for tp, _ in entries], hash_of=tp_hash)
    if dup_tps:
        raise PlannerError(
            "Partition reassignment contains duplicate topic partitions: " + ",".join(str(tp) for tp in dup_tps)
        )
    problems = []
    for tp, replicas in entries:
        dups = duplicates(list(replicas))
        if dups:
            problems.append(f"{tp} contains multiple entries for {','.join(map(str, dups))}")
    if problems:
        raise PlannerError("Partition replica lists may not contain duplicate entries: " + ". ".join(problems))


def validate_reassignment(
    cluster: Cluster, proposed: Mapping[TopicPartition, Iterable[int]], additional: bool = False
) -> None:
    """Kafka's checks of a reassignment against a cluster, in `executeAssignment`'s order, with its texts.

    1-5. `parseExecuteAssignmentArgs` (empty, empty replica list, duplicate brokers in a list);
    then, unless `additional`: an in-progress reassignment (a partition with adding/removing replicas);
    then `verifyBrokerIds`: the first proposed broker (Java HashSet order) that is not a live broker
    ("Unknown broker id N"; `describeCluster` lists only live, unfenced brokers);
    then `describeTopics`: "Topic T not found." for the first unknown topic (HashMap order);
    then "Unable to find partition: t-9, ..." for partitions the topics do not have.
    """
    items = [(TopicPartition(*tp), tuple(replicas)) for tp, replicas in proposed.items()]
    check_entries(items)
    if not additional and any(p.adding or p.removing for p in cluster.partitions()):
        raise PlannerError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    brokers: list[int] = []
    for _, replicas in items:
        brokers.extend(replicas)
    live = cluster.online_ids
    for b in hashmap_order(brokers):
        if b not in live:
            raise PlannerError(f"Unknown broker id {b}")
    wanted = {tp for tp, _ in items}
    topics = hashmap_order(tp.topic for tp, _ in items)
    existing: set[TopicPartition] = set()
    for name in topics:
        if not cluster.has_topic(name):
            raise PlannerError(f"Topic {name} not found.")
        existing.update(p.tp for p in cluster.topic(name).partitions)
    missing = [tp for tp, _ in items if tp not in existing]
    if missing:
        capacity = max(int(len(wanted) / 0.75) + 1, 16)  # new HashSet<>(partitions)
        ordered = hashmap_order(missing, hash_of=tp_hash, initial_capacity=capacity)
        raise PlannerError("Unable to find partition: " + ", ".join(str(tp) for tp in ordered))


@dataclass(frozen=True)
class PartitionMove:
    sources: frozenset[int]
    destinations: frozenset[int]


def move_map(cluster: Cluster, proposed: Mapping[TopicPartition, Iterable[int]]) -> dict[str, dict[int, PartitionMove]]:
    """Sources and destinations per partition: in-progress reassignments of the cluster first, then the proposal.

    Sources of a partition under reassignment are its original replicas (replicas − adding).
    """
    moves: dict[str, dict[int, PartitionMove]] = {}
    for p in cluster.partitions():
        if p.adding or p.removing:
            moves.setdefault(p.topic, {})[p.id] = PartitionMove(
                frozenset(p.replicas) - frozenset(p.adding), frozenset(p.adding)
            )
    current = {p.tp: p.replicas for p in cluster.partitions()}
    for tp, replicas in proposed.items():
        tp = TopicPartition(*tp)
        part_moves = moves.setdefault(tp.topic, {})
        if tp.partition in part_moves:
            sources = part_moves[tp.partition].sources
        elif tp in current:
            sources = frozenset(current[tp])
        else:
            raise PlannerError(f"Trying to reassign a topic partition {tp} with 0 replicas")
        part_moves[tp.partition] = PartitionMove(sources, frozenset(replicas) - sources)
    return moves


def leader_throttles(moves: Mapping[str, Mapping[int, PartitionMove]]) -> dict[str, str]:
    """`leader.replication.throttled.replicas` per topic: every source as "partition:broker", TreeSet (string) order."""
    return {
        topic: ",".join(sorted({f"{pid}:{b}" for pid, m in parts.items() for b in m.sources}))
        for topic, parts in moves.items()
    }


def follower_throttles(moves: Mapping[str, Mapping[int, PartitionMove]]) -> dict[str, str]:
    """`follower.replication.throttled.replicas` per topic: every destination not among the sources."""
    return {
        topic: ",".join(
            sorted({f"{pid}:{b}" for pid, m in parts.items() for b in m.destinations if b not in m.sources})
        )
        for topic, parts in moves.items()
    }


def reassigning_brokers(moves: Mapping[str, Mapping[int, PartitionMove]]) -> list[int]:
    """Brokers that get `leader/follower.replication.throttled.rate`: every source and destination."""
    out: set[int] = set()
    for parts in moves.values():
        for m in parts.values():
            out |= m.sources | m.destinations
    return sorted(out)


@dataclass(frozen=True)
class PartitionReassignmentState:
    current: tuple[int, ...]
    target: tuple[int, ...]
    done: bool


@dataclass(frozen=True)
class LogDirMoveState:
    """`findLogDirMoveStates`' answer for one replica (`ReassignPartitionsCommand`)."""

    kind: str  # "missing-log-dir" | "missing-replica" | "active" | "cancelled" | "completed"
    target_dir: str
    current_dir: str | None = None
    future_dir: str | None = None


def reassignment_states(
    cluster: Cluster, targets: Mapping[TopicPartition, Iterable[int]]
) -> dict[TopicPartition, PartitionReassignmentState]:
    """`findPartitionReassignmentStates` against a topology: a partition with adding/removing replicas is in progress;
    otherwise done, with its current replicas (a partition that does not exist has none)."""
    parts = {p.tp: p for p in cluster.partitions()}
    out = {}
    for tp, target in targets.items():
        tp = TopicPartition(*tp)
        p = parts.get(tp)
        if p is not None and (p.adding or p.removing):
            out[tp] = PartitionReassignmentState(p.replicas, tuple(target), False)
        else:
            out[tp] = PartitionReassignmentState(p.replicas if p else (), tuple(target), True)
    return out


def incoming_bytes(cluster: Cluster, proposed: Mapping[TopicPartition, Iterable[int]]) -> dict[int, int]:
    """Per broker, the bytes of the replicas the reassignment adds there (a copy of the partition's current size;
    partitions of unknown size count 0)."""
    out: dict[int, int] = {}
    for tp, new in proposed.items():
        if not cluster.has_topic(tp.topic):
            continue
        p = cluster.topic(tp.topic).partition(tp.partition)
        for b in new:
            if b not in p.replicas:
                out[b] = out.get(b, 0) + (p.size or 0)
    return out


def short_of_space(
    cluster: Cluster, proposed: Mapping[TopicPartition, Iterable[int]], usable: Mapping[int, int]
) -> list[tuple[int, int, int]]:
    """(broker, bytes it would receive, bytes its log dirs report usable) where the first exceeds the second: the
    copies would fill its disks. Brokers that report no usable bytes are not judged."""
    incoming = incoming_bytes(cluster, proposed)
    return [(b, incoming[b], usable[b]) for b in sorted(incoming) if b in usable and incoming[b] > usable[b]]


def onto_cordoned(
    cluster: Cluster, proposed: Mapping[TopicPartition, Iterable[int]]
) -> dict[int, list[TopicPartition]]:
    """Per broker whose log dirs are all cordoned (KIP-1066), the partitions the reassignment adds a replica to it:
    Kafka's controller refuses them (`validateManualPartitionAssignment`, INVALID_REPLICA_ASSIGNMENT)."""
    out: dict[int, list[TopicPartition]] = {}
    closed = cluster.cordoned_ids
    for tp, new in proposed.items():
        if not cluster.has_topic(tp.topic) or not 0 <= tp.partition < cluster.topic(tp.topic).partition_count:
            continue
        current = cluster.topic(tp.topic).partition(tp.partition).replicas
        for b in new:
            if b in closed and b not in current:
                out.setdefault(b, []).append(tp)
    return {b: sorted(tps, key=tp_sort_key) for b, tps in sorted(out.items())}


def cordoned_refusal(cluster: Cluster, proposed: Mapping[TopicPartition, Iterable[int]]) -> str | None:
    """One line when the reassignment adds replicas to brokers whose log dirs are all cordoned, else None."""
    adds = onto_cordoned(cluster, proposed)
    if not adds:
        return None
    tps = sorted({tp for v in adds.values() for tp in v}, key=tp_sort_key)
    return (
        f"the plan adds replicas of {','.join(map(str, tps))} to broker(s) {','.join(map(str, adds))}, whose log "
        "dirs are all cordoned (cordoned.log.dirs, KIP-1066): Kafka's controller refuses that "
        "(INVALID_REPLICA_ASSIGNMENT). Plan again from the live cluster (plans leave cordoned brokers out) or "
        "uncordon the broker(s). Nothing was changed."
    )
