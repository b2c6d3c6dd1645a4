"""Which topics stay within 1 where the count range racks force leaves no placement with every topic within 1?

Where racks of different sizes keep the replica counts wider than 1 and the count range leaves no placement with
every topic within 1 (`rack_flow.plan` finds none): which topics stay within 1 (`keep`), and the ranges per broker
of the others, the smallest spread the counts and racks leave them. `rack_flow.plan` then places the fewest moves to
those figures. Pure.

What it weighs is the placement in aggregate, replicas per topic per broker, which is exact here (`rack_flow.applies`:
every partition rack-safe with at most one replica per rack): a partition's replica in a rack may be on any broker of
it, and the replicas per rack of a topic's partitions of one replication factor f (P of them, fewer than one per rack
each) can be any totals of at most P per rack that sum to f·P (each set of racks X then holds at most P·min(f, |X|),
the bound of the polymatroid of one partition summed P times); a partition with a replica in every rack keeps one in
each. So a feasible flow of

    (topic, f) (f·P) -> (topic, rack) (0..P; P..P with a replica per rack) -> broker (the topic's range there)
        -> sink (lo..hi replicas)

is a rack-safe placement within those ranges (`_Aggregate`), and each question asked of it is one small max flow.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from planner.rebalance.flow import Network
from planner.rebalance.goals.geometry import forced_classes
from planner.rebalance.goals.state import State
from planner.rebalance.goals.uneven import count_range, rack_flow

# windows tried per topic and spread (`_windows`): on racks of 7/4/3 (3,457 partitions) all of them took 147 flows a
# call, a largest spread of 30 and 1,126 moves in 5.5 s CPU; the first 4, 86 flows, a largest spread of 31 and 1,122
# moves in 4.2 s (the plan a fixed point sooner); the same topics left wider either way (`_joint` then narrows them
# to 29, the least)
WINDOWS = 4
# rounds of `_joint` at most (each steps every topic's window while that brings the flow closer to a placement): on
# racks of 7/4/3 (3,457 partitions) it reaches a placement in 1 round or stops after 2 (the second no closer)
ROUNDS = 6
# (topic, broker) arcs summed over `count_forced`'s flows (a flow per topic it checks) above which it checks none: on
# racks of 7/4/3, 16 topics of 40 on 14 brokers, 8,960; 300 topics of 5 to 15 partitions on 7/4/3 brokers would take
# 378,000 a call (three calls a plan, about 2 s CPU each) and prove none of its 90 topics
PROOF_ARCS = 250_000
# `keep` and `class_totals` run where topics x topics x brokers (about a flow per topic over every (topic, broker)
# arc) is at most KEEP_ARCS, and give up (None: the plan goes on as without them) where their flows take more than
# twice that in (topic, broker) arcs: on racks of 7/4/3 (3,457 partitions, 40 topics: 22,400) `keep` takes 45,920 a
# call; 200 topics of 3 to 12 partitions on racks of 5/3/1 (360,000) had `class_totals` take 538 flows and 968,400
# arcs a call (about 4 s CPU, three calls a plan) for the same figures as without it
KEEP_ARCS = 250_000
Ranges = dict[tuple[int, int], tuple[int, int]]  # (topic, broker) -> the fewest and most of it the broker may hold
Wide = dict[int, dict[int, tuple[int, int]]]  # topic -> broker -> the fewest and most of it the broker may hold


class _OverBudget(Exception):
    """The flows of one call of `keep` or `class_totals` went past `KEEP_ARCS`."""


class _Aggregate:
    """The placement in aggregate (module docstring): per topic the replicas each rack may hold, the brokers' count
    range, and whether given (topic, broker) ranges admit a rack-safe placement (`feasible`)."""

    def __init__(self, st: State, lo: int, hi: int):
        self.st, self.lo, self.hi = st, lo, hi
        self.racks: dict[str, list[int]] = {}
        for b in st.targets:
            self.racks.setdefault(st.rack_of[b] or "", []).append(b)
        n = len(self.racks)
        # (topic, replication factor) -> partitions; a replication factor of n: a replica per rack, one in each
        self.groups: dict[tuple[int, int], int] = {}
        for i, r in enumerate(st.home):
            key = (st.topic_of[i], len(r))
            self.groups[key] = self.groups.get(key, 0) + 1
        self.n = n
        self.budget: int | None = None  # (topic, broker) arcs the flows may still take (None: no limit)
        self.net: Network | None = None  # `shortfall`'s network (`_build`), the flow the last question left on it
        self.pairs: list[tuple[int, tuple[int, int]]] = []  # its (topic, broker) arcs: arc, key
        self.bounds: list[tuple[int, int]] = []  # the range each of those arcs has now

    def feasible(self, ranges: Ranges) -> bool:
        """Whether some rack-safe placement gives every broker lo..hi replicas and each (topic, broker) its range;
        `_OverBudget` where its arcs would take the flows past `budget`."""
        return self.shortfall(ranges) == 0

    def shortfall(self, ranges: Ranges) -> int:
        """How far `ranges` are from a rack-safe placement (0 where `feasible`): the least, over the flows within
        every arc's bounds, of the replicas that then miss their node (what the nodes short lack), plus what empty
        ranges lack; `_OverBudget` as `feasible`.

        Warm: the flow the last question left is kept, each (topic, broker) arc whose range changed brought into it
        (`flow.Network.rebound`: its flow clipped, the nodes at its ends gain or lack the difference), then the flow
        evened out again from there (`flow.Network.settle`): what it leaves uneven is the least. A question that
        changes one topic's ranges by 1 moves a few units."""
        if self.budget is not None:
            self.budget -= len(ranges)
            if self.budget < 0:
                raise _OverBudget
        if self.net is None:
            self._build()
        assert self.net is not None
        net, bounds = self.net, self.bounds
        short = 0
        for k, (e, key) in enumerate(self.pairs):
            least, most = ranges[key]
            least = max(0, least)
            if most < least:
                short += least - most
                least = most
            was = bounds[k]
            if was[0] == least and was[1] == most:
                continue
            bounds[k] = (least, most)
            net.rebound(e, least, most)
        return short + net.settle()

    def _build(self) -> None:
        """The network of `shortfall`, built once, its flow at every arc's lower bound (the (topic, broker) arcs'
        empty until a question gives their ranges):

            (topic, f) (f·P) -> (topic, rack) (0..P; P..P with a replica per rack) -> broker (the topic's range)
                -> sink (lo..hi)

        (`flow.Network.settle` adds a source and a sink)."""
        st, net = self.st, Network()
        node, bounded = net.node, net.bounded
        topic_rack: dict[tuple[int, str], int] = {}
        for (t, f), parts in sorted(self.groups.items()):
            g = node(f * parts)
            for k in self.racks:
                rack = topic_rack.get((t, k))
                if rack is None:
                    rack = topic_rack[(t, k)] = node()
                bounded(g, rack, parts if f >= self.n else 0, parts)
        brokers = {b: node() for b in st.targets}
        sink = node(-sum(f * parts for (_, f), parts in self.groups.items()))
        self.pairs = [
            (net.arc(rack, brokers[b], 0), (t, b)) for (t, k), rack in topic_rack.items() for b in self.racks[k]
        ]
        self.bounds = [(0, 0)] * len(self.pairs)
        for v in brokers.values():
            bounded(v, sink, self.lo, self.hi)
        self.net = net


def keep(st: State, lo: int, hi: int) -> tuple[Wide, Wide] | None:
    """Where no placement with brokers holding lo..hi replicas each keeps every topic within 1 where the topic goal
    balances it (`rack_flow.topic_ranges`, over all targets or the classes racks force it into): the topics left
    wider, each with its range per broker (topic -> broker -> (fewest, most)), for `rack_flow.plan`'s `wide`; and
    the class totals chosen (`_class_totals`, the same form), for where that plan finds none without them (it
    chooses its own totals, by its least-cost flow, where they fit).

    First each class racks force a topic into whose total may vary (partitions that may change racks) gets a total,
    the topic within 1 inside each (`_class_totals`); a topic no such totals fit is left wider, over all targets.
    Then the topics not forced by racks alone (`forced_classes`) are kept within 1 one by one, fewest replicas first
    (a topic left wider frees the most room where it has the most replicas), each where a placement keeping it and
    those kept before still exists with the others free (a maximal set: keeping any topic left wider as well leaves
    no placement). Then the least spread s that every topic left wider can have at once, each within a window of s
    over all targets (`_least_windows`: fixed one topic at a time, then chosen together). The class totals chosen are
    in the answer too.
    None where every topic may be within 1 at once (`rack_flow.plan` finds such a placement), where none exists, or
    where the cluster is too large for it or its flows take too many arcs (`KEEP_ARCS`)."""
    try:
        return _keep(st, lo, hi) if _affordable(st) else None
    except _OverBudget:  # past KEEP_ARCS: the plan goes on as without it
        return None


def _keep(st: State, lo: int, hi: int) -> tuple[Wide, Wide] | None:
    """`keep`, its flows within `KEEP_ARCS` (else `_OverBudget`)."""
    agg = _Aggregate(st, lo, hi)
    agg.budget = 2 * KEEP_ARCS
    base = rack_flow.topic_ranges(st, lo, hi)
    totals = [sum(held.values()) for held in st.holders]  # each topic's replicas
    forced = forced_classes(st, lo, hi)
    if agg.feasible(base):
        return None
    ranges = dict(base)
    free = {t: (0, total) for t, total in enumerate(totals) if t not in forced}
    for t, window in free.items():
        _set(st, ranges, t, window)
    if not agg.feasible(ranges):
        return None
    classes, loose = _class_totals(st, agg, ranges, forced, totals)
    in_turn = sorted(free, key=lambda t: (totals[t], t))
    for t in loose:  # forced, and not within 1 inside its classes with the others free: in a window over all
        free[t] = (0, totals[t])
        _set(st, ranges, t, free[t])
    for t in in_turn:  # kept within 1 where a placement still exists
        _set(st, ranges, t, base[(t, st.targets[0])])
        if agg.feasible(ranges):
            del free[t]
        else:
            _set(st, ranges, t, free[t])
    windows = _least_windows(st, agg, ranges, free, totals) if free else {}
    if windows is None:
        return None
    wide = {t: {b: window for b in st.targets} for t, window in windows.items()}
    return (wide, classes) if wide or classes else None


def class_totals(st: State, lo: int, hi: int) -> Wide | None:
    """Where every topic may be within 1 at once with brokers holding lo..hi replicas each, but `rack_flow.plan`
    found no placement (the class totals its first flow gave leave none): the totals of the classes racks force a
    topic into, chosen here (`_class_totals`), as `rack_flow.plan`'s `wide`; None where there is none to choose, or
    where the cluster is too large for it or its flows take too many arcs (`KEEP_ARCS`)."""
    if not _affordable(st):
        return None
    totals = [sum(held.values()) for held in st.holders]  # each topic's replicas
    agg = _Aggregate(st, lo, hi)
    agg.budget = 2 * KEEP_ARCS
    try:
        chosen, _ = _class_totals(st, agg, rack_flow.topic_ranges(st, lo, hi), forced_classes(st, lo, hi), totals)
    except _OverBudget:  # past KEEP_ARCS: the plan goes on as without it
        return None
    return chosen or None


def _affordable(st: State) -> bool:
    """`keep` and `class_totals` run here: topics x topics x brokers at most KEEP_ARCS."""
    return len(st.topic_names) ** 2 * len(st.targets) <= KEEP_ARCS


def _set(st: State, ranges: Ranges, t: int, window: tuple[int, int]) -> None:
    """Topic t within `window` on every target broker."""
    for b in st.targets:
        ranges[(t, b)] = window


def _least_windows(
    st: State, agg: _Aggregate, ranges: Ranges, free: Mapping[int, tuple[int, int]], totals: list[int]
) -> dict[int, tuple[int, int]] | None:
    """The windows of the least spread s the topics in `free` can have at once: s found by bisection from the least
    that a relaxation allows (each within s of its even share either way) with the windows fixed one topic at a time
    (`_windows`), taken to hold for every larger s once it holds for one; then narrower by 1 while `_joint`, the
    windows chosen together, finds a placement (on racks of 7/4/3, 3,457 partitions: 33 -> 29 in the first call,
    the MILP's least; 29 in the second plan's, where `_windows` reaches it)."""
    n = len(st.targets)

    def relaxed(s: int) -> bool:
        trial = dict(ranges)
        for t in free:
            _set(st, trial, t, (max(0, -(-totals[t] // n) - s), totals[t] // n + s))
        return agg.feasible(trial)

    most = max(totals[t] for t in free)
    least = _least(2, most, relaxed)
    if least is None:
        return None
    found: dict[int, dict[int, tuple[int, int]]] = {}

    def fits(s: int) -> bool:
        chosen = _windows(st, agg, dict(ranges), free, totals, n, s)
        if chosen is not None:
            found[s] = chosen
        return chosen is not None

    spread = _least(least, most, fits)
    if spread is None:
        return None
    while spread > least:  # narrower, the windows chosen together
        joint = _joint(st, agg, dict(ranges), free, totals, n, spread - 1, found[spread])
        if joint is None:
            break
        spread -= 1
        found[spread] = joint
    return found[spread]


def _joint(
    st: State,
    agg: _Aggregate,
    ranges: Ranges,
    free: Mapping[int, tuple[int, int]],
    totals: list[int],
    n: int,
    s: int,
    start: Mapping[int, tuple[int, int]],
) -> dict[int, tuple[int, int]] | None:
    """Each topic in `free` within a window k..k + s, the windows chosen together (where `_windows`, fixing one topic
    at a time with the others free, finds none: a topic's window fixed early can take the room a later one needs):
    from the lows of `start` (windows a spread wider), topic by topic (most replicas first) each low stepped by 1
    either way while that brings the flow closer to a placement (`_Aggregate.shortfall`), in rounds while a round
    does, at most `ROUNDS`; then each low stepped toward the topic's window of fewest moves (`_windows`' order) as
    far as the others leave room. None where the rounds stop short of a placement."""
    order = sorted(free, key=lambda t: (-totals[t], t))
    lows: dict[int, range] = {}
    rank: dict[int, dict[int, int]] = {}
    low: dict[int, int] = {}
    for t in order:
        total = totals[t]
        lows[t] = range(max(0, -(-total // n) - s), total // n + 1)
        rank[t] = {k: i for i, k in enumerate(_preferred(st, t, lows[t], total, n, s))}
        low[t] = min(max(start[t][0], lows[t][0]), lows[t][-1])
        _set(st, ranges, t, (low[t], low[t] + s))
    short = agg.shortfall(ranges)
    for _ in range(ROUNDS):
        if not short:
            break
        was = short
        for t in order:
            was_low = low[t]
            for step in (-1, 1):
                k = low[t] + step
                while short and k in lows[t]:
                    _set(st, ranges, t, (k, k + s))
                    less = agg.shortfall(ranges)
                    if less >= short:
                        break
                    short, low[t], k = less, k, k + step
                _set(st, ranges, t, (low[t], low[t] + s))
                if low[t] != was_low:  # not back the other way
                    break
            if not short:
                break
        if short == was:
            return None
    if short:
        return None
    for t in order:  # each toward its window of fewest moves as far as the others leave room
        ranked = rank[t]
        step = 1 if min(ranked, key=ranked.__getitem__) > low[t] else -1
        k = low[t] + step
        while k in ranked and ranked[k] < ranked[low[t]]:
            _set(st, ranges, t, (k, k + s))
            if not agg.feasible(ranges):
                break
            low[t], k = k, k + step
        _set(st, ranges, t, (low[t], low[t] + s))
    return {t: (low[t], low[t] + s) for t in order}


def _preferred(st: State, t: int, lows: range, total: int, n: int, s: int) -> list[int]:
    """Topic t's windows k..k + s (k in `lows`), those the fewest of its replicas now must leave or reach first
    (`_off`: one holding them all first, so a second plan of the plan finds its own windows), then the nearest its
    even share."""
    now = [st.holders[t].get(b, 0) for b in st.targets]
    return sorted(lows, key=lambda k: (_off(now, k, k + s), abs(2 * k + s - 2 * total / n), k))


def _class_totals(
    st: State, agg: _Aggregate, ranges: Ranges, forced: Mapping[int, list], totals: list[int]
) -> tuple[dict[int, dict[int, tuple[int, int]]], list[int]]:
    """The totals of the classes racks force a topic into, where partitions may change racks (a range of totals),
    as ranges per broker (the topic within 1 inside each class, `ranges` updated): chosen one class at a time (the
    total it holds now first, else the nearest), the later classes still within their range (`rack_flow.plan`
    otherwise holds each class at the total its first flow gave, which may leave no placement with the other topics'
    ranges). And the topics with no such totals (their ranges left as they were)."""
    chosen: dict[int, dict[int, tuple[int, int]]] = {}
    loose = []
    for t in sorted(forced):
        classes = forced[t]
        if all(least == most for _, least, most in classes):
            continue
        kept = {(t, b): ranges[(t, b)] for b in st.targets}
        left = totals[t]
        for k, (members, least, most) in enumerate(classes):
            size = len(members)
            if k == len(classes) - 1:
                options = [left] if least <= left <= most else []
            else:
                now = sum(st.holders[t].get(b, 0) for b in members)
                options = sorted(range(least, most + 1), key=lambda c: (abs(c - now), c))
            for total in options:
                for b in members:
                    ranges[(t, b)] = (total // size, -(-total // size))
                if agg.feasible(ranges):
                    left -= total
                    break
            else:
                ranges.update(kept)
                loose.append(t)
                break
        else:
            chosen[t] = {b: ranges[(t, b)] for b in st.targets}
    return chosen, loose


def _least(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The least s in lo..hi for which `ok` holds, by bisection (`ok` taken to hold from some s on); None where it
    does not hold at hi."""
    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def _windows(
    st: State, agg: _Aggregate, ranges: Ranges, free: Mapping[int, tuple[int, int]], totals: list[int], n: int, s: int
) -> dict[int, tuple[int, int]] | None:
    """Each topic in `free` within a window k..k + s of its replicas per broker, fixed one at a time, most replicas
    first, while a placement exists with those not yet fixed free; None where some topic has no such window. Of a
    topic's windows, those the fewest of its replicas now must leave or reach first (`_off`: one holding them all
    first, so a second plan of the plan finds its own windows), then the nearest its even share, up to `WINDOWS`."""
    chosen: dict[int, tuple[int, int]] = {}
    for t in sorted(free, key=lambda t: (-totals[t], t)):
        total = totals[t]
        lows = range(max(0, -(-total // n) - s), total // n + 1)
        for k in _preferred(st, t, lows, total, n, s)[:WINDOWS]:
            for b in st.targets:
                ranges[(t, b)] = (k, k + s)
            if agg.feasible(ranges):
                chosen[t] = (k, k + s)
                break
        else:
            return None
    return chosen


def _off(now: Sequence[int], least: int, most: int) -> int:
    """The fewest moves that bring replica counts `now` within least..most: those above it must leave, those below it
    must come."""
    return max(sum(max(0, c - most) for c in now), sum(max(0, least - c) for c in now))


def count_forced(st: State, topics: Sequence[int]) -> list[int]:
    """Of `topics` (the topics the plan leaves above a spread of 1 where the topic goal balances them), those that
    the replica counts and racks together keep wider: where racks of different sizes keep the counts wider than 1
    (`count_range.applies` to the placement), no rack-safe placement with every broker in the count range reached,
    every other topic within 1 where the topic goal balances it (those of `topics` free) keeps this one within 1 as
    well (`_Aggregate`: the ranges of `rack_flow.topic_ranges`, a relaxation for the topics racks force, so a proof).
    Keeping any of them within 1 costs another topic its spread of 1. Up to `PROOF_ARCS` (else none)."""
    if not topics or len(topics) * len(st.topic_names) * len(st.targets) > PROOF_ARCS or not count_range.applies(st):
        return []
    lo, hi = min(st.count[b] for b in st.targets), max(st.count[b] for b in st.targets)
    totals = [sum(held.values()) for held in st.holders]  # each topic's replicas
    agg = _Aggregate(st, lo, hi)
    free = {t: {b: (0, totals[t]) for b in st.targets} for t in topics}
    out = []
    for t in topics:
        others = {u: r for u, r in free.items() if u != t}
        if not agg.feasible(rack_flow.topic_ranges(st, lo, hi, wide=others)):
            out.append(t)
    return out
