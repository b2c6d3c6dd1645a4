"""Argument helpers shared by every command group."""
from __future__ import annotations

import enum

from planner.model import OFFLINE, Cluster, PlannerError, parse_id_list


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


def require(condition: bool, message: str) -> None:
    if not condition:
        raise PlannerError(message)
