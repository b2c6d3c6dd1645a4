"""Partitions mid-reassignment are never re-planned; lower bounds leave them out; fewer racks get a note."""

TOPOLOGY = """\
brokers:
  - {id: 1, rack: a}
  - {id: 2, rack: b}
  - {id: 3, rack: c}
  - {id: 4, rack: a}
  - {id: 5, rack: b}
topics:
  - name: foo
    assignment: {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 2, 4, 3]}
    adding: {3: [4]}
    removing: {3: [3]}
"""
NOTE = (
    "note: 1 partition(s) have a reassignment in progress and were left as they are (foo-3); Kafka needs "
    "--additional to execute this plan while they run\n"
)


def _topo(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(TOPOLOGY)
    return str(p)


def _moved(out):
    import json

    return {(x["topic"], x["partition"]): x["proposed"] for x in json.loads(out)["partitions"]}


def test_set_replication_factor_leaves_moving_partitions(planner_cli_here, tmp_path):
    code, out, err = planner_cli_here(
        "reassign",
        "set-replication-factor",
        _topo(tmp_path),
        "--topic",
        "foo",
        "--replication-factor",
        "2",
        "--format",
        "json",
    )
    assert (code, err) == (0, "")
    assert sorted(_moved(out)) == [("foo", 0), ("foo", 1), ("foo", 2)]
    code, out, _ = planner_cli_here(
        "reassign", "set-replication-factor", _topo(tmp_path), "--topic", "foo", "--replication-factor", "2"
    )
    # foo-0..2 keep two racks each, as many as RF 2 allows: no note that they span fewer racks
    assert out.endswith(
        NOTE
        + "note: 1 topic(s) keep a replica spread above 1 per broker (foo): racks, replica placement or the partitions "
        "that never move (see the notes) constrain the moves\n"
    )


def test_replace_broker_leaves_moving_partitions_out_of_plan_and_bound(planner_cli_here, tmp_path):
    code, out, err = planner_cli_here("reassign", "replace-broker", _topo(tmp_path), "--source", "1", "--target", "4")
    assert (code, err) == (0, "")
    assert "Replica moves:          3 (lower bound 3: optimal)\n" in out  # foo-0, 1, 2 (foo-3 left as it is)
    assert out.endswith(NOTE)


def test_elect_leaders_leaves_moving_partitions(planner_cli_here, tmp_path):
    code, out, err = planner_cli_here("reassign", "elect-leaders", _topo(tmp_path), "--format", "json")
    assert (code, err) == (0, "")
    assert ("foo", 3) not in _moved(out)
    code, out, _ = planner_cli_here("reassign", "elect-leaders", _topo(tmp_path))
    assert NOTE in out


def test_decommission_bound_leaves_moving_partitions_out(planner_cli_here, tmp_path):
    # broker 4's only replica is foo-3's, mid-reassignment: the bound counted it ("lower bound 3: -1 above the bound")
    code, out, err = planner_cli_here("reassign", "decommission", _topo(tmp_path), "--brokers", "4")
    assert (code, err) == (0, "")
    assert "Replica moves:          2 (lower bound 2: optimal)\n" in out
    assert out.endswith(
        NOTE + "note: 1 excluded or in-progress partition(s) keep replicas on brokers outside the target set (foo-3)\n"
    )
