"""Writes through the Admin API, each one request as `ReassignPartitionsCommand` / `LeaderElectionCommand` send it:
AlterPartitionReassignments (a null target cancels), IncrementalAlterConfigs (throttles set and cleared),
ElectLeaders, AlterReplicaLogDirs. Answers come back as (error code, message) per partition; the CLI prints them.

A broker that does not implement a call (tansu, noida-db) gives one line naming the URL and the call.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from planner.adapters.kafka.connection import KafkaSession, check_code
from planner.model import PlannerError, TopicPartition

SET, DELETE = 0, 1  # AlterConfigOp.OpType
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_LEVEL_THROTTLES = (LEADER_RATE, FOLLOWER_RATE, LOG_DIR_RATE)  # ReassignPartitionsCommand's lists
TOPIC_LEVEL_THROTTLES = (LEADER_REPLICAS, FOLLOWER_REPLICAS)

# Java exception class of an error code, as `Throwable.toString` prints it (LeaderElectionCommand).
EXCEPTIONS = {
    3: "UnknownTopicOrPartitionException",
    39: "InvalidReplicaAssignmentException",
    80: "PreferredLeaderNotAvailableException",
    83: "EligibleLeadersNotAvailableException",
    84: "ElectionNotNeededException",
    85: "NoReassignmentInProgressException",
}


def java_exception(code: int, message: str | None) -> str:
    from kafka import errors as Errors

    name = EXCEPTIONS.get(code) or Errors.for_code(code).__name__.replace("Error", "Exception")
    default = getattr(Errors.for_code(code), "description", "") or ""
    return f"org.apache.kafka.common.errors.{name}: {message or default}"


def _unsupported_guard(session: KafkaSession, what: str, request: Any, node_id: int | None = None) -> Any:
    from kafka import errors as Errors

    try:
        return session.send(what, request, node_id)
    except (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError):
        raise PlannerError(
            f"{session.url}: the broker does not support {type(request).__name__[:-7]} "
            f"(needed to {what}); nothing was changed by this call"
        ) from None


def alter_reassignments(
    session: KafkaSession, targets: Mapping[TopicPartition, Iterable[int] | None]
) -> dict[TopicPartition, tuple[int, str | None]]:
    """AlterPartitionReassignments: a target list, or None to cancel. (code, message) per partition."""
    from kafka.protocol.admin import AlterPartitionReassignmentsRequest

    T = AlterPartitionReassignmentsRequest.ReassignableTopic
    P = T.ReassignablePartition
    by_topic: dict[str, list] = {}
    for tp, replicas in targets.items():
        by_topic.setdefault(tp.topic, []).append(
            P(partition_index=tp.partition, replicas=None if replicas is None else [int(r) for r in replicas])
        )
    request = AlterPartitionReassignmentsRequest(
        timeout_ms=int(session.opts.timeout * 1000),
        allow_replication_factor_change=True,
        topics=[T(name=t, partitions=parts) for t, parts in by_topic.items()],
    )
    what = "alter partition reassignments"
    response = _unsupported_guard(session, what, request)
    check_code(session, response.error_code, what, response.error_message)
    return {
        TopicPartition(t.name, p.partition_index): (p.error_code, p.error_message)
        for t in response.responses
        for p in t.partitions
    }


def incremental_alter(
    session: KafkaSession, ops: Mapping[tuple[int, str], list[tuple[str, int, str | None]]], what: str
) -> None:
    """IncrementalAlterConfigs: {(resource type, name): [(config, op, value)]}; any error is one line."""
    from kafka.protocol.admin import IncrementalAlterConfigsRequest

    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    C = R.AlterableConfig
    # KafkaAdminClient.incrementalAlterConfigs (nodeFor): a broker's own configs go to that broker, which refuses
    # another id ("Unexpected broker id, expected 1, but received 2", seen on a real 4.4 KRaft broker); topics and
    # the cluster default go to any broker in one request.
    by_node: dict[int | None, dict[tuple[int, str], list[tuple[str, int, str | None]]]] = {}
    for (rtype, name), configs in ops.items():
        node = int(name) if rtype == BROKER_RESOURCE and name else None
        by_node.setdefault(node, {})[(rtype, name)] = configs
    for node, group in sorted(by_node.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        request = IncrementalAlterConfigsRequest(
            resources=[
                R(
                    resource_type=rtype,
                    resource_name=name,
                    configs=[C(name=k, config_operation=op, value=v) for k, op, v in configs],
                )
                for (rtype, name), configs in group.items()
            ],
            validate_only=False,
        )
        response = _unsupported_guard(session, what, request, node)
        for r in response.responses:
            kind = "topic" if r.resource_type == TOPIC_RESOURCE else "broker"
            check_code(session, r.error_code, f"{what} ({kind} {r.resource_name})", r.error_message)


def set_throttles(
    session: KafkaSession, leader: Mapping[str, str], follower: Mapping[str, str], brokers: Iterable[int], rate: int
) -> None:
    """`modifyTopicThrottles` then `modifyInterBrokerThrottle`: topic replica lists, then both broker rates."""
    topic_ops: dict[tuple[int, str], list] = {}
    for topic in sorted(set(leader) | set(follower)):
        ops = []
        if topic in leader:
            ops.append((LEADER_REPLICAS, SET, leader[topic]))
        if topic in follower:
            ops.append((FOLLOWER_REPLICAS, SET, follower[topic]))
        topic_ops[(TOPIC_RESOURCE, topic)] = ops
    incremental_alter(session, topic_ops, "set the topic throttles")
    rates: list[tuple[str, int, str | None]] = [(LEADER_RATE, SET, str(rate)), (FOLLOWER_RATE, SET, str(rate))]
    incremental_alter(session, {(BROKER_RESOURCE, str(b)): rates for b in brokers}, "set the broker throttles")


def set_log_dir_throttle(session: KafkaSession, brokers: Iterable[int], rate: int) -> None:
    incremental_alter(
        session,
        {(BROKER_RESOURCE, str(b)): [(LOG_DIR_RATE, SET, str(rate))] for b in brokers},
        "set the replica-alter-dir throttle",
    )


def clear_throttles(session: KafkaSession, brokers: Iterable[int], topics: Iterable[str]) -> None:
    """`clearBrokerLevelThrottles` and `clearTopicLevelThrottles`: DELETE of every throttle config."""
    incremental_alter(
        session,
        {(BROKER_RESOURCE, str(b)): [(k, DELETE, None) for k in BROKER_LEVEL_THROTTLES] for b in brokers},
        "clear the broker throttles",
    )
    incremental_alter(
        session,
        {(TOPIC_RESOURCE, t): [(k, DELETE, None) for k in TOPIC_LEVEL_THROTTLES] for t in topics},
        "clear the topic throttles",
    )


def elect_leaders(
    session: KafkaSession, partitions: Iterable[TopicPartition], election_type: int = 0
) -> dict[TopicPartition, tuple[int, str | None]]:
    from kafka.protocol.admin import ElectLeadersRequest

    T = ElectLeadersRequest.TopicPartitions
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    request = ElectLeadersRequest(
        election_type=election_type,
        timeout_ms=int(session.opts.timeout * 1000),
        topic_partitions=[T(topic=t, partitions=p) for t, p in by_topic.items()],
    )
    what = "elect leaders"
    response = _unsupported_guard(session, what, request)
    check_code(session, getattr(response, "error_code", 0) or 0, what)
    return {
        TopicPartition(r.topic, p.partition_id): (p.error_code, p.error_message)
        for r in response.replica_election_results
        for p in r.partition_result
    }


def alter_replica_log_dirs(
    session: KafkaSession, moves: Mapping[tuple[TopicPartition, int], str]
) -> dict[tuple[TopicPartition, int], int]:
    """AlterReplicaLogDirs, one request per broker: error code per (partition, broker)."""
    from kafka.protocol.admin import AlterReplicaLogDirsRequest

    D = AlterReplicaLogDirsRequest.AlterReplicaLogDir
    T = D.AlterReplicaLogDirTopic
    per_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
    for (tp, broker), path in moves.items():
        per_broker.setdefault(broker, {}).setdefault(path, {}).setdefault(tp.topic, []).append(tp.partition)
    out = {}
    for broker, dirs in sorted(per_broker.items()):
        request = AlterReplicaLogDirsRequest(
            dirs=[
                D(path=path, topics=[T(name=t, partitions=ps) for t, ps in topics.items()])
                for path, topics in dirs.items()
            ]
        )
        from kafka import errors as Errors

        try:
            response = session.send(f"alter replica log dirs on broker {broker}", request, broker)
        except (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError):
            raise PlannerError(
                f"{session.url}: the broker does not support AlterReplicaLogDirs (needed to move "
                "replicas between log dirs)"
            ) from None
        for r in response.results:
            for p in r.partitions:
                out[(TopicPartition(r.topic_name, p.partition_index), broker)] = p.error_code
    return out


def restore_configs(session: KafkaSession, previous: Mapping[tuple[int, str], Mapping[str, str | None]]) -> None:
    """Put configs back as they were: SET the earlier value, or DELETE where there was none."""
    ops: dict[tuple[int, str], list[tuple[str, int, str | None]]] = {
        resource: [(k, SET if v is not None else DELETE, v) for k, v in sorted(values.items())]
        for resource, values in previous.items()
    }
    incremental_alter(session, ops, "put the throttles back")
