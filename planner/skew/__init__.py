"""The Spark skew job: how a real key set spreads over partitions and brokers (PySpark imported lazily)."""
