"""Goal 5: bytes per target broker (known sizes only) within a tolerance: the largest broker at most (1 + tolerance) ×
the mean of its group, reached with the fewest replica moves and then the fewest bytes moved; once inside, nothing
more moves. Partitions of unknown size never move for this goal.

Each step takes the heaviest broker above the limit and any other (the 64 lightest): a single move where the earlier
goals allow it (replica counts may differ by one), else an exchange of a big replica on the heavy broker for a smaller
one on the light broker (two moves, counts unchanged). Preferred: a change that brings the heavy broker within the
limit without lifting the light one above it, with the fewest copies and then the fewest bytes; otherwise the largest
step. Only a candidate that would beat the best so far is checked against the earlier goals' constraints.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable, Sequence

from planner.rebalance.goals.base import Change, Frozen, Note
from planner.rebalance.goals.state import State

LIGHTS = 64  # the brokers (lightest first) a heavy broker may hand bytes to in one step


def limits(st: State, tolerance: float) -> dict[str | None, float]:
    """Per group: the most bytes a broker may hold, (1 + tolerance) × the group's mean (known sizes)."""
    out = {}
    for g, members in st.groups.items():
        total = sum(st.bytes[b] for b in members)
        out[g] = (1 + tolerance) * total / len(members)
    return out


def bytes_lower_bound(st: State, tolerance: float, by_rack: dict | None) -> int:
    """Fewest bytes any plan reaching the replica-count and byte goals copies: every replica leaves a broker, and
    broker b must lose at least its bytes above the limit and at least its replicas above the ceiling of the mean
    (the smallest of them at the least), all of them when b is not a target. Unknown sizes count 0. Per rack when
    every partition keeps one replica per rack (`by_rack`: each rack then ends with one replica of each partition)."""
    groups = list(by_rack.values()) if by_rack else [st.targets]
    bound = 0
    for b in st.cluster.broker_ids:
        if b not in st.target_set:
            bound += sum(st.sz(i) for i in st.where[b] if i not in st.fixed)
    for members in groups:
        if by_rack:
            total_bytes, total = sum(st.sz(i) for i in range(len(st.reps))), len(st.reps)
        else:
            total_bytes = sum(st.bytes[b] for b in st.cluster.broker_ids)
            total = sum(len(r) for r in st.reps)
        limit = (1 + tolerance) * total_bytes / len(members)
        ceil = -(-total // len(members))
        for b in members:
            sizes = sorted(st.sz(i) for i in st.where[b] if i not in st.fixed)
            by_count = sum(sizes[: max(0, st.count[b] - ceil)])
            bound += max(by_count, int(max(0.0, st.bytes[b] - limit)))
    return bound


@dataclass
class ByteGoal:
    tolerance: float = 0.10
    say: Callable[[str], None] = lambda msg: None
    name: str = "bytes"
    unmet: list = field(default_factory=list)

    def optimize(self, st: State, frozen: Frozen) -> None:
        self.say("balancing bytes")
        self.unmet = []
        limit = limits(st, self.tolerance)
        for g, members in st.groups.items():
            self._balance(st, frozen, members, limit[g])
        return None

    def _balance(self, st: State, frozen: Frozen, members: Sequence[int], limit: float) -> None:
        for _ in range(64 * len(st.reps) + 64):
            heavy = max(members, key=lambda b: (st.bytes[b], -b))
            if st.bytes[heavy] <= limit:
                return
            if not st.allowed():
                st.capped.append(self.name)
                break
            step = self._step(st, frozen, heavy, members, limit)
            if step is None:
                if not st.allowed(2):
                    st.capped.append(self.name)
                break
            for i, s, d in step:
                st.move(i, s, d)
        self.unmet.append(members)

    def _step(self, st: State, frozen: Frozen, heavy: int, members: Sequence[int], limit: float) -> list[Change] | None:
        """The best change between the heavy broker and any other (the lightest first); a candidate is checked
        against the earlier goals' constraints only when it would beat the best found so far."""
        best: list = [None]  # (key, changes)
        lights = sorted((b for b in members if b != heavy and b not in st.closed), key=lambda b: (st.bytes[b], b))
        held = sorted((st.sz(i), i) for i in st.where[heavy] if st.known(i))
        for light in lights[:LIGHTS]:
            self._candidates(st, frozen, heavy, light, limit, best, held)
        return best[0][1] if best[0] else None

    def _candidates(
        self, st: State, frozen: Frozen, heavy: int, light: int, limit: float, best: list, held: list
    ) -> None:
        """`held`: the heavy broker's replicas of known size as (size, index), sorted."""
        gap = st.bytes[heavy] - st.bytes[light]
        want = st.bytes[heavy] - limit
        room = limit - st.bytes[light]
        theirs = sorted((st.sz(j), j) for j in st.where[light] if st.known(j) and st.can_move(j, light, heavy))
        sizes = [s for s, _ in theirs]
        same: dict[int, list[tuple[int, int]]] = {}  # the light broker's replicas per topic, by size
        for sj, j in theirs:
            same.setdefault(st.topic_of[j], []).append((sj, j))
        top = min(room, gap - 1)

        def offer(changes: list[Change], delta: int) -> bool:
            """Keep `changes` if better than the best and allowed; whether it was allowed (None: not better)."""
            if best[0] is not None and not best[0][0][0] and not want <= delta <= room:
                return False  # its key starts with True: not better than a change inside the limits
            key = self._key(st, changes, delta, want, room)
            if best[0] is not None and key >= best[0][0]:
                return False
            cost = sum(st.cost(i, s, d) for i, s, d in changes)
            if st.allowed(max(0, cost)) and frozen.allows(st, changes):
                best[0] = (key, changes)
                return True
            return False

        for si, i in held:
            # exchanges: j as small as possible with si - sj between want and min(room, gap - 1)
            k = bisect.bisect_left(sizes, si - top)
            if best[0] is not None and not best[0][0][0] and not want <= si <= room:
                if k == len(sizes) or not sizes[k] < si or si - sizes[k] < want:
                    continue  # neither the move nor an exchange could land inside the limits: not better
            if not st.can_move(i, heavy, light):
                continue
            if 0 < si < gap:
                offer([(i, heavy, light)], si)
            if any(sj >= si or offer([(i, heavy, light), (j, light, heavy)], si - sj) for sj, j in theirs[k : k + 6]):
                continue
            # an exchange within one topic changes no topic's counts: the earlier goals' constraints rarely refuse it
            mine = same.get(st.topic_of[i], [])
            for sj, j in mine[bisect.bisect_left(mine, (si - top, -1)) :][:2]:
                if sj >= si or offer([(i, heavy, light), (j, light, heavy)], si - sj):
                    break

    @staticmethod
    def _key(st: State, changes: Sequence[Change], delta: int, want: float, room: float) -> tuple:
        cost = sum(st.cost(i, s, d) for i, s, d in changes)
        copied = sum(st.sz(i) for i, s, d in changes if d not in st.home[i])
        if want <= delta <= room:
            return (False, cost, copied, tuple(changes))
        return (True, -delta / max(1, cost), cost, copied, tuple(changes))


def byte_notes(st: State, goal: ByteGoal | None, tolerance: float) -> list[Note]:
    notes = []
    unknown = sorted({st.parts[i].topic for i in range(len(st.reps)) if not st.known(i)})
    if st.has_sizes and unknown:
        notes.append(Note("bytes", "unknown-sizes", len(unknown), topics=tuple(unknown)))
    if goal is not None and goal.unmet:
        worst = 0.0
        for members in goal.unmet:
            mean = sum(st.bytes[b] for b in members) / len(members)
            worst = max(worst, max(st.bytes[b] for b in members) / mean if mean else 1.0)
        notes.append(Note("bytes", "unmet", len(goal.unmet), values=(worst, 1 + tolerance)))
    return notes
