"""kafka-planner: place partitions, compute leaders and reassignments exactly as Apache Kafka does."""

__version__ = "0.1.0"
