"""The goal interface and the constraints earlier goals hand on.

A goal improves the working state (`State`) with the fewest replica moves, then the fewest bytes moved, under the
constraints of the goals before it (`Frozen`), and returns the constraint that keeps what it reached: a later goal may
only make changes every earlier constraint accepts, so it never undoes an earlier goal (Cruise Control's goal
priorities, in spirit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

if TYPE_CHECKING:
    from planner.rebalance.goals.state import State

Change = tuple[int, int, int]  # (partition index, broker losing the replica, broker taking it), in place


class Constraint(Protocol):
    def allows(self, st: "State", changes: Sequence[Change]) -> bool:
        """May these replica changes be made (together) without undoing the goal that set this constraint?"""


class Goal(Protocol):
    name: str

    def optimize(self, st: "State", frozen: "Frozen") -> Constraint | None:
        """Improve `st` in place within `frozen`; return the constraint that keeps what this goal reached."""


@dataclass
class Frozen:
    """The constraints handed on by the goals already optimized."""

    constraints: list[Constraint] = field(default_factory=list)

    def allows(self, st: "State", changes: Sequence[Change]) -> bool:
        for c in self.constraints:  # a loop, not all() over a generator: every candidate change asks
            if not c.allows(st, changes):
                return False
        return True

    def add(self, constraint: Constraint | None) -> None:
        if constraint is not None:
            self.constraints.append(constraint)


def net_deltas(keys: Iterable[tuple[object, int]]) -> dict:
    out: dict = {}
    for k, d in keys:
        out[k] = out.get(k, 0) + d
    return out


def keeps(value: int, delta: int, lo: int, hi: int) -> bool:
    """A value changing by `delta` stays within [lo, hi], or (already outside) only moves towards it."""
    new = value + delta
    if delta > 0:
        return new <= max(hi, value)
    if delta < 0:
        return new >= min(lo, value)
    return True


@dataclass(frozen=True)
class CountConstraint:
    """Every target broker's replica count stays within the range the goal reached in its group."""

    lo: dict
    hi: dict

    def allows(self, st: State, changes: Sequence[Change]) -> bool:
        deltas: dict[int, int] = {}
        for _, s, d in changes:
            deltas[s] = deltas.get(s, 0) - 1
            deltas[d] = deltas.get(d, 0) + 1
        for b, d in deltas.items():
            if d and b in st.target_set:  # an unchanged count keeps its range
                g = st.group_of(b)
                if not keeps(st.count[b], d, self.lo[g], self.hi[g]):
                    return False
        return True
