"""The search (`goals/search.py`): the strategy that made a plan, named on the plan, in `--verbose` and in
`--format json`; and the goal list (`goals/registry.py`): a goal added by one module and one `register` call is run
and measured by the search without touching it."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.gen_cluster import uneven_racks
from planner.adapters.source import load_cluster
from planner.rebalance.decommission import decommission
from planner.rebalance.goals import balance, registry
from planner.rebalance.goals.base import Frozen, Goal
from planner.rebalance.goals.state import State
from planner.rebalance.replication import set_replication_factor

ROOT = Path(__file__).resolve().parents[3]
SIX = str(ROOT / "topologies" / "six-brokers.yaml")
SCALE_OUT = str(ROOT / "examples" / "reassign" / "scale-out.yaml")


def test_the_plan_names_the_strategy_that_made_it():
    six, scale_out = load_cluster(SIX, None), load_cluster(SCALE_OUT, None)
    # six-brokers.yaml is balanced: the first strategy's plan (slots by bytes: sizes known) moves nothing
    assert (balance(six).strategy, balance(six, balance_bytes=False).strategy) == ("greedy-slots-by-bytes", "greedy")
    plan = decommission(six, [6])
    assert (plan.strategy, plan.replica_moves) == ("greedy-slots-by-bytes", 37)
    # scale-out.yaml: then the byte exchange (fewer bytes at the same goal figures) kept
    assert balance(scale_out).strategy == "greedy-slots-by-bytes+byte-exchange"
    # racks of 3/2/1 brokers keep the counts wider than 1: the run again from `rack_flow`'s fewest moves to the count
    # range the first run reached, kept (nearer the goals, or as near with fewer copies)
    plan = balance(uneven_racks(5, "aaabbc", 10, 10, 40))
    assert (plan.strategy, plan.replica_moves, plan.lower_bound) == ("greedy+rack-flow", 108, 107)
    # plans that are no search's name none
    assert set_replication_factor(six, "orders", 2).strategy is None


def test_a_capped_plan_that_the_cap_does_not_bind_is_the_uncapped_plan():
    # scale-out.yaml: 12 moves reach every goal; capped at 12 the goals take greedier steps, so the plan without the
    # cap is the plan (`search.Uncapped`), named so; capped at 11 it does not fit, and the capped plan stands
    scale_out = load_cluster(SCALE_OUT, None)
    plan = balance(scale_out, max_moves=12)
    assert (plan.strategy, plan.replica_moves) == ("uncapped", 12)
    plan = balance(scale_out, max_moves=11)
    assert (plan.strategy, plan.replica_moves, plan.unmet) == (
        "greedy-slots-by-bytes",
        11,
        ("replica-count", "topic-spread", "bytes"),
    )


def test_verbose_prints_the_strategy_as_a_progress_line_and_json_carries_it(planner_cli):
    code, out, err = planner_cli("reassign", "rebalance", SCALE_OUT, "--verbose", "--format", "json")
    assert code == 0, err
    assert err.splitlines()[-1] == "... strategy: greedy-slots-by-bytes+byte-exchange"
    assert json.loads(out)["strategy"] == "greedy-slots-by-bytes+byte-exchange"
    code, out, err = planner_cli("reassign", "decommission", SIX, "--brokers", "6", "--verbose")
    assert code == 0, err
    assert err.splitlines()[-1] == "... strategy: greedy-slots-by-bytes"
    # without --verbose, a small cluster prints no progress; plans of other commands carry null
    code, out, err = planner_cli("reassign", "rebalance", SCALE_OUT, "--format", "json")
    assert (code, err) == (0, "")
    code, out, err = planner_cli("reassign", "elect-leaders", SIX, "--format", "json")
    assert (code, json.loads(out)["strategy"]) == (0, None)


@dataclass
class _Idle(Goal):
    """A goal that changes nothing, vetoes nothing and is always reached."""

    name: str = "idle"

    def optimize(self, st: State, frozen: Frozen) -> None:
        return None

    def measure(self, st: State) -> int:
        return 0


@dataclass
class _SpareBroker(Goal):
    """A goal that keeps broker 6 free of replicas: measured as the replicas on it; it moves nothing itself."""

    name: str = "spare-broker-6"

    def optimize(self, st: State, frozen: Frozen) -> None:
        return None

    def measure(self, st: State) -> int:
        return st.count[6]


def _figures(plan) -> tuple:
    return (dict(plan.proposed), plan.lower_bound, plan.bytes_lower_bound, plan.notes, plan.unmet, plan.strategy)


@pytest.fixture
def goal_list(monkeypatch):
    """The goal list, restored after the test."""
    monkeypatch.setattr(registry, "GOALS", list(registry.GOALS))
    return registry


def test_a_registered_goal_that_vetoes_nothing_and_measures_0_leaves_every_plan_as_it_was(goal_list):
    six, scale_out = load_cluster(SIX, None), load_cluster(SCALE_OUT, None)
    uneven = uneven_racks(5, "aaabbc", 10, 10, 40)
    makes = [lambda: balance(scale_out), lambda: decommission(six, [6]), lambda: balance(uneven)]
    before = [_figures(make()) for make in makes]
    goal_list.register(registry.Registered("idle", lambda options, variant, found: _Idle()))
    assert [e.name for e in goal_list.GOALS] == ["replica-count", "topic-spread", "preferred-leaders", "bytes", "idle"]
    assert [_figures(make()) for make in makes] == before


def test_the_search_reads_a_registered_goals_measure(goal_list):
    # scale-out.yaml: brokers 4, 5, 6 are new and empty; the plan fills them (12 moves, 4 onto broker 6)
    scale_out = load_cluster(SCALE_OUT, None)
    plan = balance(scale_out)
    assert (plan.replica_moves, sum(6 in r for r in plan.proposed.values())) == (12, 4)
    # a goal first in the list that counts the replicas on broker 6: every run that puts one there comes out further
    # from the goals (its term first) and is taken back, so nothing reaches broker 6
    goal_list.register(
        registry.Registered("spare-broker-6", lambda o, v, found: _SpareBroker()), before="replica-count"
    )
    plan = balance(scale_out)
    assert (plan.replica_moves, sum(6 in r for r in plan.proposed.values())) == (0, 0)
