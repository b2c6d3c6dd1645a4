"""How good a placement is, and what a plan costs: the figures operators compare plans by. Pure.

`plan_metrics(before, after, sizes)` scores any tool's plan (ours, or a peer's applied to the same cluster) with the
same code: replica moves and bytes moved, then for the cluster before and after the plan, over the target brokers:
replica spread, preferred-leader spread, the largest per-topic replica and leader spread and how many topics exceed
1, the internal topics' leader spread, bytes max/mean and min/mean, rack-unsafe partitions.

A spread is max − min over the target brokers (a broker holding nothing counts as 0). Sizes: bytes on one replica
of a partition; partitions without a known size count as unknown (never as 0 B): they add nothing to the byte
figures and are counted apart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import chain
from typing import Any, Iterable, Iterator, Mapping, Sequence

from planner.model import INTERNAL_TOPICS, Cluster, Partition, Topic, TopicPartition
from planner.rebalance.moves import Plan, rack_count, rack_safe

Sizes = Mapping[TopicPartition, int]


@dataclass(frozen=True)
class PlacementMetrics:
    """Figures of one placement over the target brokers."""

    replica_spread: int
    leader_spread: int
    topic_replica_spread: int  # the largest per-topic replica spread
    topics_replica_spread_over_1: int  # topics whose replica spread exceeds 1
    topic_leader_spread: int  # the largest per-topic preferred-leader spread
    topics_leader_spread_over_1: int
    internal_leader_spread: int | None  # largest leader spread of __consumer_offsets / __transaction_state; None: none
    bytes_max_over_mean: float | None  # largest broker's bytes / mean bytes; None when no size is known
    bytes_spread: int | None  # max − min bytes
    rack_unsafe: int  # partitions with fewer distinct racks than min(RF, racks)
    bytes_min_over_mean: float | None = None  # smallest broker's bytes / mean bytes; None when no size is known


@dataclass(frozen=True)
class PlanMetrics:
    """A plan's cost (replica moves, bytes moved) and the placement before and after it."""

    replica_moves: int  # replicas copied: brokers in the new list that are not in the old one
    bytes_moved: int | None  # sum of known sizes over copied replicas; None when no size is known
    unknown_size_moves: int  # copied replicas of partitions whose size is unknown (not in bytes_moved)
    before: PlacementMetrics
    after: PlacementMetrics
    brokers: tuple[int, ...]  # the target brokers the spreads are taken over

    def as_dict(self) -> dict:
        return asdict(self)


def _spread(values: Iterable[int]) -> int:
    v = list(values)
    return max(v) - min(v) if v else 0


@dataclass
class Tally:
    """One pass over a placement: per broker (every broker of the cluster, and any other holding a replica) its
    replicas, preferred leaders and known bytes; whether any size is known; the rack-unsafe partitions; per topic its
    replica and preferred-leader spread over the target brokers (`members`)."""

    members: frozenset[int]
    replicas: dict[int, int]
    leaders: dict[int, int]
    data: dict[int, int]
    known: bool = False
    unsafe: int = 0
    topic_replica: dict[str, int] = field(default_factory=dict)
    topic_leader: dict[str, int] = field(default_factory=dict)

    def count(self, topic: Topic, sizes: Sizes | None, rack_of: Mapping[int, str | None], n_racks: int) -> None:
        """Count every partition of `topic`, and its spreads."""
        members, replicas, leaders, data = self.members, self.replicas, self.leaders, self.data
        count: dict[int, int] = {}
        lead: dict[int, int] = {}
        for p in topic.partitions:
            size = p.size if sizes is None else sizes.get(p.tp)
            self.known = self.known or size is not None
            r = p.replicas
            if r:
                leaders[r[0]] = leaders.get(r[0], 0) + 1
                if r[0] in members:
                    lead[r[0]] = lead.get(r[0], 0) + 1
            for b in r:
                replicas[b] = replicas.get(b, 0) + 1
                data[b] = data.get(b, 0) + (size or 0)
                if b in members:
                    count[b] = count.get(b, 0) + 1
            if not rack_safe(r, rack_of, n_racks):
                self.unsafe += 1
        self.topic_replica[topic.name] = _topic_spread(count, len(members))
        self.topic_leader[topic.name] = _topic_spread(lead, len(members))


def _topic_spread(count: dict[int, int], members: int) -> int:
    if not count:
        return 0
    return max(count.values()) - (min(count.values()) if len(count) == members else 0)


def _size_of(sizes: Sizes | None, p: Partition) -> int | None:
    if sizes is None:
        return p.size
    return sizes.get(p.tp)


def _racks(cluster: Cluster, brokers: Sequence[int]) -> tuple[dict, int]:
    return cluster.rack_of(), rack_count(cluster, brokers)


def tally(cluster: Cluster, brokers: Sequence[int], sizes: Sizes | None = None) -> Tally:
    """The `Tally` of `cluster`'s placement over `brokers`; `sizes` default to the partitions' own sizes."""
    ids = cluster.broker_ids
    t = Tally(frozenset(brokers), dict.fromkeys(ids, 0), dict.fromkeys(ids, 0), dict.fromkeys(ids, 0))
    rack_of, n_racks = _racks(cluster, brokers)
    for topic in cluster.topics:
        t.count(topic, sizes, rack_of, n_racks)
    return t


def metrics_of(t: Tally, brokers: Sequence[int]) -> PlacementMetrics:
    """The `PlacementMetrics` of a tally over `brokers` (those it was taken over)."""
    replicas = {b: t.replicas.get(b, 0) for b in brokers}
    lead = {b: t.leaders.get(b, 0) for b in brokers}
    data = {b: t.data.get(b, 0) for b in brokers}
    internal = [s for name, s in t.topic_leader.items() if name in INTERNAL_TOPICS]
    mean = sum(data.values()) / len(data) if data else 0
    return PlacementMetrics(
        replica_spread=_spread(replicas.values()),
        leader_spread=_spread(lead.values()),
        topic_replica_spread=max(t.topic_replica.values(), default=0),
        topics_replica_spread_over_1=sum(1 for s in t.topic_replica.values() if s > 1),
        topic_leader_spread=max(t.topic_leader.values(), default=0),
        topics_leader_spread_over_1=sum(1 for s in t.topic_leader.values() if s > 1),
        internal_leader_spread=max(internal) if internal else None,
        bytes_max_over_mean=(max(data.values()) / mean if mean else 1.0) if t.known and data else None,
        bytes_spread=_spread(data.values()) if t.known else None,
        rack_unsafe=t.unsafe,
        bytes_min_over_mean=(min(data.values()) / mean if mean else 1.0) if t.known and data else None,
    )


def placement_metrics(cluster: Cluster, brokers: Sequence[int], sizes: Sizes | None = None) -> PlacementMetrics:
    """The figures of `cluster`'s placement over `brokers`; `sizes` default to the partitions' own sizes."""
    return metrics_of(tally(cluster, brokers, sizes), brokers)


def moved(before: Cluster, after: Cluster, sizes: Sizes) -> tuple[int, int, int]:
    """(replicas copied, their bytes where the size is known, copied replicas whose size is unknown)."""
    old = before.assignment()
    moves = unknown = data = 0
    for p in after.partitions():
        new = len(set(p.replicas).difference(old.get(p.tp, ())))
        moves += new
        size = sizes.get(p.tp)
        if size is None:
            unknown += new
        else:
            data += new * size
    return moves, data, unknown


def score(
    before: Cluster, after: Cluster, sizes: Sizes | None = None, brokers: Sequence[int] | None = None
) -> tuple[PlanMetrics, Tally, Tally]:
    """`plan_metrics`, and the tallies of the placements before and after over the same brokers."""
    if brokers is None:
        holds = {b for p in after.partitions() for b in p.replicas}
        held = {b for p in before.partitions() for b in p.replicas}
        brokers = sorted(b for b in after.online_ids if b in holds or b not in held)
    targets = tuple(sorted(brokers))
    if sizes is None:
        sizes = {p.tp: p.size for p in before.partitions() if p.size is not None}
    known = bool(sizes)
    moves, data, unknown = moved(before, after, sizes)
    t0, t1 = tally(before, targets, sizes), tally(after, targets, sizes)
    return _plan_metrics((moves, data, unknown), known, t0, t1, targets), t0, t1


def _plan_metrics(
    copied: tuple[int, int, int], known: bool, t0: Tally, t1: Tally, targets: tuple[int, ...]
) -> PlanMetrics:
    """The figures of a plan from its (replica moves, bytes moved, moves of unknown size) and its tallies before and
    after; `known`: some size is known (else no bytes figure)."""
    moves, data, unknown = copied
    return PlanMetrics(
        replica_moves=moves,
        bytes_moved=data if known else None,
        unknown_size_moves=unknown if known else 0,
        before=metrics_of(t0, targets),
        after=metrics_of(t1, targets),
        brokers=targets,
    )


ARRAYS_FROM = 20_000  # partitions from which plan_score counts over NumPy arrays (below: importing it costs more)


def plan_score(plan: Plan, arrays: bool | None = None) -> tuple[PlanMetrics, Tally, Tally]:
    """`score(plan.before, plan.after, brokers=plan.brokers or every broker)` (the figures a plan summary shows).

    With `arrays` (default: from `ARRAYS_FROM` partitions), without building the cluster after the plan: the replica
    lists before and after, each tallied at once over arrays (`_tally_lists`), and the replicas copied counted in the
    same pass that lays out the lists after."""
    before = plan.before
    targets = tuple(sorted(plan.brokers or before.broker_ids))
    parts = list(before.partitions())
    if not (len(parts) >= ARRAYS_FROM if arrays is None else arrays):
        return score(before, plan.after, brokers=targets)
    home = [p.replicas for p in parts]
    sizes = [p.size for p in parts]
    after = list(home)
    moves = data = unknown = 0
    start = dict(_topic_starts(before))
    for tp, new in plan.proposed.items():
        at = start.get(tp.topic)
        if at is None or not 0 <= tp.partition < at[1]:
            continue  # not a partition of the cluster: `Cluster.with_assignment` leaves it out
        i = at[0] + tp.partition
        new = tuple(new)
        if new == home[i]:
            continue
        after[i] = new
        copies = len(set(new).difference(home[i]))
        moves += copies
        size = sizes[i]
        if size is None:
            unknown += copies
        else:
            data += copies * size
    t0, t1 = _tally_lists(before, home, sizes, targets), _tally_lists(before, after, sizes, targets)
    if t0 is None or t1 is None:  # sizes beyond 64-bit sums: the exact pass over Python ints
        return score(before, plan.after, brokers=targets)
    known = any(s is not None for s in sizes)
    return _plan_metrics((moves, data, unknown), known, t0, t1, targets), t0, t1


def _topic_starts(cluster: Cluster) -> Iterator[tuple[str, tuple[int, int]]]:
    """Each topic's name, (index of its first partition in `cluster.partitions()`, its partition count)."""
    at = 0
    for t in cluster.topics:
        yield t.name, (at, len(t.partitions))
        at += len(t.partitions)


def _tally_lists(
    cluster: Cluster, reps: Sequence[tuple[int, ...]], sizes: Sequence[int | None], brokers: Sequence[int]
) -> Tally | None:
    """`tally` of `cluster` with `reps` as the replica lists of its partitions (in `cluster.partitions()` order) and
    `sizes` as their sizes, counted over NumPy arrays; None when the byte sums could leave 64 bits."""
    import numpy as np

    lens = np.fromiter(map(len, reps), np.int64, len(reps))
    flat = np.fromiter(chain.from_iterable(reps), np.int64, int(lens.sum()))
    try:
        weight = np.fromiter((s or 0 for s in sizes), np.int64, len(sizes))
    except OverflowError:
        return None
    ids, dense = _dense(np, cluster.broker_ids, flat)
    has = lens > 0
    heads = dense[(np.cumsum(lens) - lens)[has]]
    count = np.bincount(dense, minlength=len(ids))
    if weight.size and int(weight.max()) * int(count.max(initial=0)) >= 2**63:
        return None
    data = np.zeros(len(ids), np.int64)
    np.add.at(data, dense, np.repeat(weight, lens))
    keys = ids.tolist()
    t = Tally(
        frozenset(brokers),
        dict(zip(keys, count.tolist())),
        dict(zip(keys, np.bincount(heads, minlength=len(ids)).tolist())),
        dict(zip(keys, data.tolist())),
        any(s is not None for s in sizes),
    )
    topic = np.repeat(np.arange(len(cluster.topics)), [len(x.partitions) for x in cluster.topics])
    member = np.isin(ids, np.fromiter(t.members, np.int64, len(t.members)))
    names = [x.name for x in cluster.topics]
    shape = (len(names), len(ids), len(t.members))
    inside = member[dense]
    t.topic_replica = dict(zip(names, _topic_spreads(np, np.repeat(topic, lens)[inside], dense[inside], *shape)))
    inside = member[heads]
    t.topic_leader = dict(zip(names, _topic_spreads(np, topic[has][inside], heads[inside], *shape)))
    t.unsafe = _unsafe(np, cluster, brokers, ids, dense, lens)
    return t


def _dense(np: Any, known: Sequence[int], flat: Any) -> tuple[Any, Any]:
    """(the sorted ids of the known brokers and of any other in `flat`, each entry of `flat` as an index there)."""
    ids = np.asarray(sorted(known), np.int64)
    if ids.size and flat.size and 0 <= flat.min() and flat.max() <= ids[-1] < 1 << 24:
        index = np.full(int(ids[-1]) + 1, -1, np.int64)
        index[ids] = np.arange(ids.size)
        dense = index[flat]
        if dense.min() >= 0:  # every replica on a known broker
            return ids, dense
    ids = np.unique(np.concatenate([ids, flat]))
    return ids, np.searchsorted(ids, flat)


def _topic_spreads(np: Any, topic: Any, broker: Any, topics: int, brokers: int, members: int) -> list[int]:
    """Per topic, `_topic_spread` of its replicas on the member brokers (`topic`, `broker`: one entry per replica,
    `broker` a dense index below `brokers`)."""
    out = np.zeros(topics, np.int64)
    if topic.size:
        keys = np.sort(topic * brokers + broker)
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])  # one run per (topic, broker)
        count = np.diff(np.r_[first, keys.size])
        held = keys[first] // brokers
        start = np.flatnonzero(np.r_[True, held[1:] != held[:-1]])  # one run per topic
        high, low = np.maximum.reduceat(count, start), np.minimum.reduceat(count, start)
        n = np.diff(np.r_[start, held.size])
        out[held[start]] = high - np.where(n == members, low, 0)
    return out.tolist()


def _unsafe(np: Any, cluster: Cluster, brokers: Sequence[int], ids: Any, dense: Any, lens: Any) -> int:
    """Partitions with fewer distinct racks than min(RF, racks) (`moves.rack_safe`), per replication factor."""
    rack_of, n_racks = _racks(cluster, brokers)
    if not n_racks:
        return 0
    codes: dict[str | None, int] = {}
    rack = np.asarray([codes.setdefault(rack_of.get(b), len(codes)) for b in ids.tolist()], np.int64)[dense]
    starts = np.cumsum(lens) - lens
    unsafe = 0
    for k in np.unique(lens[lens > 1]).tolist():
        rows = np.sort(rack[starts[lens == k][:, None] + np.arange(k)], axis=1)
        distinct = 1 + (rows[:, 1:] != rows[:, :-1]).sum(axis=1)
        unsafe += int((distinct < min(k, n_racks)).sum())
    return unsafe


def plan_metrics(
    before: Cluster, after: Cluster, sizes: Sizes | None = None, brokers: Sequence[int] | None = None
) -> PlanMetrics:
    """Score the plan taking `before` to `after` (same topics and partitions).

    `sizes`: bytes per partition (one replica); default: the partitions' `size` in `before`. `brokers`: the target
    brokers the spreads are taken over; default: the online brokers of `after` that hold a replica after the plan or
    are empty in both (so a decommissioned broker, emptied by the plan, is left out).
    """
    return score(before, after, sizes, brokers)[0]
