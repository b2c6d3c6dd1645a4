"""The fake cluster's wire side: read framed requests, decode them and encode answers with kafka-python's classes.

Request and response messages are kafka-python's (generated from Kafka's `clients/src/main/resources/common/message`
JSON schemas); the fake never writes a byte of a message body itself. Versions advertised in ApiVersions are the
highest both kafka-python and Kafka 4.1 know (kafka-python's `BROKER_API_VERSIONS[(4, 1)]`), lowered per API by
`FakeCluster.max_versions`.
"""

from __future__ import annotations

import copy
import socket
import struct
from typing import Any, Callable

import fake_cluster as fc
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

REQUESTS = {
    cls.API_KEY: cls
    for cls in (
        ApiVersionsRequest,
        MetadataRequest,
        DescribeClusterRequest,
        DescribeTopicPartitionsRequest,
        DescribeConfigsRequest,
        DescribeLogDirsRequest,
        ListPartitionReassignmentsRequest,
        AlterPartitionReassignmentsRequest,
        ElectLeadersRequest,
        IncrementalAlterConfigsRequest,
        AlterReplicaLogDirsRequest,
        SaslHandshakeRequest,
        SaslAuthenticateRequest,
    )
}
KAFKA_41 = BROKER_API_VERSIONS[(4, 1)]
NEWER = {DescribeLogDirsRequest.API_KEY}  # v5 (KIP-1066 isCordoned) is newer than 4.1: advertise kafka-python's max


def advertised(cluster: "fc.FakeCluster") -> dict[int, tuple[int, int]]:
    out = {}
    for key, cls in REQUESTS.items():
        low, high = KAFKA_41.get(key, (cls.min_version, cls.max_version))
        high = cls.max_version if key in NEWER else high
        low, high = max(low, cls.min_version), min(high, cls.max_version)
        out[key] = (low, min(high, cluster.max_versions.get(key, high)))
    return out


def serve(cluster: "fc.FakeCluster", broker_id: int, sock: socket.socket) -> None:
    """Answer one connection until the client closes it."""
    state = {"authenticated": cluster.sasl_users is None, "mechanism": None}
    while True:
        frame = fc.read_frame(sock)
        if frame is None:
            return
        api_key, version, correlation_id = struct.unpack(">hhi", frame[:8])
        answer = _answer(cluster, broker_id, state, api_key, version, correlation_id, frame)
        if answer is None:
            return
        try:
            sock.sendall(answer)
        except OSError:
            return


def _answer(
    cluster: "fc.FakeCluster",
    broker_id: int,
    state: dict,
    api_key: int,
    version: int,
    correlation_id: int,
    frame: bytes,
) -> bytes | None:
    versions = advertised(cluster)
    if api_key == ApiVersionsRequest.API_KEY and version > versions[api_key][1]:
        # Kafka answers a too-new ApiVersions at v0 with UNSUPPORTED_VERSION (KIP-511)
        response = ApiVersionsResponse(
            error_code=fc.UNSUPPORTED_VERSION,
            api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=versions[18][1])],
            throttle_time_ms=0,
        )
        return _encode(response, 0, correlation_id)
    if api_key not in versions or not versions[api_key][0] <= version <= versions[api_key][1]:
        return None  # a real broker closes the connection on a request it cannot parse
    request = REQUESTS[api_key].decode(frame, version=version, header=True)
    if not state["authenticated"] and api_key not in (18, 17, 36):
        return None  # SASL: nothing but ApiVersions and the handshake before authentication
    with cluster.lock:
        cluster.requests.append((api_key, version))
        handler = HANDLERS[api_key]
        response = handler(cluster, broker_id, request, version, state)
        if api_key in cluster.fail:
            _inject(response, cluster.fail[api_key])
    return _encode(response, version, correlation_id)


def _encode(response: Any, version: int, correlation_id: int) -> bytes:
    r = copy.copy(response)
    r._header = None
    r.API_VERSION = version
    r.with_header(correlation_id=correlation_id)
    return r.encode(header=True, framed=True)


# -- handlers ---------------------------------------------------------------------------------------------------
def api_versions(cluster, broker_id, request, version, state):
    av = ApiVersionsResponse.ApiVersion
    keys = [av(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(advertised(cluster).items())]
    return ApiVersionsResponse(
        error_code=0,
        api_keys=keys,
        throttle_time_ms=0,
        supported_features=[],
        finalized_features_epoch=-1,
        finalized_features=[],
        zk_migration_ready=False,
    )


def _live_brokers(cluster):
    return [b for b in sorted(cluster.brokers.values(), key=lambda b: b.id) if not b.fenced]


def metadata(cluster, broker_id, request, version, state):
    B = MetadataResponse.MetadataResponseBroker
    T = MetadataResponse.MetadataResponseTopic
    P = T.MetadataResponsePartition
    brokers = [B(node_id=b.id, host="127.0.0.1", port=b.port, rack=b.rack) for b in _live_brokers(cluster)]
    names = sorted(cluster.topics) if request.topics is None else [t.name for t in request.topics]
    if version == 0 and not names:
        names = sorted(cluster.topics)
    live = {b.id for b in _live_brokers(cluster)}
    topics = []
    for name in names:
        t = cluster.topics.get(name)
        if t is None:
            topics.append(
                T(
                    error_code=fc.UNKNOWN_TOPIC_OR_PARTITION,
                    name=name,
                    topic_id=fc.uuid.UUID(int=0),
                    is_internal=False,
                    partitions=[],
                    authorized_operations=set(),
                )
            )
            continue
        parts = [
            P(
                error_code=0,
                partition_index=i,
                leader_id=p.leader,
                leader_epoch=p.leader_epoch,
                replica_nodes=list(p.replicas),
                isr_nodes=list(p.isr),
                offline_replicas=[b for b in p.replicas if b not in live],
            )
            for i, p in enumerate(t.partitions)
        ]
        topics.append(
            T(
                error_code=0,
                name=name,
                topic_id=t.topic_id,
                is_internal=name.startswith("__"),
                partitions=parts,
                authorized_operations=set(),
            )
        )
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=cluster.cluster_id,
        controller_id=min(live),
        topics=topics,
        authorized_operations=set(),
        error_code=0,
    )


def describe_cluster(cluster, broker_id, request, version, state):
    D = DescribeClusterResponse.DescribeClusterBroker
    include_fenced = version >= 2 and request.include_fenced_brokers
    brokers = [
        D(broker_id=b.id, host="127.0.0.1", port=b.port, rack=b.rack, is_fenced=b.fenced)
        for b in sorted(cluster.brokers.values(), key=lambda b: b.id)
        if include_fenced or not b.fenced
    ]
    return DescribeClusterResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=1,
        cluster_id=cluster.cluster_id,
        controller_id=min(b.broker_id for b in brokers),
        brokers=brokers,
        authorized_operations=set(),
    )


def describe_topic_partitions(cluster, broker_id, request, version, state):
    """Topics in name order, partitions from the cursor on, at most `response_partition_limit` in one answer."""
    T = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
    P = T.DescribeTopicPartitionsResponsePartition
    names = sorted(t.name for t in request.topics) if request.topics else sorted(cluster.topics)
    cursor = request.cursor
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    limit = request.response_partition_limit
    topics, count, next_cursor = [], 0, None
    for name in names:
        t = cluster.topics.get(name)
        if t is None:
            topics.append(
                T(
                    error_code=fc.UNKNOWN_TOPIC_OR_PARTITION,
                    name=name,
                    topic_id=fc.uuid.UUID(int=0),
                    is_internal=False,
                    partitions=[],
                    topic_authorized_operations=-2147483648,
                )
            )
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        parts = []
        for i in range(start, len(t.partitions)):
            if count == limit:
                next_cursor = DescribeTopicPartitionsResponse.Cursor(topic_name=name, partition_index=i)
                break
            p = t.partitions[i]
            parts.append(
                P(
                    error_code=0,
                    partition_index=i,
                    leader_id=p.leader,
                    leader_epoch=p.leader_epoch,
                    replica_nodes=cluster.replicas_shown(name, i, p.replicas),
                    isr_nodes=list(p.isr),
                    eligible_leader_replicas=p.elr,
                    last_known_elr=p.last_known_elr,
                    offline_replicas=[b for b in p.replicas if cluster.brokers[b].fenced],
                )
            )
            count += 1
        topics.append(
            T(
                error_code=0,
                name=name,
                topic_id=t.topic_id,
                is_internal=name.startswith("__"),
                partitions=parts,
                topic_authorized_operations=-2147483648,
            )
        )
        if next_cursor is not None:
            break
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=topics, next_cursor=next_cursor)


def describe_configs(cluster, broker_id, request, version, state):
    R = DescribeConfigsResponse.DescribeConfigsResult
    C = R.DescribeConfigsResourceResult
    results = []
    for res in request.resources:
        if res.resource_type == fc.TOPIC:
            t = cluster.topics.get(res.resource_name)
            if t is None:
                results.append(
                    R(
                        error_code=fc.UNKNOWN_TOPIC_OR_PARTITION,
                        error_message=None,
                        resource_type=res.resource_type,
                        resource_name=res.resource_name,
                        configs=[],
                    )
                )
                continue
            values = {k: (v, fc.SOURCE_DEFAULT) for k, v in fc.TOPIC_DEFAULTS.items()}
            values.update({k: (v, fc.SOURCE_DYNAMIC_TOPIC) for k, v in t.configs.items()})
        else:
            b = int(res.resource_name) if res.resource_name.isdigit() else None
            values = {
                "cordoned.log.dirs": (",".join(cluster.brokers[b].cordoned), fc.SOURCE_DEFAULT)
                if b in cluster.brokers and not cluster.brokers[b].cordoned
                else (",".join(cluster.brokers[b].cordoned), fc.SOURCE_DYNAMIC_BROKER)
                if b in cluster.brokers
                else ("", fc.SOURCE_DEFAULT)
            }
            values.update(
                {k: (v, fc.SOURCE_DYNAMIC_BROKER) for k, v in cluster.broker_configs.get(res.resource_name, {}).items()}
            )
        keys = res.configuration_keys
        configs = [
            C(
                name=k,
                value=v,
                read_only=False,
                config_source=src,
                is_default=src == fc.SOURCE_DEFAULT,
                is_sensitive=False,
                synonyms=[],
                config_type=0,
                documentation=None,
            )
            for k, (v, src) in sorted(values.items())
            if keys is None or k in keys
        ]
        results.append(
            R(
                error_code=0,
                error_message=None,
                resource_type=res.resource_type,
                resource_name=res.resource_name,
                configs=configs,
            )
        )
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


def describe_log_dirs(cluster, broker_id, request, version, state):
    """This broker's log dirs: every replica it holds (and every future replica), with its size."""
    R = DescribeLogDirsResponse.DescribeLogDirsResult
    T = R.DescribeLogDirsTopic
    P = T.DescribeLogDirsPartition
    broker = cluster.brokers[broker_id]
    wanted = None if request.topics is None else {(t.topic, p) for t in request.topics for p in t.partitions}
    results = []
    for path in broker.log_dirs:
        topics, used = [], 0
        for name in sorted(cluster.topics):
            parts = []
            for i, p in enumerate(cluster.topics[name].partitions):
                if wanted is not None and (name, i) not in wanted:
                    continue
                if p.dirs.get(broker_id) == path and broker_id in p.have:
                    have = p.have[broker_id]
                    parts.append(
                        P(
                            partition_index=i,
                            partition_size=have,
                            offset_lag=0 if broker_id in p.isr else p.size - have,
                            is_future_key=False,
                        )
                    )
                    used += have
                future = p.future.get(broker_id)
                if future is not None and future[0] == path:
                    parts.append(
                        P(
                            partition_index=i,
                            partition_size=future[1],
                            offset_lag=p.size - future[1],
                            is_future_key=True,
                        )
                    )
                    used += future[1]
            if parts:
                topics.append(T(name=name, partitions=parts))
        results.append(
            R(
                error_code=0,
                log_dir=path,
                topics=topics,
                total_bytes=broker.total_bytes,
                usable_bytes=broker.total_bytes - used,
                is_cordoned=path in broker.cordoned,
            )
        )
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=results)


def list_reassignments(cluster, broker_id, request, version, state):
    """`ReplicationControlManager.listPartitionReassignments`: only partitions with one in progress."""
    T = ListPartitionReassignmentsResponse.OngoingTopicReassignment
    P = T.OngoingPartitionReassignment
    if request.topics is None:
        wanted = [(n, list(range(len(t.partitions)))) for n, t in sorted(cluster.topics.items())]
    else:
        wanted = [(t.name, list(t.partition_indexes)) for t in request.topics if t.name in cluster.topics]
    topics = []
    for name, pids in wanted:
        t = cluster.topics[name]
        parts = [
            P(
                partition_index=i,
                replicas=list(t.partitions[i].replicas),
                adding_replicas=list(t.partitions[i].adding),
                removing_replicas=list(t.partitions[i].removing),
            )
            for i in pids
            if 0 <= i < len(t.partitions) and (t.partitions[i].adding or t.partitions[i].removing)
        ]
        if parts:
            topics.append(T(name=name, partitions=parts))
    return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=0, error_message=None, topics=topics)


def alter_reassignments(cluster, broker_id, request, version, state):
    T = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
    P = T.ReassignablePartitionResponse
    responses = []
    for topic in request.topics:
        parts = []
        for part in topic.partitions:
            code, message = cluster.alter_reassignment(
                topic.name, part.partition_index, None if part.replicas is None else list(part.replicas)
            )
            parts.append(P(partition_index=part.partition_index, error_code=code, error_message=message))
        responses.append(T(name=topic.name, partitions=parts))
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0, allow_replication_factor_change=True, error_code=0, error_message=None, responses=responses
    )


def elect_leaders(cluster, broker_id, request, version, state):
    R = ElectLeadersResponse.ReplicaElectionResult
    P = R.PartitionResult
    election_type = request.election_type if version >= 1 else 0
    if request.topic_partitions is None:
        wanted = [(n, list(range(len(t.partitions))), True) for n, t in sorted(cluster.topics.items())]
    else:
        wanted = [(t.topic, list(t.partitions), False) for t in request.topic_partitions]
    results = []
    for name, pids, all_partitions in wanted:
        parts = []
        for pid in pids:
            code, message = cluster.elect(name, pid, election_type)
            if not (all_partitions and code == fc.ELECTION_NOT_NEEDED):
                parts.append(P(partition_id=pid, error_code=code, error_message=message))
        results.append(R(topic=name, partition_result=parts))
    return ElectLeadersResponse(throttle_time_ms=0, error_code=0, replica_election_results=results)


def incremental_alter_configs(cluster, broker_id, request, version, state):
    R = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
    responses = []
    for res in request.resources:
        code = 0
        if res.resource_type == 4 and res.resource_name and int(res.resource_name) != broker_id:
            # ControllerConfigurationValidator / ConfigAdminManager: a broker's configs go to that broker
            message = f"Unexpected broker id, expected {broker_id}, but received {res.resource_name}"
            responses.append(R(error_code=42, error_message=message, resource_type=4, resource_name=res.resource_name))
            continue
        if not request.validate_only:
            for c in res.configs:
                code = code or cluster.alter_config(
                    res.resource_type, res.resource_name, c.name, c.config_operation, c.value
                )
        responses.append(
            R(error_code=code, error_message=None, resource_type=res.resource_type, resource_name=res.resource_name)
        )
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)


def alter_replica_log_dirs(cluster, broker_id, request, version, state):
    R = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
    P = R.AlterReplicaLogDirPartitionResult
    results = []
    for d in request.dirs:
        for t in d.topics:
            parts = [
                P(partition_index=i, error_code=cluster.alter_log_dir(broker_id, t.name, i, d.path))
                for i in t.partitions
            ]
            results.append(R(topic_name=t.name, partitions=parts))
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=results)


def sasl_handshake(cluster, broker_id, request, version, state):
    if request.mechanism != "PLAIN":
        return SaslHandshakeResponse(error_code=fc.UNSUPPORTED_SASL_MECHANISM, mechanisms=["PLAIN"])
    state["mechanism"] = "PLAIN"
    return SaslHandshakeResponse(error_code=0, mechanisms=["PLAIN"])


def sasl_authenticate(cluster, broker_id, request, version, state):
    """SASL/PLAIN (RFC 4616): authzid NUL user NUL password; Kafka's PlainServerCallbackHandler's text on failure."""
    if state["mechanism"] != "PLAIN":
        return SaslAuthenticateResponse(
            error_code=fc.ILLEGAL_SASL_STATE,
            error_message="Unexpected handshake request",
            auth_bytes=b"",
            session_lifetime_ms=0,
        )
    parts = bytes(request.auth_bytes).split(b"\0")
    ok = len(parts) == 3 and (cluster.sasl_users or {}).get(parts[1].decode()) == parts[2].decode()
    if not ok:
        return SaslAuthenticateResponse(
            error_code=fc.SASL_AUTHENTICATION_FAILED,
            error_message="Authentication failed: Invalid username or password",
            auth_bytes=b"",
            session_lifetime_ms=0,
        )
    state["authenticated"] = True
    return SaslAuthenticateResponse(error_code=0, error_message=None, auth_bytes=b"", session_lifetime_ms=0)


def _inject(response: Any, code: int) -> None:
    """`FakeCluster.fail`: the error code where the response carries one (top level, else per resource)."""
    if hasattr(response, "error_code") and response.error_code is not None:
        response.error_code = code
    for result in getattr(response, "results", None) or ():
        result.error_code = code


HANDLERS: dict[int, Callable] = {
    ApiVersionsRequest.API_KEY: api_versions,
    MetadataRequest.API_KEY: metadata,
    DescribeClusterRequest.API_KEY: describe_cluster,
    DescribeTopicPartitionsRequest.API_KEY: describe_topic_partitions,
    DescribeConfigsRequest.API_KEY: describe_configs,
    DescribeLogDirsRequest.API_KEY: describe_log_dirs,
    ListPartitionReassignmentsRequest.API_KEY: list_reassignments,
    AlterPartitionReassignmentsRequest.API_KEY: alter_reassignments,
    ElectLeadersRequest.API_KEY: elect_leaders,
    IncrementalAlterConfigsRequest.API_KEY: incremental_alter_configs,
    AlterReplicaLogDirsRequest.API_KEY: alter_replica_log_dirs,
    SaslHandshakeRequest.API_KEY: sasl_handshake,
    SaslAuthenticateRequest.API_KEY: sasl_authenticate,
}
