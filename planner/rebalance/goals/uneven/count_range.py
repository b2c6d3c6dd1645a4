"""What is the narrowest count range racks of different sizes allow, and which moves reach it?

Where racks of different sizes keep the replica counts from within 1: the narrowest range of replicas per target
broker that racks allow (`narrowest`), moves that bring every broker into it (`reach`), for the count goal
(`replica_count`), and the printed lower bound where `rack_flow` is too large (`lower_bound`). Pure.

It applies where brokers are balanced together over racks of different sizes and every partition is rack-safe with at
most one replica per rack, all on target brokers, none fixed and no broker closed (`applies`). Rack safety then binds
only what each rack holds: a partition's replica in a rack may be on any broker of it (the partition has no other
there), so a count range lo..hi is reachable exactly when the racks' totals can lie within lo..hi times their brokers
(a rack's total splits among its brokers within lo..hi).
"""

from __future__ import annotations

import functools
import heapq
from collections import Counter
from typing import Callable, Sequence

from planner.rebalance.flow import Network
from planner.rebalance.goals.geometry import uneven_racks
from planner.rebalance.goals.state import State
from planner.rebalance.moves import excess

ROUNDS = 3  # passes of `reach` over the racks' totals (a partition moves at most once a pass)


def applies(st: State, lists: Sequence[Sequence[int]] | None = None) -> bool:
    """Brokers balanced together over racks of different sizes, nothing fixed or closed, and every partition with at
    most one replica per rack (so at most as many replicas as racks) in the state's replica lists, every replica on a
    target broker (or in `lists`, replicas anywhere)."""
    if st.fixed or st.closed or None not in st.groups or uneven_racks(st) is None:
        return False
    rack, targets = st.rack_of.get, st.target_set
    if lists is not None:
        return all(len({rack(b) for b in r}) == len(r) for r in lists)
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


BOUND_RANGES = 64  # count ranges `lower_bound` solves the flow between racks for; above, the counts alone


def lower_bound(st: State, spread: int) -> int | None:
    """The fewest moves any rack-safe plan bringing the counts within `spread` of each other needs, at least, from the
    input (`st.home`, where `applies` to it): over every count range lo..lo + spread racks allow (`narrowest`), the
    least of the most of the replicas above its top (on target brokers, and every replica on other brokers), the
    replicas missing below its bottom, and the fewest moves between racks that bring every rack's total into it
    (`_between`, for up to `BOUND_RANGES` ranges). None where it does not apply or no range of that spread exists.
    Where `rack_flow` does not apply (too large), the bound where racks keep the counts wider than 1."""
    if not applies(st, st.home):
        return None
    low, high = narrowest(st)
    lows = range(max(0, high - spread), low + 1)
    if not lows:
        return None
    racks = _racks(st)
    held = Counter(b for r in st.home for b in r)
    best = None
    for lo in lows:
        hi = lo + spread
        above = excess(held, dict.fromkeys(st.targets, hi))  # every replica off a broker outside the targets
        below = sum(max(0, lo - held[b]) for b in st.targets)
        most = max(above, below)
        if len(lows) <= BOUND_RANGES:
            most = max(most, sum(map(len, _between(st, racks, lo, hi, st.home).values())))
        best = most if best is None else min(best, most)
    return best


def reach(st: State, lo: int, hi: int, order: Callable[[int, int], tuple]) -> None:
    """Moves bringing every target broker within lo..hi (a range racks allow, `narrowest`): first between racks, the
    fewest that bring every rack's total within lo..hi times its brokers (`_between`), each from the fullest broker
    of its rack holding such a partition to the emptiest of the other, then within racks, from brokers above hi to
    the emptiest of their rack and to brokers below lo from the fullest of theirs. Of the replicas a broker may give,
    the first by `order(partition, broker)`. Stops short where the move cap or disk space refuse a move."""
    racks = _racks(st)
    for _ in range(ROUNDS):
        pairs = _between(st, racks, lo, hi, st.reps)
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


def _between(st: State, racks: dict[str | None, list[int]], lo: int, hi: int, lists: Sequence[Sequence[int]]) -> Pairs:
    """Per set of racks partitions are on (in these replica lists): the moves from a rack to another of the fewest
    such moves that bring every rack's total within lo..hi times its brokers, a least-cost flow over the sets and
    racks (each set's partitions keep their replica count, at most one in a rack; filling every rack's lower bound
    first, at a cost above any number of moves); empty where the racks are within their ranges already (or none such
    exists)."""
    classes = Counter(frozenset(st.rack_of.get(b) for b in r) for r in lists)
    held = Counter(st.rack_of.get(b) for r in lists for b in r)
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
    if net.min_cost_flow(s, t, total) < total or any(net.room(a) for a in floors):
        return {}  # no placement within the range (not where `narrowest` gives it)
    pairs: Pairs = {}
    for c, out in arcs.items():
        count = classes[c]
        left = [k for k, a in out if k in c for _ in range(count - net.flow(a))]
        taken = [k for k, a in out if k not in c for _ in range(net.flow(a))]
        if taken:
            pairs[c] = list(zip(left, taken))
    return pairs


def _cross(st: State, racks: dict[str | None, list[int]], pairs: Pairs, order: Callable[[int, int], tuple]) -> bool:
    """The moves `_between` gives, a partition at most once (one that must change two racks changes the second in
    the next pass): whether any was made."""
    rack = st.rack_of.get
    pool: dict[tuple[frozenset, int], list[tuple[tuple, int]]] = {}  # (partition's racks, broker) -> `_first` heap
    for i, r in enumerate(st.reps):
        c = frozenset(map(rack, r))
        if c in pairs:
            for b in r:
                pool.setdefault((c, b), []).append((order(i, b), i))
    for heap in pool.values():
        heapq.heapify(heap)
    moved: set[int] = set()
    for c in sorted(pairs, key=lambda c: sorted(map(str, c))):
        for x, y in pairs[c]:
            if not st.allowed():
                return bool(moved)
            _one_cross(st, racks[x], racks[y], pool, c, moved, order)
    return bool(moved)


def _one_cross(
    st: State, sources: list[int], dests: list[int], pool: dict, c: frozenset, moved: set[int], order: Callable
) -> bool:
    """A partition on racks `c` not moved yet from the fullest broker of `sources` holding one to the emptiest of
    `dests` that may take it, the first by `order`: whether one moved."""
    by_count = sorted(dests, key=lambda b: (st.count[b], b))
    for s in sorted(sources, key=lambda b: (-st.count[b], b)):
        heap = pool.get((c, s))
        if not heap:
            continue
        found = _first(
            heap, s, order, functools.partial(_unmoved, st, moved, s), functools.partial(_dest, st, s, by_count)
        )
        if found is not None:
            i, d = found
            moved.add(i)
            st.move(i, s, d)
            return True
    return False


def _unmoved(st: State, moved: set[int], s: int, i: int) -> bool:
    return i not in moved and s in st.reps[i]


def _dest(st: State, s: int, dests: list[int], i: int) -> int | None:
    """The first of `dests` that may take partition i's replica on s, or None."""
    return next((d for d in dests if st.can_move(i, s, d)), None)


def _first(
    heap: list[tuple[tuple, int]],
    b: int,
    order: Callable[[int, int], tuple],
    valid: Callable[[int], bool],
    where: Callable[[int], int | None],
) -> tuple[int, int] | None:
    """The first partition of `heap` (a lazy heap of (order(i, b), i): keys re-read as they come up, since `order`
    may change with the moves) still `valid` with a broker to go to (`where`), and that broker; popped, the others
    passed over kept."""
    kept = []
    found = None
    while heap:
        key, i = heapq.heappop(heap)
        if not valid(i):
            continue
        now = order(i, b)
        if now != key:
            heapq.heappush(heap, (now, i))
            continue
        d = where(i)
        if d is not None:
            found = (i, d)
            break
        kept.append((key, i))
    for item in kept:
        heapq.heappush(heap, item)
    return found


def _within(st: State, members: list[int], lo: int, hi: int, order: Callable[[int, int], tuple]) -> None:
    """Within one rack (every move rack-safe: a partition has no other replica there): from brokers above hi to the
    emptiest while it is below hi, to brokers below lo from the fullest while it is above lo."""
    given: dict[int, list[tuple[tuple, int]]] = {}  # broker -> `_first` heap of its replicas

    def give(s: int, d: int) -> bool:
        if s not in given:
            given[s] = [(order(i, s), i) for i in st.where[s]]
            heapq.heapify(given[s])
        found = _first(given[s], s, order, lambda i: s in st.reps[i], lambda i: d if st.can_move(i, s, d) else None)
        if found is None:
            return False
        st.move(found[0], s, d)
        return True

    while True:
        top = max(members, key=lambda b: (st.count[b], -b))
        bottom = min(members, key=lambda b: (st.count[b], b))
        if st.count[top] > hi and st.count[bottom] < hi or st.count[bottom] < lo and st.count[top] > lo:
            if not st.allowed() or not give(top, bottom):
                return
            continue
        return
