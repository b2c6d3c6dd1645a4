"""Command-line interface: parses arguments, calls the core, renders. One module per command group."""
from planner.cli.app import app, run

# Each module registers its commands on `app` when imported. Heavy libraries load inside the commands.
from planner.cli import topics  # noqa: F401,E402  describe, brokers, create-topic, add-partitions
from planner.cli import clients  # noqa: F401,E402  partition, consumers, coordinator


def main() -> None:
    run()


__all__ = ["app", "main"]
