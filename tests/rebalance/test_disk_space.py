"""Usable bytes (DescribeLogDirs v4+, a topology's `usable_bytes`): no plan copies more bytes onto a broker than its
log dirs report usable; a note says when that kept a goal out of reach."""

from __future__ import annotations

import json

SCALE_OUT = """\
brokers:
  - {id: 1, rack: a}
  - {id: 2, rack: b}
  - {id: 3, rack: c}
  - {id: 4, rack: a%s}
topics:
  - name: orders
    assignment: {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 2], 4: [2, 3], 5: [3, 1]}
    sizes: {0: 100, 1: 100, 2: 100, 3: 100, 4: 100, 5: 100}
"""


def _plan(planner_cli_here, tmp_path, text, *args):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    code, out, err = planner_cli_here("reassign", "rebalance", str(path), *args, "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    moves = {f"{p['topic']}-{p['partition']}": p["proposed"] for p in plan["partitions"]}
    return moves, [n for n in plan["notes"] if n["kind"] == "disk-space"]


def test_a_new_broker_takes_no_more_than_its_usable_bytes(planner_cli_here, tmp_path):
    moves, notes = _plan(planner_cli_here, tmp_path, SCALE_OUT % "")
    assert moves == {"orders-1": [4, 3], "orders-2": [3, 4], "orders-4": [2, 4]}  # 300 B onto broker 4
    assert notes == []
    moves, notes = _plan(planner_cli_here, tmp_path, SCALE_OUT % ", usable_bytes: 250, total_bytes: 1000")
    assert moves == {"orders-1": [4, 3], "orders-2": [3, 4]}  # 200 B: a third copy would not fit in 250 B
    assert notes == [
        {
            "goal": "hard",
            "kind": "disk-space",
            "count": 1,
            "partitions": [],
            "topics": [],
            "values": [4, 250],
            "text": "broker(s) 4 (250 B usable) would have taken more copies but their log dirs have no usable space "
            "left for them (DescribeLogDirs): no plan copies more bytes onto a broker than it reports usable",
        }
    ]
    moves, notes = _plan(planner_cli_here, tmp_path, SCALE_OUT % ", usable_bytes: 300")
    assert (len(moves), notes) == (3, [])  # room for all three: the goals are reached, nothing to say


def test_replicas_that_must_move_find_no_room(planner_cli_here, tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        "brokers:\n  - {id: 1, usable_bytes: 100}\n  - {id: 2, usable_bytes: 50}\n  - {id: 3}\n"
        "topics:\n  - name: t\n    assignment: {0: [3], 1: [3]}\n    sizes: {0: 100, 1: 100}\n"
    )
    code, out, err = planner_cli_here("reassign", "rebalance", str(path), "--broker-list", "1,2")
    assert (code, out) == (2, "")
    assert err == (
        "error: cannot move t-1 off broker 3: every target broker already holds a replica or would make it "
        "rack-unsafe (broker(s) 1,2 lack the usable bytes for its copy); add brokers to --broker-list\n"
    )


def test_brokers_table_shows_usable_and_total(planner_cli_here, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(SCALE_OUT % ", usable_bytes: 250, total_bytes: 1000")
    code, out, err = planner_cli_here("brokers", str(path))
    assert (code, err) == (0, "")
    # the columns, split on blanks ("-" under usable / total: the broker reports neither)
    assert [line.split() for line in out.splitlines()[2:]] == [
        ["1", "a", "online", "4", "████████████", "2", "2", "0%", "1", "4", "400", "B", "-", "/", "-"],
        ["2", "b", "online", "4", "████████████", "2", "2", "0%", "1", "4", "400", "B", "-", "/", "-"],
        ["3", "c", "online", "4", "████████████", "2", "2", "0%", "1", "4", "400", "B", "-", "/", "-"],
        ["4", "a", "online", "0", "0", "0", "-", "0", "0", "0", "B", "250", "B", "/", "1000", "B"],
        ["total", "4/4", "online", "12", "6", "6", "1.2", "KiB"],
        ["spread", "(max-min,", "online)", "4", "2", "2", "400", "B"],
    ]
    assert out.splitlines()[0].endswith("  bytes    usable / total")


def test_replication_factor_and_replace_broker_respect_usable_bytes(planner_cli_here, tmp_path):
    path = tmp_path / "rf.yaml"
    path.write_text(
        "brokers:\n  - {id: 1}\n  - {id: 2, usable_bytes: 150}\n  - {id: 3, usable_bytes: 100}\n"
        "topics:\n  - name: logs\n    assignment: {0: [1], 1: [1]}\n    sizes: {0: 100, 1: 100}\n"
    )
    rf = ("reassign", "set-replication-factor", str(path), "--topic", "logs", "--replication-factor")
    code, out, err = planner_cli_here(*rf, "2", "--format", "json")
    assert code == 0, err
    assert [p["proposed"] for p in json.loads(out)["partitions"]] == [[1, 2], [1, 3]]  # 100 B each, within room
    code, out, err = planner_cli_here(*rf, "3")
    assert (code, out) == (2, "")
    assert err == (
        "error: cannot add a replica of logs-1 (100 B): the log dirs of broker(s) 2,3 report too few usable bytes "
        "left for it (DescribeLogDirs)\n"
    )
    code, out, err = planner_cli_here("reassign", "replace-broker", str(path), "--source", "1", "--target", "2")
    assert (code, err) == (
        2,
        "error: broker 2 would receive 200 B of copies but its log dirs report 150 B usable (DescribeLogDirs); free "
        "space there or pick another --target\n",
    )


def test_a_twin_keeps_the_disk_space_of_its_brokers_file(planner_cli_here, tmp_path):
    brokers = tmp_path / "brokers.yaml"
    brokers.write_text(
        "brokers:\n  - {id: 1, rack: eu-west-1a, usable_bytes: 1000, total_bytes: 5000}\n"
        "  - {id: 2, rack: eu-west-1b}\n  - {id: 3, rack: eu-west-1c}\n  - {id: 4, rack: eu-west-1a}\n"
    )
    code, out, err = planner_cli_here("twin", "--describe", "examples/twin/describe.txt", "--brokers", str(brokers))
    assert code == 0, err
    assert out.splitlines()[1:4] == [
        "brokers:",
        "  - {id: 1, rack: eu-west-1a, usable_bytes: 1000, total_bytes: 5000}",
        "  - {id: 2, rack: eu-west-1b}",
    ]


def test_no_run_of_the_goals_passes_the_usable_bytes():
    from collections import Counter
    from pathlib import Path

    from planner.adapters.topology_yaml import load_topology
    from planner.rebalance.goals import balance

    c = load_topology(str(Path(__file__).parent / "data" / "usable-bytes-four-runs.yaml"))
    plan = balance(c, exclude_topics=("t0",))
    copied: Counter = Counter()
    for p in c.partitions():
        for b in set(plan.proposed.get(p.tp, p.replicas)) - set(p.replicas):
            copied[b] += p.size or 0
    usable = {b.id: b.usable_bytes for b in c.brokers if b.usable_bytes is not None}
    assert usable == {2: 23321897704, 4: 0, 6: 0, 7: 43542851813, 8: 11073630589, 9: 0}
    # broker 2 took 32162480188 B of copies (48 moves) when a fourth run of the goals counted copies from the plan
    # (46 moves and 3 partitions left rack-unsafe, "could not be repaired", while the repair looked only at each
    # rack's emptiest broker; now all 19 are repaired, on brokers with room)
    assert {b: copied[b] for b in usable} == {2: 19781695786, 4: 0, 6: 0, 7: 596103453, 8: 7314686591, 9: 0}
    assert plan.replica_moves == 48
    assert plan.scored[0].after.rack_unsafe == 0
    assert any(n.kind == "disk-space" for n in plan.notes)


def test_a_rack_repair_takes_a_broker_with_room_when_the_rack_s_emptiest_has_none():
    # Racks a = {1, 5}, b = {2}, c = {3, 4}; t-0 (1, 5, 2) lacks rack c. Broker 4, the emptiest of rack c, has 0 B
    # usable; broker 3 has room. The repair looked only at each rack's emptiest broker: it found none, kept t-0
    # rack-unsafe and said no broker of rack c could take the copy (a second run, t-0 moved elsewhere, repaired it).
    from dataclasses import replace

    from testkit import build_cluster

    from planner.rebalance.goals import balance
    from planner.rebalance.moves import with_sizes

    c = build_cluster(5, first_id=1, racks=["a", "b", "c", "c", "a"], topics={"t": {0: [1, 5, 2], 1: [3, 1, 2]}})
    c = replace(c, brokers=tuple(replace(b, usable_bytes=0) if b.id == 4 else b for b in c.brokers))
    plan = balance(with_sizes(c, {p.tp: 100 for p in c.partitions()}))
    assert ({str(tp): r for tp, r in plan.proposed.items()}, plan.replica_moves, plan.lower_bound) == (
        {"t-0": (2, 5, 3)},
        1,
        1,
    )
    assert [n.kind for n in plan.notes if n.goal == "hard"] == ["rack-repaired", "disk-space"]


def test_replicas_leaving_several_brokers_place_the_largest_first():
    # Brokers 5 and 6 leave. Broker 1 alone has room (1000 B) for t-2 (1000 B, on broker 6); brokers 2-4 have 100 B.
    # Moving broker 5's replicas first, t-0 (100 B) went to broker 1 (the emptiest), leaving 900 B: t-2 found no room
    # and the decommission was refused ("cannot move t-2 off broker 6"). The largest go first over all brokers.
    from dataclasses import replace

    from testkit import build_cluster

    from planner.rebalance.decommission import decommission
    from planner.rebalance.moves import with_sizes

    c = build_cluster(6, first_id=1, topics={"t": {0: [5], 1: [5], 2: [6]}, "u": {0: [2], 1: [3], 2: [4]}})
    room = {1: 1000, 2: 100, 3: 100, 4: 100}
    c = replace(c, brokers=tuple(replace(b, usable_bytes=room.get(b.id)) for b in c.brokers))
    plan = decommission(with_sizes(c, {p.tp: s for p, s in zip(c.partitions(), [100, 100, 1000, 0, 0, 0])}), [5, 6])
    assert ({str(tp): r for tp, r in plan.proposed.items()}, plan.replica_moves, plan.lower_bound) == (
        {"t-0": (2,), "t-1": (3,), "t-2": (1,)},
        3,
        3,
    )


def test_under_disk_limits_a_plan_short_of_its_goals_makes_no_second_plan_to_polish(monkeypatch):
    # lognormal-uneven at 200 partitions (racks of 7/4/3 parts, rack-unsafe hand moves), every broker's usable bytes a
    # tenth of the mean (bench.bench_corpus): the goals stay unmet. The polish checked its results with two second
    # plans of the plan as if applied (whole plans: at 10,000 partitions of uniform-even 64 % of 432 s of CPU), which
    # such a plan is not held to: it counts its copies against the room brokers have now (docs/reassign.md). The
    # same plan without them (21 moves, as before)
    from bench.bench_corpus import _with_disk_limits
    from bench.corpus import FAMILIES, generate
    from planner.rebalance.goals import search

    c = _with_disk_limits(generate(next(f for f in FAMILIES if f.name == "lognormal-uneven"), 200))
    plan_of = search.balance
    seconds = []

    def counted(*args, **kwargs):
        seconds.append(kwargs.get("polish"))
        return plan_of(*args, **kwargs)

    monkeypatch.setattr(search, "balance", counted)
    plan = plan_of(c)
    assert seconds == []
    assert (plan.replica_moves, plan.lower_bound, plan.moved_bytes()) == (21, 7, 766788662946288)
    assert plan.strategy == "greedy-slots-by-bytes"
