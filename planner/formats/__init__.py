"""Adapters and renderers: topology YAML, Kafka's JSON formats, describe text, tables."""
