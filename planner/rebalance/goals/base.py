"""The goal interface and the constraints earlier goals hand on.

A goal improves the working state (`State`) with the fewest replica moves, then the fewest bytes moved, under the
constraints of the goals before it (`Frozen`), and returns the constraint that keeps what it reached: a later goal may
only make changes every earlier constraint accepts, so it never undoes an earlier goal (Cruise Control's goal
priorities, in spirit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from planner.rebalance.goals.state import State
    from planner.rebalance.notes import Note

Change = tuple[int, int, int]  # (partition index, broker losing the replica, broker taking it), in place


class Constraint(Protocol):
    def allows(self, st: "State", changes: Sequence[Change]) -> bool:
        """May these replica changes be made (together) without undoing the goal that set this constraint?"""


@runtime_checkable
class TopicCounts(Protocol):
    """A constraint on each (broker, topic) replica count alone (the topic goal's `TopicConstraint`): it refuses any
    changes moving a replica of topic t from s to d where `moves(st, t, s, d)` is False and no other of the changes
    moves a replica of t (an exchange for a replica of another topic changes t's counts as the move alone does)."""

    def allows(self, st: "State", changes: Sequence[Change]) -> bool: ...

    def moves(self, st: "State", t: int, s: int, d: int) -> bool:
        """`keeps(st, s, t, -1) and keeps(st, d, t, 1)`."""

    def keeps(self, st: "State", b: int, t: int, d: int) -> bool:
        """Broker b's count of topic t changing by d (not 0) stays in its range: it reads only that count."""


class Goal:
    """The whole interface of a goal: one class in its own module, listed in `registry.GOALS` (the goals in order),
    whose docstring states its contract in three parts, Goal / Constraints / Algorithm.

    - `optimize(st, frozen)`: improve `st` in place with the fewest replica moves, then the fewest bytes moved, making
      only changes `frozen` (the constraints of the goals before it) accepts; return the constraint that keeps what
      it reached (None: it hands none on).
    - `measure(st)`: its term of the objective (`objective.Objective`): how far `st` is from the goal, 0 where it is
      reached. `spread_term(st, term)`: the term where racks may keep the replica counts wider than 1 (by default the
      same).
    - `lower_bound(st, repaired, unsafe)`: the fewest replica moves (or bytes) any plan reaching it needs, None where
      it gives none; `repaired`: as if every rack-unsafe partition were repaired, `unsafe`: `geometry.unsafe_of(st)`.
    - `notes(st)`: what the plan must tell about it (`Note` data), read after the search.

    What a run of a goal found that the search asks about afterwards it records in the `Findings` it was made with
    (never a flag on the goal read back)."""

    name: str

    def optimize(self, st: "State", frozen: "Frozen") -> Constraint | None:
        """Improve `st` in place within `frozen`; return the constraint that keeps what this goal reached."""
        raise NotImplementedError

    def measure(self, st: "State") -> float:
        """How far `st` is from this goal (0: reached): its term of the objective."""
        raise NotImplementedError

    def spread_term(self, st: "State", term: float) -> object:
        """This goal's term (`measure`) as compared where racks may keep the replica counts wider than 1."""
        return term

    def lower_bound(self, st: "State", repaired: bool, unsafe: list[tuple[int, int, list[int]]]) -> object:
        """The fewest moves (or bytes) any plan reaching this goal needs; None where the goal gives no bound."""
        return None

    def notes(self, st: "State") -> list[Note]:
        """What the plan must tell about this goal (after the search)."""
        return []


class Findings:
    """What the goals of one strategy's run found that the search asks about afterwards, by name (the count goal's
    "weighed": its slots by bytes were other slots than without; the byte goal's "freed": it took a step that copies
    nothing more). Filled by the goals as they run; the strategy's outcome carries it."""

    def __init__(self) -> None:
        self.found: set[str] = set()

    def record(self, what: str) -> None:
        self.found.add(what)

    def __contains__(self, what: object) -> bool:
        return what in self.found


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


def off_even(values: Iterable[int], n: int, total: int) -> int:
    """How far `values` (of n brokers, summing to `total`; brokers not listed hold 0) are from the even share:
    replicas above its ceiling plus replicas missing below its floor. No broker (every target closed and empty: none
    can lead) lists none: 0."""
    if not n:
        return 0
    q, r = divmod(total, n)
    if not q:  # floor 0, ceiling 1 (or 0 with nothing to share): each value above 1 is off by its excess
        return total - sum(map(bool, values))
    hi = q + (1 if r else 0)
    listed = 0
    off = 0
    for v in values:
        listed += 1
        off += max(0, v - hi) + max(0, q - v)
    return off + (n - listed) * q


def kept_terms(st: "State", name: str, basis: object, touched: set[int], term: Callable[[int], int]) -> int:
    """The sum over topics of `term`, kept in `st.terms[name]` while `basis` (the brokers it counts over) stays the
    same object: only the topics in `touched` (emptied here) are recounted."""
    kept = st.terms.get(name)
    if kept is None or kept[0] is not basis:
        kept = (basis, {})
        st.terms[name] = kept
        touched.update(range(len(st.topic_names)))
    terms = kept[1]
    for t in touched:
        terms[t] = term(t)
    touched.clear()
    return sum(terms.values())
