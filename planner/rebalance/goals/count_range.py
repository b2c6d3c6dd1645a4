"""Where racks of different sizes keep the replica counts from within 1: the narrowest range of replicas per target
broker that racks allow (`narrowest`), and moves that bring every broker into it (`reach`), for the count goal
(`replica_count`). Pure.

It applies where brokers are balanced together over racks of different sizes and every partition is rack-safe with at
most one replica per rack, all on target brokers, none fixed and no broker closed (`applies`). Rack safety then binds
only what each rack holds: a partition's replica in a rack may be on any broker of it (the partition has no other
there), so a count range lo..hi is reachable exactly when the racks' totals can lie within lo..hi times their brokers
(a rack's total splits among its brokers within lo..hi).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from planner.rebalance.flow import Network
from planner.rebalance.goals.state import State
from planner.rebalance.goals.topic_spread import uneven_racks

ROUNDS = 3  # passes of `reach` over the racks' totals (a partition moves at most once a pass)


def applies(st: State) -> bool:
    """Brokers balanced together over racks of different sizes, nothing fixed or closed, every replica on a target
    broker and every partition with at most one replica per rack (so at most as many replicas as racks)."""
    if st.fixed or st.closed or None not in st.groups or uneven_racks(st) is None:
        return False
    rack, targets = st.rack_of.get, st.target_set
    return all(len({rack(b) for b in r}) == len(r) and targets.issuperset(r) for r in st.reps)


def narrowest(st: State) -> tuple[int, int]:
    """The narrowest count range racks allow (`applies`): the least max - min of replicas per target broker over
    every rack-safe placement of the partitions (each keeps its replication factor, at most one replica per rack).

    That range, lo..hi, is unique: a placement within lo'..hi' exists exactly when lo' <= lo and hi' >= hi, so lo..hi
    is at once the lowest max and the highest min any placement reaches, and no other range of that spread is
    reachable. With n racks and, for j = 1..n, L(j) and S(j) the brokers of the j largest and the j smallest racks:
    the j largest racks hold at most sum(min(RF, j)) replicas (a partition has at most one in a rack), so
    lo = min over j of floor(sum(min(RF, j)) / L(j)); the j smallest hold at least sum(max(0, RF - (n - j))) (the
    other racks hold at most n - j of a partition), so hi = max over j of ceil(sum(max(0, RF - n + j)) / S(j)). j = n
    gives floor and ceil of the mean. Those bounds also suffice: the racks' totals that partitions can give are the
    integral bases of the submodular X -> sum(min(RF, |X|)), and a box of totals holds one where it meets both bounds
    for every set of racks (the intersection of generalized polymatroids), the worst set of j racks being the j
    largest (lo) or the j smallest (hi)."""
    racks = _racks(st)
    sizes = sorted(len(m) for m in racks.values())
    n = len(sizes)
    rfs = Counter(map(len, st.reps))
    lo = min(sum(c * min(r, j) for r, c in rfs.items()) // sum(sizes[-j:]) for j in range(1, n + 1))
    hi = max(-(-sum(c * max(0, r - n + j) for r, c in rfs.items()) // sum(sizes[:j])) for j in range(1, n + 1))
    return lo, hi


def reach(st: State, lo: int, hi: int, order: Callable[[int, int], tuple]) -> None:
    """Moves bringing every target broker within lo..hi (a range racks allow, `narrowest`): first between racks, the
    fewest that bring every rack's total within lo..hi times its brokers (`_between`), each from the fullest broker
    of its rack holding such a partition to the emptiest of the other, then within racks, from brokers above hi to
    the emptiest of their rack and to brokers below lo from the fullest of theirs. Of the replicas a broker may give,
    the first by `order(partition, broker)`. Stops short where the move cap or disk space refuse a move."""
    racks = _racks(st)
    for _ in range(ROUNDS):
        pairs = _between(st, racks, lo, hi)
        if not pairs or not _cross(st, racks, pairs, order):
            break
    for members in racks.values():
        _within(st, members, lo, hi, order)


def _racks(st: State) -> dict[str | None, list[int]]:
    racks: dict[str | None, list[int]] = {}
    for b in st.targets:
        racks.setdefault(st.rack_of.get(b), []).append(b)
    return racks


Pairs = dict[frozenset, list[tuple[str | None, str | None]]]  # partitions' racks -> (rack left, rack taken) each


def _between(st: State, racks: dict[str | None, list[int]], lo: int, hi: int) -> Pairs:
    """Per set of racks partitions are on: the moves from a rack to another of the fewest such moves that bring every
    rack's total within lo..hi times its brokers, a least-cost flow over the sets and racks (each set's partitions
    keep their replica count, at most one in a rack; filling every rack's lower bound first, at a cost above any
    number of moves); empty where the racks are within their ranges already (or none such exists)."""
    classes = Counter(frozenset(st.rack_of.get(b) for b in r) for r in st.reps)
    held = Counter(st.rack_of.get(b) for r in st.reps for b in r)
    if all(lo * len(m) <= held[k] <= hi * len(m) for k, m in racks.items()):
        return {}
    net = Network()
    s, t = net.node(), net.node()
    node = {k: net.node() for k in racks}
    big = sum(held.values()) + 1
    floors = [net.arc(node[k], t, lo * len(m), 0) for k, m in racks.items()]
    for k, m in racks.items():
        net.arc(node[k], t, (hi - lo) * len(m), big)
    arcs: dict[frozenset, list[tuple[str | None, int]]] = {}
    for c, count in sorted(classes.items(), key=lambda kv: sorted(map(str, kv[0]))):
        u = net.node()
        net.arc(s, u, count * len(c))
        arcs[c] = [(k, net.arc(u, node[k], count, int(k not in c))) for k in racks]
    total = sum(held.values())
    if net.min_cost_flow(s, t, total) < total or any(net.cap[a] for a in floors):
        return {}  # no placement within the range (not where `narrowest` gives it)
    pairs: Pairs = {}
    for c, out in arcs.items():
        count = classes[c]
        left = [k for k, a in out if k in c for _ in range(count - net.cap[a ^ 1])]
        taken = [k for k, a in out if k not in c for _ in range(net.cap[a ^ 1])]
        if taken:
            pairs[c] = list(zip(left, taken))
    return pairs


def _cross(st: State, racks: dict[str | None, list[int]], pairs: Pairs, order: Callable[[int, int], tuple]) -> bool:
    """The moves `_between` gives, a partition at most once (one that must change two racks changes the second in
    the next pass): whether any was made."""
    rack = st.rack_of.get
    pool: dict[tuple[frozenset, int], list[int]] = {}  # (partition's racks, broker) -> partitions, last first
    for i, r in enumerate(st.reps):
        c = frozenset(map(rack, r))
        if c in pairs:
            for b in r:
                pool.setdefault((c, b), []).append(i)
    for key, parts in pool.items():
        parts.sort(key=lambda i: order(i, key[1]), reverse=True)
    moved: set[int] = set()
    for c in sorted(pairs, key=lambda c: sorted(map(str, c))):
        for x, y in pairs[c]:
            if not st.allowed():
                return bool(moved)
            _one_cross(st, racks[x], racks[y], pool, c, moved)
    return bool(moved)


def _one_cross(st: State, sources: list[int], dests: list[int], pool: dict, c: frozenset, moved: set[int]) -> bool:
    """A partition on racks `c` from the fullest broker of `sources` holding one not moved yet to the emptiest of
    `dests` that may take it: whether one moved."""
    for s in sorted(sources, key=lambda b: (-st.count[b], b)):
        parts = pool.get((c, s))
        while parts and (parts[-1] in moved or s not in st.reps[parts[-1]]):
            parts.pop()
        if not parts:
            continue
        i = parts[-1]
        for d in sorted(dests, key=lambda b: (st.count[b], b)):
            if st.can_move(i, s, d):
                parts.pop()
                moved.add(i)
                st.move(i, s, d)
                return True
    return False


def _within(st: State, members: list[int], lo: int, hi: int, order: Callable[[int, int], tuple]) -> None:
    """Within one rack (every move rack-safe: a partition has no other replica there): from brokers above hi to the
    emptiest while it is below hi, to brokers below lo from the fullest while it is above lo."""
    given: dict[int, list[int]] = {}  # broker -> its replicas it may give, last first

    def give(s: int, d: int) -> bool:
        if s not in given:
            given[s] = sorted(st.where[s], key=lambda i: order(i, s), reverse=True)
        parts = given[s]
        skipped: list[int] = []
        while parts:
            i = parts.pop()
            if s in st.reps[i] and st.can_move(i, s, d):
                st.move(i, s, d)
                parts.extend(reversed(skipped))
                return True
            if s in st.reps[i]:
                skipped.append(i)
        parts.extend(reversed(skipped))
        return False

    while True:
        top = max(members, key=lambda b: (st.count[b], -b))
        bottom = min(members, key=lambda b: (st.count[b], b))
        if st.count[top] > hi and st.count[bottom] < hi or st.count[bottom] < lo and st.count[top] > lo:
            if not st.allowed() or not give(top, bottom):
                return
            continue
        return
