"""Goal 1, hard: replicas only on target brokers (moves off the others are required), rack safety never lowered and
rack-unsafe partitions repaired with the fewest moves, partitions mid-reassignment (and excluded topics) left alone.

The rest of the hard goal (replication factor kept, no two replicas on one broker, rack safety never lowered) is
`State.can_move`, which every later goal's moves pass.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable, Sequence

from planner.model import PlannerError
from planner.rebalance.goals.base import Constraint, Frozen, Goal
from planner.rebalance.goals.geometry import targets_of, unsafe_of
from planner.rebalance.goals.pick import BrokerHeap
from planner.rebalance.goals.state import State
from planner.rebalance.moves import repair_removals
from planner.rebalance.notes import Note


@dataclass
class HardGoal(Goal):
    """Goal: replicas only on target brokers, rack-unsafe partitions repaired (where `rack_repair`) with the fewest
    moves. Runs once, before the search, uncapped: what it moves is required (`State.optional_from`). Its measure is 0
    (after it runs, what it requires holds); the replica-count goal's bound counts its moves.

    Constraints: partitions mid-reassignment and of excluded topics never move (`State.fixed`); no replica onto a
    broker whose log dirs are all cordoned (KIP-1066); replication factor kept, no two replicas of a partition on one
    broker, rack safety never lowered (`State.can_move`, which every later goal's moves pass too).

    Algorithm: every replica on a broker outside the targets moves to the target with the lowest count that keeps the
    partition rack-safe, broker by broker, the largest partitions first; then the repairs the count bound's flow
    chooses (`repair`). It sets the groups of brokers the later goals balance together (per rack where every partition
    keeps one replica per rack)."""

    rack_repair: bool = True
    say: Callable[[str], None] = lambda msg: None
    name: str = "hard"
    repaired: int = 0
    repair_moves: int = 0
    unrepaired: tuple[int, ...] = ()  # rack-unsafe partitions left so: no broker of the racks they lack takes them
    unsafe: list | None = None  # `unsafe_of` the state before this goal, where the caller has it

    def optimize(self, st: State, frozen: Frozen) -> Constraint | None:
        target, by_rack = targets_of(st, repaired=self.rack_repair)
        moves = st.moves
        self._forced(st, target)
        # the caller's list where no replica had to move off a broker outside the targets (the lists as they were)
        known = self.unsafe if st.moves == moves else None
        unsafe = (unsafe_of(st) if known is None else known) if self.rack_repair else []
        if unsafe:
            self.say(f"repairing {len(unsafe)} rack-unsafe partitions")
            total = sum(len(r) for r in st.reps)
            groups = [(m, len(st.reps)) for m in by_rack.values()] if by_rack else [(st.targets, total)]
            before = st.copies
            self.repaired = repair(st, groups, unsafe)
            self.repair_moves = st.copies - before
        if self.rack_repair:
            left = [i for i, _, _ in unsafe if st.distinct_racks(st.reps[i]) < min(len(st.reps[i]), st.n_racks)]
            self.unrepaired = tuple(sorted(set(st.unrepairable) | set(left)))
        st.optional_from = st.copies
        _, by_rack = targets_of(st)
        if by_rack:
            st.groups = dict(sorted(by_rack.items()))
        return None

    def measure(self, st: State) -> int:
        return 0

    def notes(self, st: State) -> list[Note]:
        """Partitions it made rack-safe (with the moves that took): rack-repaired; rack-unsafe ones it could not:
        unrepaired."""
        notes = []
        if self.repaired:
            notes.append(Note("hard", "rack-repaired", self.repaired, values=(self.repair_moves,)))
        if self.unrepaired:
            left = tuple(sorted(st.parts[i].tp for i in self.unrepaired))
            notes.append(Note("hard", "unrepaired", len(left), partitions=left))
        return notes

    def _forced(self, st: State, target: dict[int, int]) -> None:
        """Every replica on a broker outside the target set moves (decommission, offline brokers)."""
        heap = BrokerHeap(st, target)
        sources = [b for b in st.cluster.broker_ids if b not in st.target_set and st.where[b]]
        for s in sources:
            self.say(f"moving {len(st.where[s])} replicas off broker {s}")
        # broker by broker, the largest partitions first; where brokers report usable bytes, the largest first over
        # all those brokers: the room one broker's small replicas take can leave none for a larger one of the next
        over_all = bool(st.usable)
        forced = sorted(
            ((i, k, s) for k, s in enumerate(sources) for i in st.where[s] if i not in st.fixed),
            key=lambda x: (-st.sz(x[0]), x[1], x[0]) if over_all else (x[1], -st.sz(x[0]), x[0]),
        )
        for i, _, s in forced:
            d = heap.pick(i, s, lambda b: True, limit=len(st.targets))
            if d is None:
                ids = ",".join(map(str, sorted(st.closed)))
                closed = f" (broker(s) {ids} have every log dir cordoned and take none)"
                full = f" (broker(s) {','.join(map(str, sorted(st.full)))} lack the usable bytes for its copy)"
                raise PlannerError(
                    f"cannot move {st.parts[i].tp} off broker {s}: every target broker already holds a replica "
                    f"or would make it rack-unsafe{closed if st.closed else ''}{full if st.full else ''}; add "
                    "brokers to --broker-list"
                )
            st.move(i, s, d)
            heap.touch(s, d)


class _Shed:
    """The replicas brokers must still shed to reach the count goal, as `lower_bound` counts them: above the floor
    of their group's mean, less the ceilings."""

    def __init__(self, st: State, groups: Sequence[tuple[Sequence[int], int]]):
        self.count = st.count
        self.group_of: dict[int, int] = {}
        self.floor: list[int] = []
        self.ceilings: list[int] = []
        for g, (members, total) in enumerate(groups):
            q, r = divmod(total, len(members))
            self.floor.append(q)
            self.ceilings.append(r)
            for b in members:
                self.group_of[b] = g
        self.over = [sum(1 for b in members if self.count[b] > self.floor[g]) for g, (members, _) in enumerate(groups)]

    def delta(self, changes: dict[int, int]) -> int:
        total = 0
        for g in {self.group_of[b] for b in changes}:
            q = self.floor[g]
            d_sum = d_over = 0
            for b, d in changes.items():
                if self.group_of[b] == g:
                    old, new = self.count[b], self.count[b] + d
                    d_sum += max(0, new - q) - max(0, old - q)
                    d_over += (new > q) - (old > q)
            c, o = self.ceilings[g], self.over[g]
            total += d_sum - (min(c, o + d_over) - min(c, o))
        return total

    def moved(self, b: int, d: int) -> None:
        """Call before the count of b changes by d."""
        g = self.group_of[b]
        self.over[g] += (self.count[b] + d > self.floor[g]) - (self.count[b] > self.floor[g])


class _RackHeaps:
    """Per rack, its brokers by (count, bytes, id), lazily updated."""

    def __init__(self, st: State):
        self.st = st
        self.heaps: dict = {}
        self.members: dict = {}
        for b in st.targets:
            if b not in st.closed:
                self.heaps.setdefault(st.rack_of.get(b), []).append(self.key(b))
                self.members.setdefault(st.rack_of.get(b), []).append(b)
        for h in self.heaps.values():
            heapq.heapify(h)

    def key(self, b: int) -> tuple[int, int, int]:
        return (self.st.count[b], self.st.bytes[b], b)

    def top(self, rack) -> tuple[int, int, int]:
        h = self.heaps[rack]
        while h[0] != self.key(h[0][2]):
            heapq.heappop(h)
        return h[0]

    def first_fitting(self, rack, i: int) -> tuple[int, int, int] | None:
        """The lowest key of the rack's brokers that take partition i's copy (`State.fits`: usable bytes): the top,
        or where it lacks the room, the next that has it (a rack is lost to a repair only when none of its brokers
        has room)."""
        top = self.top(rack)
        if self.st.fits(i, top[2]):
            return top
        fitting = [self.key(b) for b in self.members[rack] if self.st.fits(i, b)]
        return min(fitting) if fitting else None

    def touch(self, b: int) -> None:
        if b not in self.st.closed:
            heapq.heappush(self.heaps[self.st.rack_of.get(b)], self.key(b))


def _best_repair(st: State, i: int, shed: _Shed, heaps: _RackHeaps, chosen: list[int]) -> tuple[int, int] | None:
    r = st.reps[i]
    racks = [st.rack_of.get(b) for b in r]
    dsts = [k for k in (heaps.first_fitting(rack, i) for rack in heaps.heaps if rack not in racks) if k is not None]
    best = None
    for pos, src in enumerate(r):
        if racks.count(racks[pos]) < 2:
            continue
        for k in dsts:
            dst = k[2]
            key = (
                src not in chosen,
                shed.delta({src: -1, dst: 1}),
                pos == 0,
                -st.count[src],
                st.count[dst],
                -st.bytes[src],
                st.bytes[dst],
                src,
                dst,
            )
            if best is None or key < best:
                best = key
    return None if best is None else (best[-2], best[-1])  # None: the racks it lacks hold only closed brokers


def repair(st: State, groups: Sequence[tuple[Sequence[int], int]], unsafe: Sequence[tuple[int, int, list[int]]]) -> int:
    """Make each partition in `unsafe` ((index, racks it lacks, brokers sharing a rack), `unsafe_of`) rack-safe with
    the fewest moves, one added rack per move: a replica that shares its rack with another replica of the partition
    moves to a target broker of a rack the partition does not use.

    The replicas taken off are those the count lower bound's flow (`moves.repair_removals`) takes: chosen over all
    the unsafe partitions at once, they are the replicas the count goal would move anyway, so repair and count goal
    together meet the bound (a greedy choice, partition by partition, can take a replica off a broker that another
    partition needed to shed). Then the move that brings the counts closest to the count goal, then one that keeps the
    preferred leader (a rack holding two replicas always holds a follower, so the leader's replica moves only when
    that saves a later move), then from the fullest broker to the emptiest, the heaviest to the lightest.
    Returns the partitions repaired."""
    shed = _Shed(st, groups)
    heaps = _RackHeaps(st)
    removals = repair_removals(st.count, groups, [(lacks, dup) for _, lacks, dup in unsafe])
    done = 0
    for (i, _, _), chosen in zip(unsafe, removals):
        cap = min(len(st.reps[i]), st.n_racks)
        moved = False
        while st.distinct_racks(st.reps[i]) < cap:
            found = _best_repair(st, i, shed, heaps, chosen)
            if found is None:
                break
            src, dst = found
            shed.moved(src, -1)
            shed.moved(dst, 1)
            st.move(i, src, dst)
            heaps.touch(src)
            heaps.touch(dst)
            moved = True
        done += moved
    return done
