"""The producer: murmur2 (scalar and NumPy), Kafka's key serializers, the partitioner of each Kafka era."""
