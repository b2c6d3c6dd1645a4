"""Where is each replica now, and what has the plan cost so far?

The working copy the goals optimize: replica lists of the partitions in scope, with per-broker and per-topic indexes
kept current on every move (so a goal's step costs about the replicas it looks at, not the cluster's size), the replicas
copied so far and the --max-moves budget."""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import Counter
from typing import Collection, Iterable, Iterator, Sequence

from planner.model import Cluster, Partition
from planner.rebalance.goals.budget import Deadline
from planner.rebalance.moves import rack_count

_HEAD = operator.itemgetter(0)


class State:
    def __init__(
        self,
        cluster: Cluster,
        parts: list[Partition],
        targets: Sequence[int],
        fixed: Iterable[int],
        max_moves: int | None = None,
        closed: Iterable[int] = (),
        placement: Sequence[Sequence[int]] | None = None,
    ):
        """`placement`: the replica lists to start from instead of the partitions' own (the plan as if applied: its
        lists are then what the state counts as home)."""
        self.cluster = cluster
        self.parts = parts
        # the input replica lists when they are not the partitions' own
        self.placed = [tuple(r) for r in placement] if placement is not None else None
        self.reps = [list(r) for r in placement] if placement is not None else [list(p.replicas) for p in parts]
        # each partition's replicas before the plan (tuples: `in` is all that is asked of them)
        self.home: list[tuple[int, ...]] = self.placed if self.placed is not None else [p.replicas for p in parts]
        self.size: list[int | None] = [p.size for p in parts]
        self.has_sizes = any(s is not None for s in self.size)
        self.targets = list(targets)
        self.target_set = set(targets)
        # target brokers whose log dirs are all cordoned (KIP-1066): they keep or give up replicas, never take one
        self.closed = frozenset(closed) & self.target_set
        self.rack_of = cluster.rack_of()
        self.n_racks = rack_count(cluster, targets)
        self.fixed = frozenset(fixed)
        names: dict[str, int] = {}
        self.topic_of = [names.setdefault(p.topic, len(names)) for p in parts]
        self.topic_names = list(names)
        self._runs = _runs(self.topic_of, len(names))  # each topic's partitions as one slice, when they are together
        self._ranked: dict[tuple[int, bool], list[int]] = {}  # (broker, at home) -> `_key`s of its replicas, sorted
        self._events: dict[int, list[int]] | None = None  # broker -> its index changes `defer`red, in order
        # topics whose replicas (`touched`) or preferred leaders (`led`) moved since a reader last took them (sets
        # the reader empties: the goals' `measure` recounts only those topics)
        self.touched = set(range(len(self.topic_names)))
        self.terms: dict[str, tuple[object, dict[int, int]]] = {}  # per-topic terms of `measure`, by basis
        self._span = (max((s or 0 for s in self.size), default=0) + 1, len(parts) or 1)
        self._index(cluster.broker_ids)
        self.copies = 0  # replicas the plan copies so far: brokers in a new list that are not in the old one
        # bytes a broker may receive (its log dirs' usable bytes, DescribeLogDirs), the bytes the plan copies there
        # so far, and the brokers that turned a move down for lack of space
        self.usable = {b.id: b.usable_bytes for b in cluster.brokers if b.usable_bytes is not None}
        self.incoming: dict[int, int] = {b: 0 for b in cluster.broker_ids}
        self.full: set[int] = set()
        # rack-unsafe partitions that no move can make rack-safe (`geometry.unsafe_of`): every target broker of a rack
        # they lack is closed or reports too few usable bytes for the copy
        self.unrepairable: list[int] = []
        self.max_moves = max_moves
        self.optional_from = 0  # copies made by required moves (outside targets, rack repairs): not capped
        self.capped: list[str] = []  # goals --max-moves cut short
        # results of pure searches by everything they are made of (`shares._weighted`'s slot flows, the leader goal's
        # `keep_most`): the plans `balance` makes from the same start, its fresh states and its second plans share it
        self.memo: dict[tuple, object] = {}
        self.deadline = Deadline()  # the plan's time budget (`budget.py`): none unless the caller gives one
        # brokers balanced together: per rack when every partition keeps one replica in each rack
        self.groups: dict[str | None, list[int]] = {None: self.targets}
        self.moves = 0  # moves made (a replica may move twice; `copies` is what the plan costs)
        self._heads: list[int] = []  # the head of each replica list as last counted (none yet: count them all)
        self.recount_leads()

    def _index(self, brokers: Sequence[int]) -> None:
        """The per-broker and per-topic indexes of the replica lists, as `_add` of every replica in partition order
        builds them (the same entries in the same order), in one pass per broker and per topic."""
        self.foreign: dict[int, set[int]] = {b: set() for b in brokers}  # replicas the plan moved to b
        self.departed: dict[int, set[int]] = {b: set() for b in brokers}  # b held them before, not now
        self.tcount: dict[int, dict[int, int]] = {b: {} for b in brokers}
        self.holders: list[dict[int, int]] = [{} for _ in self.topic_names]  # topic -> broker -> replicas (> 0)
        held: dict[int, list[int]] = {b: [] for b in brokers}
        for i, r in enumerate(self.reps):
            for b in r:
                held[b].append(i)
        sizes = [s or 0 for s in self.size]
        self.count = {b: len(h) for b, h in held.items()}
        self.bytes = {b: sum(map(sizes.__getitem__, h)) for b, h in held.items()}
        self.where = {b: set(h) for b, h in held.items()}
        if self._runs is None:  # a topic's partitions apart: replica by replica
            for i, r in enumerate(self.reps):
                t = self.topic_of[i]
                for b in r:
                    _bump(self.holders[t], b, 1)
                    self.tcount[b][t] = self.tcount[b].get(t, 0) + 1
            return
        for t, (lo, hi) in enumerate(self._runs):
            holders = self.holders[t] = dict(Counter(itertools.chain.from_iterable(self.reps[lo:hi])))
            for b, c in holders.items():
                self.tcount[b][t] = c

    @property
    def runs(self) -> list[tuple[int, int]] | None:
        """Each topic's partitions as a slice (start, end) of the partition list, when they lie together; else None."""
        return self._runs

    def recount_leads(self) -> None:
        """Preferred leaders per target broker and per (broker, topic); call after reordering replica lists. A closed
        broker holding no replica can lead nothing: it is left out. Moves and `lead_swap` keep the counts current, so
        only the partitions whose head changed otherwise since the last count are counted again (all of them when
        the brokers that can lead changed)."""
        targets = [b for b in self.targets if b not in self.closed or self.count[b]]
        heads = list(map(_HEAD, self.reps))
        if not self._heads or targets != self.lead_targets:
            self._count_leads(targets)
        else:
            for i in itertools.compress(range(len(heads)), map(operator.ne, heads, self._heads)):
                t = self.topic_of[i]
                self._lead(self._heads[i], t, -1)
                self._lead(heads[i], t, 1)
        self._heads = heads

    def _count_leads(self, targets: list[int]) -> None:
        self.lead_targets = targets
        self.lead = {b: 0 for b in self.lead_targets}
        self.tlead: dict[tuple[int, int], int] = {}
        self.tleaders: list[dict[int, int]] = [{} for _ in self.topic_names]  # topic -> broker -> leads (> 0)
        self.led = set(range(len(self.topic_names)))
        if self._runs is None:
            for i, r in enumerate(self.reps):
                self._lead(r[0], self.topic_of[i], 1)
            return
        lead, tlead = self.lead, self.tlead
        for t, (lo, hi) in enumerate(self._runs):  # as `_lead` of each head in partition order counts them
            leaders = self.tleaders[t]
            for b, n in Counter(map(_HEAD, self.reps[lo:hi])).items():
                if b in lead:
                    lead[b] += n
                    tlead[(b, t)] = n
                    leaders[b] = n

    def settle_leads(self) -> None:
        """`recount_leads` when the brokers that can lead changed (a closed broker gave up its last replica or took
        one back): the counts are otherwise kept current by every move and reordering."""
        if self.lead_targets != [b for b in self.targets if b not in self.closed or self.count[b]]:
            self.recount_leads()

    def _lead(self, b: int, t: int, d: int) -> None:
        if b in self.lead:
            self.led.add(t)
            self.lead[b] += d
            self.tlead[(b, t)] = self.tlead.get((b, t), 0) + d
            _bump(self.tleaders[t], b, d)

    def lead_swap(self, i: int, old: int, new: int) -> None:
        """Broker `new` became the preferred leader of partition i instead of `old` (lists reordered in place). The head
        counted last gives the lead up: `old` itself unless the list was reordered in place since (`recount_leads`
        then counts it again)."""
        t = self.topic_of[i]
        self._lead(self._heads[i], t, -1)
        self._lead(new, t, 1)
        self._heads[i] = new  # counted: `recount_leads` need not look at it again

    def topic_lead_range(self, t: int) -> tuple[int, int]:
        """(fewest, most) preferred leaders of topic t on a lead target."""
        return _range(self.tleaders[t], len(self.lead_targets))

    def topic_range(self, t: int, members: Collection[int], low: bool = False) -> tuple[int, int]:
        """(fewest, most) replicas of topic t on a broker of `members` (a set); with `low`, the fewest as `low` counts
        them (closed brokers set no floor)."""
        held = self.holders[t]
        if isinstance(members, (set, frozenset)) and held.keys() <= members:
            return self.range_of(held, members, low)  # every holder a member (most topics): the counts, not a copy
        return self.range_of({b: c for b, c in held.items() if b in members}, members, low)

    def range_of(self, inside: dict[int, int], members: Collection[int], low: bool = False) -> tuple[int, int]:
        """`topic_range` of counts `inside` (the brokers of `members` holding any; the others hold none)."""
        if low and self.closed:
            open_members = len(members) - sum(1 for b in self.closed if b in members)
            if open_members:
                opened = {b: c for b, c in inside.items() if b not in self.closed}
                return _range(opened, open_members)[0], max(inside.values(), default=0)
        return _range(inside, len(members))

    def _add(self, i: int, b: int, t: int, size: int, home: bool) -> None:
        """Replica of partition i (topic t, `size` bytes or 0) now on b; `home`: b held it before the plan."""
        self.count[b] += 1
        self.bytes[b] += size
        self.where[b].add(i)
        tc = self.tcount[b]
        tc[t] = tc.get(t, 0) + 1
        _bump(self.holders[t], b, 1)
        if not home:
            self.foreign[b].add(i)
        else:
            self.departed[b].discard(i)
        if self._ranked and (b, home) in self._ranked:
            bisect.insort(self._ranked[(b, home)], self._key(i))

    def _remove(self, i: int, b: int, t: int, size: int, home: bool) -> None:
        """`_add` taken back: the replica of partition i leaves b."""
        self.count[b] -= 1
        self.bytes[b] -= size
        self.where[b].discard(i)
        self.tcount[b][t] -= 1
        _bump(self.holders[t], b, -1)
        if not home:
            self.foreign[b].discard(i)
        else:
            self.departed[b].add(i)
        if self._ranked and (b, home) in self._ranked:
            keys = self._ranked[(b, home)]
            del keys[bisect.bisect_left(keys, self._key(i))]

    def _key(self, i: int) -> int:
        """(unknown size, size, i) as one integer, ordered the same."""
        top, n = self._span
        return ((self.size[i] is None) * top + (self.size[i] or 0)) * n + i

    def ranked(self, b: int, home: bool) -> Iterator[int]:
        """b's replicas that were on b before the plan (`home`) or that the plan moved there: unknown sizes last, then
        smallest first, then followers before the preferred leader, then by index (a sorted index per broker and
        kind, built on first use and kept current). Make no move while iterating."""
        if (b, home) not in self._ranked:
            held = self.where[b] - self.foreign[b] if home else self.foreign[b]
            self._ranked[(b, home)] = sorted(self._key(i) for i in held)
        keys, n = self._ranked[(b, home)], self._span[1]
        k = 0
        while k < len(keys):
            group, end = keys[k] // n, k + 1
            while end < len(keys) and keys[end] // n == group:
                end += 1
            if end == k + 1:
                yield keys[k] % n
            else:
                yield from sorted((keys[x] % n for x in range(k, end)), key=lambda i: (self.reps[i][0] == b, i))
            k = end

    def restore(self, reps: Sequence[tuple[int, ...]]) -> None:
        """Back to these replica lists (a run of the goals taken back); preferred leaders recounted."""
        self.undefer()  # `_remove` and `_add` read the indexes
        for i, old in enumerate(reps):
            now = self.reps[i]
            if tuple(now) != old:
                t, size, home = self.topic_of[i], self.size[i] or 0, self.home[i]
                self.touched.add(t)
                for b in now:
                    self._remove(i, b, t, size, b in home)
                for b in old:
                    self._add(i, b, t, size, b in home)
                self.reps[i] = list(old)
        self.recount_leads()

    @property
    def largest(self) -> int:
        """The largest partition size known (0 where none is)."""
        return self._span[0] - 1

    def known(self, i: int) -> bool:
        return self.size[i] is not None

    def sz(self, i: int) -> int:
        return self.size[i] or 0

    def low(self, values: dict[int, int]) -> int:
        """The smallest of per-broker `values` that can still rise: a closed broker's cannot, so it sets no floor
        (unless every broker is closed)."""
        open_values = [v for b, v in values.items() if b not in self.closed]
        return min(open_values or values.values())

    def group_of(self, b: int) -> str | None:
        return None if None in self.groups else self.rack_of.get(b)

    # -- moves ---------------------------------------------------------------------------------------------------
    def cost(self, i: int, src: int, dst: int) -> int:
        """Change in replicas the plan copies if replica src of partition i goes to dst (-1, 0 or 1)."""
        return (dst not in self.home[i]) - (src not in self.home[i])

    def fits(self, i: int, dst: int) -> bool:
        """Copying partition i to dst keeps the bytes the plan copies there within its usable bytes (a hard limit
        on destinations; a broker that reports none has no limit)."""
        if dst not in self.usable or dst in self.home[i] or self.incoming[dst] + self.sz(i) <= self.usable[dst]:
            return True
        self.full.add(dst)
        return False

    def move(self, i: int, src: int, dst: int) -> None:
        """Replica src of partition i to dst: `_remove` from src and `_add` to dst, written out (the goals' hot path:
        about a million moves at 1M partitions)."""
        home, size, t = self.home[i], self.size[i] or 0, self.topic_of[i]
        src_home, dst_home = src in home, dst in home
        r = self.reps[i]
        if r[0] == src:
            self.lead_swap(i, src, dst)
        r[r.index(src)] = dst
        count = self.count
        # _remove(i, src, t, size, src_home), then _add(i, dst, t, size, dst_home)
        count[src] -= 1
        count[dst] += 1
        held = self.holders[t]
        c = held[src] - 1
        if c:
            held[src] = c
        else:
            del held[src]
        held[dst] = held.get(dst, 0) + 1
        if not src_home:
            self.incoming[src] -= size
        if not dst_home:
            self.incoming[dst] += size
        events = self._events
        if events is not None:  # `defer`: the per-broker indexes later, as these events (the partition, then 2 if
            # the broker held it before the plan plus 1 if it arrives: the same int objects, no new ones to keep)
            events[src] += (i, src_home << 1)
            events[dst] += (i, dst_home << 1 | 1)
        else:
            where, tcount = self.where, self.tcount
            where[src].discard(i)
            tcount[src][t] -= 1
            if src_home:
                self.departed[src].add(i)
            else:
                self.foreign[src].discard(i)
            where[dst].add(i)
            tc = tcount[dst]
            tc[t] = tc.get(t, 0) + 1
            if dst_home:
                self.departed[dst].discard(i)
            else:
                self.foreign[dst].add(i)
        if size:
            sizes = self.bytes
            sizes[src] -= size
            sizes[dst] += size
        ranked = self._ranked
        if ranked:
            if (src, src_home) in ranked:
                keys = ranked[(src, src_home)]
                del keys[bisect.bisect_left(keys, self._key(i))]
            if (dst, dst_home) in ranked:
                bisect.insort(ranked[(dst, dst_home)], self._key(i))
        self.touched.add(t)
        self.copies += (not dst_home) - (not src_home)  # `cost`
        self.moves += 1

    def defer(self) -> None:
        """Until `undefer`, moves leave each broker's indexes of the replicas it holds (`where`, `departed`, `foreign`,
        `tcount`) as they are and note their changes per broker instead, for `undefer` to make in the same order: the
        same entries in the same order as without, made broker by broker (each broker's sets and counts read together,
        not one broker's after another's at every move: the count goal's per-topic pass makes about a million moves at
        1M partitions, and those indexes were most of their cost). The counts, bytes, holders, preferred leaders and
        replica lists stay current. Only for a run of moves that reads none of those four."""
        self.undefer()  # any changes deferred before, made first
        self._events = {b: [] for b in self.count}

    def undefer(self) -> None:
        """The index changes `defer`red, made: each broker's in the order its moves made them."""
        events, self._events = self._events, None
        if events is None:
            return
        topic_of = self.topic_of
        for b, changes in events.items():
            if not changes:
                continue
            where, departed, foreign, tcount = self.where[b], self.departed[b], self.foreign[b], self.tcount[b]
            pairs = iter(changes)
            for i, e in zip(pairs, pairs):
                t = topic_of[i]
                if e & 1:  # arrived (`_add`)
                    where.add(i)
                    tcount[t] = tcount.get(t, 0) + 1
                    if e & 2:
                        departed.discard(i)
                    else:
                        foreign.add(i)
                else:  # left (`_remove`)
                    where.discard(i)
                    tcount[t] -= 1
                    if e & 2:
                        departed.add(i)
                    else:
                        foreign.discard(i)

    def returning(self, src: int, dst: int) -> Iterator[int]:
        """The replicas on src that dst held before the plan and holds no more (`where[src]` and `departed[dst]`),
        through the smaller of the two sets, in its order. Make no move while iterating."""
        where, departed = self.where[src], self.departed[dst]
        if len(departed) < len(where):
            return (i for i in departed if i in where)
        return (i for i in where if i in departed)

    @property
    def limited(self) -> bool:
        """A move cap (--max-moves) or disk-space limits: the plan counts what it copies from the input, so a plan of
        it as if applied, which counts from there, is no continuation of it (such a plan is no fixed point)."""
        return self.max_moves is not None or bool(self.usable)

    def allowed(self, n: int = 1) -> bool:
        """n more copies fit in --max-moves (required moves are never capped)."""
        return self.max_moves is None or self.copies - self.optional_from + n <= self.max_moves

    def distinct_racks(self, replicas: Iterable[int]) -> int:
        return len({self.rack_of.get(b) for b in replicas})

    def rack_delta(self, i: int, src: int, dst: int) -> int | None:
        """None if moving replica src→dst of partition i would lower its rack safety; else the gain in racks."""
        r = self.reps[i]
        if self.n_racks == 0 or src not in r:
            return 0  # no racks, or the list unchanged
        rack_of = self.rack_of
        rack_src, rack_dst = rack_of.get(src), rack_of.get(dst)
        if rack_src == rack_dst:
            return 0  # the same racks before and after
        racks = list(map(rack_of.get, r))
        before = len(set(racks))
        after = before - (racks.count(rack_src) == 1) + (rack_dst not in racks)
        if after < min(before, len(r), self.n_racks):
            return None
        return after - before

    def can_move(self, i: int, src: int, dst: int) -> bool:
        """The hard goal: only to target brokers that take replicas (not closed) and have room for it, never fixed
        partitions, never two replicas on one broker, never lowering rack safety."""
        return self.placeable(i, src, dst) and (dst not in self.usable or self.fits(i, dst))

    def movable(self, parts: Iterable[int], src: int, dst: int) -> list[int]:
        """The partitions of `parts` whose replica on src `can_move` to dst, in order: its checks, those that depend
        only on src and dst made once (the count goal's topic moves: about two million checks at 1M partitions)."""
        if dst not in self.target_set or dst in self.closed:
            return []
        fixed, reps, rack_of, n_racks = self.fixed, self.reps, self.rack_of, self.n_racks
        rack_src, rack_dst = rack_of.get(src), rack_of.get(dst)
        racked = n_racks and rack_src != rack_dst  # rack safety as `placeable` refuses it (else the same racks)
        mine = []
        for i in parts:  # one loop, not a comprehension then a filter (a giver holds few partitions of a topic)
            r = reps[i]
            if dst in r or src not in r or i in fixed:
                continue
            if racked:
                # `placeable` refuses where the racks after (before - 1 where dst's rack is among them and src alone
                # in its rack, else no fewer) are fewer than before, than the replicas and than the racks: where the
                # partition has at most n_racks racks (it never has more than its replicas)
                racks = list(map(rack_of.get, r))
                if rack_dst in racks and racks.count(rack_src) == 1 and len(set(racks)) <= n_racks:
                    continue
            mine.append(i)
        if dst in self.usable:
            fits = self.fits
            mine = [i for i in mine if fits(i, dst)]
        return mine

    def placeable(self, i: int, src: int, dst: int) -> bool:
        """`can_move` but for the room on dst: what only the replica lists of i decide (no side effect): dst takes
        replicas and does not hold i, and then what rack safety decides for dst's rack (`rack_placeable`; it refuses
        as `rack_delta` does, written out: the goals' hot path)."""
        if dst not in self.target_set or dst in self.closed or dst in self.reps[i]:
            return False
        return self.rack_placeable(i, src, self.rack_of.get(dst))

    def rack_placeable(self, i: int, src: int, rack_dst: str | None) -> bool:
        """`placeable` to a broker of rack `rack_dst` that takes replicas and does not hold i: what rack safety and
        the replica list decide (the same answer for every such broker of the rack)."""
        if i in self.fixed:
            return False
        r = self.reps[i]
        if src not in r:
            return False
        if not self.n_racks:
            return True
        rack_src = self.rack_of.get(src)
        return rack_src == rack_dst or self._racks_kept(r, rack_src, rack_dst)

    def _racks_kept(self, r: Sequence[int], rack_src: str | None, rack_dst: str | None) -> bool:
        """Whether list r's replica on rack `rack_src` may go to rack `rack_dst` (another, not holding it) without
        lowering its rack safety: its racks after no fewer than before, or than its replicas, or than the racks."""
        racks = list(map(self.rack_of.get, r))
        before = len(set(racks))
        after = before - (racks.count(rack_src) == 1) + (rack_dst not in racks)
        return after >= before or after >= len(r) or after >= self.n_racks


def _runs(topic_of: Sequence[int], topics: int) -> list[tuple[int, int]] | None:
    """Each topic's partitions as a slice (start, end) of the partition list, in topic order, when every topic's
    partitions lie together (as `select_partitions` lists them); else None."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(topic_of) + 1):
        if i == len(topic_of) or topic_of[i] != topic_of[start]:
            if topic_of[start] != len(runs):
                return None
            runs.append((start, i))
            start = i
    return runs if len(runs) == topics else None


def _bump(counts: dict[int, int], b: int, d: int) -> None:
    """counts[b] += d, dropping the entry at 0."""
    c = counts.get(b, 0) + d
    if c:
        counts[b] = c
    else:
        del counts[b]


def _range(values: dict[int, int], members: int) -> tuple[int, int]:
    """(min, max) over `members` brokers of which those in `values` hold the values, the others 0."""
    if not values:
        return 0, 0
    return (min(values.values()) if len(values) >= members else 0), max(values.values())
