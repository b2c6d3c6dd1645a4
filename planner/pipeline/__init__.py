"""Spark jobs (PySpark imported lazily, only by the commands that need it)."""
