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
import itertools
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Sequence

from planner.rebalance.goals.base import Change, CountConstraint, Frozen, Goal, keeps, kept_terms, off_even
from planner.rebalance.goals.geometry import Forced, balanced_in, forced_topics, spread, spreads, targets_of
from planner.rebalance.goals.state import State
from planner.rebalance.goals.uneven import topic_keep
from planner.rebalance.moves import count_targets, excess
from planner.rebalance.notes import Note


@dataclass(frozen=True)
class TopicConstraint:
    """Every (broker, topic) count stays within the range the goal reached for that topic in the broker's group, or
    for a forced topic (`forced_topics`) in the brokers it is balanced within (`classes`: topic -> broker -> the
    index of its class)."""

    lo: dict
    hi: dict
    classes: dict[int, dict[int, int]] = field(default_factory=dict)

    def allows(self, st: State, changes: Sequence[Change]) -> bool:
        topic_of, n = st.topic_of, len(changes)
        if n == 1:  # a move (the byte goal's steps ask millions of moves and exchanges: no dict for them)
            i, s, d = changes[0]
            return self.moves(st, topic_of[i], s, d)
        if n == 2 and changes[0][1] == changes[1][2] and changes[0][2] == changes[1][1]:  # an exchange
            (i, s, d), (j, _, _) = changes
            t, u = topic_of[i], topic_of[j]
            return t == u or (self.moves(st, t, s, d) and self.moves(st, u, d, s))  # one topic: no count changes
        deltas: dict[tuple[int, int], int] = {}
        for i, s, d in changes:
            t = st.topic_of[i]
            deltas[(s, t)] = deltas.get((s, t), 0) - 1
            deltas[(d, t)] = deltas.get((d, t), 0) + 1
        for (b, t), d in deltas.items():
            if d and not self.keeps(st, b, t, d):  # an unchanged count keeps its range
                return False
        return True

    def moves(self, st: State, t: int, s: int, d: int) -> bool:
        """A replica of topic t moving from broker s to d keeps both counts in their ranges (`allows` of the move)."""
        return self.keeps(st, s, t, -1) and self.keeps(st, d, t, 1)

    def keeps(self, st: State, b: int, t: int, d: int) -> bool:
        """Broker b's count of topic t changing by d (not 0) stays in its range (`allows` for one (b, t))."""
        g = self.classes[t].get(b) if t in self.classes else st.group_of(b)
        lo = self.lo.get((g, t))
        return lo is None or keeps(st.tcount[b].get(t, 0), d, lo, self.hi[(g, t)])


ROTATION_BUDGET = 32  # rotations tried per run: bounds the search where racks make a topic's spread unreachable
ASK_EVERY = 16  # topics spread between two questions to the time budget (a plan of few topics reads no clock here)


def _order(st: State, i: int, src: int, dst: int) -> tuple:
    home, size = st.home[i], st.size[i]
    return ((dst not in home) - (src not in home), size is None, size or 0, st.reps[i][0] == src, i)


@dataclass
class TopicSpreadGoal(Goal):
    """Goal: each topic's replicas per target broker within 1 of its even share (floor or ceiling), per group of
    brokers balanced together; a topic racks force wider (`forced_topics`) within 1 over each class of brokers it is
    balanced in. Measured as each topic's replicas off its even share in each such set (`measure`); bounded below by
    the replicas above the shares' ceilings (`lower_bound`).

    Constraints: those of the hard and replica-count goals (`CountConstraint`: every count stays in its range); it
    hands on `TopicConstraint` (each topic's count per broker stays in the range reached).

    Algorithm: a topic's replica moves from a broker holding most of it to one holding fewest: alone when the counts
    stay in range, else exchanged for a replica of another topic (two moves, counts unchanged), else rotated through a
    third broker where racks forbid the exchange (three moves); cheapest first (module docstring)."""

    say: Callable[[str], None] = lambda msg: None
    name: str = "topic-spread"
    rotations: int = 0  # three-move rotations still to try in this run (each searches many replicas)
    by_topic: dict[int, list[int]] = field(default_factory=dict)
    exchanges: "_Exchanges | None" = None  # this run's `_Exchanges` (moves go through it)

    def optimize(self, st: State, frozen: Frozen) -> TopicConstraint:
        self.say("spreading each topic")
        self.exchanges = _Exchanges(st)
        self.by_topic = {}
        for i, t in enumerate(st.topic_of):
            self.by_topic.setdefault(t, []).append(i)
        movable = sorted(t for t, idx in self.by_topic.items() if any(i not in st.fixed for i in idx))
        forced = forced_topics(st) if None in st.groups else {}  # per-rack groups: the classes are the groups
        work = self._work(st, movable, forced)
        # single moves and exchanges first; rotations (three moves) only for what those leave, and only where the
        # racks are of one size (with uneven racks the spread a rotation would fix is mostly forced by rack safety)
        late = False  # the time budget ran out (`State.deadline`, asked every `ASK_EVERY` topics): the moves made stand
        for self.rotations in (0, ROTATION_BUDGET) if _even_racks(st) else (0,):
            for _ in range(4):  # a topic's moves may open the way for another's: again while anything moves
                kept = 0
                for k, (t, members) in enumerate(work):
                    if k % ASK_EVERY == ASK_EVERY - 1 and st.deadline.out("the topic goal"):
                        late = True
                        break
                    kept += self._spread_or_undo(st, frozen, t, members)
                if not kept or late:
                    break
            if late:
                break
        lo: dict = {}
        hi: dict = {}
        for g, brokers in st.groups.items():
            inside = frozenset(brokers)
            for t in self.by_topic:
                if t not in forced:
                    lo[(g, t)], hi[(g, t)] = st.topic_range(t, inside)
        classes: dict[int, dict[int, int]] = {}
        for t, why in forced.items():
            classes[t] = {b: k for k, m in enumerate(why.classes) for b in m}
            for k, m in enumerate(why.classes):
                lo[(k, t)], hi[(k, t)] = st.topic_range(t, m)
        if any(hi[k] - lo[k] > 1 for k in lo) and not st.allowed():
            st.capped.append(self.name)
        self.exchanges = None
        return TopicConstraint(lo, hi, classes)

    def measure(self, st: State) -> int:
        """Each topic's replicas off its even share (`base.off_even`) in each group of brokers balanced together; a
        topic racks force wider (`forced_topics`), over each class of brokers it is balanced in instead. Kept per topic
        in `st.terms` (only the topics moves touched are recounted)."""
        group_of = {b: g for g, members in st.groups.items() for b in members}
        sizes = {g: len(members) for g, members in st.groups.items()}
        topic = kept_terms(st, "topic", st.groups, st.touched, lambda t: _topic_term(st.holders[t], group_of, sizes))
        forced = forced_topics(st) if None in st.groups else {}  # of this placement, as a second plan finds them
        for t, why in forced.items():  # a topic racks spread wider: over each class of brokers it is balanced in
            topic -= st.terms["topic"][1][t]
            for inside in why.classes:
                v = [c for b, c in st.holders[t].items() if b in inside]
                topic += off_even(v, len(inside), sum(v))
        return topic

    def spread_term(self, st: State, term: float) -> tuple[int, float]:
        """First the topics above a spread of 1 where this goal balances them (what the summary names: `topic_keep`
        may keep more topics within 1 at more replicas off their shares in all), then the term."""
        return sum(1 for s, _ in spreads(st) if s > 1), term

    def lower_bound(self, st: State, repaired: bool, unsafe: list[tuple[int, int, list[int]]] | None = None) -> int:
        """Replicas of each topic above its even share's ceiling (the +1s to the brokers holding most), summed: every
        move takes one replica of one topic off a broker. Per rack when every partition keeps one replica per rack."""
        _, by_rack = targets_of(st, repaired=repaired)
        total = 0
        shares = Counter(st.topic_of)  # partitions per topic: one replica each per rack
        # replicas of partitions that never move (mid-reassignment, excluded) on brokers outside the targets stay
        # there: not counted (as `ReplicaCountGoal.lower_bound` does), else the bound would exceed a plan that moves
        # every other replica
        stranded: Counter = Counter()
        for i in st.fixed:
            for b in st.reps[i]:
                if b not in st.target_set:
                    stranded[(st.topic_of[i], b)] += 1
        for t in range(len(st.topic_names)):
            counts = {b: c - stranded[(t, b)] for b, c in st.holders[t].items() if c > stranded[(t, b)]}
            if by_rack is None:
                total += _excess_over_share(st, counts)
                continue
            share = shares[t]
            for members in by_rack.values():
                inside = {b: counts.get(b, 0) for b in members}
                total += excess(inside, count_targets(inside, members, share, st.closed))
        return total

    def notes(self, st: State) -> list[Note]:
        """`_topic_notes`, its unmet note split where the replica counts and racks together keep topics above a spread
        of 1 (`count_forced`)."""
        return _count_forced(st, _topic_notes(st, self.name))

    @staticmethod
    def _work(
        st: State, movable: list[int], forced: dict[int, Forced]
    ) -> list[tuple[int, tuple[list[int], frozenset[int]]]]:
        """(topic, brokers to spread it over) in order: each group in turn, every topic in it; a forced topic over
        each of its classes instead (only when all brokers form one group)."""
        groups = [(sorted(m), frozenset(m)) for m in st.groups.values()]
        work = []
        for members in groups:
            for t in movable:
                if t in forced:
                    work += [(t, (sorted(c), c)) for c in forced[t].classes]
                else:
                    work.append((t, members))
        return work

    def _spread_or_undo(self, st: State, frozen: Frozen, t: int, members: tuple[list[int], frozenset[int]]) -> int:
        """The moves kept spreading topic t over `members`. With rotations, all or nothing: moves that leave the
        topic's spread above 1 (racks forbid it) are taken back, so they cost no copies."""
        done = self._spread(st, frozen, t, members)
        if self.rotations == 0 or not done or spread(st, t, members[1]) <= 1:
            return len(done)
        for i, src, dst in reversed(done):
            self._moves().move(i, dst, src)
        return 0

    def _spread(self, st: State, frozen: Frozen, t: int, members: tuple[list[int], frozenset[int]]) -> list[Change]:
        done: list[Change] = []
        if spread(st, t, members[1]) <= 1:
            return done
        topic = _Topic(st, t, members, self.by_topic[t])
        for _ in range(sum(topic.tc.values()) + 1):
            if not st.allowed() or topic.spread() <= 1:
                break
            changes = self._best(st, frozen, topic)
            if changes is None:
                break
            for i, s, d in changes:
                self._moves().move(i, s, d)
                if st.topic_of[i] == t:
                    topic.moved(i, s, d)
            done += changes
        return done

    def _best(self, st: State, frozen: Frozen, topic: "_Topic") -> list[Change] | None:
        """From a broker holding most of the topic to one holding fewest (brokers holding 0 or 1 give nothing)."""
        tc = topic.tc
        takers = _Takers(st, topic)
        for a in topic.givers():
            for b in takers:
                if tc[a] - tc.get(b, 0) < 2:
                    break
                found = self._between(st, frozen, topic.t, a, b, topic.on.get(a, ()))
                if found is not None:
                    return found
        return None

    def _between(self, st: State, frozen: Frozen, t: int, a: int, b: int, held: Iterable[int]) -> list[Change] | None:
        cands = sorted(st.movable(held, a, b), key=lambda i: _order(st, i, a, b))  # those `can_move` allows
        for i in cands if _single(st, frozen, cands, a, b) else ():
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

    def _moves(self) -> "_Exchanges":
        assert self.exchanges is not None, "only while optimizing"
        return self.exchanges

    def _swap(self, st: State, frozen: Frozen, i: int, a: int, b: int) -> list[Change] | None:
        for j in self._moves().returns(b, a, st.topic_of[i]):
            changes = [(i, a, b), (j, b, a)]
            if st.allowed(max(0, st.cost(i, a, b) + st.cost(j, b, a))) and frozen.allows(st, changes):
                return changes
        return None

    def _rotate(self, st: State, frozen: Frozen, i: int, a: int, b: int) -> list[Change] | None:
        """i goes a -> b, a replica of another topic b -> x and one of a third x -> a: every broker keeps its count.
        x is tried in id order among the brokers of a's and b's racks; each of the other two topics must have more
        replicas on the giving broker than on the receiving one, so its spread does not widen."""
        t = st.topic_of[i]
        if st.rack_of.get(a) == st.rack_of.get(b):
            return None  # within one rack every exchange is rack-safe: the two-move exchange has been tried

        def givers(src: int, dst: int) -> list[int]:
            return list(itertools.islice(self._moves().returns(src, dst, t), 4))

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


class _Topic:
    """One topic over one group while it is spread: its replicas per member holding any (`tc`), those members by
    count, and its partitions per broker, kept current as its replicas move (a step costs the few brokers it looks at,
    not the group's size)."""

    def __init__(self, st: State, t: int, members: tuple[list[int], frozenset[int]], parts: list[int]):
        self.st, self.t = st, t
        self.members, self.inside = members
        self.tc = {b: c for b, c in st.holders[t].items() if b in self.inside}
        self.by_count: dict[int, set[int]] = {}
        for b, c in self.tc.items():
            self.by_count.setdefault(c, set()).add(b)
        self.on: dict[int, set[int]] = {}  # broker -> the partitions of t it holds
        for i in parts:
            for b in st.reps[i]:
                self.on.setdefault(b, set()).add(i)

    def spread(self) -> int:
        """Most minus fewest replicas of the topic on a member (as `State.low` counts the fewest)."""
        if self.st.closed:
            lo, hi = self.st.range_of(self.tc, self.inside, low=True)
            return hi - lo
        if not self.by_count:
            return 0
        return max(self.by_count) - (min(self.by_count) if len(self.tc) >= len(self.inside) else 0)

    def moved(self, i: int, src: int, dst: int) -> None:
        """A replica of partition i (of this topic) went from src to dst."""
        self.on[src].discard(i)
        self.on.setdefault(dst, set()).add(i)
        for b, d in ((src, -1), (dst, 1)):
            if b in self.inside:
                c = self.tc.get(b, 0)
                if c:
                    self.by_count[c].discard(b)
                    if not self.by_count[c]:
                        del self.by_count[c]
                if c + d:
                    self.tc[b] = c + d
                    self.by_count.setdefault(c + d, set()).add(b)
                else:
                    del self.tc[b]

    def givers(self) -> Iterator[int]:
        """Members holding 2 or more, by (most first, id). Make no move while iterating."""
        for c in sorted(self.by_count, reverse=True):
            if c < 2:
                return
            yield from sorted(self.by_count[c])

    def counted(self) -> Iterator[int]:
        """Members holding any, by (fewest first, id)."""
        for c in sorted(self.by_count):
            yield from sorted(self.by_count[c])


class _Takers:
    """The members that take replicas (not closed) by (replicas of the topic, id), produced as far as asked: those
    holding none in id order first (found by skipping the few that hold some), then the others."""

    def __init__(self, st: State, topic: _Topic):
        self.st, self.topic = st, topic
        self.seen: list[int] = []
        self.source = _taking(st, topic)  # a generator that holds no reference back to self: no cycle to collect

    def __iter__(self) -> Iterator[int]:
        yield from self.seen
        for b in self.source:
            self.seen.append(b)
            yield b


def _taking(st: State, topic: _Topic) -> Iterator[int]:
    """`_Takers`' members in order, produced lazily."""
    closed, tc = st.closed, topic.tc
    yield from (b for b in topic.members if b not in tc and b not in closed)
    yield from (b for b in topic.counted() if b not in closed)


class _Exchanges:
    """`_returns` per (src, dst), each made at its first read and kept until a move touches what it reads: a move of
    partition i drops the lists from or to a broker i is or was on. Without it a step that finds no exchange passed
    over every replica of the receiving broker for each candidate, each pair of brokers, each topic and each round
    (tens of seconds for 3,457 partitions on racks of 7/4/3, where racks refuse most exchanges); now a list is made
    once per state of its two brokers, and from `_Givers` (the replicas on src that racks let go towards dst's rack,
    by topic): not from every replica on src (most of which racks of 7/4/3 refuse, so most lists come out empty).
    The moves of the topic goal go through `move`."""

    def __init__(self, st: State):
        self.st = st
        self.kept: dict[int, dict[int, _Made]] = {}  # src -> dst -> its list, made as far as read
        self.givers = _Givers(st)
        self.made = 0

    def returns(self, src: int, dst: int, t: int) -> Iterator[int]:
        """`_returns` from src to dst in exchange for a replica of topic t: of another topic, with room on dst."""
        st = self.st
        lists = self.kept.setdefault(src, {})
        kept = lists.get(dst)
        if kept is None:
            self.made += 1
            kept = lists[dst] = _Made(_indexed_returns(st, self.givers, src, dst))
        topic_of = st.topic_of
        return (j for j in kept if topic_of[j] != t and st.fits(j, dst))

    def move(self, i: int, src: int, dst: int) -> None:
        """st.move, the lists it may change dropped: from src, dst and the other brokers of i (their replica lists
        changed), and to src and dst (their counts and indexes changed); `_Givers` kept current."""
        before = tuple(self.st.reps[i])
        self.st.move(i, src, dst)
        self.givers.moved(i, before)
        for b in (src, *self.st.reps[i]):
            self.kept.pop(b, None)
        for lists in self.kept.values():
            lists.pop(src, None)
            lists.pop(dst, None)


class _Made:
    """A kept list made as far as it has been read: its first items (`got`) and the generator of the rest (`rest`,
    reading the state as it goes: it is dropped with the list, before any move that changes what it reads). The
    exchange search reads most lists no further than their first item (lognormal-uneven at 100,000: 37,371 items
    read of 9.9 million in the lists made whole)."""

    __slots__ = ("got", "rest")

    def __init__(self, rest: Iterator[int]):
        self.got: list[int] = []
        self.rest: Iterator[int] | None = rest

    def __iter__(self) -> Iterator[int]:
        got = self.got
        yield from got
        while self.rest is not None:
            j = next(self.rest, None)
            if j is None:
                self.rest = None
                return
            got.append(j)
            yield j


class _Givers:
    """Per broker src and the rack of a receiving broker: the partitions on src, not fixed, that rack safety lets go
    from src to a broker of that rack (as `_returns`' `fits` checks it: where src's rack keeps another replica or
    the receiving rack has none), by topic; where the two racks are the same (or there are no racks), every
    partition on src not fixed. Made for a (src, rack) at its first use, kept current by `moved` (a move changes the
    replica list of one partition: only its own entries change)."""

    def __init__(self, st: State):
        self.st = st
        self.index: dict[tuple[int, bool, object], dict[int, set[int]]] = {}
        self.made: dict[int, list[tuple[int, bool, object]]] = {}  # broker -> the keys made for it

    def of(self, src: int, dst: int) -> dict[int, set[int]]:
        """topic -> the partitions on src that may go to dst as racks allow (that list no other replica on dst is
        the caller's to check)."""
        st = self.st
        rs, rd = st.rack_of.get(src), st.rack_of.get(dst)
        same = st.n_racks == 0 or rs == rd
        key = (src, same, None if same else rd)
        got = self.index.get(key)
        if got is None:
            got = self.index[key] = {}
            self.made.setdefault(src, []).append(key)
            topic_of = st.topic_of
            for j in st.where[src]:
                if self._gives(j, key):
                    got.setdefault(topic_of[j], set()).add(j)
        return got

    def _gives(self, j: int, key: tuple[int, bool, object]) -> bool:
        src, same, rd = key
        st = self.st
        if j in st.fixed:
            return False
        if same:
            return True
        racks = [st.rack_of.get(b) for b in st.reps[j]]
        return rd not in racks or racks.count(st.rack_of.get(src)) > 1

    def moved(self, i: int, before: tuple[int, ...]) -> None:
        """Partition i's replica list changed from `before`: its entries of the brokers it was or is on made again."""
        t = self.st.topic_of[i]
        now = self.st.reps[i]
        for b in {*before, *now}:
            for key in self.made.get(b, ()):
                by_topic = self.index[key]
                held = by_topic.get(t)
                if held is not None:
                    held.discard(i)
                    if not held:
                        del by_topic[t]
                if b in now and self._gives(i, key):
                    by_topic.setdefault(t, set()).add(i)


def _indexed_returns(st: State, givers: _Givers, src: int, dst: int) -> Iterator[int]:
    """`_returns(st, src, dst)`, the same replicas in the same order, from `givers`: the replicas racks let go towards
    dst's rack, of the topics src holds more of than dst, that dst does not hold, in `_order` (the copies the move
    costs, then the per-broker indexes' size, leader and id). Those costing fewer than one copy (moved to src by the
    plan, or held by dst before) are few: found and sorted first; then src's own replicas by its index (`ranked`),
    those that would copy one, as far as read. Make no move while reading it."""
    if dst not in st.target_set or dst in st.closed:
        return
    have, lack, reps, home, topic_of = st.tcount[src], st.tcount[dst], st.reps, st.home, st.topic_of
    by_topic = givers.of(src, dst)
    if not any(have.get(tj, 0) > lack.get(tj, 0) for tj in by_topic):
        return  # about half the lists (lognormal-uneven at 100,000: 34,062 of the 71,433 made)

    def gives(j: int) -> bool:
        tj = topic_of[j]
        js = by_topic.get(tj)
        return js is not None and j in js and dst not in reps[j] and have.get(tj, 0) > lack.get(tj, 0)

    cheap = {j for j in st.foreign[src] if gives(j)}
    cheap.update(j for j in st.returning(src, dst) if gives(j))
    yield from sorted(cheap, key=lambda j: _order(st, j, src, dst))
    yield from (j for j in st.ranked(src, home=True) if dst not in home[j] and gives(j))


def _returns(st: State, src: int, dst: int) -> Iterator[int]:
    """Replicas on src that may go to dst in exchange for one of another topic, best first (`_order`): of a topic that
    src holds more of than dst, allowed by the hard goal (the caller leaves out the exchanged topic's own). By the
    copies the move costs: -1 (moved to src by the plan, going back home), 0 (moved to src by the plan, or dst held it
    before too), 1 (the rest); within each, from the per-broker indexes by size. What it reads: src's and dst's
    indexes and counts, dst's copied bytes, and the replica lists of the partitions on src (`_Exchanges`)."""
    have, lack, home = st.tcount[src], st.tcount[dst], st.home
    if dst not in st.target_set or dst in st.closed:
        return
    topic_of, fixed, reps, rack_of = st.topic_of, st.fixed, st.reps, st.rack_of
    rs, rd = rack_of.get(src), rack_of.get(dst)
    same = st.n_racks == 0 or rs == rd  # racks then allow every such move

    def fits(j: int) -> bool:
        """`State.placeable` (what is the same for every j checked once above), of a topic src holds more of; the room
        on dst is the caller's to check (`_Exchanges`: that check has a side effect). Across racks `State.rack_delta`
        refuses just where src's rack keeps no other replica of j and dst's rack has one."""
        tj = topic_of[j]
        if have.get(tj, 0) <= lack.get(tj, 0) or j in fixed:
            return False
        r = reps[j]
        if dst in r or src not in r:
            return False
        if same:
            return True
        racks = [rack_of.get(b) for b in r]
        return rd not in racks or racks.count(rs) > 1

    def order(j: int) -> tuple:
        return _order(st, j, src, dst)

    # dst must not hold the replica: of those dst held before the plan, only the ones that left it can go there
    returning = st.where[src] & st.departed[dst]
    back_home = returning & st.foreign[src]
    yield from sorted(filter(fits, back_home), key=order)
    moved: Iterator[int] = (j for j in st.ranked(src, home=False) if dst not in home[j])
    if len(returning) > len(back_home):
        moved = heapq.merge(sorted(returning - back_home, key=order), moved, key=order)
    yield from filter(fits, moved)
    yield from (j for j in st.ranked(src, home=True) if dst not in home[j] and fits(j))


def _single(st: State, frozen: Frozen, cands: list[int], a: int, b: int) -> bool:
    """Whether a single move a -> b of one of `cands` may pass `frozen`: False only where its constraints are all
    replica counts' (`CountConstraint`: what it asks of a move from a to b is the same for every partition) and they
    refuse the first; then they refuse every one, and the caller asks for none (most of the topic goal's pairs of
    brokers at counts kept within their range)."""
    if not cands or not all(isinstance(c, CountConstraint) for c in frozen.constraints):
        return True
    return frozen.allows(st, [(cands[0], a, b)])


def _even_racks(st: State) -> bool:
    sizes = Counter(st.rack_of.get(b) for b in st.targets if b not in st.closed)
    return None not in sizes and len(set(sizes.values())) == 1


def _topic_notes(st: State, name: str) -> list[Note]:
    """Topics above a spread of 1 where they are balanced: unmet; topics above 1 over all brokers only, balanced per
    rack (every partition keeps one replica per rack) or forced (`forced_topics`, their lower bounds as `values`):
    rack-forced."""
    notes = []
    unmet: list[str] = []
    forced: list[str] = []
    bounds: list[int] = []
    wide = forced_topics(st)
    for t, (topic, where) in enumerate(zip(st.topic_names, balanced_in(st, wide))):
        if max((spread(st, t, m) for m in where), default=0) > 1:
            unmet.append(topic)
        elif (None not in st.groups or t in wide) and spread(st, t, st.target_set) > 1:  # each rack within 1
            forced.append(topic)
            bounds += [wide[t].bound] if t in wide else []
    if unmet:
        notes.append(Note(name, "unmet", len(unmet), topics=tuple(unmet)))
    if forced:
        # bounds where the brokers are balanced together (per rack, one replica per rack in each explains it all)
        bounded = None in st.groups and len(bounds) == len(forced)
        notes.append(Note(name, "rack-forced", len(forced), topics=tuple(forced), values=tuple(bounds) * bounded))
    return notes


def _count_forced(st: State, notes: list[Note]) -> list[Note]:
    """The topic goal's unmet note split: the topics the replica counts and racks together keep above a spread of 1
    (`topic_keep.count_forced`) noted as count-forced, each with its spread over all target brokers."""
    unmet = next((n for n in notes if n.kind == "unmet"), None)
    if unmet is None:
        return notes
    index = {name: t for t, name in enumerate(st.topic_names)}
    proven = {st.topic_names[t] for t in topic_keep.count_forced(st, [index[name] for name in unmet.topics])}
    if not proven:
        return notes
    left = tuple(name for name in unmet.topics if name not in proven)
    forced = tuple(name for name in unmet.topics if name in proven)
    reached = spreads(st)
    out = [n for n in notes if n is not unmet]
    out += [replace(unmet, count=len(left), topics=left)] if left else []
    values = tuple(reached[index[name]][1] for name in forced)
    return out + [Note(unmet.goal, "count-forced", len(forced), topics=forced, values=values)]


def _excess_over_share(st: State, counts: dict[int, int]) -> int:
    """`excess` over `count_targets` of one topic's replicas per broker (`counts`: the brokers holding any) on the
    target brokers: without closed brokers, the +1s go to the targets holding most, so only the holders count."""
    total = sum(counts.values())
    if st.closed:
        return excess(counts, count_targets(counts, st.targets, total, st.closed))
    q, r = divmod(total, len(st.targets))
    # a broker among the r holding most takes one more than q: those holding more than q come first, so
    # min(r, how many hold more) of them hold one replica less above their target
    over = [c - q for b, c in counts.items() if b in st.target_set and c > q]
    outside = sum(c for b, c in counts.items() if b not in st.target_set)
    return sum(over) - min(r, len(over)) + outside


def _topic_term(holders: dict[int, int], group_of: dict[int, str | None], sizes: dict[str | None, int]) -> int:
    """`off_even` of one topic's replicas per broker in each group of brokers balanced together."""
    if len(sizes) == 1:
        ((g, n),) = sizes.items()
        values = [c for b, c in holders.items() if b in group_of]
        return off_even(values, n, sum(values))
    per_group: dict[str | None, list[int]] = {}
    for b, c in holders.items():
        if b in group_of:
            per_group.setdefault(group_of[b], []).append(c)
    return sum(off_even(v, sizes[g], sum(v)) for g, v in per_group.items())
