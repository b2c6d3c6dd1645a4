"""How is a run of the goals taken back, or a second plan's placement taken over?

A state's placement kept to take a run of the goals back (`Snapshot`, `Run`), and a second plan's replica lists taken
over (`take_over`). Pure: what `balance` and `refit` restore and compare."""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.model import TopicPartition
from planner.rebalance.goals.base import Goal
from planner.rebalance.goals.state import State


class Snapshot:
    """The replica lists and counters of a state, to take a run of the goals back (the goals it found cut short by
    the move cap stay named: from the same placement, the cap stops them again)."""

    def __init__(self, st: State):
        self.reps = [tuple(r) for r in st.reps]
        self.copies, self.moves, self.incoming = st.copies, st.moves, dict(st.incoming)

    def restore(self, st: State) -> None:
        st.restore(self.reps)
        st.copies, st.moves, st.incoming = self.copies, self.moves, dict(self.incoming)


class Run:
    """A state's placement (`Snapshot`), the goals it names as cut short or stopped by disk space, and the goals that
    made it with its score (`objective.Objective.score`): to take a plan back."""

    def __init__(self, st: State, goals: Sequence[Goal] = (), score: tuple = ()):
        self.snapshot, self.capped, self.full = Snapshot(st), list(st.capped), set(st.full)
        self.goals, self.score = list(goals), score

    def restore(self, st: State) -> None:
        self.snapshot.restore(st)
        st.capped, st.full = list(self.capped), set(self.full)


def take_over(st: State, moved: Mapping[TopicPartition, Sequence[int]]) -> None:
    """The replica lists of a second plan's `proposed` (of the plan as if applied) in place of the state's."""
    index = {p.tp: i for i, p in enumerate(st.parts)}
    reps = [tuple(r) for r in st.reps]
    for tp, replicas in moved.items():
        reps[index[tp]] = tuple(replicas)
    st.restore(reps)
    st.copies = sum(len(set(r).difference(h)) for r, h in zip(st.reps, st.home))
