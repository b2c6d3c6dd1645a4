"""Which `__consumer_offsets` / `__transaction_state` partition — and so which broker — coordinates a group or a
transactional id: `Utils.abs(id.hashCode()) % partitions`, same formula for the classic and the KIP-848 group
coordinator (`core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala` `partitionFor`,
`group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorService.java` `partitionFor`,
`core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala` `partitionFor`). The coordinator is
the leader of that partition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from planner.java import java_abs, string_hash_code
from planner.leadership import topic_states
from planner.model import NO_LEADER, Cluster, PlannerError

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
DEFAULT_PARTITIONS = 50  # offsets.topic.num.partitions, transaction.state.log.num.partitions


def partition_for(key: str, partitions: int = DEFAULT_PARTITIONS) -> int:
    """GroupMetadataManager.partitionFor / TransactionStateManager.partitionFor."""
    if partitions <= 0:
        raise PlannerError(f"--partitions must be positive, got {partitions}")
    return java_abs(string_hash_code(key)) % partitions


def internal_topic(transactional: bool) -> str:
    return TRANSACTION_TOPIC if transactional else OFFSETS_TOPIC


@dataclass(frozen=True)
class Coordinators:
    """Where each id is coordinated: `rows` of {id, partition[, coordinator (None: no leader), replicas]}; the
    broker columns only when a cluster holding the internal topic was given."""

    topic: str
    partitions: int
    rows: list[dict]
    with_brokers: bool
    topic_missing: bool  # a cluster was given but it has no such topic yet (Kafka creates it on first use)


def coordinators(
    ids: Sequence[str], transactional: bool, partitions: int | None = None, cluster: Cluster | None = None
) -> Coordinators:
    """The partition of each id and, with a cluster that has the internal topic, the broker leading it (the
    coordinator). The topic's own partition count wins over `partitions` when the cluster has it."""
    topic_name = internal_topic(transactional)
    leader_of: dict[int, int] | None = None
    replicas_of: dict[int, tuple[int, ...]] = {}
    if cluster is not None and cluster.has_topic(topic_name):
        topic = cluster.topic(topic_name)
        partitions = topic.partition_count
        leader_of = {p.id: s.leader for p, s in zip(topic.partitions, topic_states(cluster, topic))}
        replicas_of = {p.id: p.replicas for p in topic.partitions}
    n = partitions if partitions is not None else DEFAULT_PARTITIONS
    rows = []
    for key in ids:
        p = partition_for(key, n)
        row: dict = {"id": key, "partition": p}
        if leader_of is not None:
            row["coordinator"] = leader_of[p] if leader_of[p] != NO_LEADER else None
            row["replicas"] = list(replicas_of[p])
        rows.append(row)
    missing = cluster is not None and leader_of is None
    return Coordinators(topic_name, n, rows, leader_of is not None, missing)
