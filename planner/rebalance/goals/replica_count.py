"""Goal 2: replica counts per target broker within 1 (per rack when every partition keeps one replica per rack),
with the fewest moves: targets are floor/ceil of the mean, the +1 going to the brokers holding most, and replicas
only leave brokers above their target for brokers below theirs (so the plan meets `moves.excess`) unless racks
forbid it. Where racks of different sizes keep the counts from within 1 (brokers balanced together), the goal goes
on to the narrowest count range racks allow (`count_range.narrowest`: the least max - min over the target brokers, a
range that is also the lowest max and the highest min any rack-safe placement reaches), with the fewest moves between
racks that reach it, and the later goals keep it (`CountConstraint`). The replicas that leave are chosen for the goals
after this one: first those of topics the broker holds more of than the topic's even share, then (when the byte goal
follows) the sizes that bring a broker above the byte limit within it and otherwise the smallest, the fewest bytes
(`_want`; unknown sizes last), followers before preferred leaders. Where sizes are narrow (`NARROW`), a new broker
(one that held no replica) takes the sizes that bring it to the byte floor over the replicas it takes, from a broker
that stays above the mean (`_need`): else the byte goal's floor would make it up replica by replica."""

from __future__ import annotations

import bisect
import functools
import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from planner.rebalance.goals.base import Change, CountConstraint, Findings, Frozen, Goal, off_even
from planner.rebalance.goals.geometry import racks_force, targets_of, unsafe_of
from planner.rebalance.goals.pick import BrokerHeap
from planner.rebalance.goals.shares import LEVELS, topic_shares
from planner.rebalance.goals.state import State
from planner.rebalance.goals.uneven import count_range
from planner.rebalance.moves import excess, lower_bound, movable_counts
from planner.rebalance.notes import Note


def _open_groups(
    counts: dict[int, int], groups: Sequence[tuple[Sequence[int], int]], closed: frozenset[int]
) -> tuple[dict[int, int], list[tuple[list[int], int]]]:
    """The counts and groups `lower_bound` reads, as `count_targets` shares a group out: a closed broker holding less
    than its share keeps what it holds (it takes none), so it leaves the group with its replicas and the others share
    the rest (else the bound would have the others shed replicas for it to take)."""
    counts = dict(counts)
    out = []
    for members, total in groups:
        members = list(members)
        while members:
            q, r = divmod(total, len(members))
            order = sorted(members, key=lambda b: (-counts.get(b, 0), b))
            share = {b: q + (1 if i < r else 0) for i, b in enumerate(order)}
            low = [b for b in members if b in closed and counts.get(b, 0) < share[b]]
            if not low:
                break
            for b in low:
                members.remove(b)
                total -= counts.pop(b, 0)
        out.append((members, total))
    return counts, out


def topic_ceilings(st: State) -> dict[tuple[str | None, int], int]:
    """(group, topic) → the ceiling of the topic's even share per broker of the group."""
    if list(st.groups) == [None]:  # every broker in the one group: each topic's replicas, wherever they are
        n = len(st.groups[None])
        return {(None, t): -(-sum(held.values()) // n) for t, held in enumerate(st.holders) if held}
    return {k: -(-v // len(st.groups[k[0]])) for k, v in topic_totals(st).items()}


def topic_totals(st: State) -> dict[tuple[str | None, int], int]:
    """(group, topic) → the topic's replicas the group ends with."""
    totals: dict[tuple[str | None, int], int] = {}
    for g, members in st.groups.items():
        for b in members:
            for t, c in st.tcount[b].items():
                totals[(g, t)] = totals.get((g, t), 0) + c
    for b in st.cluster.broker_ids:  # replicas still outside the targets end inside
        if b not in st.target_set:
            g = st.group_of(b)
            for t, c in st.tcount[b].items():
                totals[(g, t)] = totals.get((g, t), 0) + c
    return {k: v for k, v in totals.items() if k[0] in st.groups}


def _sources(st: State, b: int, ceil: dict, want: float) -> Iterator[int]:
    """Replicas to take off broker b, best first, with the topic terms kept current as replicas leave (lazy heap):
    replicas of topics b holds more of than their even share first, then (sizes known) the size closest to `want`,
    the bytes each replica leaving b should take (`ReplicaCountGoal._want`; 0: the smallest), unknown sizes last,
    followers before preferred leaders."""
    g = st.group_of(b)

    def key(i: int) -> tuple:
        t = st.topic_of[i]
        tc = st.tcount[b].get(t, 0)
        return (tc <= ceil.get((g, t), 0), not st.known(i), abs(st.sz(i) - want), st.reps[i][0] == b, -tc, i)

    heap = [key(i) for i in st.where[b] if i not in st.fixed]
    heapq.heapify(heap)
    while heap:
        item = heapq.heappop(heap)
        i = item[-1]
        if b not in st.reps[i]:
            continue
        now = key(i)
        if now != item:
            heapq.heappush(heap, now)
            continue
        yield i


@dataclass
class ReplicaCountGoal(Goal):
    """Goal: every target broker's replica count within 1 of the others' (per rack when every partition keeps one
    replica per rack); where racks of different sizes keep the counts wider, the narrowest count range racks allow.
    Measured as the replicas above the even share's ceiling plus those missing below its floor, per group of brokers
    balanced together (`measure`); bounded below by `moves.lower_bound` (`lower_bound`).

    Constraints: those of the hard goal (`State.can_move`: replication factor kept, rack safety never lowered, no
    replica onto a closed broker); it hands on `CountConstraint` (every count stays in the range reached).

    Algorithm: targets floor/ceiling of the mean, the +1s to the brokers holding most; replicas leave only brokers
    above their target for brokers below theirs, first towards each topic's even share (`shares.topic_shares`,
    optionally its slots chosen for the bytes they keep, `by_bytes`), then directly; where racks forbid within 1,
    the fewest moves between racks to the narrowest range (`count_range.reach`). Which replicas leave is chosen for
    the goals after it (module docstring)."""

    say: Callable[[str], None] = lambda msg: None
    level_bytes: bool = False  # the byte goal follows: take the sizes that reach its limit (else the smallest)
    tolerance: float = 0.10  # the byte goal's: a broker may end at (1 + tolerance) x its group's mean
    shares: bool = False  # aim at the topic shares also where racks differ in size (and force no topic wider)
    placed: bool = False  # the counts were placed already (`rack_flow`, where racks keep them wider): kept as they are
    name: str = "replica-count"
    means: dict = field(default_factory=dict)  # group -> its mean bytes per broker, while they cannot change
    left: dict = field(default_factory=dict)  # broker -> replicas it has still to give up for the topic shares
    by_bytes: bool = False  # with `level_bytes`, the topics' +1 slots chosen for the bytes they keep as well
    chained: set = field(default_factory=set)  # topics reaching their shares through a third broker (`_reach`)
    found: Findings = field(default_factory=Findings)  # "weighed": `by_bytes` chose other shares than without it
    levels: int = LEVELS  # `by_bytes`' steps (`shares.LEVELS`)
    empty: frozenset | None = None  # the target brokers that held no replica at the start of the run (`_need`)

    def optimize(self, st: State, frozen: Frozen) -> CountConstraint:
        target, _ = targets_of(st)
        total = sum(len(r) for r in st.reps)
        self.empty = None
        self.say(f"balancing {total} replicas over {len(st.targets)} brokers")
        if self.placed:
            return self._reached(st)
        heap = BrokerHeap(st, target)
        if not st.closed and (None not in st.groups or _even_racks(st) or self.shares and not _forced(st, target)):
            self._by_topic(st, target, heap)
        ceil = topic_ceilings(st)
        for _ in range(4):
            if not self._direct(st, target, heap, ceil):
                break
        if None in st.groups:
            span = _forced_range(st)
            if span is None:
                self._narrow(st, heap)
            else:
                self._to_range(st, ceil, *span)
        return self._reached(st)

    @staticmethod
    def _to_range(st: State, ceil: dict, lo: int, hi: int) -> None:
        """On to lo..hi, the narrowest count range racks allow (`_forced_range`), where the counts are wider: the
        fewest moves between racks that reach it, then within racks (`count_range.reach`). Of a broker's replicas,
        those the plan moved there first (they go on at no copy), then those of the topics it holds the largest part
        of their even share of (read as they come up: a broker left with few replicas keeps a like part of each
        topic's share, so the topic and leader goals are not left with topics it holds none of), the smallest,
        followers before preferred leaders."""
        counts = [st.count[b] for b in st.targets]
        if lo <= min(counts) and max(counts) <= hi:
            return
        home, tcount, topic_of, reps = st.home, st.tcount, st.topic_of, st.reps

        def order(i: int, b: int) -> tuple:
            t = topic_of[i]
            share = -tcount[b].get(t, 0) / max(1, ceil.get((None, t), 0))
            return (b in home[i], share, not st.known(i), st.sz(i), reps[i][0] == b, i)

        count_range.reach(st, lo, hi, order)

    def _reached(self, st: State) -> CountConstraint:
        lo = {g: min(st.count[b] for b in m) for g, m in st.groups.items()}
        hi = {g: max(st.count[b] for b in m) for g, m in st.groups.items()}
        if any(hi[g] - lo[g] > 1 for g in st.groups) and not st.allowed():
            st.capped.append(self.name)
        return CountConstraint(lo, hi)

    def measure(self, st: State) -> int:
        """The replicas off the even share (`base.off_even`) of each group of brokers balanced together."""
        count = 0
        for members in st.groups.values():
            count += off_even((st.count[b] for b in members), len(members), sum(st.count[b] for b in members))
        return count

    def spread_term(self, st: State, term: float) -> int:
        """The spread of the counts over the target brokers (what the summary shows where racks keep them wider)."""
        counts = [st.count[b] for b in st.targets]
        return max(counts) - min(counts)

    def lower_bound(self, st: State, repaired: bool, unsafe: list[tuple[int, int, list[int]]] | None = None) -> int:
        """Fewest replica moves any plan reaching the hard and replica-count goals needs (`moves.lower_bound`);
        `unsafe`: `unsafe_of(st)` where the caller has it."""
        target, by_rack = targets_of(st, repaired=repaired)
        unsafe = (unsafe_of(st) if unsafe is None else unsafe) if repaired else []
        # replicas of partitions that never move (mid-reassignment, excluded) stay: a bound counting them would exceed
        # the plan
        movable = movable_counts(st.count, (st.reps[i] for i in st.fixed), st.target_set)
        if not unsafe:
            return excess({b: c for b, c in movable.items() if c}, target)
        total = sum(len(r) for r in st.reps)
        groups = [(m, len(st.reps)) for m in by_rack.values()] if by_rack else [(st.targets, total)]
        if st.closed:
            movable, groups = _open_groups(movable, groups, st.closed)
        return lower_bound(movable, groups, [(lacks, dup) for _, lacks, dup in unsafe])

    def notes(self, st: State) -> list[Note]:
        """Counts above a spread of 1 in a group: unmet (with 1 where that is the narrowest racks allow); per rack
        only, racks of different sizes: per-rack."""
        notes = []
        for g, members in st.groups.items():
            hi, lo = max(st.count[b] for b in members), st.low({b: st.count[b] for b in members})
            if hi - lo > 1:
                # a third value 1: the narrowest range racks allow (`count_range.narrowest`), no plan reaches a narrower
                narrowest = g is None and count_range.applies(st) and count_range.narrowest(st) == (lo, hi)
                notes.append(
                    Note(
                        self.name,
                        "unmet",
                        hi - lo,
                        values=(lo, hi, 1) if narrowest else (lo, hi),
                        topics=(g,) if g is not None else (),
                    )
                )
        sizes = tuple(len(m) for m in st.groups.values())
        if None not in st.groups and len(set(sizes)) > 1:
            hi, lo = max(st.count[b] for b in st.targets), st.low({b: st.count[b] for b in st.targets})
            if hi - lo > 1:
                notes.append(
                    Note(
                        self.name,
                        "per-rack",
                        len(st.groups),
                        topics=tuple(str(g) for g in st.groups),
                        values=(lo, hi) + sizes,
                    )
                )
        return notes

    def _by_topic(self, st: State, target: dict[int, int], heap: BrokerHeap) -> None:
        """First each topic's replicas from the brokers holding more than their share of it (`shares.topic_shares`)
        to those holding less, where racks allow."""
        parts: dict[int, list[int]] = {}
        for i, t in enumerate(st.topic_of):
            if i not in st.fixed:
                parts.setdefault(t, []).append(i)
        totals = topic_totals(st)
        for g, members in st.groups.items():
            group = {t: c for (k, t), c in totals.items() if k == g}
            n, inside = len(members), frozenset(members)
            most = sum(max(0, st.count[b] - target[b]) for b in members)  # the count goal's moves
            for t, c in group.items():  # and each topic's replicas above its share (r brokers keep q + 1)
                q, r = divmod(c, n)
                above = [h for b, h in st.holders[t].items() if b in inside and h > q]
                most += sum(h - q - (r > 0) for h in above) + (max(0, len(above) - r) if r else 0)
            # moves inside the group keep its bytes: its mean, once (not a pass over its brokers per move)
            self.means = {g: sum(st.bytes[b] for b in members) / n}
            shares = functools.partial(topic_shares, st, target, members, group, most, levels=self.levels)
            if self.level_bytes and self.by_bytes:
                self._by_bytes(st, target, heap, parts, shares, (1 + self.tolerance) * self.means[g])
            else:
                self._reach(st, target, heap, parts, shares())
        self.means, self.left = {}, {}

    def _by_bytes(
        self,
        st: State,
        target: dict[int, int],
        heap: BrokerHeap,
        parts: dict[int, list[int]],
        shares: Callable[..., dict],
        limit: float,
    ) -> None:
        """The topic shares (`shares`: `shares.topic_shares` of one group) whose slots keep the most bytes as well
        (under the byte `limit`), "weighed" recorded (`found`) where they are not those chosen without bytes. Where
        racks then let a topic reach its share only through a third broker (a move more), that topic's slots are
        chosen as without bytes (`pinned`) and the others again, at most PINS times; where other topics still do, every
        topic's slots as without bytes."""
        moves = st.moves
        plain, weighed = shares(), shares(limit)
        if weighed == plain:
            self._reach(st, target, heap, parts, plain)
            return
        self.found.record("weighed")
        log: list[Change] = []
        self._reach(st, target, heap, parts, weighed, log)
        pinned: set[int] = set()
        for _ in range(PINS):
            if self.chained <= pinned:
                return
            self._undo(st, log, heap, moves)
            pinned |= self.chained
            log = []
            self._reach(st, target, heap, parts, shares(limit, pinned), log)
        if not self.chained <= pinned:
            self._undo(st, log, heap, moves)
            self._reach(st, target, heap, parts, plain)

    def _reach(
        self,
        st: State,
        target: dict[int, int],
        heap: BrokerHeap,
        parts: dict[int, list[int]],
        shares: dict,
        log: list[Change] | None = None,
    ) -> None:
        """Each topic's replicas to its `shares`, the moves made added to `log` (in order), the topics whose moves went
        through a third broker to `chained`."""
        self.left = _leaving(st, shares)
        self.chained = set()
        capped, one, holders = st.max_moves is not None, self._one, st.holders
        st.defer()  # the moves read no broker's replica indexes (`where`, `tcount`, ...): made together, in runs
        try:
            made = st.moves
            for t, share in sorted(shares.items()):
                if st.moves - made >= DEFERRED:  # a run's changes made (their memory bounded)
                    st.defer()
                    made = st.moves
                held = holders[t]
                topic: _Topic | None = None  # built on the first move the topic needs
                for d in sorted([b for b, c in share.items() if held.get(b, 0) < c]):
                    want = share[d]
                    while held.get(d, 0) < want and (not capped or st.allowed()):
                        topic = topic or _Topic(st, parts.get(t, []), share, log)
                        if not one(st, target, heap, topic, d):
                            break
        finally:
            st.undefer()

    @staticmethod
    def _undo(st: State, log: list[Change], heap: BrokerHeap, moves: int) -> None:
        """The moves of `log` taken back, the move count back at `moves`."""
        for i, s, d in reversed(log):
            st.move(i, d, s)
            heap.touch(s, d)
        st.moves = moves

    def _one(self, st: State, target: dict[int, int], heap: BrokerHeap, topic: "_Topic", d: int) -> bool:
        """One replica to d from a giver holding more than its share (most above it first)."""
        on, pick, left, by_above = topic.on, self._pick, self.left, topic.by_above
        for k in sorted(by_above, reverse=True) if len(by_above) > 1 else by_above:  # `topic.givers()` written out
            for s in by_above[k]:
                i = pick(st, target, on.get(s, ()), s, d)
                if i is not None:
                    topic.move(i, s, d)
                    heap.touch_pair(s, d)
                    left[s] = left.get(s, 0) - 1
                    return True
        # racks forbid every direct move: through a broker x holding the topic, s -> x and x -> d (one more move), the
        # fewest copies first (a replica the plan moved to x goes on to d at no copy: the pair costs one, as a direct
        # move does)
        chain = self._chain_via(st, target, topic, d)
        if chain is None:
            return False
        s, x, i, j = chain
        topic.move(j, x, d)
        topic.move(i, s, x)
        heap.touch(s, x, d)
        self.chained.add(st.topic_of[i])
        self.left[s] = self.left.get(s, 0) - 1
        return True

    def _chain_via(
        self, st: State, target: dict[int, int], topic: "_Topic", d: int
    ) -> tuple[int, int, int, int] | None:
        """(s, x, i, j): replica i of the topic from giver s to x and j from x to d, of the fewest copies (the first
        found costing at most one, as a direct move does), or None."""
        best: tuple[int, tuple[int, int, int, int]] | None = None
        for s in topic.givers():
            for x in sorted(topic.held):
                if x in (s, d) or not st.allowed(2):
                    continue
                j = self._pick(st, target, topic.on.get(x, ()), x, d)
                i = self._pick(st, target, [k for k in topic.on.get(s, ()) if k != j], s, x) if j is not None else None
                if i is None or j is None:
                    continue
                cost = st.cost(j, x, d) + st.cost(i, s, x)
                if best is None or cost < best[0]:
                    best = (cost, (s, x, i, j))
                    if cost <= 1:
                        return best[1]
        return None if best is None else best[1]

    def _pick(self, st: State, target: dict[int, int], held: Iterable[int], s: int, d: int) -> int | None:
        """The replica of these partitions on s (`held`) that moves to d: the fewest copies (one the plan moved to s
        goes on at no copy), then of the size closest to what each replica leaving s should take (`_want`), or d
        should take where that is more and s stays above its mean (`_need`), known sizes first, followers before the
        preferred leader."""
        mine = st.movable(held, s, d)
        if len(mine) > 1:
            home = st.home
            # copies first: only a replica the plan moved to s, or one going back to d, copies fewer than one (`cost`)
            cheaper = [i for i in mine if s not in home[i] or d in home[i]]
            if cheaper:
                low = min(st.cost(i, s, d) for i in cheaper)
                mine = [i for i in cheaper if st.cost(i, s, d) == low]
        if len(mine) < 2:
            return mine[0] if mine else None  # the choice made without a size key
        want = self._want(st, s, target)
        need = self._need(st, d, target)
        if need > want and st.bytes[s] - need >= self._mean(st, s):
            want = need
        size, reps = st.size, st.reps
        # unknown sizes last, then the size closest to `want`, followers before the preferred leader, then by index
        return min(mine, key=lambda i: (size[i] is None, abs((size[i] or 0) - want), reps[i][0] == s, i))

    def _direct(self, st: State, target: dict[int, int], heap: BrokerHeap, ceil: dict) -> bool:
        """From brokers above target to brokers below target."""
        heap.settle()
        moves = st.moves
        for s in sorted(st.targets, key=lambda b: (target[b] - st.count[b], b)):
            if st.count[s] <= target[s]:
                continue
            want: float | None = self._want(st, s, target, direct=True)
            while want is not None:
                want = self._shed(st, target, heap, ceil, s, want)
        return st.moves > moves

    def _shed(
        self, st: State, target: dict[int, int], heap: BrokerHeap, ceil: dict, s: int, want: float
    ) -> float | None:
        """Broker s's replicas above its target to brokers below theirs, of about `want` bytes each (`_sources`); 0.0
        when s came within the byte limit taking larger ones (the smallest from then on), else None."""

        def below(b: int) -> bool:
            return st.count[b] < target[b]

        racks = heap.racks_below(below)  # kept current: only a move changes it
        for i in _sources(st, s, ceil, want):
            if st.count[s] <= target[s] or not st.allowed():
                return None
            if heap.rack_blocked(i, s, racks):
                continue  # `pick` would find none (and change nothing a later pick sees)
            d = heap.pick(i, s, below)
            if d is not None:
                st.move(i, s, d)
                heap.touch(s, d)
                racks = heap.racks_below(below)
                if want and not self._want(st, s, target, direct=True):
                    return 0.0
        return None

    def _need(self, st: State, d: int, target: dict[int, int]) -> float:
        """The bytes each replica moving to broker d should take (0: no need): where d held no replica at the start
        of the run and the byte floor, (1 - tolerance) x the group's mean, is more than `NARROW` of the largest
        replicas, d's bytes short of the floor over the replicas d still takes. There the smallest replicas would
        leave a new broker far below the floor, and the byte goal's floor would raise it exchange by exchange, each
        bringing at most one replica's size (hundreds of steps, many of them copying more); where a few large
        replicas can close the gap (heavy-tailed sizes), the floor's exchanges take back the count goal's moves at
        no copy, and the smallest leave the other brokers more even. Not under disk limits (`State.usable`): there
        the room a broker has bounds what it takes."""
        if not self.level_bytes or st.usable:  # disk limits: what d may take is the room it has
            return 0.0
        if self.empty is None:
            self.empty = frozenset(st.targets).difference(*st.home)
        if d not in self.empty:
            return 0.0
        floor = (1 - self.tolerance) * self._mean(st, d)
        if floor <= NARROW * st.largest:
            return 0.0
        return max(0.0, (floor - st.bytes[d]) / max(1, target[d] - st.count[d]))

    def _mean(self, st: State, b: int) -> float:
        """The mean bytes per broker of b's group (kept in `means` while it cannot change)."""
        g = st.group_of(b)
        mean = self.means.get(g)
        if mean is None:
            members = st.groups[g]
            mean = sum(st.bytes[m] for m in members) / len(members)
        return mean

    def _want(self, st: State, s: int, target: dict[int, int], direct: bool = False) -> float:
        """The bytes each replica leaving broker s should take (0: the smallest), the fewest bytes reaching the byte
        goal's limit, (1 + tolerance) x the group's mean: a topic share's moves (`_pick`, as they go) take s's bytes
        above the limit over the replicas s still gives up; the count moves (`direct`, chosen ahead from a heap)
        aim s at the mean while s is above the limit, which leaves room for the replicas later goals move to it,
        and the smallest once s is within the limit (as any broker within it)."""
        if not self.level_bytes:
            return 0.0
        mean = self._mean(st, s)
        leaving = self.left[s] if s in self.left else st.count[s] - target[s]
        limit = (1 + self.tolerance) * mean
        if not direct:
            return max(0.0, (st.bytes[s] - limit) / max(1, leaving))
        return 0.0 if st.bytes[s] <= limit else (st.bytes[s] - mean) / max(1, leaving)

    def _narrow(self, st: State, heap: BrokerHeap) -> None:
        """Racks blocked some direct moves: settle for any move that narrows the spread (may cost extra moves). Not
        where `count_range` gives the narrowest range racks allow (`_to_range`)."""
        for _ in range(4 * len(st.targets)):
            if not st.allowed():
                return
            lo = st.low({b: st.count[b] for b in st.targets})
            if max(st.count[b] for b in st.targets) - lo <= 1 or not self._one_narrowing(st, heap, lo):
                return

    def _one_narrowing(self, st: State, heap: BrokerHeap, lo: int) -> bool:
        """One move from a fullest broker to one at least 2 below it, or else a chain of two through a broker in
        between (racks may forbid the direct move)."""
        order = sorted(st.targets, key=lambda b: (-st.count[b], b))
        for s in order:
            if st.count[s] - lo <= 1:
                break
            for i in sorted((i for i in st.where[s] if i not in st.fixed), key=lambda i: (st.sz(i), i)):
                dsts = [b for b in st.targets if st.count[b] + 1 < st.count[s] and st.can_move(i, s, b)]
                if dsts:
                    d = min(dsts, key=lambda b: (-(st.rack_delta(i, s, b) or 0), st.count[b], st.bytes[b], b))
                    st.move(i, s, d)
                    heap.touch(s, d)
                    return True
        return st.allowed(2) and self._chain(st, heap, order, lo)  # a chain is two moves: both within a cap

    @staticmethod
    def _chain(st: State, heap: BrokerHeap, order: list[int], lo: int) -> bool:
        top = st.count[order[0]]
        lows = [b for b in st.targets if st.count[b] == lo]
        for s in (b for b in order if st.count[b] == top):
            for m in st.targets:
                if m == s or st.count[m] + 1 >= top + 1:
                    continue
                first = next((i for i in sorted(st.where[s]) if st.can_move(i, s, m)), None)
                if first is None:
                    continue
                st.move(first, s, m)
                second = next(((j, d) for d in lows for j in sorted(st.where[m]) if st.can_move(j, m, d)), None)
                if second is not None:
                    st.move(second[0], m, second[1])
                    heap.touch(s, m, second[1])
                    return True
                st.move(first, m, s)
                st.moves -= 2
        return False


def _forced_range(st: State) -> tuple[int, int] | None:
    """The narrowest count range racks allow (`count_range.narrowest`) where racks of different sizes keep the counts
    of brokers balanced together wider than 1 and the counts are wider than 1 (`count_range.applies`); else None."""
    counts = [st.count[b] for b in st.targets]
    if max(counts) - min(counts) <= 1 or not count_range.applies(st):
        return None
    lo, hi = count_range.narrowest(st)
    return (lo, hi) if hi - lo > 1 else None


def _leaving(st: State, shares: dict) -> dict[int, int]:
    """Broker -> the replicas it gives up to reach the topic shares (`shares.topic_shares`)."""
    out: dict[int, int] = {}
    for t, share in shares.items():
        held = st.holders[t]
        for b, c in share.items():
            if held.get(b, 0) > c:
                out[b] = out.get(b, 0) + held[b] - c
    return out


class _Topic:
    """One topic of a group while the count goal brings its brokers to their shares: the topic's movable partitions
    per broker holding them, and the brokers holding more than their share (givers) by (most above it first, id),
    both kept current by the goal's moves of the topic (a move looks at the few partitions of the topic on the giver,
    not at all of them, and sorts no givers)."""

    def __init__(self, st: State, parts: list[int], share: dict[int, int], log: list[Change] | None):
        self.st, self.share, self.log = st, share, log
        self.held = st.holders[st.topic_of[parts[0]]] if parts else {}
        on: dict[int, list[int]] = {}  # broker -> the topic's movable partitions on it
        reps = st.reps
        for i in parts:
            for b in reps[i]:
                mine = on.get(b)
                if mine is None:
                    on[b] = [i]
                else:
                    mine.append(i)
        self.on = on
        # the givers when the topic's moves start (only they give: a broker below its share never rises above it)
        self.was = frozenset(b for b, c in share.items() if parts and self.held.get(b, 0) > c)
        self.above: dict[int, int] = {}  # giver -> replicas above its share (> 0)
        self.by_above: dict[int, list[int]] = {}  # replicas above share -> the givers, by id
        for b in sorted(self.was):
            self._place(b)

    def givers(self) -> Iterator[int]:
        """The brokers holding more than their share, most above it first, then by id. Make no move while iterating."""
        for k in sorted(self.by_above, reverse=True):
            yield from self.by_above[k]

    def move(self, i: int, s: int, d: int) -> None:
        self.st.move(i, s, d)
        if self.log is not None:
            self.log.append((i, s, d))
        on = self.on
        on[s].remove(i)
        if d in on:
            on[d].append(i)
        else:
            on[d] = [i]
        was = self.was
        if s in was:
            self._place(s)
        if d in was:
            self._place(d)

    def _place(self, b: int) -> None:
        """Giver b's place by its replicas above its share, taken again (dropped where it holds none above it)."""
        above, by_above = self.above, self.by_above
        k = above.pop(b, 0)
        if k:
            level = by_above[k]
            level.remove(b)
            if not level:
                del by_above[k]
        k = self.held.get(b, 0) - self.share[b]
        if k > 0:
            above[b] = k
            into = by_above.get(k)
            if into is None:
                by_above[k] = [b]
            else:
                bisect.insort(into, b)


# moves whose index changes the count goal's per-topic pass defers at most (`State.defer`): each broker's indexes are
# still read together (about 50 changes each in a run at 1M partitions), and the changes held stay a few MiB
DEFERRED = 100_000
# a new broker takes the sizes that reach the byte floor (`ReplicaCountGoal._need`) where the floor is more than this
# many of the largest replicas: the corpus' uniform sizes are 64-206 there, its heavy-tailed ones at most 12
NARROW = 32
PINS = 3  # times at most the slots by bytes are chosen again (`ReplicaCountGoal._by_bytes`)
# partitions up to which the count goal's slots weigh bytes (`shares.topic_shares` with a limit): a minimum-cost flow
# per group of brokers and the plan made both ways (`balance`): the 10k-partition rebalance through the CLI takes
# 2.4-2.6 s CPU instead of 1.1-1.3 s (docs/benchmarks.md)
BYTE_PARTITIONS = 40_000
TRIAL_REPLICAS = 100_000  # replicas up to which `balance` plans both ways where `try_shares` says so


def try_shares(st: State) -> bool:
    """Whether to plan also with `ReplicaCountGoal(shares=True)`, which plans differently: brokers balanced together
    over racks of different sizes that force no topic wider than 1 at the count targets. Aiming at the topic shares
    there saves the topic goal moves where racks let the shares be reached, and costs moves (chains) where they do
    not, so `balance` plans both ways and keeps the better: up to `TRIAL_REPLICAS` replicas (twice the goals' time,
    about a second there)."""
    if st.closed or None not in st.groups or _even_racks(st) or sum(map(len, st.reps)) > TRIAL_REPLICAS:
        return False
    return not _forced(st, targets_of(st)[0])


def _forced(st: State, target: dict[int, int]) -> bool:
    """Racks of different sizes force a topic wider than 1 once the counts meet their targets (`racks_force`)."""
    return racks_force(st, min(target.values()), max(target.values()))


def _even_racks(st: State) -> bool:
    """No racks, or racks of one size: balancing all brokers together meets no rack that forces a wider spread
    (where it does, the targets of `shares` are out of reach and chasing them costs moves)."""
    sizes = Counter(st.rack_of.get(b) for b in st.targets)
    return None in sizes and len(sizes) == 1 or None not in sizes and len(set(sizes.values())) == 1
