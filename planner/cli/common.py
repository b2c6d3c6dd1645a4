"""Argument helpers shared by every command group."""

from __future__ import annotations

import sys

from planner.adapters.source import load_cluster, partitions_or_topic  # noqa: F401  (the commands' TOPOLOGY)
from planner.limits import MAX_NEW_PARTITIONS, MAX_RECORDS  # noqa: F401  (option bounds)

TOPOLOGY_HELP = (
    "A topology YAML file, zk://host:port[/chroot] (connection settings: the KAFKA_PLANNER_ZK_* variables), "
    "or kafka://host:port[,host:port...] (the Admin API; settings: the KAFKA_PLANNER_KAFKA_* variables)."
)


def note(text: str) -> None:
    """One `note:` line on stderr (what the user should know; the output on stdout stays clean)."""
    print(f"note: {text}", file=sys.stderr)
