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
from collections import defaultdict

from planner.rebalance.goals.state import State

PASSES = 16  # passes at most: the first over every departure, the next over those the leader counts held back


def fewer_bytes(st: State, limit: dict[str | None, float] | None, leaders: bool = True) -> int:
    """Exchange departures for smaller replicas at the same figures (see the module); `limit`: per group, the most
    bytes a broker may end with (None: the largest broker's bytes, unchanged); `leaders`: keep every broker's and
    topic's preferred leaders within their ranges (else the caller balances them again). The bytes saved."""
    caps = _caps(st, limit)
    shortcuts(st, caps, leaders)
    if not st.has_sizes:
        return 0
    departures = _departures(st)
    staying = _staying(st, {(st.topic_of[p], a) for _, p, a, _ in departures})
    saved = 0
    for _ in range(PASSES):
        # an exchange that moves a preferred leader shifts the leader counts, which may let another through: the next
        # pass looks again at the departures that met such a refusal only
        step, departures = _pass(st, caps, departures, staying, leaders)
        saved += step
        if not step or not departures:
            break
    return saved


def _caps(st: State, limit: dict[str | None, float] | None) -> dict[int, float]:
    """Per target broker: the most bytes it may end with: the limit of its group, or its own bytes where it is above
    that (it may not rise); without a limit, the largest broker's bytes in its group (the largest over the mean stays
    what it is)."""
    out: dict[int, float] = {}
    for g, members in st.groups.items():
        top = max(st.bytes[b] for b in members) if limit is None else limit[g]
        for b in members:
            out[b] = max(top, st.bytes[b])
    return out


def shortcuts(st: State, caps: dict[int, float], leaders: bool = True) -> int:
    """Chains of two moves of one topic through a broker a, p arriving at a and q leaving a for d, made one: p goes to
    d and q stays (a keeps its count, and the topic its count there): one move fewer, size(q) fewer bytes. Where rack
    safety, the preferred leaders and the byte limit hold as in an exchange; the biggest q first. The moves saved."""
    arrivals: dict[tuple[int, int], list[int]] = defaultdict(list)
    for a in st.targets:
        for i in sorted(st.foreign[a]):
            if i not in st.fixed:
                arrivals[(st.topic_of[i], a)].append(i)
    made = 0
    for _, q, a, d in _departures(st, known=False):
        for p in arrivals.get((st.topic_of[q], a), ()):
            if _refusal(st, q, p, a, d, caps, leaders, chain=True) is None:
                st.move(p, a, d)
                st.move(q, d, a)
                st.moves -= 2
                made += 1
                break
    return made


def _staying(st: State, keys: set[tuple[int, int]]) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """(topic, broker) of `keys` -> (size, partition) of the movable replicas still on the broker they were on,
    smallest first."""
    out: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    topic_of, home, size, fixed = st.topic_of, st.home, st.size, st.fixed
    for a in sorted({a for _, a in keys}):
        for i in st.where[a]:
            key = (topic_of[i], a)
            if key in keys and a in home[i] and i not in fixed and size[i] is not None:
                out[key].append((size[i] or 0, i))
    for v in out.values():
        v.sort()
    return out


def _departures(st: State, known: bool = True) -> list[tuple[int, int, int, int]]:
    """(-size, p, a, c): partition p (of known size, unless not `known`) left target broker a (open) and went to c,
    largest first."""
    gone: set[int] = set()
    for a in st.targets:
        if a not in st.closed:
            gone |= st.departed[a]
    out = []
    for i in gone:
        if i in st.fixed or (known and st.size[i] is None):
            continue
        home, r = st.home[i], st.reps[i]
        left = [a for a in home if a not in r and a in st.target_set and a not in st.closed]
        came = [c for c in r if c not in home]
        for a, c in zip(left, came):
            out.append((-st.sz(i), i, a, c))
    out.sort()
    return out


def _pass(
    st: State, caps: dict[int, float], departures: list[tuple[int, int, int, int]], staying: dict, leaders: bool
) -> tuple[int, list[tuple[int, int, int, int]]]:
    """One pass over `departures`, largest first: the bytes saved and the departures the leader counts held back."""
    saved = 0
    again = []
    for item in departures:
        neg, p, a, c = item
        size = -neg
        if a in st.reps[p] or c not in st.reps[p]:
            continue  # changed by an exchange of this pass
        cands = staying.get((st.topic_of[p], a))
        room = caps[a] - st.bytes[a]
        if not cands or room <= 0:
            continue
        # q's size at least size − room (a rises by size − size(q)), below size (a saving)
        k = bisect.bisect_left(cands, (max(0, size - int(room)), -1))
        held = False
        for j in range(k, len(cands)):
            qs, q = cands[j]
            if qs >= size:
                break
            why = _refusal(st, p, q, a, c, caps, leaders)
            if why is None:
                st.move(p, c, a)
                st.move(q, a, c)
                st.moves -= 2
                del cands[j]
                bisect.insort(cands, (size, p))
                saved += size - qs
                held = False
                break
            held = held or why == "leaders"
        if held:
            again.append(item)
    return saved, again


def _refusal(
    st: State, p: int, q: int, a: int, c: int, caps: dict[int, float], leaders: bool, chain: bool = False
) -> str | None:
    """Why q may not go a -> c in p's place (p back c -> a) at the same figures; None: it may. With `chain`, q
    arrived at a (from elsewhere) and goes on to c, where p went from a and now comes back: a shortcut."""
    rq, rp = st.reps[q], st.reps[p]
    if c in rq or a not in rq or q == p or c not in rp or a in rp:
        return "placed"
    if chain and q in st.fixed:
        return "placed"
    if st.bytes[a] + st.sz(p) - st.sz(q) > caps[a] or st.bytes[c] - st.sz(p) + st.sz(q) > caps[c]:
        return "bytes"
    copied = st.sz(q) * (c not in st.home[q]) - st.sz(p) * (c not in st.home[p])
    if c in st.usable and st.incoming[c] + copied > st.usable[c]:
        return "space"
    if st.rack_delta(p, c, a) is None or st.rack_delta(q, a, c) is None:
        return "racks"
    if (
        leaders
        and (rp[0] == c) != (rq[0] == a)
        and not _leads_kept(st, st.topic_of[p], *((c, a) if rq[0] != a else (a, c)))
    ):
        return "leaders"  # one preferred leader changes broker: the leader spreads must stay as they are
    return None


def _leads_kept(st: State, t: int, src: int, dst: int) -> bool:
    """A preferred leader of topic t going from broker src to dst keeps every broker's and the topic's leader counts
    within their ranges (neither spread widens)."""
    lead, per_topic = st.lead, st.tleaders[t]
    if src not in lead or dst not in lead:
        return False
    lo, hi = min(lead.values()), max(lead.values())
    if lead[src] - 1 < lo or lead[dst] + 1 > hi:
        return False
    lo, hi = st.topic_lead_range(t)
    return per_topic.get(src, 0) - 1 >= lo and per_topic.get(dst, 0) + 1 <= hi
