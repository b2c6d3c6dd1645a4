"""What are the fewest moves to given replica counts and topic spreads, where racks of different sizes force them?

Where racks of different sizes force the replica counts and some topics wider than 1: the fewest moves to a
placement whose every broker holds lo..hi replicas and every topic stays within 1 where the topic goal balances it
(over all target brokers, or over each of the classes racks force it into: `geometry.forced_classes`), exactly,
as a minimum-cost flow over the partitions.

With at most one replica of a partition per rack (rack-safe, replication factor at most the racks), a move either
stays in its rack or takes the partition to a rack it lacks, so the placements are the integral flows of:

    partition p (its RF) -> (p, rack) (1) -> (topic, broker) (cost 0 where p was on the broker, else 1)
        -> broker (the topic's range there) -> sink (lo..hi replicas)

and the fewest moves is the least cost. A partition with one replica in each rack (RF = racks) keeps one in each, and
its replicas in a rack are interchangeable there: such partitions of a topic count as one node per rack, (topic,
rack), of supply their number (what each keeps is then chosen per broker, smallest first). Solved from the input
placement (every replica where it is, those on brokers outside the targets not yet placed) as a least-cost flow
(`flow.Network`) from the nodes above their range to those below: the few replicas the goals must move, not the
whole flow. Used for the printed lower bound (the least over every count range of that spread; topics the plan
left unmet within the spread they reached over all brokers), as a plan the count goal's own is compared with
(`balance`), and, with each topic a run of the goals left wider than 1 within the ranges it reached per broker, as
the fewest moves to the figures that run reached (`balance`'s `_refit`). Pure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Collection, Iterator, Mapping, Sequence

from planner.rebalance.flow import Network
from planner.rebalance.goals.geometry import RackLimits, forced_classes, rack_limits, uneven_racks
from planner.rebalance.goals.state import State

Wide = Mapping[int, Mapping[int, tuple[int, int]]]  # topic -> broker -> the fewest and most of it the broker may hold
# (topic, broker) -> (the floor and ceiling of the topic's even share there, the cost of a replica off it)
Shares = Mapping[tuple[int, int], tuple[tuple[int, int], int]]

# partitions (with a replica per rack, counted per topic and rack) times target brokers above which no flow is built
MOST_ARCS = 60_000


class _Network:
    """A `flow.Network` built from a placement: what each node holds that its arcs do not carry on yet (its excess;
    short of its demand where negative), routed at the least cost by `solve`."""

    def __init__(self) -> None:
        self.net = Network()
        self.excess: list[int] = []

    def node(self, excess: int = 0) -> int:
        self.excess.append(excess)
        return self.net.node()

    def arc(self, u: int, v: int, cap: int, cost: int, flow: int = 0) -> int:
        """An arc u -> v of capacity `cap` already carrying `flow` (taken from u's excess to v's); its index."""
        self.excess[u] -= flow
        self.excess[v] += flow
        return self.net.arc(u, v, cap, cost, flow)

    def flow(self, a: int) -> int:
        return self.net.flow(a)

    def bounded(self, u: int, v: int, lo: int, hi: int) -> None:
        """An arc u -> v of cost 0 that must carry lo..hi, carrying as much of u's excess as that range allows (u is
        left short where its excess is below lo)."""
        carried = min(max(self.excess[u], lo), hi)
        self.excess[u] -= lo
        self.excess[v] += lo
        self.arc(u, v, hi - lo, 0, carried - lo)

    def solve(self) -> bool:
        """Route every excess to a shortage at the least cost, through a source into every node with excess and a
        sink out of every node short (the arcs carry flow at cost 0 only, so what they carry is a least-cost flow):
        whether every excess found one."""
        net = self.net
        s, t = net.node(), net.node()
        need = 0
        for v, e in enumerate(self.excess):
            if e > 0:
                net.arc(s, v, e, 0)
                need += e
            elif e < 0:
                net.arc(v, t, -e, 0)
        return net.min_cost_flow(s, t, need) == need


@dataclass
class _Model:
    """The network of one count range, and how to read a placement back from its flow."""

    net: _Network = field(default_factory=_Network)
    # partitions that may change racks: (index, its (broker, arc) pairs)
    loose: list[tuple[int, list[tuple[int, int]]]] = field(default_factory=list)
    # a topic's partitions with a replica per rack, per rack: (topic, rack, (broker, arc keeping, arc taking) each)
    locked: list[tuple[int, str, list[tuple[int, int, int]]]] = field(default_factory=list)
    pinned: Mapping[int, Sequence[int]] = field(default_factory=dict)  # partitions held at these replica lists


def applies(st: State) -> bool:
    """Racks of different sizes, brokers balanced together (not every partition has one replica per rack), every
    partition rack-safe with at most one replica per rack, nothing fixed or cordoned, and not too large."""
    if st.fixed or st.closed or None not in st.groups or uneven_racks(st) is None:
        return False
    n, brokers = st.n_racks, len(st.targets)
    if (len(st.topic_names) * n) * brokers > MOST_ARCS or len(st.home) * brokers > MOST_ARCS * n:
        return False  # too large whatever the partitions (checked before a pass over them)
    rack = st.rack_of.get
    if any(len(r) > n or len({rack(b) for b in r}) < len(r) for r in st.home):
        return False
    loose = sum(1 for r in st.home if len(r) < n)
    return (loose + len(st.topic_names) * n) * brokers <= MOST_ARCS


def _build(
    st: State,
    lo: int,
    hi: int,
    topic_ranges: dict[tuple[int, int], tuple[int, int]],
    pinned: Mapping[int, Sequence[int]] | None = None,
    shares: Shares | None = None,
) -> _Model:
    m = _Model(pinned=pinned or {})
    net = m.net
    racks: dict[str, list[int]] = {}
    for b in st.targets:
        racks.setdefault(st.rack_of[b] or "", []).append(b)
    topics = len(st.topic_names)
    tb = {(t, b): net.node() for t in range(topics) for b in st.targets}
    held: dict[tuple[int, str], dict[int, int]] = {}  # (topic, rack) -> broker -> replicas there of locked partitions
    supply: dict[tuple[int, str], int] = {}
    for i, r in enumerate(st.home):
        t = st.topic_of[i]
        if i in m.pinned:  # its replicas where the list has them
            for b in m.pinned[i]:
                net.excess[tb[(t, b)]] += 1
            continue
        if _locked(st, r, racks):  # one replica per rack, for good
            for b in r:
                k = st.rack_of[b] or ""
                supply[(t, k)] = supply.get((t, k), 0) + 1
                if b in st.target_set:
                    held.setdefault((t, k), {})[b] = held.get((t, k), {}).get(b, 0) + 1
            continue
        p = net.node(len(r))
        arcs = []
        for members in racks.values():
            pk = net.node()
            net.arc(p, pk, 1, 0, sum(1 for b in members if b in r))
            for b in members:
                arcs.append((b, net.arc(pk, tb[(t, b)], 1, 0 if b in r else 1, int(b in r))))
        m.loose.append((i, arcs))
    for (t, k), count in sorted(supply.items()):
        node = net.node(count)
        mine = held.get((t, k), {})
        arcs3 = []
        for b in racks.get(k, ()):
            keep = mine.get(b, 0)
            a0 = net.arc(node, tb[(t, b)], keep, 0, keep)
            a1 = net.arc(node, tb[(t, b)], count, 1)
            arcs3.append((b, a0, a1))
        m.locked.append((t, k, arcs3))
    sink = net.node(-sum(len(r) for r in st.home))
    for b in st.targets:
        node = net.node()
        for t in range(topics):
            least, most = topic_ranges.get((t, b), (0, hi))
            share = shares.get((t, b)) if shares else None
            if share is None:
                net.bounded(tb[(t, b)], node, least, most)
                continue
            # each replica above the share's floor costs `weight`, above its ceiling twice that: over a topic's
            # fixed total, `weight` per replica off the share (above its ceiling or below its floor) and a constant
            (floor, ceiling), weight = share
            p1, p2 = (min(max(v, least), most) for v in (floor, ceiling))
            net.bounded(tb[(t, b)], node, least, p1)
            net.arc(tb[(t, b)], node, p2 - p1, weight)
            net.arc(tb[(t, b)], node, most - p2, 2 * weight)
        net.bounded(node, sink, lo, hi)
    return m


def topic_ranges(
    st: State,
    lo: int,
    hi: int,
    free: Mapping[int, int] | None = None,
    fixed: dict[tuple[int, frozenset[int]], int] | None = None,
    limits: RackLimits | None = None,
    wide: Wide | None = None,
) -> dict[tuple[int, int], tuple[int, int]]:
    """(topic, broker) -> the replicas the broker may hold in any placement where the topic is within 1 where the
    topic goal balances it (brokers holding lo..hi each): over all targets, or within each class racks force it into,
    whose total (a range where partitions may change racks) bounds it. A topic in `free` only within the spread it
    gives over all targets (of a total T over n brokers: ceil(T/n) - spread to floor(T/n) + spread each), one in
    `wide` within the ranges it gives. `limits`: `rack_limits` of the state, where several ranges are asked of it."""
    n = len(st.targets)
    totals = [0] * len(st.topic_names)
    for i, r in enumerate(st.home):
        totals[st.topic_of[i]] += len(r)
    forced = forced_classes(st, lo, hi, limits)
    out: dict[tuple[int, int], tuple[int, int]] = {}
    free, wide = free or {}, wide or {}
    for t, total in enumerate(totals):
        if t in free:
            least, most = max(0, -(-total // n) - free[t]), total // n + free[t]
            out.update(((t, b), (least, most)) for b in st.targets)
            continue
        if t in wide:
            out.update(((t, b), r) for b, r in wide[t].items())
            continue
        if t not in forced:
            for b in st.targets:
                out[(t, b)] = (total // n, -(-total // n))
            continue
        for members, least, most in forced[t]:
            size = len(members)
            if fixed and (t, members) in fixed:
                least = most = fixed[(t, members)]
            for b in members:
                out[(t, b)] = (least // size, -(-most // size))
    return out


def fewest(
    st: State,
    lo: int,
    hi: int,
    free: Mapping[int, int] | None = None,
    fixed: dict[tuple[int, frozenset[int]], int] | None = None,
    wide: Wide | None = None,
    pinned: Mapping[int, Sequence[int]] | None = None,
    shares: Shares | None = None,
) -> tuple[int, _Model] | None:
    """The fewest moves to such a placement (and its flow), or None where none exists. `fixed`: (topic, class) -> the
    replicas the class holds (else a range, where partitions may change racks); `wide` as in `topic_ranges`;
    `pinned`: partitions held at these replica lists; `shares`: (topic, broker) pairs whose replicas off the share
    given each cost as much (the least moves plus those costs)."""
    return _solved(st, _build(st, lo, hi, topic_ranges(st, lo, hi, free, fixed, wide=wide), pinned, shares))


def _solved(st: State, m: _Model) -> tuple[int, _Model] | None:
    """The moves of the least-cost flow of `m` (and `m`), or None where it has none."""
    if not m.net.solve():
        return None
    net = m.net
    cost = sum(net.flow(a) for i, arcs in m.loose for b, a in arcs if b not in st.home[i])
    cost += sum(net.flow(a1) for _, _, arcs in m.locked for _, _, a1 in arcs)
    cost += sum(len(set(r).difference(st.home[i])) for i, r in m.pinned.items())
    return cost, m


RANGES = 3  # count ranges the bound solves a flow for each; above, one flow over the box around all of them


def lower_bound(st: State, spread: int, free: Mapping[int, int] | None = None) -> int | None:
    """The fewest moves of any placement whose replica counts lie within `spread` of each other and whose topics are
    within 1 where the topic goal balances them (but those in `free`: within the spread it gives over all targets):
    the least of `fewest` over every count range of that
    spread that the racks' totals allow, or where more than `RANGES` do, one flow whose every range (each broker's
    count, each topic's count on each broker) spans those of all of them (a relaxation of each: a lower figure). None
    where it does not apply or no such placement exists."""
    if not applies(st):
        return None
    total = sum(len(r) for r in st.home)
    n = len(st.targets)
    fit = _TotalsFit(st, total)
    lows = [low for low in range(max(0, -(-total // n) - spread), total // n + 1) if fit(low, low + spread)]
    if len(lows) > RANGES:
        limits = rack_limits(st)
        boxes = [topic_ranges(st, low, low + spread, free, limits=limits) for low in lows]
        box = {k: (min(b[k][0] for b in boxes), max(b[k][1] for b in boxes)) for k in boxes[0]}
        found = _solved(st, _build(st, lows[0], lows[-1] + spread, box))
        return None if found is None else found[0]
    best = None
    for low in lows:
        found = fewest(st, low, low + spread, free)
        if found is not None and (best is None or found[0] < best):
            best = found[0]
    return best


class _TotalsFit:
    """Whether each rack's replicas (at least one of every partition of RF = racks, at most one of every partition)
    can lie within its brokers' lo..hi with the racks together holding `total` (what it counts, counted once)."""

    def __init__(self, st: State, total: int):
        self.total = total
        self.least = sum(1 for r in st.home if len(r) == st.n_racks)
        self.most = len(st.home)
        self.sizes: dict[str | None, int] = {}
        for b in st.targets:
            self.sizes[st.rack_of.get(b)] = self.sizes.get(st.rack_of.get(b), 0) + 1

    def __call__(self, lo: int, hi: int) -> bool:
        low = high = 0
        for m in self.sizes.values():
            a, z = max(m * lo, self.least), min(m * hi, self.most)
            if a > z:
                return False
            low, high = low + a, high + z
        return low <= self.total <= high


def placement(st: State, m: _Model, size: Callable[[int], int]) -> list[list[int]]:
    """The replica lists the flow `m` places: each partition's kept replicas where they were, its new ones in the
    places of those that left (those of partitions with a replica per rack chosen smallest first where the flow
    moves some of a topic's replicas in a rack, as `size` orders them)."""
    net = m.net
    out = [list(m.pinned.get(i, r)) for i, r in enumerate(st.home)]
    for i, arcs in m.loose:
        now = {b for b, a in arcs if net.flow(a)}
        _replace(out[i], now)
    on: dict[tuple[int, int], list[int]] = {}  # (topic, broker) -> locked partitions there
    off: dict[tuple[int, str], list[tuple[int, int]]] = {}  # (topic, rack) -> (locked partition, broker off target)
    racks = {st.rack_of[b] or "" for b in st.targets}
    locked = [i for i, r in enumerate(st.home) if _locked(st, r, racks) and i not in m.pinned]
    for i in locked:
        t = st.topic_of[i]
        for b in st.home[i]:
            if b in st.target_set:
                on.setdefault((t, b), []).append(i)
            else:
                off.setdefault((t, st.rack_of[b] or ""), []).append((i, b))
    for t, k, arcs3 in m.locked:
        moving = list(off.get((t, k), []))
        takers: list[int] = []
        for b, a0, a1 in arcs3:
            mine = sorted(on.get((t, b), []), key=lambda i: (size(i), i))
            moving += [(i, b) for i in mine[: len(mine) - net.flow(a0)]]
            takers += [b] * net.flow(a1)
        for (i, src), dst in zip(sorted(moving, key=lambda x: (size(x[0]), x[0])), takers):
            out[i][out[i].index(src)] = dst
    return out


def _locked(st: State, r: Sequence[int], racks: Collection[str]) -> bool:
    """A replica in each rack of the targets (RF = racks, rack-safe): it keeps one in each."""
    return len(r) == st.n_racks and all((st.rack_of[b] or "") in racks for b in r)


def _replace(reps: list[int], now: set[int]) -> None:
    added = sorted(now - set(reps))
    for pos, b in enumerate(reps):
        if b not in now:
            reps[pos] = added.pop(0)


def plan(
    st: State,
    lo: int,
    hi: int,
    wide: Wide | None = None,
    pinned: Mapping[int, Sequence[int]] | None = None,
    shares: Shares | None = None,
) -> list[list[int]] | None:
    """The replica lists of the fewest moves to brokers holding lo..hi replicas each and every topic within 1 where
    the topic goal balances it (`fewest`), a class whose total may vary held at the total the first flow gave it (so
    that it is within 1 there too: the first flow bounds it by its range only). Topics in `wide` within the ranges it
    gives each broker instead, partitions in `pinned` at the replica lists it gives. None where none is found."""
    wide = wide or {}
    found = fewest(st, lo, hi, wide=wide, pinned=pinned, shares=shares)
    if found is None:
        return None
    reps = placement(st, found[1], st.sz)
    held = Counter((st.topic_of[i], b) for i, r in enumerate(reps) for b in r)
    fixed = {
        (t, members): sum(held[(t, b)] for b in members)
        for t, classes in forced_classes(st, lo, hi).items()
        for members, least, most in classes
        if least < most and t not in wide
    }
    if fixed:
        again = fewest(st, lo, hi, fixed=fixed, wide=wide, pinned=pinned, shares=shares)
        if again is None:
            return None
        reps = placement(st, again[1], st.sz)
    return reps


def apply(st: State, reps: Sequence[Sequence[int]]) -> None:
    """Move the state's replicas to these lists (as sets: a replica that comes takes the place of one that leaves)."""
    for i, want in enumerate(reps):
        now = st.reps[i]
        wanted = set(want)
        if set(now) == wanted:
            continue
        coming = sorted(wanted.difference(now))
        for b in [b for b in now if b not in wanted]:
            st.move(i, b, coming.pop(0))


def level_bytes(st: State, limit: float, steps: int = 1000) -> None:
    """Bytes above `limit` on a broker brought down by exchanges that copy no more replicas and keep every broker's
    replicas of every topic (so no earlier goal moves): a replica the plan moved to the heavy broker goes back home
    while a smaller one of its topic goes from there instead, or swaps places with a smaller one of its topic that the
    plan moved elsewhere; a replica the plan moved off the heavy broker comes back while a larger one of its topic
    goes in its place. The exchange that lowers the bytes above the limit the most first (then the fewest bytes
    copied), the heaviest broker first, while any does."""
    for _ in range(steps):
        heavy = [b for b in st.targets if st.bytes[b] > limit]
        if not heavy:
            return
        found = None
        for h in sorted(heavy, key=lambda b: (-st.bytes[b], b)):
            found = _best_exchange(st, h, limit)
            if found is not None:
                break
        if found is None:
            return
        for i, src, dst in found:
            st.move(i, src, dst)


def _best_exchange(st: State, h: int, limit: float) -> list[tuple[int, int, int]] | None:
    best: tuple[tuple[float, int], list[tuple[int, int, int]]] | None = None
    for changes in _exchanges(st, h):
        delta: dict[int, int] = {}
        copied = 0
        for i, src, dst in changes:
            delta[src] = delta.get(src, 0) - st.sz(i)
            delta[dst] = delta.get(dst, 0) + st.sz(i)
            copied += st.sz(i) * ((dst not in st.home[i]) - (src not in st.home[i]))
        over = sum(max(0.0, st.bytes[b] + d - limit) - max(0.0, st.bytes[b] - limit) for b, d in delta.items())
        if over < 0 and (best is None or (over, copied) < best[0]):
            best = ((over, copied), changes)
    return None if best is None else best[1]


def _exchanges(st: State, h: int) -> Iterator[list[tuple[int, int, int]]]:
    """The exchanges `level_bytes` weighs for heavy broker h, each two moves of replicas of one topic."""
    for i in sorted(st.foreign[h]):  # moved to h by the plan
        yield from _homeward(st, h, i)
        yield from _traded(st, h, i)
    for i in sorted(st.departed[h]):  # moved off h by the plan: back, a larger one of its topic in its place
        t = st.topic_of[i]
        for d in [b for b in st.reps[i] if b not in st.home[i]]:
            for j in _of_topic(st, h, t):
                if st.sz(j) > st.sz(i) and h in st.home[j] and st.can_move(i, d, h) and st.can_move(j, h, d):
                    yield [(i, d, h), (j, h, d)]


def _homeward(st: State, h: int, i: int) -> Iterator[list[tuple[int, int, int]]]:
    """Replica i, moved to h, back home, and a smaller one of its topic from there to h instead."""
    for src in st.home[i]:
        if src in st.target_set and src not in st.reps[i]:
            for j in _of_topic(st, src, st.topic_of[i]):
                if j != i and st.sz(j) < st.sz(i) and src in st.home[j]:
                    if st.can_move(j, src, h) and st.can_move(i, h, src):
                        yield [(i, h, src), (j, src, h)]


def _traded(st: State, h: int, i: int) -> Iterator[list[tuple[int, int, int]]]:
    """Replica i, moved to h, swapping places with a smaller one of its topic that the plan moved to another broker."""
    t = st.topic_of[i]
    for x in st.targets:
        if x != h:
            for j in sorted(st.foreign[x]):
                if st.topic_of[j] == t and st.sz(j) < st.sz(i) and st.can_move(i, h, x) and st.can_move(j, x, h):
                    yield [(i, h, x), (j, x, h)]


def _of_topic(st: State, b: int, t: int) -> list[int]:
    """Broker b's replicas of topic t, by partition."""
    return sorted(j for j in st.where[b] if st.topic_of[j] == t)
