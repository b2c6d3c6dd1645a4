"""Argument helpers shared by every command group."""

from __future__ import annotations

import sys

import typer

TOPOLOGY_HELP = (
    "A topology YAML file, zk://host:port[/chroot] (connection settings: the KAFKA_PLANNER_ZK_* variables), "
    "or kafka://host:port[,host:port...] (the Admin API; settings: the KAFKA_PLANNER_KAFKA_* variables)."
)

# Options and arguments more than one command takes, declared once.
TOPOLOGY = typer.Argument(..., metavar="TOPOLOGY", help=TOPOLOGY_HELP)
OPTIONAL_TOPOLOGY = typer.Option(None, "--topology", metavar="TOPOLOGY", help=TOPOLOGY_HELP)
TOPOLOGY_OUTPUT = typer.Option(
    None, "-o", "--output", metavar="FILE", help="Write the topology here (atomically) instead of stdout."
)
OFFLINE = typer.Option(None, "--offline-brokers", metavar="IDS", help="Simulate these brokers failing, e.g. 2,3.")


def note(text: str) -> None:
    """One `note:` line on stderr (what the user should know; the output on stdout stays clean)."""
    print(f"note: {text}", file=sys.stderr)


STILL_MOVING = 3  # the exit code of `reassign verify` / `kafka status` --exit-code while partitions move
EXIT_CODE = typer.Option(
    False,
    "--exit-code",
    help="Exit 3 while partitions are still moving (0 once done; 1 and 2 keep their meaning), so a script can "
    "wait on it.",
)
