"""Goal 3: each topic's replicas per target broker within 1 of its even share (floor or ceiling), per rack when every
partition keeps one replica per rack (racks of different sizes then force a wider spread over all brokers).

A topic's replica moves from a broker holding most of it to one holding fewest: alone when the replica counts stay
in range, else exchanged for a replica of another topic the receiving broker holds more of than the giving one (two
moves, counts unchanged, that topic's spread not widened), else rotated through a third broker when racks forbid the
exchange (three moves, counts unchanged, each other topic's spread not widened). Cheapest first: a replica moved
earlier in the plan moves again at no extra copy, or goes back home; then the smallest, then followers.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from planner.rebalance.goals.base import Change, Frozen, Note, keeps, net_deltas
from planner.rebalance.goals.state import State


@dataclass(frozen=True)
class TopicConstraint:
    """Every (broker, topic) count stays within the range the goal reached for that topic in the broker's group."""

    lo: dict
    hi: dict

    def allows(self, st: State, changes: Sequence[Change]) -> bool:
        deltas = net_deltas(
            [((s, st.topic_of[i]), -1) for i, s, _ in changes] + [((d, st.topic_of[i]), 1) for i, _, d in changes]
        )
        for (b, t), d in deltas.items():
            g = st.group_of(b)
            if (g, t) in self.lo and not keeps(st.tcount[b].get(t, 0), d, self.lo[(g, t)], self.hi[(g, t)]):
                return False
        return True


ROTATION_BUDGET = 32  # rotations tried per run: bounds the search where racks make a topic's spread unreachable


def _order(st: State, i: int, src: int, dst: int) -> tuple:
    return (st.cost(i, src, dst), not st.known(i), st.sz(i), st.reps[i][0] == src, i)


@dataclass
class TopicSpreadGoal:
    say: Callable[[str], None] = lambda msg: None
    name: str = "topic-spread"
    rotations: int = 0  # three-move rotations still to try in this run (each searches many replicas)

    def optimize(self, st: State, frozen: Frozen) -> TopicConstraint:
        self.say("spreading each topic")
        by_topic: dict[int, list[int]] = {}
        for i, t in enumerate(st.topic_of):
            by_topic.setdefault(t, []).append(i)
        movable = sorted(t for t, idx in by_topic.items() if any(i not in st.fixed for i in idx))
        # single moves and exchanges first; rotations (three moves) only for what those leave, and only where the
        # racks are of one size (with uneven racks the spread a rotation would fix is mostly forced by rack safety)
        for self.rotations in (0, ROTATION_BUDGET) if _even_racks(st) else (0,):
            for _ in range(4):  # a topic's moves may open the way for another's: again while anything moves
                kept = 0
                for members in st.groups.values():
                    for t in movable:
                        kept += self._spread_or_undo(st, frozen, t, members)
                if not kept:
                    break
        lo: dict = {}
        hi: dict = {}
        for g, members in st.groups.items():
            for t in by_topic:
                values = [st.tcount[b].get(t, 0) for b in members]
                lo[(g, t)], hi[(g, t)] = min(values), max(values)
        if any(hi[k] - lo[k] > 1 for k in lo) and not st.allowed():
            st.capped.append(self.name)
        return TopicConstraint(lo, hi)

    def _spread_or_undo(self, st: State, frozen: Frozen, t: int, members: Sequence[int]) -> int:
        """The moves kept spreading topic t over `members`. With rotations, all or nothing: moves that leave the
        topic's spread above 1 (racks forbid it) are taken back, so they cost no copies."""
        done = self._spread(st, frozen, t, members)
        if self.rotations == 0 or not done or _spread(st, t, members) <= 1:
            return len(done)
        for i, src, dst in reversed(done):
            st.move(i, dst, src)
        return 0

    def _spread(self, st: State, frozen: Frozen, t: int, members: Sequence[int]) -> list[Change]:
        done: list[Change] = []
        for _ in range(sum(st.tcount[b].get(t, 0) for b in members) + 1):
            if not st.allowed():
                break
            tc = {b: st.tcount[b].get(t, 0) for b in members}
            if max(tc.values()) - st.low(tc) <= 1:
                break
            changes = self._best(st, frozen, t, tc)
            if changes is None:
                break
            for i, s, d in changes:
                st.move(i, s, d)
            done += changes
        return done

    def _best(self, st: State, frozen: Frozen, t: int, tc: dict[int, int]) -> list[Change] | None:
        givers = sorted(tc, key=lambda b: (-tc[b], b))
        takers = sorted((b for b in tc if b not in st.closed), key=lambda b: (tc[b], b))
        for a in givers:
            for b in takers:
                if tc[a] - tc[b] < 2:
                    break
                found = self._between(st, frozen, t, a, b)
                if found is not None:
                    return found
        return None

    def _between(self, st: State, frozen: Frozen, t: int, a: int, b: int) -> list[Change] | None:
        cands = sorted(
            (i for i in st.where[a] if st.topic_of[i] == t and st.can_move(i, a, b)), key=lambda i: _order(st, i, a, b)
        )
        for i in cands:
            if st.allowed(max(0, st.cost(i, a, b))) and frozen.allows(st, [(i, a, b)]):
                return [(i, a, b)]
        for i in cands[:8]:
            swap = self._swap(st, frozen, i, a, b)
            if swap is not None:
                return swap
        for i in cands[:2]:
            if self.rotations <= 0:
                break
            self.rotations -= 1
            rotation = self._rotate(st, frozen, i, a, b)
            if rotation is not None:
                return rotation
        return None

    @staticmethod
    def _swap(st: State, frozen: Frozen, i: int, a: int, b: int) -> list[Change] | None:
        t = st.topic_of[i]
        back = sorted(
            (
                j
                for j in st.where[b]
                if st.topic_of[j] != t
                and st.tcount[b].get(st.topic_of[j], 0) > st.tcount[a].get(st.topic_of[j], 0)
                and st.can_move(j, b, a)
            ),
            key=lambda j: _order(st, j, b, a),
        )
        for j in back:
            changes = [(i, a, b), (j, b, a)]
            if st.allowed(max(0, st.cost(i, a, b) + st.cost(j, b, a))) and frozen.allows(st, changes):
                return changes
        return None

    @staticmethod
    def _rotate(st: State, frozen: Frozen, i: int, a: int, b: int) -> list[Change] | None:
        """i goes a -> b, a replica of another topic b -> x and one of a third x -> a: every broker keeps its count.
        x is tried in id order among the brokers of a's and b's racks; each of the other two topics must have more
        replicas on the giving broker than on the receiving one, so its spread does not widen."""
        t = st.topic_of[i]
        if st.rack_of.get(a) == st.rack_of.get(b):
            return None  # within one rack every exchange is rack-safe: the two-move exchange has been tried

        def givers(src: int, dst: int) -> list[int]:
            out = (
                j
                for j in st.where[src]
                if st.topic_of[j] != t
                and st.tcount[src].get(st.topic_of[j], 0) > st.tcount[dst].get(st.topic_of[j], 0)
                and st.can_move(j, src, dst)
            )
            return heapq.nsmallest(4, out, key=lambda j: _order(st, j, src, dst))

        near = {st.rack_of.get(a), st.rack_of.get(b)}  # one of the two other moves stays in its rack: always rack-safe
        for x in st.targets:
            if x in (a, b) or x in st.closed or st.rack_of.get(x) not in near:
                continue
            outs = givers(b, x)
            ins = givers(x, a) if outs else []
            for j in outs:
                for k in ins:
                    if st.topic_of[k] == st.topic_of[j]:
                        continue
                    changes = [(i, a, b), (j, b, x), (k, x, a)]
                    cost = st.cost(i, a, b) + st.cost(j, b, x) + st.cost(k, x, a)
                    if st.allowed(max(0, cost)) and frozen.allows(st, changes):
                        return changes
        return None


def _even_racks(st: State) -> bool:
    sizes = Counter(st.rack_of.get(b) for b in st.targets if b not in st.closed)
    return None not in sizes and len(set(sizes.values())) == 1


def topic_notes(st: State, name: str) -> list[Note]:
    notes = []
    unmet: list[str] = []
    forced: list[str] = []
    for t, topic in enumerate(st.topic_names):
        inside = max((_spread(st, t, m) for m in st.groups.values()), default=0)
        if inside > 1:
            unmet.append(topic)
        elif None not in st.groups and _spread(st, t, st.targets) > 1:
            forced.append(topic)
    if unmet:
        notes.append(Note(name, "unmet", len(unmet), topics=tuple(unmet)))
    if forced:
        notes.append(Note(name, "rack-forced", len(forced), topics=tuple(forced)))
    return notes


def _spread(st: State, t: int, members: Sequence[int]) -> int:
    values = {b: st.tcount[b].get(t, 0) for b in members}
    return max(values.values()) - st.low(values)
