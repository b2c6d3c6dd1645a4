"""Live clusters through Kafka's Admin API (`kafka://host:port[,host:port...]`) with kafka-python.

`connection`: the URL, `--command-config` settings, a session whose failures are one line; `snapshot`: the cluster
read into a `Cluster`. kafka-python is imported only when a session opens.
"""

from planner.adapters.kafka.connection import KafkaOptions, load_options, parse_url
from planner.adapters.kafka.snapshot import KafkaSnapshot, read_snapshot

__all__ = ["KafkaOptions", "KafkaSnapshot", "load_options", "parse_url", "read_snapshot"]
