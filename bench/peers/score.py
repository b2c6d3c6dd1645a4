"""One scoring function for every tool's plan: `score(before, after, sizes, targets)`.

The figures are those issue 11 names for a plan summary. `_plan_metrics` below stands in for the rebalancer's own
`planner.rebalance.metrics.plan_metrics` until that lands; switching is the one import line in `score`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.model import INTERNAL_TOPICS, Cluster, TopicPartition

Assignment = Mapping[TopicPartition, Sequence[int]]


@dataclass(frozen=True)
class Score:
    """A plan's figures, every one lower-is-better (the order of the table's columns)."""

    replica_moves: int
    bytes_moved: int
    replica_spread: int
    leader_spread: int
    topic_replica_spread: int  # the largest per-topic replica spread over the target brokers
    topics_over_1: int  # topics whose replica spread exceeds 1
    topic_leader_spread: int
    internal_leader_spread: int
    bytes_max_over_mean: float
    rack_unsafe: int
    wide_topic_spread: int  # largest per-topic replica spread among topics with >= as many partitions as targets

    def figures(self) -> tuple:
        return (self.replica_moves, self.bytes_moved, self.replica_spread, self.leader_spread,
                self.topic_replica_spread, self.topics_over_1, self.topic_leader_spread, self.internal_leader_spread,
                round(self.bytes_max_over_mean, 3), self.rack_unsafe)


def _spread(counts: Mapping[int, int], brokers: Sequence[int]) -> int:
    values = [counts.get(b, 0) for b in brokers]
    return max(values) - min(values) if values else 0


def _plan_metrics(before: Cluster, after: Cluster, sizes: Mapping[TopicPartition, int], brokers: Sequence[int]):
    from planner.rebalance.moves import rack_count, rack_safe

    old = before.assignment()
    moves = moved = 0
    replicas: dict[int, int] = {}
    leaders: dict[int, int] = {}
    data: dict[int, int] = {}
    topic_rep: dict[str, int] = {}
    topic_lead: dict[str, int] = {}
    rack_of, n_racks, unsafe = after.rack_of(), rack_count(after, brokers), 0
    for t in after.topics:
        per_rep: dict[int, int] = {}
        per_lead: dict[int, int] = {}
        for p in t.partitions:
            new = len(set(p.replicas) - set(old[p.tp]))
            moves += new
            moved += new * sizes.get(p.tp, 0)
            per_lead[p.replicas[0]] = per_lead.get(p.replicas[0], 0) + 1
            for b in p.replicas:
                per_rep[b] = per_rep.get(b, 0) + 1
                data[b] = data.get(b, 0) + sizes.get(p.tp, 0)
            unsafe += not rack_safe(p.replicas, rack_of, n_racks)
        topic_rep[t.name], topic_lead[t.name] = _spread(per_rep, brokers), _spread(per_lead, brokers)
        for b, c in per_rep.items():
            replicas[b] = replicas.get(b, 0) + c
        for b, c in per_lead.items():
            leaders[b] = leaders.get(b, 0) + c
    mean = sum(data.get(b, 0) for b in brokers) / len(brokers)
    wide = [topic_rep[t.name] for t in after.topics if t.partition_count >= len(brokers)]
    return Score(
        replica_moves=moves, bytes_moved=moved, replica_spread=_spread(replicas, brokers),
        leader_spread=_spread(leaders, brokers), topic_replica_spread=max(topic_rep.values(), default=0),
        topics_over_1=sum(s > 1 for s in topic_rep.values()), topic_leader_spread=max(topic_lead.values(), default=0),
        internal_leader_spread=max((s for n, s in topic_lead.items() if n in INTERNAL_TOPICS), default=0),
        bytes_max_over_mean=max(data.get(b, 0) for b in brokers) / mean if mean else 1.0, rack_unsafe=unsafe,
        wide_topic_spread=max(wide, default=0))


def score(before: Cluster, after: Cluster, sizes: Mapping[TopicPartition, int], targets: Sequence[int]) -> Score:
    """The figures of the plan taking `before` to `after`, spreads taken over the `targets` brokers."""
    return _plan_metrics(before, after, sizes, tuple(sorted(targets)))


def validate(before: Cluster, changes: Assignment, targets: Sequence[int]) -> list[str]:
    """What makes a proposed plan invalid: unknown or missing partitions, a changed replication factor, duplicate
    replicas, replicas off the target brokers."""
    old = before.assignment()
    problems = [f"{tp}: no such partition" for tp in changes if tp not in old]
    allowed = set(targets)
    for tp, replicas in changes.items():
        if tp not in old:
            continue
        if len(replicas) != len(old[tp]):
            problems.append(f"{tp}: replication factor {len(old[tp])} -> {len(replicas)}")
        if len(set(replicas)) != len(replicas):
            problems.append(f"{tp}: duplicate replicas {list(replicas)}")
        if not set(replicas) <= allowed:
            problems.append(f"{tp}: replicas {sorted(set(replicas) - allowed)} outside the target brokers")
    after = before.with_assignment(changes)
    off = sorted({b for p in after.partitions() for b in p.replicas} - allowed)
    if off:
        problems.append(f"replicas left on non-target brokers {off}")
    return problems


def dominates(a: Score, b: Score) -> bool:
    """`a` at least as good as `b` on every figure and better on one."""
    fa, fb = a.figures(), b.figures()
    return all(x <= y for x, y in zip(fa, fb)) and fa != fb
