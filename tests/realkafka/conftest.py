"""`real_kafka`: one real Apache Kafka KRaft cluster (tests/realkafka/cluster.py) for every test under this folder."""

import pytest
from cluster import KafkaCluster


@pytest.fixture(scope="session")
def real_kafka():
    """A started `KafkaCluster` (controller 100, brokers 1-4 on racks a, b, c, a); stopped and removed after."""
    cluster = KafkaCluster()
    try:
        yield cluster.start()
    finally:
        cluster.cleanup()
