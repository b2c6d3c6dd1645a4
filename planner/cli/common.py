"""Argument helpers shared by every command group."""
from __future__ import annotations

from planner.adapters.source import load_cluster, partitions_or_topic  # noqa: F401  (the commands' TOPOLOGY)


TOPOLOGY_HELP = ("A topology YAML file, zk://host:port[/chroot] (connection settings: the KAFKA_PLANNER_ZK_* variables), "
                 "or kafka://host:port[,host:port...] (the Admin API; settings: the KAFKA_PLANNER_KAFKA_* variables).")

# Memory guards: Kafka's counts are Java ints, but a plan of 2^31 partitions would need hundreds of GB here.
MAX_NEW_PARTITIONS = 10_000_000  # partitions of one topic to place (about 2 GB of replica lists)
MAX_RECORDS = 100_000_000  # keyless records to simulate (about a minute each era)
