"""create-topic of thousands of partitions: the output rendered from the replica matrix is byte for byte the output
of the per-partition path (describe of the new topic, --replica-assignment, reassignment JSON, the load table)."""

import random

import pytest

from planner.adapters.source import load_cluster
from planner.cli.topics import PlacementFormat, _emit, _emit_rows
from planner.formats.columns import render_rows
from planner.model import make_topic
from planner.placement.bulk import Rows
from planner.placement.placer import plan_new_topic


@pytest.mark.parametrize(
    "topology, offline, placement, fmt, version",
    [
        ("topologies/six-brokers.yaml", None, {}, PlacementFormat.kafka, None),
        ("topologies/six-brokers.yaml", None, {"seed": -7}, PlacementFormat.kafka, "2.3"),
        ("topologies/six-brokers.yaml", "3", {"start_index": 2}, PlacementFormat.kafka, "3.7"),
        ("topologies/six-brokers.yaml", None, {"rack_aware": False}, PlacementFormat.json, None),
        ("topologies/six-brokers.yaml", "2,5", {"seed": 5}, PlacementFormat.replica_assignment, None),
        ("topologies/offline-broker.yaml", None, {}, PlacementFormat.kafka, None),  # ZooKeeper mode: Elr N/A
        ("topologies/offline-broker.yaml", None, {"seed": 1}, PlacementFormat.kafka, "2.8"),
        ("topologies/producer-0.yaml", None, {"start_index": 1}, PlacementFormat.json, None),
    ],
)
def test_matrix_output_equals_per_partition_output(capsys, topology, offline, placement, fmt, version):
    cluster = load_cluster(topology, offline)
    rf = 1 if "producer" in topology else 3
    assignment, how = plan_new_topic(cluster, 12_345, rf, **placement)
    assert isinstance(assignment, Rows)
    assert _emit_rows(cluster, "new.t-1", assignment, fmt, version, None, how)
    fast = capsys.readouterr()
    after = cluster.with_topic(make_topic("new.t-1", dict(assignment.items())))
    _emit(cluster, after, "new.t-1", sorted(assignment), fmt, version, None, how)
    slow = capsys.readouterr()
    assert fast.out == slow.out and fast.err == slow.err
    shown = {
        PlacementFormat.kafka: fast.out.count("\tPartition: "),
        PlacementFormat.json: fast.out.count('"partition":'),
        PlacementFormat.replica_assignment: fast.out.count(",") + 1,
    }
    assert shown[fmt] == 12_345


def test_matrix_output_writes_the_same_topology(tmp_path, capsys):
    cluster = load_cluster("topologies/six-brokers.yaml")
    assignment, how = plan_new_topic(cluster, 2_000, 2, seed=3)
    fast, slow = tmp_path / "fast.yaml", tmp_path / "slow.yaml"
    assert _emit_rows(cluster, "t", assignment, PlacementFormat.kafka, None, str(fast), how)
    fast_out = capsys.readouterr()
    after = cluster.with_topic(make_topic("t", dict(assignment.items())))
    _emit(cluster, after, "t", sorted(assignment), PlacementFormat.kafka, None, str(slow), how)
    slow_out = capsys.readouterr()
    assert fast.read_text() == slow.read_text() and "      1999: [" in fast.read_text()
    assert fast_out.out == slow_out.out
    assert fast_out.err.replace(str(fast), str(slow)) == slow_out.err


def test_small_placements_keep_the_per_partition_path(capsys):
    cluster = load_cluster("topologies/six-brokers.yaml")
    assignment, how = plan_new_topic(cluster, 1_999, 3, seed=3)
    assert not isinstance(assignment, Rows)
    assert not _emit_rows(cluster, "t", assignment, PlacementFormat.kafka, None, None, how)
    assert capsys.readouterr().out == ""


def test_render_rows_equals_formatting_row_by_row(monkeypatch):
    import numpy as np

    import planner.formats.columns as columns

    monkeypatch.setattr(columns, "_CHUNK", 7)  # rows cross several chunks
    rnd = random.Random(5)
    for count in (1, 6, 7, 8, 50):
        a = [rnd.choice([0, 9, 10, 99, 100, 12345, 2**31 - 1]) for _ in range(count)]
        b = [rnd.randint(0, 2 * count) for _ in range(count)]  # a small range: converted through a digit table
        expected = "".join(f"<{x}|{y}:{x}>\n" for x, y in zip(a, b))
        column = np.asarray(a)
        assert render_rows(["<", column, "|", np.asarray(b), ":", column, ">\n"], count) == expected
    with pytest.raises(ValueError, match="one non-negative value per row"):
        render_rows(["x", np.asarray([-1])], 1)
