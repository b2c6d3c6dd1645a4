"""Decoding Kafka's ZooKeeper znodes (pure functions over bytes), and the cluster they describe.

The layout and JSON formats are Kafka's (`core/src/main/scala/kafka/zk/ZkData.scala`): `BrokerIdZNode`,
`TopicZNode`, `TopicPartitionStateZNode`, `ConfigEntityZNode`, `ReassignPartitionsZNode`,
`PreferredReplicaElectionZNode`. `Znodes` holds a whole cluster's decoded znodes: `snapshot_of` turns them into a
`ZkSnapshot` without a server (the seam tests and other readers feed)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from planner.model import (
    NO_LEADER,
    OFFLINE,
    ONLINE,
    Broker,
    Cluster,
    ObservedState,
    Partition,
    PlannerError,
    Topic,
    TopicPartition,
    tp_sort_key,
)

REASSIGN_PATH = "/admin/reassign_partitions"
# ZooKeeper's default jute.maxbuffer (0xfffff bytes): a server closes the connection on a request packet longer than
# this (NIOServerCnxn.readLength / NettyServerCnxn: "Len error"), after the client sent it whole.
JUTE_MAXBUFFER = 0xFFFFF


def create_request_bytes(path: str, data: bytes) -> int:
    """Length of the create request packet kazoo sends for `path` holding `data` with the open ACL (world:anyone):
    RequestHeader (xid, type) + CreateRequest (path, data, ACL vector, flags), jute-encoded (zookeeper.jute)."""
    acl = 4 + (4 + 4 + len("world")) + (4 + len("anyone"))  # perms, scheme, id
    return 8 + (4 + len(path.encode("utf-8"))) + (4 + len(data)) + (4 + acl) + 4


def check_create_size(chroot: str, path: str, data: str, source: str) -> None:
    """Refuse, before connecting, a znode ZooKeeper would refuse by size (it would cut the connection mid-write)."""
    size = create_request_bytes(chroot + path, data.encode("utf-8"))
    if size > JUTE_MAXBUFFER:
        raise PlannerError(
            f"{source}: {path} would be {len(data.encode('utf-8'))} bytes, a request of {size} bytes, over "
            f"ZooKeeper's jute.maxbuffer of {JUTE_MAXBUFFER} bytes (1 MiB less one): split the reassignment "
            "into batches (reassign ... --batch-size N) and submit them one after another"
        )


ELECTION_PATH = "/admin/preferred_replica_election"


def _explain(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def _json(url: str, path: str, data: bytes | None) -> Any:
    if data is None or data == b"":
        raise PlannerError(f"{url}: {path}: empty znode, expected JSON")
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise PlannerError(f"{url}: {path}: malformed JSON: nested too deep") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise PlannerError(f"{url}: {path}: malformed JSON: {_explain(exc)}") from None


def _int_field(url: str, path: str, obj: Mapping, key: str, *, default: Any = ...) -> int:
    if key not in obj or obj[key] is None:
        if default is not ...:
            return default
        raise PlannerError(f"{url}: {path}: missing field {key!r}")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
            return int(value)
        raise PlannerError(f"{url}: {path}: field {key!r} must be an integer, got {json.dumps(value)}")
    return value


def _id_list(url: str, path: str, value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise PlannerError(f"{url}: {path}: {what} must be a list of broker ids, got {json.dumps(value)}")
    return tuple(value)


_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")  # Kafka's EndPoint.uriParseExp


def decode_broker(url: str, broker_id: int, data: bytes | None) -> Broker:
    """`/brokers/ids/{id}` (`BrokerIdZNode.decode`): v1 host/port; v2+ endpoints; rack optional (v3+)."""
    path = f"/brokers/ids/{broker_id}"
    obj = _json(url, path, data)
    if not isinstance(obj, dict):
        raise PlannerError(f"{url}: {path}: expected a JSON object")
    version = _int_field(url, path, obj, "version")
    if version < 1:
        raise PlannerError(
            f"{url}: {path}: Unsupported version of broker registration: {(data or b'').decode('utf-8', 'replace')}"
        )
    host = obj.get("host")
    port = obj.get("port")
    if host is not None and not isinstance(host, str):
        raise PlannerError(f"{url}: {path}: field 'host' must be a string, got {json.dumps(host)}")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        raise PlannerError(f"{url}: {path}: field 'port' must be an integer, got {json.dumps(port)}")
    if version >= 2:
        endpoints = obj.get("endpoints")
        if not isinstance(endpoints, list) or not all(isinstance(e, str) for e in endpoints):
            raise PlannerError(
                f"{url}: {path}: version {version} registration needs 'endpoints' (a list of "
                f'"LISTENER://host:port"), got {json.dumps(endpoints)}'
            )
        parsed = []
        for e in endpoints:
            m = _ENDPOINT_RE.match(e)
            if not m:
                raise PlannerError(f"{url}: {path}: Unable to parse {e} to a broker endpoint")
            parsed.append((m.group(2), int(m.group(3))))
        if not host and parsed and parsed[0][0]:
            host, port = parsed[0]  # no PLAINTEXT listener: Kafka writes host null; the first endpoint names it
    if not host:
        raise PlannerError(
            f"{url}: {path}: broker registration has no host (neither 'host' nor 'endpoints' "
            "name one); the broker's advertised.listeners must be set"
        )
    if port is None or port < 0:
        port = None
    rack = obj.get("rack")
    if rack is not None and not isinstance(rack, str):
        raise PlannerError(f"{url}: {path}: field 'rack' must be a string, got {json.dumps(rack)}")
    return Broker(id=broker_id, rack=rack, host=host, port=port, state=ONLINE)


@dataclass(frozen=True)
class TopicZnode:
    name: str
    partitions: dict[int, tuple[int, ...]]
    adding: dict[int, tuple[int, ...]]
    removing: dict[int, tuple[int, ...]]
    topic_id: str | None


def decode_topic(url: str, name: str, data: bytes | None) -> TopicZnode:
    """`/brokers/topics/{t}` (`TopicZNode.decode`): versions 1-3."""
    path = f"/brokers/topics/{name}"
    obj = _json(url, path, data)
    if not isinstance(obj, dict):
        raise PlannerError(f"{url}: {path}: expected a JSON object")

    def pmap(key: str) -> dict[int, tuple[int, ...]]:
        raw = obj.get(key)
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise PlannerError(f"{url}: {path}: {key!r} must map partition ids to replica lists")
        out = {}
        for k, v in raw.items():
            if not re.fullmatch(r"\d+", k):
                raise PlannerError(f"{url}: {path}: {key!r} key {k!r} is not a partition id")
            out[int(k)] = _id_list(url, path, v, f"{key}.{k}")
        return out

    if "partitions" not in obj:
        raise PlannerError(f"{url}: {path}: missing field 'partitions'")
    partitions = pmap("partitions")
    missing = [p for p in range(len(partitions)) if p not in partitions]
    if missing:
        raise PlannerError(
            f"{url}: {path}: partition ids must be 0..{len(partitions) - 1}; missing {','.join(map(str, missing))}"
        )
    topic_id = obj.get("topic_id")
    if topic_id is not None and not isinstance(topic_id, str):
        raise PlannerError(f"{url}: {path}: field 'topic_id' must be a string")
    return TopicZnode(name, partitions, pmap("adding_replicas"), pmap("removing_replicas"), topic_id)


def decode_state(url: str, path: str, data: bytes | None) -> ObservedState:
    """`…/partitions/{p}/state` (`TopicPartitionStateZNode.decode`)."""
    obj = _json(url, path, data)
    if not isinstance(obj, dict):
        raise PlannerError(f"{url}: {path}: expected a JSON object")
    leader = _int_field(url, path, obj, "leader")
    epoch = _int_field(url, path, obj, "leader_epoch")
    if "isr" not in obj:
        raise PlannerError(f"{url}: {path}: missing field 'isr'")
    isr = _id_list(url, path, obj["isr"], "isr")
    return ObservedState(leader=leader if leader >= 0 else NO_LEADER, isr=isr, leader_epoch=epoch)


def decode_config(url: str, path: str, data: bytes | None) -> dict[str, str]:
    """`/config/topics/{t}` (`ConfigEntityZNode.decode`): the override map, in stored order."""
    if not data:
        return {}
    obj = _json(url, path, data)
    config = obj.get("config") if isinstance(obj, dict) else None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise PlannerError(f"{url}: {path}: 'config' must be an object of name → value")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def decode_reassignment(url: str, data: bytes | None) -> dict[TopicPartition, tuple[int, ...]]:
    """`/admin/reassign_partitions` (`ReassignPartitionsZNode.decode`)."""
    obj = _json(url, REASSIGN_PATH, data)
    parts = obj.get("partitions") if isinstance(obj, dict) else None
    if not isinstance(parts, list):
        raise PlannerError(f'{url}: {REASSIGN_PATH}: expected {{"version":1,"partitions":[...]}}')
    out = {}
    for entry in parts:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str):
            raise PlannerError(f"{url}: {REASSIGN_PATH}: each partition needs 'topic', 'partition', 'replicas'")
        pid = _int_field(url, REASSIGN_PATH, entry, "partition")
        out[TopicPartition(entry["topic"], pid)] = _id_list(url, REASSIGN_PATH, entry.get("replicas"), "replicas")
    return out


def encode_election(partitions: Iterable[TopicPartition]) -> str:
    """`PreferredReplicaElectionZNode.encode`: compact JSON, partitions sorted by topic then partition."""
    parts = [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(set(partitions), key=tp_sort_key)]
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ZkSnapshot:
    cluster: Cluster
    reassigning: dict[TopicPartition, tuple[int, ...]] | None = None  # /admin/reassign_partitions; None: absent
    electing: bool = False  # /admin/preferred_replica_election exists
    attempts: int = 1  # reads needed for a consistent snapshot
    znodes: int = 0  # znodes read in the final attempt


@dataclass(frozen=True)
class Znodes:
    """A cluster's decoded znodes, as one consistent read (or a test) found them."""

    brokers: Mapping[int, Broker] = field(default_factory=dict)
    topics: Mapping[str, TopicZnode] = field(default_factory=dict)
    configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    states: Mapping[tuple[str, int], ObservedState] = field(default_factory=dict)
    deleting: frozenset[str] = frozenset()
    reassigning: dict[TopicPartition, tuple[int, ...]] | None = None
    electing: bool = False
    cluster_id: bytes | None = None  # /cluster/id as stored


def cluster_name(cluster_id: bytes | None) -> str | None:
    """The id in `/cluster/id` (`ClusterIdZNode`), None when absent or unreadable."""
    if not cluster_id:
        return None
    try:
        cid = json.loads(cluster_id.decode("utf-8")).get("id")
    except (ValueError, UnicodeDecodeError, AttributeError, RecursionError):
        return None
    return cid if isinstance(cid, str) else None


def snapshot_of(znodes: Znodes, read: int = 0) -> ZkSnapshot:
    """The snapshot the decoded znodes describe (pure): `read` is the number of znodes read for it."""
    cluster = build_cluster(
        znodes.brokers,
        znodes.topics,
        znodes.configs,
        znodes.states,
        znodes.deleting,
        name=cluster_name(znodes.cluster_id),
    )
    return ZkSnapshot(cluster=cluster, reassigning=znodes.reassigning, electing=znodes.electing, znodes=read)


def build_cluster(
    brokers: Mapping[int, Broker],
    topics: Mapping[str, TopicZnode],
    configs: Mapping[str, Mapping[str, str]],
    states: Mapping[tuple[str, int], ObservedState],
    deleting: Iterable[str] = (),
    name: str | None = None,
) -> Cluster:
    """A `Cluster` from decoded znodes (pure).

    The topic znode is the truth for replicas and adding/removing (2.4+ controllers record every reassignment
    there, KIP-455). A legacy `/admin/reassign_partitions` request is not folded in: Kafka's own describe does not
    show it either; `reassigning` only feeds `zk status` and `zk submit`.
    """
    deleting = set(deleting)
    referenced: set[int] = set()
    out_topics = []
    for t in sorted(topics):
        tz = topics[t]
        parts = []
        for p in sorted(tz.partitions):
            replicas = tz.partitions[p]
            adding, removing = tz.adding.get(p, ()), tz.removing.get(p, ())
            obs = states.get((t, p))
            referenced.update(replicas, adding, removing)
            if obs is not None:
                referenced.update(obs.isr)
                if obs.leader != NO_LEADER:
                    referenced.add(obs.leader)
            parts.append(Partition(topic=t, id=p, replicas=replicas, adding=adding, removing=removing, observed=obs))
        out_topics.append(
            Topic(
                name=t,
                partitions=tuple(parts),
                configs=dict(configs.get(t, {})),
                topic_id=tz.topic_id,
                marked_for_deletion=t in deleting,
            )
        )
    all_brokers = dict(brokers)
    for b in referenced - set(brokers):
        all_brokers[b] = Broker(id=b, state=OFFLINE)
    return Cluster(
        brokers=tuple(all_brokers[b] for b in sorted(all_brokers)),
        topics=tuple(out_topics),
        name=name,
        mode="zookeeper",
    )
