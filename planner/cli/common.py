"""Argument helpers shared by every command group."""
from __future__ import annotations

import enum

from planner.model import OFFLINE, Cluster, PlannerError, parse_id_list


TOPOLOGY_HELP = "A topology YAML file, or zk://host:port[/chroot] (connection settings: the KAFKA_PLANNER_ZK_* variables)."


class Format(str, enum.Enum):
    kafka = "kafka"
    table = "table"
    json = "json"


def load_cluster(spec: str, offline_brokers: str | None = None) -> Cluster:
    """A TOPOLOGY argument: a topology YAML file, or `zk://host:port[/chroot]` for a live cluster (connection
    settings from the KAFKA_PLANNER_ZK_* environment variables, see `planner.zk.options_from_env`).

    `offline_brokers` ("2,3") simulates those brokers failing.
    """
    if spec.startswith("zk://"):
        from planner import zk  # kazoo loads only for live clusters

        cluster = zk.read_snapshot(spec, zk.options_from_env()).cluster
    else:
        from planner.formats.topology import load_topology

        cluster = load_topology(spec)
    if offline_brokers:
        ids = parse_id_list(offline_brokers, "--offline-brokers")
        cluster = cluster.with_broker_states({i: OFFLINE for i in ids})
    return cluster


def partitions_or_topic(partitions: int | None, topology: str | None, topic: str | None,
                        offline_brokers: str | None) -> tuple[int, Cluster | None]:
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
        raise PlannerError("give either --partitions or --topology/--topic, not both: the topic's partition count is used")
    if topic is None:
        raise PlannerError("--topology needs --topic T")
    cluster = load_cluster(topology, offline_brokers)
    if not cluster.has_topic(topic):
        names = ", ".join(t.name for t in cluster.topics) or "none"
        raise PlannerError(f"topic {topic!r} is not in {topology} (topics: {names})")
    return cluster.topic(topic).partition_count, cluster


def require(condition: bool, message: str) -> None:
    if not condition:
        raise PlannerError(message)
