"""The lexicographic objective every comparison of plans in the search makes (`Objective`).

Compared in this order, the first difference deciding:
1. the goals' terms, in the order of the goal list (`registry.GOALS`): each goal's `measure`, how far the plan is from
   it (0: reached): the replicas off the even counts, each topic's replicas off its even share, the preferred leaders
   off theirs (per broker and per topic), the bytes above the tolerance. A plan nearer an earlier goal wins whatever
   the later terms (`distance`); a run of the goals that comes no nearer is taken back.
2. then the replicas the plan copies (`State.copies`: each new replica on a broker not holding it in the input),
3. then the bytes it copies (`score`).
Where racks of different sizes may keep the replica counts wider than 1 (`rack_flow.applies`), the strategies' plans
compare each goal's `spread_term` instead: the spread of the counts (what the summary shows) in place of the
replicas off the even share, and the topic term led by the topics above a spread of 1.
"""

from __future__ import annotations

from typing import Sequence

from planner.rebalance.goals.base import Goal
from planner.rebalance.goals.state import State


class Objective:
    """The objective over `goals` (one per entry of the goal list, in order: `registry.measuring`)."""

    def __init__(self, goals: Sequence[Goal]):
        self.goals = tuple(goals)
        self.index = {g.name: k for k, g in enumerate(self.goals)}

    def distance(self, st: State) -> tuple:
        """How far the state is from the goals, in goal order: each goal's `measure`."""
        return tuple(g.measure(st) for g in self.goals)

    def term(self, distance: tuple, name: str) -> float:
        """The term of the goal named `name` in a `distance`."""
        return distance[self.index[name]]

    def score(self, st: State, spread: bool = False) -> tuple:
        """The `distance` (each goal's `spread_term` with `spread`), then copies, then bytes copied."""
        copied = sum(st.sz(i) for i, (r, home) in enumerate(zip(st.reps, st.home)) for b in r if b not in home)
        distance: tuple = self.distance(st)
        if spread:
            distance = tuple(g.spread_term(st, d) for g, d in zip(self.goals, distance))
        return distance, st.copies, copied
