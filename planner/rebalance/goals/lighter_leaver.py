"""Which replica of a topic should leave a broker, so that fewer moves and bytes reach the same goal figures?

Once the goals are reached, a broker a that gives up a replica of partition p (to c) could as well give up a replica
of another partition q of the same topic that stays on a and is not on c: q goes to c and p stays home. Every
broker's replica count, every topic's count per broker and the number of moves stay the same; the bytes moved drop by
size(p) − size(q) (the whole of size(p) when q goes back to a broker it came from). The exchange is made when it keeps
rack safety (neither partition ends on fewer racks), the preferred leaders (per broker and per topic: p's and q's
leaders both change or neither does, or the one that changes keeps the counts within their ranges) and the byte
limit (a's bytes rise by what is saved: at most to the limit, not at all where a is above it) and the byte goal's floor
(c's bytes fall by as much: at most to the floor, not at all where c is below it).

Departures are taken largest first, each exchanged for the smallest replica of its topic on its broker that fits
(a's room under the limit bounds how small), then again those the leader counts held back while that saves bytes.
Where q may not go to c (racks, leaders, q already there), another arrival p2 of the topic at a broker g may take
c and q goes to g (`_Room.via`); where a has no room under the limit, an arrival at a trades destinations with a
smaller arrival of its topic at a broker that sends nothing away (`_Room.free`): both keep counts and moves, up to
TRADE_REPLICAS replicas; once every broker has made its exchanges, the room each has left is spare, and rounds
follow in which such a trade may go to any broker (`ROUNDS`, up to ROUND_REPLICAS replicas). Before them,
`shortcuts`: a replica of a topic that arrived at a broker which sent another of the topic on goes on in its place,
the other staying: one move fewer.

Then, up to ROUND_REPLICAS replicas, exchanges across topics (`_plus_ones`): a departure p of topic t2 from a to c
is exchanged for a smaller replica q of another topic t1 at home on a, where a holds one more of t1 than c and c one
more of t2 than a: q goes to c and p stays home. Each broker keeps its count, t1's +1 (the replica above its even
share, `shares.py`) goes from a to c and t2's from c to a, so every topic's counts per broker are the same values
on other brokers (its spread the same) and the moves the same; the bytes moved drop by size(p) − size(q). The +1s
are chosen before the exchanges, from an estimate of each broker's room under the byte limit; these exchanges trade
them by the bytes the plan actually moves. Pure, deterministic.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from typing import Iterable, Sequence

from planner.rebalance.goals.base import Change
from planner.rebalance.goals.state import State
from planner.rebalance.goals.state.snapshot import Snapshot

PASSES = 16  # passes at most: the first over every departure, the next over those the leader counts held back

# replicas up to which exchanges may trade destinations with other arrivals of the topic (`_Room`): about 1.8 s CPU
# on top of the plan's 3.2 s at 100k partitions (300,000 replicas), so not at 1M, whose plan must stay within 60 s
TRADE_REPLICAS = 400_000
TRIES = 8  # arrivals of its topic an exchange or an arrival may trade destinations with, tried at most
ROUNDS = 4  # rounds at most, after the first, in which arrivals trade destinations with any broker's (`_Room.spare`)
# replicas up to which those rounds run: about 3 s CPU on top of the plan's 5.3 s at 100k partitions (300,000
# replicas), where they save 1.4 % of the bytes; within the noise of the plan's CPU at 10k (30,000 replicas)
ROUND_REPLICAS = 100_000
PLUS_ONES = 2  # rounds at most of exchanges across topics (`_plus_ones`), up to ROUND_REPLICAS replicas
Departure = tuple[int, int, int, int]  # (-size, partition, broker it left, broker it went to)


def fewer_bytes(
    st: State, limit: dict[str | None, float] | None, leaders: bool = True, floor: dict[str | None, float] | None = None
) -> bool:
    """Exchange departures for smaller replicas at the same figures (see the module), after `shortcuts`; `limit`: per
    group, the most bytes a broker may end with (None: the largest broker's bytes, unchanged); `leaders`: keep every
    broker's and topic's preferred leaders within their ranges (else the caller balances them again). Whether any
    shortcut or exchange was made. `floor`: per group, the fewest bytes a broker that may take replicas may end with
    (one below it may not lose any; None: no floor)."""
    swaps = _Swaps(st, limit, leaders, floor)
    departures = _departures(st)
    left = _topics_left(st)
    made = _shortcuts(st, swaps, departures, left)
    if not st.has_sizes:
        return made > 0
    replicas = sum(map(len, st.reps))
    staying = _staying(st, left)  # kept current by the exchanges
    departures = _exchangeable(st, departures, staying)
    saved, traded = _passes(swaps, departures, staying, _Room(swaps, replicas <= TRADE_REPLICAS))
    for _ in range(ROUNDS if saved and replicas <= ROUND_REPLICAS else 0):
        # each broker has made its own exchanges: the room it has left under the limit is spare, so an arrival at a
        # broker short of room may now trade destinations with a smaller one at any broker (not only one that sends
        # nothing away), and the departures are looked at again; a round that saves nothing is taken back (its trades
        # would only move bytes between brokers)
        kept = Snapshot(st)
        departures = _exchangeable(st, _departures(st), staying)
        step, more = _passes(swaps, departures, staying, _Room(swaps, spare=True))
        if not step:
            kept.restore(st)
            swaps.counts = Counter(st.lead.values())
            break
        saved, traded = saved + step, traded + more
    for _ in range(PLUS_ONES if replicas <= ROUND_REPLICAS else 0):
        # the +1s traded between brokers by the bytes moved, then the exchanges within topics again from there
        step, more = _plus_ones(swaps)
        if not step:
            break
        staying = _staying(st, _topics_left(st))
        departures = _exchangeable(st, _departures(st), staying)
        again, others = _passes(swaps, departures, staying, _Room(swaps, spare=True))
        saved, traded = saved + step + again, traded + more + others
    return made + traded > 0 or saved > 0


def _passes(swaps: _Swaps, departures: list[Departure], staying: dict, room: _Room) -> tuple[int, int]:
    """`_pass` until a pass saves nothing (at most PASSES): the bytes saved and the trades `room` made."""
    saved = 0
    for _ in range(PASSES):
        # an exchange that moves a preferred leader shifts the leader counts, which may let another through: the next
        # pass looks again at the departures that met such a refusal only
        step, departures = _pass(swaps, departures, staying, room)
        saved += step
        if not step or not departures:
            break
    return saved, room.made


class _Swaps:
    """Replica q going a -> c in p's place, p coming back c -> a (one topic), checked and made: the byte limit per
    broker (`caps`), disk space, rack safety and, with `leaders`, the preferred leader counts (every broker's kept as a
    histogram of counts, so that their range costs no pass over the brokers)."""

    def __init__(
        self,
        st: State,
        limit: dict[str | None, float] | None,
        leaders: bool,
        floor: dict[str | None, float] | None = None,
    ):
        self.st, self.leaders = st, leaders
        # the byte goal's floor: a broker that may take replicas may fall to the floor of its group, not at all where
        # it is below it (so the exchanges never take a broker the byte goal filled back below its floor)
        self.floors: dict[int, float] = {}
        if floor is not None:
            for g, members in st.groups.items():
                for b in members:
                    if b not in st.closed:
                        self.floors[b] = min(floor[g], st.bytes[b])
        self.caps: dict[int, float] = {}
        for g, members in st.groups.items():
            # a broker may rise to the limit of its group, not at all where it is above it; without a limit, to the
            # largest broker's bytes in its group (the largest over the mean stays what it is)
            top = max(st.bytes[b] for b in members) if limit is None else limit[g]
            for b in members:
                self.caps[b] = max(top, st.bytes[b])
        self.counts = Counter(st.lead.values())

    def refusal(self, p: int, q: int, a: int, c: int, chain: bool = False) -> str | None:
        """Why q may not go a -> c in p's place (p back c -> a) at the same figures; None: it may. With `chain`, q
        arrived at a (from elsewhere) and goes on to c, where p went from a and now comes back: a shortcut."""
        if q == p or (chain and q in self.st.fixed):
            return "placed"
        st = self.st
        rp, rq, hp, hq = st.reps[p], st.reps[q], st.home[p], st.home[q]
        if a in rp or c not in rp or c in rq or a not in rq:
            return "placed"
        # `check`'s sums over these two changes in closed form (the exchanges' hot path): a gains size(p) − size(q)
        # bytes and c loses them; what each copies in changes by the replicas it takes from outside their home lists
        sp, sq = st.size[p] or 0, st.size[q] or 0
        ap, cp, aq, cq = a not in hp, c not in hp, a not in hq, c not in hq
        load, copied = ((a, sp - sq), (c, sq - sp)), ((a, sp * ap - sq * aq), (c, sq * cq - sp * cp))
        return self._verdict(((p, c, a), (q, a, c)), ap - cp + cq - aq, load, copied)

    def make(self, p: int, q: int, a: int, c: int) -> None:
        self.apply(((p, c, a), (q, a, c)))

    def check(self, changes: Sequence[Change]) -> str | None:
        """Why these changes (each of another partition: its replica on src goes to dst) may not be made together at
        the same figures; None: they may. Every broker's count and each topic's stay as they are (the caller's
        changes are such), so what is checked: placement, the byte limit, disk space, rack safety, no more copies, and
        the preferred leaders' counts within their ranges."""
        st = self.st
        load: dict[int, int] = defaultdict(int)
        copied: dict[int, int] = defaultdict(int)
        copies = 0
        for i, src, dst in changes:
            r, home, size = st.reps[i], st.home[i], st.sz(i)
            if dst in r or src not in r:
                return "placed"
            load[src] -= size
            load[dst] += size
            copied[dst] += size * (dst not in home)
            copied[src] -= size * (src not in home)
            copies += (dst not in home) - (src not in home)
        return self._verdict(changes, copies, load.items(), copied.items())

    def _verdict(
        self, changes: Sequence[Change], copies: int, load: Iterable[tuple[int, int]], copied: Iterable[tuple[int, int]]
    ) -> str | None:
        """`check` of placed changes, given the replicas they copy in all (`copies`), the bytes each broker gains or
        loses (`load`) and the bytes it copies in more or fewer (`copied`)."""
        st = self.st
        if copies > 0:
            return "bytes"
        held, caps, floors = st.bytes, self.caps, self.floors
        for b, d in load:  # loops, not any() over generators: the exchanges' hot path
            if d > 0 and held[b] + d > caps[b]:
                return "bytes"
            if d < 0 and floors and b in floors and held[b] + d < floors[b]:
                return "bytes"
        usable = st.usable
        if usable:
            for b, d in copied:
                if d > 0 and b in usable and st.incoming[b] + d > usable[b]:
                    return "space"
        rack_delta = st.rack_delta
        for i, src, dst in changes:
            if rack_delta(i, src, dst) is None:
                return "racks"
        if self.leaders and not self._leads_kept(changes):
            return "leaders"
        return None

    def apply(self, changes: Sequence[Change]) -> None:
        st, lead = self.st, self.st.lead
        before = {b: lead[b] for _, src, dst in changes for b in (src, dst) if b in lead}
        for i, src, dst in changes:
            st.move(i, src, dst)
        st.moves -= len(changes)
        for b, n in before.items():
            if lead[b] != n:
                self.counts[n] -= 1
                if not self.counts[n]:
                    del self.counts[n]
                self.counts[lead[b]] += 1

    def _leads_kept(self, changes: Sequence[Change]) -> bool:
        """The preferred leaders the changes move (a partition's leader is its first replica) keep every broker's and
        each topic's leader counts within their ranges (neither spread widens)."""
        st = self.st
        per_broker: dict[int, int] = defaultdict(int)
        per_topic: dict[tuple[int, int], int] = defaultdict(int)
        for i, src, dst in changes:
            if st.reps[i][0] == src:
                t = st.topic_of[i]
                per_broker[src] -= 1
                per_broker[dst] += 1
                per_topic[(t, src)] -= 1
                per_topic[(t, dst)] += 1
        lead = st.lead
        moved = [(b, d) for b, d in per_broker.items() if d]
        if moved:
            lo, hi = min(self.counts), max(self.counts)
            if any(b not in lead or not lo <= lead[b] + d <= hi for b, d in moved):
                return False
        for (t, b), d in per_topic.items():
            if d:
                lo, hi = st.topic_lead_range(t)
                if not lo <= st.tleaders[t].get(b, 0) + d <= hi:
                    return False
        return True


def shortcuts(st: State, limit: dict[str | None, float] | None, leaders: bool = True) -> int:
    """`_shortcuts` alone (`fewer_bytes` makes them first): the moves saved."""
    return _shortcuts(st, _Swaps(st, limit, leaders), _departures(st), _topics_left(st))


def _topics_left(st: State) -> dict[int, set[int]]:
    """Open target broker -> the topics of the replicas that left it (every departure's topic, and maybe more)."""
    topic = st.topic_of.__getitem__
    return {a: set(map(topic, st.departed[a])) for a in st.targets if a not in st.closed and st.departed[a]}


def _shortcuts(st: State, swaps: _Swaps, departures: list[Departure], left: dict[int, set[int]]) -> int:
    """Chains of two moves of one topic through a broker a, p arriving at a and q leaving a for d, made one: p goes to
    d and q stays (a keeps its count, and the topic its count there): one move fewer, size(q) fewer bytes. Where rack
    safety, the preferred leaders and the byte limit hold as in an exchange; the biggest q first (`departures`:
    `_departures`; `left`: `_topics_left`). The moves saved."""
    topic_of, fixed = st.topic_of, st.fixed
    arrivals: dict[tuple[int, int], list[int]] = defaultdict(list)
    for a, topics in left.items():
        came = st.foreign[a]
        # the topics that both arrived at a and left it (a set operation: most brokers only give or only take)
        both = topics.intersection(map(topic_of.__getitem__, came))
        for i in came if both else ():
            if topic_of[i] in both and i not in fixed:
                arrivals[(topic_of[i], a)].append(i)
    made = 0
    # the departures of the topics that arrived where they left, largest first
    for _, q, a, d in sorted(d for d in departures if (topic_of[d[1]], d[2]) in arrivals) if arrivals else ():
        for p in sorted(arrivals[(topic_of[q], a)]):
            if swaps.refusal(q, p, a, d, chain=True) is None:
                swaps.make(q, p, a, d)
                made += 1
                break
    return made


class _Room:
    """Trades of destinations between arrivals of one topic (the moves and the bytes moved stay the same) where they
    let an exchange through: `via`, where the exchange's destination refuses the smaller replica, and `free`, where
    the broker has no room under the limit to keep the larger one. Only when `trade` (up to TRADE_REPLICAS)."""

    def __init__(self, swaps: _Swaps, trade: bool = True, spare: bool = False):
        self.swaps, self.trade = swaps, trade
        st = swaps.st
        self.small: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # topic -> (size, partition, sink)
        self.came: dict[int, list[tuple[int, int]]] = defaultdict(list)  # topic -> (partition, broker) of arrivals
        for g in st.targets if trade else ():
            # `spare`: every open broker's arrivals (their room left is spare), else those of brokers that send none
            sink = (spare or not st.departed[g]) and g not in st.closed
            for i in sorted(st.foreign[g]):
                if not i_fixed(st, i):
                    self.came[st.topic_of[i]].append((i, g))
                    if sink:
                        self.small[st.topic_of[i]].append((st.sz(i), i, g))
        for sizes in self.small.values():
            sizes.sort()
        for arrivals in self.came.values():
            arrivals.sort()
        self.arrived: dict[int, list[tuple[int, int]]] = {}  # broker -> its arrivals not tried yet, smallest first
        self.made = 0

    def via(self, p: int, q: int, a: int, c: int) -> bool:
        """The exchange of q for p (q going a -> c, p back home to a) that c refuses, made through another arrival p2
        of the topic at broker g: p2 goes to c instead, q to g (each step checked as an exchange is); whether made."""
        st, swaps = self.swaps.st, self.swaps
        if not self.trade:
            return False
        came = self.came[st.topic_of[q]]  # q's topic: an exchange across topics (`_plus_ones`) sends q of another
        rq = st.reps[q]
        tried = 0
        for k, (p2, g) in enumerate(came[: 4 * TRIES]):
            if p2 in (p, q) or g in (a, c) or g in rq or c in st.reps[p2] or g not in st.reps[p2] or g in st.home[p2]:
                continue
            if i_fixed(st, p2) or st.rack_delta(q, a, g) is None:
                continue
            tried += 1
            if tried > TRIES:
                return False
            # p home (c -> a), p2 to c in its place (g -> c), q to g (a -> g)
            changes = ((p, c, a), (p2, g, c), (q, a, g))
            if swaps.check(changes) is None:
                swaps.apply(changes)
                came[k] = (p2, c)
                came.append((q, g))  # p's entry, no longer an arrival, is passed over from now on
                self.made += 1
                return True
        return False

    def free(self, e: int, want: float) -> None:
        """Trades until broker e has `want` bytes of room, or none is left to try: an arrival at e (the largest first,
        each tried once) takes the destination of a smaller arrival of its topic at a broker that sends nothing away
        (a new one, say), which takes e."""
        st, swaps, caps = self.swaps.st, self.swaps, self.swaps.caps
        if not self.small or not self.trade:
            return
        if e not in self.arrived:
            self.arrived[e] = sorted(
                (st.sz(i), i) for i in st.foreign[e] if i not in st.fixed and st.size[i] is not None
            )
        arrived = self.arrived[e]
        while arrived and caps[e] - st.bytes[e] < want:
            sp, p = arrived.pop()
            if e not in st.reps[p]:
                continue
            cands = self.small.get(st.topic_of[p], [])
            for k, (sq, q, g) in enumerate(cands[:TRIES]):
                if sq >= sp:
                    break
                if swaps.refusal(q, p, e, g) is None:
                    swaps.make(q, p, e, g)
                    del cands[k]
                    bisect.insort(cands, (sp, p, g))
                    self.made += 1
                    break


def _staying(st: State, left: dict[int, set[int]]) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """(topic, broker) of each departure (`left`: `_topics_left`) -> (size, partition) of the movable replicas of the
    topic still on the broker they were on, smallest first: each broker's replicas at home looked at once."""
    topic_of, size, fixed = st.topic_of, st.size, st.fixed
    out: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for a, topics in left.items():
        for i in st.where[a] - st.foreign[a]:  # the replicas on a that were there before the plan
            t = topic_of[i]
            if t in topics and i not in fixed:
                known = size[i]
                if known is not None:
                    out[(t, a)].append((known, i))
    for v in out.values():
        if len(v) > 1:  # most: one replica of the topic on the broker
            v.sort()
    return out


def _departures(st: State) -> list[Departure]:
    """(-size, p, a, c): partition p left target broker a (open) and went to c (unknown sizes as 0), in no particular
    order (sorted, they are largest first)."""
    gone: set[int] = set()
    for a in st.targets:
        if a not in st.closed:
            gone |= st.departed[a]
    gone -= st.fixed
    homes, reps, size = st.home, st.reps, st.size
    opened = st.target_set - st.closed
    out = []
    for i in gone:
        home, r = homes[i], reps[i]
        came = [c for c in r if c not in home]
        neg = -(size[i] or 0)
        if len(came) == 1:  # most partitions: one replica moved (the first open target it left pairs with it)
            for a in home:
                if a not in r and a in opened:
                    out.append((neg, i, a, came[0]))
                    break
            continue
        left = [a for a in home if a not in r and a in opened]
        for a, c in zip(left, came):
            out.append((neg, i, a, c))
    return out


def _exchangeable(st: State, departures: list[Departure], staying: dict) -> list[Departure]:
    """The departures a pass (`_pass`) may exchange, largest first: of a known size, still away from the broker they
    left (a shortcut keeps some home), with a smaller replica of their topic staying on that broker (`staying`,
    `_staying`). The exchanges only ever put a larger replica in the place of a smaller one there, so a departure
    without one now never has one in the pass: it is left out before the sort, not passed over in it (at 1M, six
    departures in seven; their looks in partition order, not in the order of their sizes)."""
    size, reps, topic_of = st.size, st.reps, st.topic_of
    out = []
    for d in departures:
        neg, p, a, _ = d
        cands = staying.get((topic_of[p], a))
        if cands and cands[0][0] < -neg and size[p] is not None and a not in reps[p]:
            out.append(d)
    out.sort()
    return out


def _pass(swaps: _Swaps, departures: list[Departure], staying: dict, room: _Room) -> tuple[int, list[Departure]]:
    """One pass over `departures`, largest first: the bytes saved and the departures the leader counts held back."""
    st, caps = swaps.st, swaps.caps
    reps, topic_of, load = st.reps, st.topic_of, st.bytes
    saved = 0
    again = []
    for neg, p, a, c in departures:
        size = -neg
        cands = staying.get((topic_of[p], a))
        if not cands or cands[0][0] >= size:
            continue  # no smaller replica of its topic on a (most departures: a cheap look first)
        r = reps[p]
        if a in r:
            continue  # taken back by an exchange of this pass
        if c not in r:  # its arrival traded destinations (`_Room`)
            came = [b for b in r if b not in st.home[p]]
            if len(came) != 1:
                continue
            c = came[0]
        if caps[a] - load[a] < size - cands[0][0]:
            room.free(a, size - cands[0][0])
        left = caps[a] - load[a]
        if left <= 0:
            continue
        # q's size at least size − room (a rises by size − size(q)), below size (a saving)
        k = bisect.bisect_left(cands, (max(0, size - int(left)), -1))
        held = False
        for j in range(k, len(cands)):
            qs, q = cands[j]
            if qs >= size:
                break
            why = swaps.refusal(p, q, a, c)
            if why is None:
                swaps.make(p, q, a, c)
                del cands[j]
                bisect.insort(cands, (size, p))
                saved += size - qs
                held = False
                break
            if j == k and why in ("racks", "placed", "leaders") and room.via(p, q, a, c):
                del cands[j]
                bisect.insort(cands, (size, p))
                saved += size - qs
                held = False
                break
            held = held or why == "leaders"
        if held:
            again.append((neg, p, a, c))
    return saved, again


def i_fixed(st: State, i: int) -> bool:
    return i in st.fixed or st.size[i] is None


def _plus_ones(swaps: _Swaps) -> tuple[int, int]:
    """One pass of exchanges across topics (see the module), the departures largest first, each for the smallest
    replica of another topic at home on its broker that fits (a's room under the limit bounds how small; an arrival
    at a may trade destinations to make room: `_Room.free`), where c refuses it for racks, through another arrival
    of its topic (`_Room.via`). Only topics within 1 over the brokers balanced together take part (their counts
    then keep every spread as it is, also over any subset of those brokers), between brokers of one group, and no
    broker rises above the largest bytes of its group (the bytes max/mean stays what it is). The bytes saved and
    the trades made."""
    st = swaps.st
    group = {b: g for g, members in st.groups.items() for b in members}
    even = _even_topics(st)
    caps = swaps.caps
    top = {g: max(st.bytes[b] for b in members) for g, members in st.groups.items()}
    swaps.caps = {b: min(cap, max(st.bytes[b], top[group[b]])) if b in group else cap for b, cap in caps.items()}
    room = _Room(swaps, spare=True)
    try:
        return _plus_ones_pass(swaps, room, group, even), room.made
    finally:
        swaps.caps = caps


def _even_topics(st: State) -> set[int]:
    """The topics whose replicas per broker are within 1 in every group of brokers balanced together."""
    out: set[int] = set()
    members = [frozenset(m) for m in st.groups.values()]
    for t in range(len(st.topic_names)):
        if all(hi - lo <= 1 for lo, hi in (st.topic_range(t, m) for m in members)):
            out.add(t)
    return out


def _plus_ones_pass(swaps: _Swaps, room: _Room, group: dict[int, str | None], even: set[int]) -> int:
    """`_plus_ones`' pass: the bytes saved."""
    st = swaps.st
    holders, topic_of, size, home, reps, load = st.holders, st.topic_of, st.size, st.home, st.reps, st.bytes
    at_home = _at_home(st, even)
    saved = 0
    for neg, p, a, c in sorted(_departures(st)):
        t2 = topic_of[p]
        mine = at_home.get(a)
        if mine is None or t2 not in even or size[p] is None or a in reps[p] or c not in reps[p]:
            continue
        if group.get(a) != group.get(c) or holders[t2].get(c, 0) != holders[t2].get(a, 0) + 1:
            continue  # p back home would leave t2 wider than 1 (or widen another group's)
        sp = -neg
        least = min((v[0][0] for t, v in mine.items() if v and t != t2), default=sp)
        if least >= sp:
            continue
        if swaps.caps[a] - load[a] < sp - least:
            room.free(a, sp - least)
        left = swaps.caps[a] - load[a]
        if left <= 0:
            continue
        for qs, q, t1 in _smaller(st, mine, p, a, c, max(0, sp - int(left))):
            if c in reps[q] or c in home[q]:
                continue
            changes = ((q, a, c), (p, c, a))
            why = swaps.check(changes)
            if why is None:
                swaps.apply(changes)
            elif why != "racks" or not room.via(p, q, a, c):
                continue
            mine[t1].remove((qs, q))
            bisect.insort(mine[t2], (sp, p))
            saved += sp - qs
            break
    return saved


def _at_home(st: State, even: set[int]) -> dict[int, dict[int, list[tuple[int, int]]]]:
    """Open broker -> topic of `even` -> (size, partition) of its movable replicas at home there, smallest first."""
    topic_of, size = st.topic_of, st.size
    out: dict[int, dict[int, list[tuple[int, int]]]] = {}
    for a in st.targets:
        if a not in st.closed:
            per: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for i in sorted(st.where[a] - st.foreign[a]):
                if i not in st.fixed and size[i] is not None and topic_of[i] in even:
                    per[topic_of[i]].append((size[i] or 0, i))
            for v in per.values():
                v.sort()
            out[a] = per
    return out


def _smaller(
    st: State, mine: dict[int, list[tuple[int, int]]], p: int, a: int, c: int, lo: int
) -> list[tuple[int, int, int]]:
    """(size, partition, topic) of the replicas at home on a (`mine`) that may go to c in departure p's place, at
    least `lo` and smaller than p, smallest first, at most TRIES: two of each other topic of which a holds one more
    than c (a's +1 may go to c), the smallest at least `lo`."""
    holders, t2, sp = st.holders, st.topic_of[p], st.sz(p)
    out: list[tuple[int, int, int]] = []
    for t1, v in mine.items():
        h1 = holders[t1]
        if v and t1 != t2 and h1.get(a, 0) == h1.get(c, 0) + 1:
            k = bisect.bisect_left(v, (lo, -1))
            out += [(qs, q, t1) for qs, q in v[k : k + 2] if qs < sp]
    out.sort()
    return out[:TRIES]
