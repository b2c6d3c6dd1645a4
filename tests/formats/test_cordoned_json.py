"""The `cordoned` flag (KIP-1066: every log dir of the broker cordoned) in every JSON output that lists brokers:
`brokers --format json`, a plan summary's per-broker rows, the skew report's broker tables."""

from __future__ import annotations

import json

CLUSTER = """\
brokers:
  - {id: 1, rack: a}
  - {id: 2, rack: b}
  - {id: 3, rack: c}
  - {id: 4, rack: a, cordoned: true}
topics:
  - name: orders
    assignment: {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 2], 4: [4, 3]}
    sizes: {0: 100, 1: 200, 2: 300, 3: 100, 4: 50}
"""


def _run(planner_cli_here, tmp_path, *command):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    code, out, err = planner_cli_here(*command, str(path), "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _broker(i, rack, cordoned, replicas, preferred, nbytes):
    return {
        "id": i,
        "rack": rack,
        "state": "online",
        "cordoned": cordoned,
        "usable_bytes": None,
        "total_bytes": None,
        "replicas": replicas,
        "preferred_leaders": preferred,
        "leaders": preferred,
        "leader_imbalance": 0.0,
        "bytes": nbytes,
        "replicas_per_topic": {"orders": replicas},
    }


def test_brokers_json(planner_cli_here, tmp_path):
    assert _run(planner_cli_here, tmp_path, "brokers") == {
        "brokers": [
            _broker(1, "a", False, 3, 2, 500),
            _broker(2, "b", False, 3, 1, 400),
            _broker(3, "c", False, 3, 1, 550),
            _broker(4, "a", True, 1, 1, 50),
        ],
        "spread": {"replicas": 2, "preferred_leaders": 1, "leaders": 1, "bytes": 500},
    }


def test_plan_summary_rows(planner_cli_here, tmp_path):
    """Broker 4 keeps its replica and takes none; the others are balanced already: nothing moves."""
    plan = _run(planner_cli_here, tmp_path, "reassign", "rebalance")
    assert plan["brokers"] == [
        {"id": 1, "cordoned": False, "replicas": [3, 3], "preferred_leaders": [2, 2], "bytes": [500, 500]},
        {"id": 2, "cordoned": False, "replicas": [3, 3], "preferred_leaders": [1, 1], "bytes": [400, 400]},
        {"id": 3, "cordoned": False, "replicas": [3, 3], "preferred_leaders": [1, 1], "bytes": [550, 550]},
        {"id": 4, "cordoned": True, "replicas": [1, 1], "preferred_leaders": [1, 1], "bytes": [50, 50]},
    ]


def test_skew_broker_tables(make_cluster):
    from planner.skew.render import _broker_dict
    from planner.skew.report import PartitionRow, _broker_tables

    cluster = make_cluster(3, topics={"t": {0: [0, 1], 1: [1, 2]}}, cordoned=[2])
    rows = [PartitionRow(0, 10, 100, 0, (0, 1)), PartitionRow(1, 5, 50, 1, (1, 2))]
    leaders, replicas, _, _ = _broker_tables(cluster, cluster.topic("t"), rows)
    assert [_broker_dict(b) for b in replicas] == [
        {"broker": 0, "rack": None, "state": "online", "cordoned": False, "partitions": 1, "records": 10, "bytes": 100},
        {"broker": 1, "rack": None, "state": "online", "cordoned": False, "partitions": 2, "records": 15, "bytes": 150},
        {"broker": 2, "rack": None, "state": "online", "cordoned": True, "partitions": 1, "records": 5, "bytes": 50},
    ]
