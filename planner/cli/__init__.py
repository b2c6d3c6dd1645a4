"""Command-line interface: parses arguments, calls the core, renders. One module per command group."""
from planner.cli.app import app, run

# Each module registers its commands on `app` when imported. Heavy libraries load inside the commands.
from planner.cli import topics  # noqa: F401,E402  describe, brokers, create-topic, add-partitions
from planner.cli import clients  # noqa: F401,E402  partition, consumers, coordinator
from planner.cli import reassign  # noqa: F401,E402  reassign ..., failures
from planner.cli import skew  # noqa: F401,E402  skew (Spark)
from planner.cli import zkcmd  # noqa: F401,E402  zk export, submit, elect-leaders, status
from planner.cli import kafkacmd  # noqa: F401,E402  kafka export, submit, status, cancel, elect-leaders
from planner.cli import twin  # noqa: F401,E402  twin (a topology from Kafka's tool output)


def main() -> None:
    run()


__all__ = ["app", "main"]
