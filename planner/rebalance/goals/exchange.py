"""Fewer moves and bytes at the same goal figures: which replica of a topic leaves a broker.

Once the goals are reached, a broker a that gives up a replica of partition p (to c) could as well give up a replica
of another partition q of the same topic that stays on a and is not on c: q goes to c and p stays home. Every
broker's replica count, every topic's count per broker and the number of moves stay the same; the bytes moved drop by
size(p) − size(q) (the whole of size(p) when q goes back to a broker it came from). The exchange is made when it keeps
rack safety (neither partition ends on fewer racks), the preferred leaders (per broker and per topic: p's and q's
leaders both change or neither does, or the one that changes keeps the counts within their ranges) and the byte
limit (a's bytes rise by what is saved: at most to the limit, not at all where a is above it).

Departures are taken largest first, each exchanged for the smallest replica of its topic on its broker that fits
(a's room under the limit bounds how small), then again those the leader counts held back while that saves bytes.
Before them, `shortcuts`: a replica of a topic that arrived at a broker which sent another of the topic on goes on
in its place, the other staying: one move fewer. Pure, deterministic.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter, defaultdict
from typing import Collection, Iterable

from planner.rebalance.goals.state import State

PASSES = 16  # passes at most: the first over every departure, the next over those the leader counts held back

Departure = tuple[int, int, int, int]  # (-size, partition, broker it left, broker it went to)


def fewer_bytes(st: State, limit: dict[str | None, float] | None, leaders: bool = True) -> bool:
    """Exchange departures for smaller replicas at the same figures (see the module), after `shortcuts`; `limit`: per
    group, the most bytes a broker may end with (None: the largest broker's bytes, unchanged); `leaders`: keep every
    broker's and topic's preferred leaders within their ranges (else the caller balances them again). Whether any
    shortcut or exchange was made."""
    swaps = _Swaps(st, limit, leaders)
    departures = _departures(st)
    made = _shortcuts(st, swaps, departures)
    if not st.has_sizes:
        return made > 0
    reps, size, bytes_, caps = st.reps, st.size, st.bytes, swaps.caps
    # those still made (not taken back by a shortcut), of known size, from a broker with room to keep a larger one
    departures = [
        d for d in departures if size[d[1]] is not None and d[2] not in reps[d[1]] and caps[d[2]] > bytes_[d[2]]
    ]
    staying = _staying(st, departures)
    saved = 0
    for _ in range(PASSES):
        # an exchange that moves a preferred leader shifts the leader counts, which may let another through: the next
        # pass looks again at the departures that met such a refusal only
        step, departures = _pass(swaps, departures, staying)
        saved += step
        if not step or not departures:
            break
    return made > 0 or saved > 0


class _Swaps:
    """Replica q going a -> c in p's place, p coming back c -> a (one topic), checked and made: the byte limit per
    broker (`caps`), disk space, rack safety and, with `leaders`, the preferred leader counts (every broker's kept as a
    histogram of counts, so that their range costs no pass over the brokers)."""

    def __init__(self, st: State, limit: dict[str | None, float] | None, leaders: bool):
        self.st, self.leaders = st, leaders
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
        st = self.st
        rq, rp = st.reps[q], st.reps[p]
        if c in rq or a not in rq or q == p or c not in rp or a in rp or (chain and q in st.fixed):
            return "placed"
        sp, sq = st.sz(p), st.sz(q)
        if st.bytes[a] + sp - sq > self.caps[a] or st.bytes[c] - sp + sq > self.caps[c]:
            return "bytes"
        if c in st.usable and st.incoming[c] + sq * (c not in st.home[q]) - sp * (c not in st.home[p]) > st.usable[c]:
            return "space"
        if st.rack_delta(p, c, a) is None or st.rack_delta(q, a, c) is None:
            return "racks"
        if self.leaders and (rp[0] == c) != (rq[0] == a):
            # one preferred leader changes broker: every broker's and the topic's counts must stay in their ranges
            if not self._leads_kept(st.topic_of[p], *((c, a) if rq[0] != a else (a, c))):
                return "leaders"
        return None

    def make(self, p: int, q: int, a: int, c: int) -> None:
        st, lead = self.st, self.st.lead
        before = {b: lead[b] for b in (a, c) if b in lead}
        st.move(p, c, a)
        st.move(q, a, c)
        st.moves -= 2
        for b, n in before.items():
            if lead[b] != n:
                self.counts[n] -= 1
                if not self.counts[n]:
                    del self.counts[n]
                self.counts[lead[b]] += 1

    def _leads_kept(self, t: int, src: int, dst: int) -> bool:
        """A preferred leader of topic t going from broker src to dst keeps every broker's and the topic's leader
        counts within their ranges (neither spread widens)."""
        st = self.st
        lead, per_topic = st.lead, st.tleaders[t]
        if src not in lead or dst not in lead or lead[src] - 1 < min(self.counts) or lead[dst] + 1 > max(self.counts):
            return False
        lo, hi = st.topic_lead_range(t)
        return per_topic.get(src, 0) - 1 >= lo and per_topic.get(dst, 0) + 1 <= hi


def shortcuts(st: State, limit: dict[str | None, float] | None, leaders: bool = True) -> int:
    """`_shortcuts` alone (`fewer_bytes` makes them first): the moves saved."""
    return _shortcuts(st, _Swaps(st, limit, leaders), _departures(st))


def _shortcuts(st: State, swaps: _Swaps, departures: list[Departure]) -> int:
    """Chains of two moves of one topic through a broker a, p arriving at a and q leaving a for d, made one: p goes to
    d and q stays (a keeps its count, and the topic its count there): one move fewer, size(q) fewer bytes. Where rack
    safety, the preferred leaders and the byte limit hold as in an exchange; the biggest q first (`departures`, as
    `_departures` gives them). The moves saved."""
    topic_of = st.topic_of
    keys = {(topic_of[q], a) for _, q, a, _ in departures}
    arrivals: dict[tuple[int, int], list[int]] = defaultdict(list)
    for a in sorted({a for _, a in keys}):
        for i in st.foreign[a]:
            if (topic_of[i], a) in keys and i not in st.fixed:
                arrivals[(topic_of[i], a)].append(i)
    made = 0
    for _, q, a, d in departures if arrivals else ():
        for p in sorted(arrivals.get((topic_of[q], a), ())):
            if swaps.refusal(q, p, a, d, chain=True) is None:
                swaps.make(q, p, a, d)
                made += 1
                break
    return made


def _staying(st: State, departures: list[Departure]) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """(topic, broker) of each departure -> (size, partition) of the movable replicas of the topic still on the broker
    they were on, smallest first: each topic's partitions looked at once."""
    topic_of, home, size, fixed, reps = st.topic_of, st.home, st.size, st.fixed, st.reps
    brokers: dict[int, set[int]] = defaultdict(set)  # topic -> the brokers its departures left
    for _, p, a, _ in departures:
        brokers[topic_of[p]].add(a)
    out: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for i in _partitions_of(st, brokers):
        mine = brokers[topic_of[i]]
        for b in reps[i]:
            if b in mine and b in home[i] and i not in fixed and size[i] is not None:
                out[(topic_of[i], b)].append((size[i] or 0, i))
    for v in out.values():
        v.sort()
    return out


def _partitions_of(st: State, topics: Collection[int]) -> Iterable[int]:
    """The partitions of these topics (each topic's slice where the partitions of every topic lie together)."""
    runs = st.runs
    if runs is None:
        return (i for i, t in enumerate(st.topic_of) if t in topics)
    return itertools.chain.from_iterable(range(*runs[t]) for t in sorted(topics))


def _departures(st: State) -> list[Departure]:
    """(-size, p, a, c): partition p left target broker a (open) and went to c, largest first (unknown sizes as 0)."""
    gone: set[int] = set()
    for a in st.targets:
        if a not in st.closed:
            gone |= st.departed[a]
    out = []
    for i in gone:
        if i in st.fixed:
            continue
        home, r = st.home[i], st.reps[i]
        left = [a for a in home if a not in r and a in st.target_set and a not in st.closed]
        came = [c for c in r if c not in home]
        for a, c in zip(left, came):
            out.append((-st.sz(i), i, a, c))
    out.sort()
    return out


def _pass(swaps: _Swaps, departures: list[Departure], staying: dict) -> tuple[int, list[Departure]]:
    """One pass over `departures`, largest first: the bytes saved and the departures the leader counts held back."""
    st, caps = swaps.st, swaps.caps
    saved = 0
    again = []
    for item in departures:
        neg, p, a, c = item
        size = -neg
        if a in st.reps[p] or c not in st.reps[p]:
            continue  # changed by an exchange of this pass
        cands = staying.get((st.topic_of[p], a))
        room = caps[a] - st.bytes[a]
        if not cands or room <= 0 or cands[0][0] >= size:
            continue
        # q's size at least size − room (a rises by size − size(q)), below size (a saving)
        k = bisect.bisect_left(cands, (max(0, size - int(room)), -1))
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
            held = held or why == "leaders"
        if held:
            again.append(item)
    return saved, again
