"""Command-line interface: parses arguments, calls the core, renders. One module per command group."""

import sys

try:  # Ctrl-C while the command-line modules load: the same one line and exit code as during a command
    # Each module registers its commands on `app` when imported. Heavy libraries load inside the commands.
    from planner.cli import (
        kafkacmd,  # noqa: F401  kafka export, submit, status, cancel, elect-leaders
        messages,  # noqa: F401  partition, consumers, coordinator
        reassign,  # noqa: F401  reassign ..., failures
        skewcmd,  # noqa: F401  skew (Spark)
        topics,  # noqa: F401  describe, brokers, create-topic, add-partitions
        twin,  # noqa: F401  twin (a topology from Kafka's tool output)
        zkcmd,  # noqa: F401  zk export, submit, elect-leaders, status
    )
    from planner.cli.app import app, run
except KeyboardInterrupt:
    print("error: interrupted", file=sys.stderr)
    raise SystemExit(130) from None


def main() -> None:
    run(exiting=True)


__all__ = ["app", "main"]
