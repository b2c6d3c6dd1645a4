"""How good a placement is, and what a plan costs: the figures operators compare plans by. Pure.

`plan_metrics(before, after, sizes)` scores any tool's plan (ours, or a peer's applied to the same cluster) with the
same code: replica moves and bytes moved, then for the cluster before and after the plan, over the target brokers:
replica spread, preferred-leader spread, the largest per-topic replica and leader spread and how many topics exceed
1, the internal topics' leader spread, bytes max/mean, rack-unsafe partitions.

A spread is max − min over the target brokers (a broker holding nothing counts as 0). Sizes: bytes on one replica
of a partition; partitions without a known size count as unknown (never as 0 B): they add nothing to the byte
figures and are counted apart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Sequence

from planner.model import INTERNAL_TOPICS, Cluster, Partition, TopicPartition
from planner.rebalance.moves import rack_count, rack_safe

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


def _topic_spreads(cluster: Cluster, brokers: Sequence[int], leaders: bool) -> dict[str, int]:
    """Per topic, its spread over `brokers`: counted on the brokers holding it (the others hold 0)."""
    members = set(brokers)
    out = {}
    for t in cluster.topics:
        count: dict[int, int] = {}
        for p in t.partitions:
            for b in p.replicas[:1] if leaders else p.replicas:
                if b in members:
                    count[b] = count.get(b, 0) + 1
        low = min(count.values()) if len(count) == len(members) else 0
        out[t.name] = max(count.values()) - low if count else 0
    return out


def _size_of(sizes: Sizes | None, p: Partition) -> int | None:
    if sizes is None:
        return p.size
    return sizes.get(p.tp)


def _per_broker(cluster: Cluster, brokers: Sequence[int], sizes: Sizes | None) -> tuple[dict, dict, dict, bool]:
    """(replicas, preferred leaders, known bytes) per broker of `brokers`, and whether any size is known."""
    replicas = {b: 0 for b in brokers}
    lead = {b: 0 for b in brokers}
    data = {b: 0 for b in brokers}
    known = False
    for p in cluster.partitions():
        size = _size_of(sizes, p)
        known = known or size is not None
        if p.replicas and p.replicas[0] in lead:
            lead[p.replicas[0]] += 1
        for b in p.replicas:
            if b in replicas:
                replicas[b] += 1
                data[b] += size or 0
    return replicas, lead, data, known


def placement_metrics(cluster: Cluster, brokers: Sequence[int], sizes: Sizes | None = None) -> PlacementMetrics:
    """The figures of `cluster`'s placement over `brokers`; `sizes` default to the partitions' own sizes."""
    replicas, lead, data, known = _per_broker(cluster, brokers, sizes)
    rack_of = cluster.rack_of()
    n_racks = rack_count(cluster, brokers)
    unsafe = sum(1 for p in cluster.partitions() if not rack_safe(p.replicas, rack_of, n_racks))
    topic_rep = _topic_spreads(cluster, brokers, leaders=False)
    topic_lead = _topic_spreads(cluster, brokers, leaders=True)
    internal = [s for name, s in topic_lead.items() if name in INTERNAL_TOPICS]
    mean = sum(data.values()) / len(data) if data else 0
    return PlacementMetrics(
        replica_spread=_spread(replicas.values()),
        leader_spread=_spread(lead.values()),
        topic_replica_spread=max(topic_rep.values(), default=0),
        topics_replica_spread_over_1=sum(1 for s in topic_rep.values() if s > 1),
        topic_leader_spread=max(topic_lead.values(), default=0),
        topics_leader_spread_over_1=sum(1 for s in topic_lead.values() if s > 1),
        internal_leader_spread=max(internal) if internal else None,
        bytes_max_over_mean=(max(data.values()) / mean if mean else 1.0) if known and data else None,
        bytes_spread=_spread(data.values()) if known else None,
        rack_unsafe=unsafe,
    )


def moved(before: Cluster, after: Cluster, sizes: Sizes) -> tuple[int, int, int]:
    """(replicas copied, their bytes where the size is known, copied replicas whose size is unknown)."""
    old = before.assignment()
    moves = unknown = data = 0
    for p in after.partitions():
        new = len(set(p.replicas) - set(old.get(p.tp, ())))
        moves += new
        size = sizes.get(p.tp)
        if size is None:
            unknown += new
        else:
            data += new * size
    return moves, data, unknown


def plan_metrics(
    before: Cluster, after: Cluster, sizes: Sizes | None = None, brokers: Sequence[int] | None = None
) -> PlanMetrics:
    """Score the plan taking `before` to `after` (same topics and partitions).

    `sizes`: bytes per partition (one replica); default: the partitions' `size` in `before`. `brokers`: the target
    brokers the spreads are taken over; default: the online brokers of `after` that hold a replica after the plan or
    are empty in both (so a decommissioned broker, emptied by the plan, is left out).
    """
    if brokers is None:
        holds = {b for p in after.partitions() for b in p.replicas}
        held = {b for p in before.partitions() for b in p.replicas}
        brokers = sorted(b for b in after.online_ids if b in holds or b not in held)
    targets = tuple(sorted(brokers))
    if sizes is None:
        sizes = {p.tp: p.size for p in before.partitions() if p.size is not None}
    known = bool(sizes)
    moves, data, unknown = moved(before, after, sizes)
    return PlanMetrics(
        replica_moves=moves,
        bytes_moved=data if known else None,
        unknown_size_moves=unknown if known else 0,
        before=placement_metrics(before, targets, sizes),
        after=placement_metrics(after, targets, sizes),
        brokers=targets,
    )
