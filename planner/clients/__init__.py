"""Where messages go: the producer partitioner, the consumer group assignors, the group coordinator."""
