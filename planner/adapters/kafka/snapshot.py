"""Read a live KRaft (or any Admin-API) cluster into a `Cluster`: brokers and racks, topics with leader/ISR/ELR,
topic ids and overrides, replica sizes and log dirs, reassignments in progress.

Calls, in order (each one round trip per broker at most):

* DescribeCluster (racks, fenced brokers); kafka-python 3.0.12's `describe_cluster` raises KeyError
  'endpoint_type' against a broker that answers only v0, so Metadata (which also carries racks) is the fallback;
* DescribeTopicPartitions (KIP-966: ELR and LastKnownElr), paginated; Metadata where the broker lacks it;
* ListPartitionReassignments: adding/removing replicas, as `zk://` reads them from the topic znodes;
* DescribeConfigs: every topic's configs that are not Kafka's defaults (overrides, and cluster- or broker-level
  values such as the `min.insync.replicas=1` a 4.x KRaft controller sets cluster-wide), as kafka-topics prints them
  on `Configs:`, and every broker's `cordoned.log.dirs` (KIP-1066);
* DescribeLogDirs on every broker: the size of every replica in every log dir (isFuture for log-dir moves); the
  size of a partition is the largest non-future replica, as `--sizes` reads `kafka-log-dirs --describe`.

A broker that lacks DescribeLogDirs or ListPartitionReassignments (tansu, noida-db) leaves sizes unknown or no
reassignment: `KafkaSnapshot.notes` says so.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Iterable

from planner.adapters.kafka.admin import BROKER_LEVEL_THROTTLES
from planner.adapters.kafka.connection import KafkaOptions, KafkaSession, check_code
from planner.adapters.validate import check_cluster
from planner.java import hashmap_order
from planner.model import (
    FENCED,
    NO_LEADER,
    OFFLINE,
    Broker,
    Cluster,
    ObservedState,
    Partition,
    Topic,
    TopicPartition,
)

TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
PAGE = 2000  # DescribeTopicPartitions' default response_partition_limit


@dataclass(frozen=True)
class ReplicaDir:
    broker: int
    log_dir: str
    size: int
    offset_lag: int
    future: bool


@dataclass(frozen=True)
class LogDir:
    broker: int
    path: str
    total_bytes: int | None
    usable_bytes: int | None
    cordoned: bool


@dataclass(frozen=True)
class KafkaSnapshot:
    cluster: Cluster
    replicas: dict[TopicPartition, tuple[ReplicaDir, ...]] = field(default_factory=dict)
    log_dirs: tuple[LogDir, ...] = ()
    reassigning: dict[TopicPartition, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=dict
    )  # replicas, adding, removing
    cordoned: dict[int, tuple[str, ...]] = field(default_factory=dict)  # broker -> cordoned.log.dirs
    # broker -> its own dynamic throttle rates (the values `kafka submit` puts back when the controller refuses all)
    broker_throttles: dict[int, dict[str, str]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def topic_id_text(value: Any) -> str | None:
    """Kafka's `Uuid.toString` (base64url, no padding) of a UUID; None for the zero id."""
    if isinstance(value, str):
        import uuid

        value = uuid.UUID(value)
    raw = getattr(value, "bytes", None)
    if raw is None or raw == bytes(16):
        return None
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def read_snapshot(url: str, opts: KafkaOptions) -> KafkaSnapshot:
    with KafkaSession(url, opts) as session:
        return read_session(session)


def read_session(session: KafkaSession) -> KafkaSnapshot:
    notes: list[str] = []
    brokers, cluster_id = _brokers(session)
    topics = _topics(session, notes)
    # kafka-topics 3.8+ prints `Elr: N/A` for what a broker without DescribeTopicPartitions answers (ZooKeeper mode,
    # KRaft before 3.8): the cluster's `mode` says so (it only decides that, docs/topology.md)
    mode = "zookeeper" if any(n.startswith("the broker lacks DescribeTopicPartitions") for n in notes) else "kraft"
    reassigning = _reassignments(session, notes)
    configs = _topic_configs(session, [t["name"] for t in topics])
    cordoned, throttles = _broker_configs(session, [b.id for b in brokers if b.state != FENCED], notes)
    replicas, log_dirs = _log_dirs(session, [b.id for b in brokers if b.state != FENCED], notes)
    full = fully_cordoned(log_dirs, cordoned)
    space = disk_space([b.id for b in brokers], log_dirs, cordoned)
    brokers = [
        replace(b, cordoned=b.id in full, usable_bytes=space[b.id][0], total_bytes=space[b.id][1]) for b in brokers
    ]
    cluster = build_cluster(brokers, topics, configs, reassigning, replicas, cluster_id, mode)
    # the same rules as a topology file's and zk://'s: what `kafka export` writes must load back
    check_cluster(cluster, session.url)
    for b in full:
        notes.append(f"broker {b}: every log dir is cordoned (cordoned.log.dirs, KIP-1066): it takes no new replicas")
    return KafkaSnapshot(
        cluster=cluster,
        replicas=replicas,
        log_dirs=log_dirs,
        reassigning=reassigning,
        cordoned=cordoned,
        broker_throttles=throttles,
        notes=tuple(notes),
    )


def _unsupported(session: KafkaSession, what: str, fn: Callable[[], Any]) -> tuple[bool, Any]:
    """(True, result), or (False, None) when the broker lacks the API."""
    from kafka import errors as Errors

    try:
        return True, session.call(what, fn)
    except (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError):
        return False, None


def _brokers(session: KafkaSession) -> tuple[list[Broker], str | None]:
    admin = session.admin
    try:
        described = session.call("describe the cluster", admin.describe_cluster)
    except KeyError:  # kafka-python 3.0.12 against DescribeCluster v0 only: Metadata carries racks too
        described = session.call("read the cluster metadata", admin._manager.run, admin._get_cluster_metadata, [])
        for b in described["brokers"]:
            b["broker_id"] = b.pop("node_id")
    brokers = [
        Broker(
            id=b["broker_id"],
            rack=b.get("rack"),
            host=b.get("host"),
            port=b.get("port"),
            state=FENCED if b.get("is_fenced") else "online",
        )
        for b in described["brokers"]
    ]
    return sorted(brokers, key=lambda b: b.id), described.get("cluster_id")


def _topics(session: KafkaSession, notes: list[str]) -> list[dict]:
    admin = session.admin
    names = sorted(session.call("list topics", admin.list_topics))
    if not names:
        return []
    topics: dict[str, dict] = {}
    cursor = None
    while True:
        ok, page = _unsupported(
            session, "describe topic partitions", partial(admin.describe_topic_partitions, names, PAGE, cursor)
        )
        if not ok:
            notes.append("the broker lacks DescribeTopicPartitions: ELR and LastKnownElr unknown (read Metadata)")
            described = session.call("describe topics", admin.describe_topics, names)
            for t in described:
                check_code(session, t["error_code"], f"describe topic {t['name']}")
            return [dict(t, partitions=sorted(t["partitions"], key=lambda p: p["partition_index"])) for t in described]
        for t in page["topics"]:
            check_code(session, t["error_code"], f"describe topic {t['name']}")
            entry = topics.setdefault(t["name"], dict(t, partitions=[]))
            entry["partitions"].extend(t["partitions"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    return [
        dict(topics[n], partitions=sorted(topics[n]["partitions"], key=lambda p: p["partition_index"]))
        for n in sorted(topics)
    ]


def _reassignments(session: KafkaSession, notes: list[str]) -> dict:
    ok, listed = _unsupported(session, "list partition reassignments", session.admin.list_partition_reassignments)
    if not ok:
        notes.append("the broker lacks ListPartitionReassignments: no reassignment in progress is known")
        return {}
    out = {
        TopicPartition(tp.topic, tp.partition): (
            tuple(r["replicas"]),
            tuple(r["adding_replicas"]),
            tuple(r["removing_replicas"]),
        )
        for tp, r in listed.items()
    }
    # Kafka lists a partition only while it has adding or removing replicas (isReassignmentInProgress); tansu
    # lists every partition, with neither
    empty = [tp for tp, (_, adding, removing) in out.items() if not adding and not removing]
    if empty:
        notes.append(
            f"the broker listed {len(empty)} partition(s) as reassigning with no adding or removing "
            "replicas: not a reassignment in Kafka's sense, ignored"
        )
    return {tp: r for tp, r in out.items() if tp not in empty}


def _describe_configs(
    session: KafkaSession,
    rtype: int,
    names: list[str],
    keys: list[str] | None,
    node_id: int | None = None,
    optional: bool = False,
) -> dict[str, dict[str, tuple[str | None, int]]] | None:
    from kafka.protocol.admin import DescribeConfigsRequest

    if not names:
        return {}
    R = DescribeConfigsRequest.DescribeConfigsResource
    request = DescribeConfigsRequest(
        resources=[R(resource_type=rtype, resource_name=n, configuration_keys=keys) for n in names],
        include_synonyms=False,
        include_documentation=False,
    )
    response = session.send("describe configs", request, node_id, optional)
    if response is None:
        return None
    out = {}
    for result in response.results:
        kind = "topic" if rtype == TOPIC_RESOURCE else "broker"
        check_code(
            session, result.error_code, f"describe the configs of {kind} {result.resource_name}", result.error_message
        )
        # a dict keeps the broker's order of the entries (the order a Java `Config` is filled in)
        out[result.resource_name] = {c.name: (c.value, c.config_source) for c in result.configs}
    return out


DEFAULT_CONFIG = 5  # DescribeConfigs' ConfigSource of a value nobody set (`ConfigEntry.isDefault()`)


def _topic_configs(session: KafkaSession, names: list[str]) -> dict[str, dict[str, str]]:
    """What kafka-topics --describe prints on `Configs:`: `TopicCommand.TopicDescription.printDescription` keeps the
    entries that are not `isDefault()` (source DEFAULT_CONFIG): topic overrides (DYNAMIC_TOPIC_CONFIG) and values
    from the brokers' static or dynamic configs (a 4.x KRaft controller sets `min.insync.replicas` cluster-wide,
    DYNAMIC_DEFAULT_BROKER_CONFIG). In the order the tool prints them: `Config` keeps its entries in a
    `new HashMap<>()` filled in the broker's order (clients/.../admin/Config.java)."""
    described = _describe_configs(session, TOPIC_RESOURCE, names, None) or {}
    out = {}
    for n, c in described.items():
        order = hashmap_order(list(c))
        out[n] = {k: v for k in order for v, source in [c[k]] if source != DEFAULT_CONFIG and v is not None}
    return out


BROKER_KEYS = ["cordoned.log.dirs", *BROKER_LEVEL_THROTTLES]
DYNAMIC_BROKER_CONFIG = 2  # DescribeConfigs' ConfigSource of a per-broker dynamic config


def _broker_configs(
    session: KafkaSession, broker_ids: list[int], notes: list[str]
) -> tuple[dict[int, tuple[str, ...]], dict[int, dict[str, str]]]:
    """Every broker's `cordoned.log.dirs` (KIP-1066; a broker that does not know the key reports nothing) and its
    own dynamic throttle rates, in one DescribeConfigs per broker."""
    cordoned, throttles = {}, {}
    for b in broker_ids:
        described = _describe_configs(session, BROKER_RESOURCE, [str(b)], BROKER_KEYS, node_id=b, optional=True)
        if described is None:
            notes.append(
                f"broker {b} closed the connection on DescribeConfigs for its own configs: cordoned.log.dirs unknown"
            )
            continue
        configs = described.get(str(b), {})
        value = configs.get("cordoned.log.dirs", (None, 0))[0]
        if value:
            cordoned[b] = tuple(d.strip() for d in value.split(",") if d.strip())
        rates = {
            k: v
            for k, (v, source) in configs.items()
            if k in BROKER_LEVEL_THROTTLES and source == DYNAMIC_BROKER_CONFIG
        }
        if rates:
            throttles[b] = {k: v for k, v in rates.items() if v is not None}
    return cordoned, throttles


def _log_dirs(
    session: KafkaSession, broker_ids: list[int], notes: list[str]
) -> tuple[dict[TopicPartition, tuple[ReplicaDir, ...]], tuple[LogDir, ...]]:
    from kafka import errors as Errors
    from kafka.protocol.admin import DescribeLogDirsRequest

    replicas: dict[TopicPartition, list[ReplicaDir]] = {}
    dirs: list[LogDir] = []
    for b in broker_ids:
        try:
            response = session.send(f"describe the log dirs of broker {b}", DescribeLogDirsRequest(topics=None), b)
        except Errors.IncompatibleBrokerVersion:
            notes.append("the broker lacks DescribeLogDirs: replica sizes unknown")
            return {}, ()
        check_code(session, getattr(response, "error_code", 0) or 0, f"describe the log dirs of broker {b}")
        for d in response.results:
            check_code(session, d.error_code, f"describe log dir {d.log_dir} of broker {b}")
            total = d.total_bytes if (d.total_bytes or -1) >= 0 else None
            usable = d.usable_bytes if (d.usable_bytes or -1) >= 0 else None
            dirs.append(LogDir(b, d.log_dir, total, usable, bool(getattr(d, "is_cordoned", False))))
            for t in d.topics:
                for p in t.partitions:
                    replicas.setdefault(TopicPartition(t.name, p.partition_index), []).append(
                        ReplicaDir(b, d.log_dir, p.partition_size, p.offset_lag, p.is_future_key)
                    )
    return {tp: tuple(r) for tp, r in replicas.items()}, tuple(dirs)


def fully_cordoned(log_dirs: tuple[LogDir, ...], cordoned: dict[int, tuple[str, ...]]) -> list[int]:
    """Brokers whose every log dir is cordoned (by `cordoned.log.dirs`, whose `*` means every log dir, or by
    DescribeLogDirs v5's isCordoned)."""
    dirs: dict[int, list[bool]] = {}
    for d in log_dirs:
        named = cordoned.get(d.broker, ())
        dirs.setdefault(d.broker, []).append(d.cordoned or d.path in named or "*" in named)
    every = {b for b, named in cordoned.items() if "*" in named}
    return sorted(every | {b for b, flags in dirs.items() if flags and all(flags)})


def disk_space(
    broker_ids: Iterable[int], log_dirs: tuple[LogDir, ...], cordoned: dict[int, tuple[str, ...]]
) -> dict[int, tuple[int | None, int | None]]:
    """Per broker, (usable, total) bytes of its log dirs as DescribeLogDirs v4+ reports them: usable summed over
    the dirs that take new replicas (not cordoned), total over all; None where no dir reports the figure."""
    usable: dict[int, int] = {}
    total: dict[int, int] = {}
    for d in log_dirs:
        named = cordoned.get(d.broker, ())
        if d.usable_bytes is not None:
            closed = d.cordoned or d.path in named or "*" in named
            usable[d.broker] = usable.get(d.broker, 0) + (0 if closed else d.usable_bytes)
        if d.total_bytes is not None:
            total[d.broker] = total.get(d.broker, 0) + d.total_bytes
    return {b: (usable.get(b), total.get(b)) for b in broker_ids}


def build_cluster(
    brokers: list[Broker],
    topics: list[dict],
    configs: dict[str, dict[str, str]],
    reassigning: dict,
    replicas: dict[TopicPartition, tuple[ReplicaDir, ...]],
    cluster_id: str | None,
    mode: str = "kraft",
) -> Cluster:
    """A `Cluster` (mode "kraft") from decoded answers (pure). Brokers named by a partition but not registered are
    offline; a partition's size is its largest non-future replica."""
    referenced: set[int] = set()
    out = []
    for t in topics:
        parts = []
        for p in t["partitions"]:
            tp = TopicPartition(t["name"], p["partition_index"])
            listed, adding, removing = reassigning.get(tp, ((), (), ()))
            replica_nodes = tuple(p["replica_nodes"])
            if not set(adding) | set(removing) <= set(replica_nodes):
                # the metadata came from a broker that has not yet applied the reassignment the controller answered
                # with (seen on a real 4.4 cluster: batch 2 read right after batch 1 was started, `replicas [1, 2]`
                # beside `adding 4`): the controller's full replica set, which ListPartitionReassignments gives with
                # its adding and removing replicas, is the consistent one
                replica_nodes = tuple(listed)
            elr, lkelr = p.get("eligible_leader_replicas"), p.get("last_known_elr")
            leader = p["leader_id"] if p["leader_id"] is not None and p["leader_id"] >= 0 else NO_LEADER
            observed = ObservedState(
                leader=leader,
                isr=tuple(p["isr_nodes"]),
                leader_epoch=p.get("leader_epoch"),
                elr=tuple(elr or ()) if "eligible_leader_replicas" in p else None,
                last_known_elr=tuple(lkelr or ()) if "last_known_elr" in p else None,
            )
            sizes = [r.size for r in replicas.get(tp, ()) if not r.future]
            referenced.update(replica_nodes, p["isr_nodes"])
            parts.append(
                Partition(
                    topic=tp.topic,
                    id=tp.partition,
                    replicas=replica_nodes,
                    adding=tuple(adding),
                    removing=tuple(removing),
                    observed=observed,
                    size=max(sizes) if sizes else None,
                )
            )
        out.append(
            Topic(
                name=t["name"],
                partitions=tuple(parts),
                configs=dict(configs.get(t["name"], {})),
                topic_id=topic_id_text(t.get("topic_id")),
            )
        )
    known = {b.id: b for b in brokers}
    for b in referenced - set(known):
        known[b] = Broker(id=b, state=OFFLINE)
    return Cluster(
        brokers=tuple(known[b] for b in sorted(known)),
        topics=tuple(sorted(out, key=lambda t: t.name)),
        name=cluster_id,
        mode=mode,
    )
