"""What are the fewest moves from the goals' start to the figures a run of them reached?

Where racks of different sizes keep the replica counts and some topics wider than 1: the fewest moves from the
start of the goals to the figures a run of them reached (`refit`), by `rack_flow`'s least-cost flow with each such
topic held to the range it reached (or, failing that, its replicas off its even share costed, or each broker held no
further from it). Pure: works on the state `balance` plans in."""

from __future__ import annotations

import operator
from typing import Callable, Sequence

from planner.rebalance.goals.base import Frozen, Goal
from planner.rebalance.goals.geometry import balanced_in, spreads
from planner.rebalance.goals.state import State
from planner.rebalance.goals.state.snapshot import Run, Snapshot, take_over
from planner.rebalance.goals.uneven import rack_flow
from planner.rebalance.moves import Plan

HOLDS = 3  # plans `_Reached.fewer` tries, each with the topics whose figures came out worse held as reached
LEADER_RUNS = 3  # runs of the leader goal on a refitted placement (each from the heads the last left)
REFITS = 3  # refits `refit` makes at most, each from the figures a second plan of the one before reached
# how `refit` holds the topics a run left wider than 1, tried in turn until one is kept: (each broker no further from
# the topic's even share than the run left it, the cost of a replica off that share beside a move's 1)
WAYS = ((False, 0), (False, 1), (True, 0))
# replicas up to which `balance`'s polish tries `refit`: its check costs a second plan, and on 3,457 partitions (8,987
# replicas, racks of 7/4/3) that plan found further moves, so the refit was dropped for 2.7 s CPU more (4.3 -> 7.0 s).
# With the counts at the narrowest range racks allow (`count_range`) the flow there copies fewer (1,070 against 1,096)
# but balances the leaders of fewer topics, also with those topics held as placed: kept out (3.6 -> 5.9 s CPU for the
# same plan)
REFIT_REPLICAS = 5_000


class _Reached:
    """What a run of the goals reached where racks kept some topics wider than 1 (`rack_flow.plan` finds no plan
    with them within 1): the range of each such topic on each broker (over each set of brokers the topic goal
    balances it over; with `tight`, each broker no further from the topic's even share there than it is), with
    `weight` the cost of each replica of them off that share (`rack_flow.plan`'s `shares`), every topic's replicas
    per broker, the figures (`figures`) and copies."""

    def __init__(self, st: State, tight: bool = False, weight: int = 0):
        self.ranges: dict[int, dict[int, tuple[int, int]]] = {}
        self.shares: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}
        for t, where in enumerate(balanced_in(st)):
            reached = [(m, st.topic_range(t, m)) for m in where]
            if any(hi - lo > 1 for _, (lo, hi) in reached):
                even = _even(st, t, where)
                if tight:
                    self.ranges[t] = {b: (min(c, least), max(c, most)) for b, (least, most, c) in even.items()}
                else:
                    self.ranges[t] = {b: r for m, r in reached for b in m}
                self.shares.update(((t, b), ((least, most), weight)) for b, (least, most, _) in even.items() if weight)
        self.held = [{b: holders.get(b, 0) for b in st.targets} for holders in st.holders]
        self.lists = [tuple(r) for r in st.reps]
        self.figures, self.copies = figures(st), st.copies

    def fewer(self, st: State, start: Run, goals: Sequence[Goal], reached: tuple[int, int]) -> bool:
        """From `start`: the fewest moves to the count range reached with every topic within 1 where the topic goal
        balances it, but those wider, within the ranges reached (`rack_flow.plan`), then the preferred leaders
        (reordering only, `LEADER_RUNS` times: a later run may balance more). Whether that copies fewer replicas at
        figures as good as those reached (else the state is left for the caller to restore). Where only some topics'
        figures come out worse (their leaders, which the flow does not see), again with those held at the replica
        lists reached, up to `HOLDS` plans."""
        ranges = dict(self.ranges)
        pinned: dict[int, tuple[int, ...]] = {}
        for _ in range(HOLDS):
            start.restore(st)
            reps = rack_flow.plan(st, *reached, wide=ranges, pinned=pinned, shares=self.shares)
            if reps is None:
                return False
            rack_flow.apply(st, reps)
            for g in goals:
                for _ in range(LEADER_RUNS if g.name == "preferred-leaders" else 0):
                    g.optimize(st, Frozen())
            now = figures(st)
            if as_good(now, self.figures):
                return st.copies < self.copies
            worse = [t for t, (a, b) in enumerate(zip(now[1], self.figures[1])) if not _within(a, b)]
            if not worse:
                return False
            ranges.update((t, {b: (c, c) for b, c in self.held[t].items()}) for t in worse)
            pinned.update((i, r) for i, r in enumerate(self.lists) if st.topic_of[i] in worse)
        return False


def _even(st: State, t: int, where: Sequence[frozenset[int]]) -> dict[int, tuple[int, int, int]]:
    """Per broker of each set in `where`: the floor and ceiling of topic t's even share over that set, and what the
    broker holds of it."""
    out: dict[int, tuple[int, int, int]] = {}
    for members in where:
        held = [st.holders[t].get(b, 0) for b in members]
        least, most = sum(held) // len(members), -(-sum(held) // len(members))
        out.update((b, (least, most, c)) for b, c in zip(members, held))
    return out


def as_good(these: tuple, than: tuple) -> bool:
    """Whether every figure of `these` (`figures`) is at most that of `than`."""
    return _within(these[0], than[0]) and all(map(_within, these[1], than[1]))


def _within(figures: Sequence[int], than: Sequence[int]) -> bool:
    return all(map(operator.le, figures, than))


def figures(st: State) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The figures of the placement, for comparing them one by one: the spread of the replica counts, the largest of
    each topic figure, the spread of the preferred leaders; and each topic's figures (`geometry.spreads`, then
    the spread of its preferred leaders), at least 1 (within 1 either way)."""
    st.settle_leads()
    counts, leads = [st.count[b] for b in st.targets], st.lead.values()
    topics = [(*s, -operator.sub(*st.topic_lead_range(t))) for t, s in enumerate(spreads(st))]
    largest = tuple(map(max, zip(*topics))) if topics else ()
    whole = (max(counts) - min(counts), *largest, max(leads) - min(leads))
    return whole, [tuple(max(1, v) for v in topic) for topic in topics]


def may_refit(st: State, sized: bool) -> bool:
    """Whether `refit` applies: racks of different sizes (`rack_flow.applies`), without sizes, a move cap or disk
    space limits, up to `REFIT_REPLICAS` replicas."""
    if sized or st.limited or sum(map(len, st.reps)) > REFIT_REPLICAS:
        return False
    return rack_flow.applies(st)


def refit(st: State, start: Run, goals: Sequence[Goal], second: Callable[[], Plan]) -> bool:
    """Where racks keep the counts and some topics wider than 1: the fewest moves from `start` (`may_refit`) to the
    figures the plan reached (`_Reached.fewer`), kept where that copies fewer replicas and a second plan of it moves
    nothing. Where that second plan moves to figures as good, copying fewer in all than the plan did, the same from
    there, at most `REFITS` times. Where none is kept, the same with the wider topics held as the next of `WAYS`
    says: within the ranges reached, the fewest moves may leave more of a topic's replicas off its even share at the
    same spread, which a second plan then moves back (the goals count them), so each such replica costs as much as a
    move, or each broker holds the topic no further from its share than the plan did. Else the plan stays as it
    was. Whether a refit was kept."""
    kept = Snapshot(st)
    for tight, weight in WAYS:
        for _ in range(REFITS):
            reached = _Reached(st, tight, weight)
            counts = min(st.count[b] for b in st.targets), max(st.count[b] for b in st.targets)
            if not reached.ranges or not reached.fewer(st, start, goals, counts):
                break
            moved = second().proposed
            if not moved:
                return True
            take_over(st, moved)
            if st.copies >= kept.copies or not as_good(figures(st), reached.figures):
                break
        kept.restore(st)
    return False
