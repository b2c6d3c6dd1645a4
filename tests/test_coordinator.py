"""The group coordinator (planner/coordinator.py): the partition of an id, and with a cluster the broker leading it."""

from testkit import build_cluster

from planner.coordinator import coordinators, partition_for
from planner.model import OFFLINE

OFFSETS = {"__consumer_offsets": {p: [p % 3, (p + 1) % 3] for p in range(5)}}  # on brokers 0, 1, 2


def test_without_a_cluster_only_the_partition():
    found = coordinators(["foo", "bar"], transactional=False, partitions=10)
    assert (found.topic, found.partitions, found.with_brokers, found.topic_missing) == (
        "__consumer_offsets",
        10,
        False,
        False,
    )
    assert found.rows == [{"id": "foo", "partition": 4}, {"id": "bar", "partition": partition_for("bar", 10)}]


def test_the_clusters_partition_count_and_leaders():
    found = coordinators(["foo"], transactional=False, cluster=build_cluster(3, topics=OFFSETS, states={1: OFFLINE}))
    assert found.partitions == 5 and found.with_brokers
    # "foo".hashCode() = 101574, % 5 = 4: replicas 1,2; broker 1 is offline, so 2 leads (coordinates)
    assert found.rows == [{"id": "foo", "partition": 4, "coordinator": 2, "replicas": [1, 2]}]


def test_a_cluster_without_the_internal_topic():
    found = coordinators(["tx"], transactional=True, cluster=build_cluster(3, topics=OFFSETS))
    assert (found.topic, found.partitions, found.with_brokers, found.topic_missing) == (
        "__transaction_state",
        50,
        False,
        True,
    )
