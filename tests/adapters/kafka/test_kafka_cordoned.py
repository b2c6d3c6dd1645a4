"""A broker whose log dirs are all cordoned (KIP-1066) read through the Admin API from the fake KRaft cluster: no
planning path gives it a new replica (rebalance, decommission, new topics) and `kafka export` writes
`cordoned: true` so that the same plans come from the file offline."""

from __future__ import annotations

import json

import pytest
from fake_cluster import FakeBroker, FakeCluster, run_here


@pytest.fixture
def kraft4():
    """Brokers 1-4 without racks; broker 4 is new and empty, its one log dir cordoned (cordoned.log.dirs)."""
    brokers = [FakeBroker(1), FakeBroker(2), FakeBroker(3), FakeBroker(4, cordoned=("/var/lib/kafka/data",))]
    cluster = FakeCluster(brokers)
    cluster.add_topic("orders", [[1, 2], [2, 3], [3, 1], [1, 2], [2, 3], [3, 1]], sizes=[100] * 6)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


def _moves(*args: str) -> dict[str, tuple[list[int], list[int]]]:
    code, out, err = run_here(*args, "--format", "json")
    assert code == 0, err
    return {f"{p['topic']}-{p['partition']}": (p["current"], p["proposed"]) for p in json.loads(out)["partitions"]}


def test_plans_add_no_replica_to_the_cordoned_broker(kraft4, tmp_path):
    assert _moves("reassign", "rebalance", kraft4.url) == {}
    assert _moves("reassign", "decommission", kraft4.url, "--brokers", "3") == {
        "orders-1": ([2, 3], [1, 2]),
        "orders-2": ([3, 1], [2, 1]),
        "orders-4": ([2, 3], [2, 1]),
        "orders-5": ([3, 1], [2, 1]),
    }
    create = (
        "create-topic",
        kraft4.url,
        "--topic",
        "events",
        "--partitions",
        "3",
        "--replication-factor",
        "2",
        "--placer",
        "kraft",
        "--seed",
        "7",
        "--format",
        "replica-assignment",
    )
    code, out, err = run_here(*create)
    assert (code, out) == (0, "2:3,3:1,1:2\n"), err  # KIP-1066: usableBrokers leaves broker 4 out
    code, out, err = run_here("kafka", "export", kraft4.url)
    assert code == 0, err
    assert "  - {id: 4, host: 127.0.0.1, port: %d, cordoned: true}\n" % kraft4.brokers[4].port in out
    (tmp_path / "twin.yaml").write_text(out)
    assert _moves("reassign", "rebalance", str(tmp_path / "twin.yaml")) == {}  # the offline twin plans the same
    kraft4.brokers[4].cordoned = ()  # uncordoned, the same requests fill broker 4
    assert _moves("reassign", "rebalance", kraft4.url) == {
        "orders-0": ([1, 2], [4, 1]),
        "orders-1": ([2, 3], [2, 4]),
        "orders-2": ([3, 1], [3, 4]),
    }
    code, out, err = run_here(*create)
    assert (code, out) == (0, "3:4,4:1,1:2\n"), err
