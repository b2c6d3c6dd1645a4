"""Adapters: where clusters come from and where files go (topology YAML, ZooKeeper, the Kafka Admin API)."""
