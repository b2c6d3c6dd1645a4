"""Which `__consumer_offsets` / `__transaction_state` partition — and so which broker — coordinates a group or a
transactional id: `Utils.abs(id.hashCode()) % partitions`, same formula for the classic and the KIP-848 group
coordinator (`core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala` `partitionFor`,
`group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorService.java` `partitionFor`,
`core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala` `partitionFor`). The coordinator is
the leader of that partition."""

from __future__ import annotations

from planner.java import java_abs, string_hash_code
from planner.model import PlannerError

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
