"""The Assignor registry (planner/assignors/registry.py) and the group evaluation built on it."""

import pytest
from testkit import build_cluster

from planner.assignors.evaluation import OwnedElsewhere, evaluate_group
from planner.assignors.group import Member
from planner.assignors.registry import ASSIGNORS, StrategyResult, get_assignor, register_assignor
from planner.cli.messages import Strategy
from planner.model import PlannerError, TopicPartition

STRATEGY_NAMES = ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range"]


CLUSTER = build_cluster(3, topics={"a": {0: [0, 1], 1: [1, 2], 2: [2, 0]}, "b": {0: [1, 0]}})


def test_registered_in_order_and_offered_by_the_cli():
    assert list(ASSIGNORS) == STRATEGY_NAMES
    assert [s.value for s in Strategy] == STRATEGY_NAMES


def test_unknown_strategy():
    with pytest.raises(PlannerError, match=r"^unknown strategy 'x': use one of range, roundrobin, sticky, "):
        get_assignor("x")


def test_evaluation_runs_every_registered_strategy_by_default_and_reports_what_does_not_fit():
    members = [
        Member(id="m1", topics=("a", "b", "gone"), owned=(TopicPartition("a", 5),)),
        Member(id="m2", topics=("a",), owned=(TopicPartition("b", 0),)),
    ]
    ev = evaluate_group(CLUSTER, members)
    assert [r.strategy for r in ev.results] == STRATEGY_NAMES
    assert ev.counts == {"a": 3, "b": 1}
    assert ev.missing == ["gone"]
    assert ev.ignored == [
        OwnedElsewhere("m1", TopicPartition("a", 5), 3),
        OwnedElsewhere("m2", TopicPartition("b", 0), None),
    ]
    assert ev.leader_of == {
        TopicPartition("a", 0): 0,
        TopicPartition("a", 1): 1,
        TopicPartition("a", 2): 2,
        TopicPartition("b", 0): 1,
    }
    rng = ev.results[0]
    assert rng.assignment == {
        "m1": [TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)],
        "m2": [TopicPartition("a", 2)],
    }


def test_a_registered_assignor_is_run_once_in_the_order_asked():
    class Nobody:
        name = "nobody"
        description = "assigns nothing"

        def run(self, members, counts, racks, topic_ids):
            return StrategyResult(self.name, {m.id: [] for m in members}, True)

    register_assignor(Nobody())
    try:
        ev = evaluate_group(CLUSTER, [Member(id="m", topics=("a",))], ["nobody", "roundrobin", "nobody"])
    finally:
        del ASSIGNORS["nobody"]
    assert [(r.strategy, r.assignment) for r in ev.results] == [
        ("nobody", {"m": []}),
        ("roundrobin", {"m": [TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("a", 2)]}),
    ]
