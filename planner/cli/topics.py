"""describe, brokers, create-topic, add-partitions."""
from planner.cli.app import app  # noqa: F401
