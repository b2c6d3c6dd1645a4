"""A broker whose log dirs are all cordoned (KIP-1066) read through the Admin API from the fake KRaft cluster: no
planning path gives it a new replica (rebalance, decommission, new topics) and `kafka export` writes
`cordoned: true` so that the same plans come from the file offline."""

from __future__ import annotations

import json
import os

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
    # its one log dir cordoned: no bytes usable for new replicas, of 1 TiB in all (DescribeLogDirs v4+)
    line = "  - {id: 4, host: 127.0.0.1, port: %d, cordoned: true, usable_bytes: 0, total_bytes: 1099511627776}\n"
    assert line % kraft4.brokers[4].port in out
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


def _submit(cluster, tmp_path, partitions, *extra):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return (str(plan), *run_here("kafka", "submit", cluster.url, "--reassignment-json-file", str(plan), *extra))


def _state(cluster):
    """Replicas of every partition, every throttle config: what a refused submission must leave as it was."""
    return (
        {(n, i): list(p.replicas) for n, t in cluster.topics.items() for i, p in enumerate(t.partitions)},
        {b: dict(c) for b, c in cluster.broker_configs.items() if c},
        {n: dict(t.configs) for n, t in cluster.topics.items()},
    )


def test_submit_refuses_a_plan_that_adds_replicas_to_a_cordoned_broker(kraft4, tmp_path):
    """Known from the read (cordoned.log.dirs): refused before anything, no rollback JSON, dry run or not."""
    before = _state(kraft4)
    moves = [
        {"topic": "orders", "partition": 0, "replicas": [4, 2]},
        {"topic": "orders", "partition": 3, "replicas": [1, 4]},
    ]
    plan, code, out, err = _submit(kraft4, tmp_path, moves, "--throttle", "1000", "--execute")
    assert (code, out) == (2, "")
    assert err == (
        "error: the plan adds replicas of orders-0,orders-3 to broker(s) 4, whose log dirs are all cordoned "
        "(cordoned.log.dirs, KIP-1066): Kafka's controller refuses that (INVALID_REPLICA_ASSIGNMENT). Plan again "
        "from the live cluster (plans leave cordoned brokers out) or uncordon the broker(s). Nothing was changed.\n"
    )
    assert not (tmp_path / "plan.json.rollback.json").exists()
    assert _state(kraft4) == before


def test_the_controllers_refusal_is_one_line_and_leaves_the_cluster_as_it_was(kraft, tmp_path):
    """Broker 3 is cordoned after the read (the hook runs as the request arrives): the controller refuses the replica
    the plan adds there (orders-0 [1,2] -> [3,2]). Refused whole, the throttles this submission set are put back
    (broker 1's earlier rate included) and the rollback JSON it wrote is removed."""

    def cordon_broker_3():
        kraft.brokers[3].cordoned = ("*",)

    kraft.before_alter = cordon_broker_3
    kraft.broker_configs["1"] = {"leader.replication.throttled.rate": "777"}
    before = _state(kraft)
    moves = [{"topic": "orders", "partition": 0, "replicas": [3, 2]}]
    plan, code, out, err = _submit(kraft, tmp_path, moves, "--throttle", "1000", "--execute")
    assert code == 1  # the controller refused (issue 32)
    assert out.endswith("The inter-broker throttle limit was set to 1000 B/s\n")
    assert err == (
        f"wrote the rollback JSON to {plan}.rollback.json\n"
        "error: Error reassigning partition(s): orders-0: The manual partition assignment includes broker 3, but all "
        f"its log directories are cordoned. Nothing was changed. The rollback JSON {plan}.rollback.json was removed.\n"
    )
    assert not os.path.exists(plan + ".rollback.json")
    assert _state(kraft) == before

    # refused in part: the other partition (which keeps its replica on broker 3) started, the rollback JSON stays
    kraft.brokers[3].cordoned = ()
    moves.append({"topic": "orders", "partition": 2, "replicas": [1, 3]})
    plan, code, out, err = _submit(kraft, tmp_path, moves, "--execute")
    assert (code, out.splitlines()[-1]) == (
        1,  # the controller refused part of it (issue 32)
        "Save this to use as the --reassignment-json-file option during rollback",
    )
    assert err.splitlines()[1] == (
        "error: Error reassigning partition(s): orders-0: The manual partition assignment includes broker 3, but all "
        "its log directories are cordoned. The reassignment of orders-2 started: 'kafka-planner kafka status "
        f"{kraft.url} --reassignment-json-file {plan}' shows where it stands (and clears the throttles once nothing "
        f"moves), 'kafka-planner kafka cancel {kraft.url} --reassignment-json-file {plan} --execute' reverts what is "
        f"still moving; the rollback JSON of the whole plan is in {plan}.rollback.json"
    )
    assert os.path.exists(plan + ".rollback.json")
    assert kraft.partition("orders", 2).replicas == [1, 3]
