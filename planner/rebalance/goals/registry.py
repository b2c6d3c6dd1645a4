"""The goals in order (`GOALS`): which goals the search runs, measures and asks for notes, and how each is made for
one strategy's run. A new goal is one module (a `base.Goal` class: its optimisation, measure, lower bound, notes and
contract) and one entry here (`register`); the search (`search.py`) and the objective (`objective.py`) read only this
list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from planner.rebalance.goals.base import Findings, Goal
from planner.rebalance.goals.byte_balance import ByteGoal
from planner.rebalance.goals.preferred_leaders import PreferredLeaderGoal
from planner.rebalance.goals.replica_count import ReplicaCountGoal
from planner.rebalance.goals.shares import LEVELS
from planner.rebalance.goals.topic_spread import TopicSpreadGoal


@dataclass(frozen=True)
class Options:
    """What `balance` was asked, as every goal of the plan is made from it."""

    say: Callable[[str], None]
    leaders: bool  # the preferred-leader goal runs
    sized: bool  # the byte goal runs: sizes known and bytes balanced
    byte_tolerance: float


@dataclass(frozen=True)
class Variant:
    """How a strategy sets up the goals of one run (`search.py`'s strategies): the count goal aiming at the topic
    shares where racks differ in size (`shares`), keeping counts placed already (`placed`), choosing its slots for
    their bytes (`by_bytes`, in `levels` steps); the byte goal taking free steps first (`free`)."""

    shares: bool = False
    placed: bool = False
    free: bool = True
    by_bytes: bool = False
    levels: int = LEVELS


Make = Callable[[Options, Variant, Findings], Goal]


def _always(options: Options) -> bool:
    return True


@dataclass(frozen=True)
class Registered:
    """One goal of the list: its name, how it is made for a run (`make`: what it finds it records in the run's
    `Findings`), whether it optimizes in this plan (`runs`; a goal that does not run is still measured: its term of
    the objective) and whether its notes are told (`noted`, default: where it runs)."""

    name: str
    make: Make
    runs: Callable[[Options], bool] = _always
    noted: Callable[[Options], bool] | None = None

    def told(self, options: Options) -> bool:
        return (self.noted or self.runs)(options)


def _count(o: Options, v: Variant, found: Findings) -> Goal:
    return ReplicaCountGoal(
        o.say,
        level_bytes=o.sized,
        tolerance=o.byte_tolerance,
        shares=v.shares,
        placed=v.placed,
        by_bytes=v.by_bytes,
        levels=v.levels,
        found=found,
    )


GOALS: list[Registered] = [
    Registered("replica-count", _count),
    Registered("topic-spread", lambda o, v, found: TopicSpreadGoal(o.say)),
    Registered("preferred-leaders", lambda o, v, found: PreferredLeaderGoal(o.say), runs=lambda o: o.leaders),
    Registered(
        "bytes",
        lambda o, v, found: ByteGoal(o.byte_tolerance, o.say, free=v.free, found=found, measured=o.sized),
        runs=lambda o: o.sized,
        noted=_always,  # unknown sizes are told where bytes are not balanced too
    ),
]


def register(entry: Registered, before: str | None = None) -> None:
    """Add a goal to the list: last, or right before the goal named `before` (it then runs, and its term of the
    objective counts, before that goal's)."""
    at = len(GOALS) if before is None else next(k for k, e in enumerate(GOALS) if e.name == before)
    GOALS.insert(at, entry)


def made(options: Options, variant: Variant, found: Findings) -> list[Goal]:
    """The goals of one run, in order: those that run in this plan."""
    return [e.make(options, variant, found) for e in GOALS if e.runs(options)]


def measuring(options: Options) -> list[Goal]:
    """One goal per entry, in order, made to be measured, bounded and asked for notes (each run makes its own)."""
    return [e.make(options, Variant(), Findings()) for e in GOALS]
