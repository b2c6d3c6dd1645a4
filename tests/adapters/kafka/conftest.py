"""Fixtures: a fake KRaft cluster (three brokers, racks a/b/c) on free loopback ports, stopped after each test."""

from __future__ import annotations

import pytest
from fake_cluster import FakeBroker, FakeCluster


def three_brokers() -> FakeCluster:
    cluster = FakeCluster([FakeBroker(1, "a"), FakeBroker(2, "b"), FakeBroker(3, "c")])
    cluster.add_topic(
        "orders", [[1, 2], [2, 3], [3, 1]], sizes=[1000, 2000, 3000], configs={"min.insync.replicas": "2"}
    )
    cluster.add_topic("payments", [[2, 1, 3]], sizes=[500])
    return cluster


@pytest.fixture
def kraft():
    cluster = three_brokers()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
