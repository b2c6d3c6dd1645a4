"""Where a cluster comes from: a `ClusterSource` per URL scheme, and `load_cluster` for a TOPOLOGY argument.

A topology YAML file is the default; `zk://host:port[/chroot]` reads a live ZooKeeper-mode cluster. A new source
(e.g. `kafka://` for the Admin API) registers itself with `register_source("kafka://", loader)`; its loader imports
its client library lazily so that file-based commands never load it.
"""

from __future__ import annotations

import os
import re
from typing import Protocol

from planner.adapters import secrets
from planner.model import OFFLINE, Cluster, PlannerError, parse_id_list


class ClusterSource(Protocol):
    """Reads the cluster a TOPOLOGY argument names (the whole argument, scheme included)."""

    def __call__(self, spec: str) -> Cluster: ...


def _read_zookeeper(spec: str) -> Cluster:
    """`zk://…`: connection settings from the KAFKA_PLANNER_ZK_* variables (`planner.adapters.zk.options_from_env`)."""
    from planner.adapters import zk  # kazoo loads only for live clusters

    return zk.read_snapshot(spec, zk.options_from_env()).cluster


_URL_LIKE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.\-]*):/")


def _refuse_url_typo(spec: str) -> None:
    """A TOPOLOGY that looks like a URL but matches no source (`Kafka://`, `ZK://`, `zookeeper://`, `kafka:/`, a
    leading space) and is no file: one line that shows no user info and says which URLs are read."""
    m = _URL_LIKE.match(spec)
    if m is None or os.path.exists(spec):
        return
    shown = secrets.mask_userinfo(spec)
    credentials = "; credentials never go in the URL" if shown != spec else ""
    scheme = m.group(1).lower()
    guess = {"kafka": "kafka://", "zk": "zk://", "zookeeper": "zk://"}.get(scheme)
    hint = f" (did you mean {guess}host:port...?)" if guess else ""
    raise PlannerError(
        f"{shown!r}: no such topology file, and not a URL kafka-planner reads{hint}: "
        f"kafka://host:port[,host:port...] or zk://host:port[,host:port...][/chroot], lower case, no spaces"
        f"{credentials}"
    )


def _read_topology_file(spec: str) -> Cluster:
    _refuse_url_typo(spec)
    from planner.adapters.progress import progress_line
    from planner.adapters.topology_yaml import load_topology

    return load_topology(spec, progress_line(f"reading {spec}"))


def _read_kafka(spec: str) -> Cluster:
    """`kafka://host:port[,...]`: the Admin API (kafka-python); settings from $KAFKA_PLANNER_KAFKA_TIMEOUT and the
    client properties file $KAFKA_PLANNER_KAFKA_COMMAND_CONFIG names (`planner.adapters.kafka.load_options`)."""
    from planner.adapters import kafka  # kafka-python loads only for live clusters

    return kafka.read_snapshot(spec, kafka.load_options()).cluster


SOURCES: dict[str, ClusterSource] = {"zk://": _read_zookeeper, "kafka://": _read_kafka}
FILE_SOURCE: ClusterSource = _read_topology_file


def register_source(prefix: str, source: ClusterSource) -> None:
    """Make `load_cluster` read arguments starting with `prefix` (e.g. "kafka://") through `source`."""
    SOURCES[prefix] = source


def source_for(spec: str) -> ClusterSource:
    for prefix, source in SOURCES.items():
        if spec.startswith(prefix):
            return source
    return FILE_SOURCE


def load_cluster(spec: str, offline_brokers: str | None = None) -> Cluster:
    """A TOPOLOGY argument: a topology YAML file, or a URL of a registered source (`zk://host:port[/chroot]`,
    `kafka://host:port[,host:port...]`).

    `offline_brokers` ("2,3") simulates those brokers failing.
    """
    return with_offline(source_for(spec)(spec), offline_brokers)


def with_offline(cluster: Cluster, offline_brokers: str | None) -> Cluster:
    """`--offline-brokers 2,3`: the cluster as if those brokers failed."""
    if offline_brokers is None:
        return cluster
    ids = parse_id_list(offline_brokers, "--offline-brokers")
    unknown = sorted(set(ids) - set(cluster.broker_ids))
    if unknown:
        raise PlannerError(
            f"--offline-brokers: unknown broker id(s) {','.join(map(str, unknown))}; the cluster has brokers "
            f"{','.join(map(str, cluster.broker_ids))}"
        )
    return cluster.with_broker_states({i: OFFLINE for i in ids})


def partitions_or_topic(
    partitions: int | None, topology: str | None, topic: str | None, offline_brokers: str | None
) -> tuple[int, Cluster | None]:
    """`--partitions N` or `--topology TOPOLOGY --topic T` (partition, skew): the partition count, and the cluster
    when a topology was given."""
    if topology is None:
        if topic is not None:
            raise PlannerError("--topic needs --topology (or give --partitions N alone)")
        if offline_brokers:
            raise PlannerError("--offline-brokers needs --topology")
        if partitions is None:
            raise PlannerError("give --partitions N, or --topology TOPOLOGY --topic T")
        if partitions <= 0:
            raise PlannerError(f"--partitions must be positive, got {partitions}")
        return partitions, None
    if partitions is not None:
        raise PlannerError(
            "give either --partitions or --topology/--topic, not both: the topic's partition count is used"
        )
    if topic is None:
        raise PlannerError("--topology needs --topic T")
    cluster = load_cluster(topology, offline_brokers)
    if not cluster.has_topic(topic):
        names = ", ".join(t.name for t in cluster.topics) or "none"
        raise PlannerError(f"topic {topic!r} is not in {topology} (topics: {names})")
    return cluster.topic(topic).partition_count, cluster
