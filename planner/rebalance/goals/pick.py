"""Which broker takes a replica next?

Choosing destination brokers: a lazily updated heap of brokers by (count − target, bytes, id)."""

from __future__ import annotations

import heapq
from typing import Callable

from planner.rebalance.goals.state import State


class BrokerHeap:
    """Brokers by (count − target, bytes, id), lazily updated."""

    def __init__(self, st: State, target: dict[int, int]):
        self.st, self.target = st, target
        self.h = [self.key(b) for b in st.targets if b not in st.closed]  # closed brokers take no replica
        heapq.heapify(self.h)
        # keys `touch` pushed since the heap was last read, pushed when it is next (`_flush`): the entries are the
        # same (a key is taken when its broker is touched), so are the pops, but a run of moves that reads no
        # destination from the heap (the count goal's per-topic pass: two keys a move at 1M) costs no sifting
        self.pending: list[tuple[int, int, int]] = []
        # the partitions' rack signatures (`pick`) for which a pick found no broker, while the heap and the state stay
        # as they were then (`at`: the state's moves and the heap's own changes, `changes`)
        self.dead: set[tuple] = set()
        self.at = (-1, -1)
        self.changes = 0

    def _flush(self) -> None:
        pending = self.pending
        if not pending:
            return
        self.changes += 1
        if len(pending) > len(self.h) // 4:
            self.h += pending
            heapq.heapify(self.h)
        else:
            for k in pending:
                heapq.heappush(self.h, k)
        self.pending = []

    def key(self, b: int) -> tuple[int, int, int]:
        return (self.st.count[b] - self.target[b], self.st.bytes[b], b)

    def _rack_floor(self, i: int, src: int) -> tuple[set, int, int, bool]:
        st = self.st
        r = st.reps[i]
        racks = [st.rack_of.get(b) for b in r]
        before = len(set(racks))
        src_rack = st.rack_of.get(src)
        others = set(racks) - {src_rack} if racks.count(src_rack) == 1 else set(racks)
        cap = min(len(r), st.n_racks)
        return others, min(before, cap), before, before < cap

    def rack_blocked(self, i: int, src: int, racks: set) -> bool:
        """Whether no broker on `racks` may take partition i's replica from src by `_scan`'s rack test (the racks
        after the move at least `floor`): `pick` then finds no destination among brokers of those racks, whatever
        their keys. The count goal asks it before each `pick` of a broker above its target: where every rack with a
        broker below target already holds another replica of the partition, `pick` would pop every such broker to
        find none (issue 30's lognormal-uneven at 10,000 partitions: 366,000 picks, each popping about 35 brokers,
        for 1,934 moves)."""
        if not self.st.n_racks:
            return False
        others, floor, _, _ = self._rack_floor(i, src)  # others has at least floor - 1 racks (src's rack aside)
        return len(others) < floor and racks <= others

    def racks_below(self, ok: Callable[[int], bool]) -> set:
        """The racks of the brokers the heap holds (targets that may take replicas) that pass `ok`."""
        st = self.st
        return {st.rack_of.get(b) for b in st.targets if b not in st.closed and ok(b)}

    def _scan(
        self, i: int, src: int, ok: Callable[[int], bool], limit: int, floors: tuple[set, int, int, bool]
    ) -> tuple[list, list, bool]:
        """The brokers popped (current keys, to push back) and the valid ones among them (with the racks they gain);
        then whether the racks refused every broker popped that passed `ok` (whatever the partition's brokers)."""
        st = self.st
        r = st.reps[i]
        others, floor, before, can_gain = floors
        popped: list = []
        valid: list = []
        racked = False  # a broker popped that the racks let take the replica
        while self.h and len(valid) < 8 and len(popped) < limit + len(valid):
            k = heapq.heappop(self.h)
            b = k[2]
            if k != self.key(b):
                continue  # stale: `touch` pushed the current key
            popped.append(k)
            if not ok(b):
                break  # keys only grow from here: no later broker passes the count test this one failed
            if valid and not can_gain and k[0] > valid[0][1][0] + 1:
                break  # past the neediest brokers (within 1): choose among those found
            gain: int | None = 0
            if st.n_racks:
                after = len(others) + (0 if st.rack_of.get(b) in others else 1)
                gain = after - before if after >= floor else None  # None: the racks refuse b
            racked = racked or gain is not None
            if b in r or not st.fits(i, b) or gain is None:
                continue
            valid.append((gain, k))
        return popped, valid, not racked

    def pick(self, i: int, src: int, ok: Callable[[int], bool], limit: int = 64) -> int | None:
        """Lowest-keyed valid destination; among the first few valid ones, one that gains a rack if any does, then
        the one holding fewest replicas of the partition's topic.

        Where a pick found none because the racks refused every broker it looked at, another partition with the
        same racks around it (the other replicas' racks and the floor, `_rack_floor`) finds none either while the
        heap and the state stay as they were: it looks at the same brokers (that pick dropped the stale keys among
        them), and its own brokers and room do not matter (no disk limits). It is answered without looking (issue
        30's lognormal-uneven at 100,000: 99,219 of 105,923 picks found none, each looking at 64 brokers)."""
        st = self.st
        self._flush()
        floors = self._rack_floor(i, src) if st.n_racks else (set(), 0, 0, False)
        sign = None
        if st.n_racks and not st.usable:
            at = (st.moves, self.changes)
            if at != self.at:
                self.dead, self.at = set(), at
            sign = (ok, limit, frozenset(floors[0]), floors[1])
            if sign in self.dead:
                return None
        popped, valid, dead = self._scan(i, src, ok, limit, floors)
        for k in popped:
            heapq.heappush(self.h, k)
        if dead and sign is not None:
            self.dead.add(sign)
        if not valid:
            return None
        topic = st.topic_of[i]
        best = min(valid, key=lambda gk: (-gk[0], st.tcount[gk[1][2]].get(topic, 0), gk[1][0], gk[1][1], gk[1][2]))
        return best[1][2]

    def settle(self) -> None:
        """Drop the entries no broker can hold again while every move takes a broker's count towards its target
        (`_direct`'s moves: from brokers above it to brokers below it): a key whose count lies beyond the broker's
        target or on the far side of its current count. `pick` skips such entries when it pops them (stale keys), so
        dropping them changes no choice; the others stay, one per time pushed (a stale key may become current again
        and count twice). Every move before (the per-topic pass) pushed keys the heap no longer needs."""
        count, target = self.st.count, self.target
        keep = []
        for k in (*self.h, *self.pending):
            c = count[k[2]] - target[k[2]]
            if (c <= k[0] <= 0) if c <= 0 else (0 <= k[0] <= c):
                keep.append(k)
        heapq.heapify(keep)
        self.h, self.pending = keep, []
        self.changes += 1

    def touch_pair(self, s: int, d: int) -> None:
        """`touch(s, d)`, written out (the count goal's per-topic pass: about a million moves at 1M partitions)."""
        st, target, pending = self.st, self.target, self.pending
        count, closed = st.count, st.closed
        if s in target and s not in closed:
            pending.append((count[s] - target[s], st.bytes[s], s))
        if d in target and d not in closed:
            pending.append((count[d] - target[d], st.bytes[d], d))

    def touch(self, *brokers: int) -> None:
        st, target, pending = self.st, self.target, self.pending
        for b in brokers:
            if b in target and b not in st.closed:
                pending.append((st.count[b] - target[b], st.bytes[b], b))  # `key`, pushed at the next read
