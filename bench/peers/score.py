"""One scoring function for every tool's plan: `score(before, after, sizes, targets)`, the rebalancer's own
`planner.rebalance.metrics.plan_metrics` (the figures `reassign` summaries show) flattened into one row, plus the
largest spread among topics with at least as many partitions as brokers (the benchmark's second target)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from planner.model import Cluster, TopicPartition

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
        return (
            self.replica_moves,
            self.bytes_moved,
            self.replica_spread,
            self.leader_spread,
            self.topic_replica_spread,
            self.topics_over_1,
            self.topic_leader_spread,
            self.internal_leader_spread,
            round(self.bytes_max_over_mean, 3),
            self.rack_unsafe,
        )


def _wide_topic_spread(after: Cluster, brokers: Sequence[int]) -> int:
    """The largest replica spread among topics with at least as many partitions as there are target brokers."""
    worst = 0
    for t in after.topics:
        if t.partition_count >= len(brokers):
            counts = {b: 0 for b in brokers}
            for p in t.partitions:
                for b in p.replicas:
                    if b in counts:
                        counts[b] += 1
            worst = max(worst, max(counts.values()) - min(counts.values()))
    return worst


def score(before: Cluster, after: Cluster, sizes: Mapping[TopicPartition, int], targets: Sequence[int]) -> Score:
    """The figures of the plan taking `before` to `after`, spreads taken over the `targets` brokers."""
    from planner.rebalance.metrics import plan_metrics

    brokers = tuple(sorted(targets))
    m = plan_metrics(before, after, sizes, brokers)
    a = m.after
    return Score(
        replica_moves=m.replica_moves,
        bytes_moved=m.bytes_moved or 0,
        replica_spread=a.replica_spread,
        leader_spread=a.leader_spread,
        topic_replica_spread=a.topic_replica_spread,
        topics_over_1=a.topics_replica_spread_over_1,
        topic_leader_spread=a.topic_leader_spread,
        internal_leader_spread=a.internal_leader_spread or 0,
        bytes_max_over_mean=a.bytes_max_over_mean or 1.0,
        rack_unsafe=a.rack_unsafe,
        wide_topic_spread=_wide_topic_spread(after, brokers),
    )


def validate(
    before: Cluster,
    changes: Assignment,
    targets: Sequence[int],
    expected_rf: Callable[[TopicPartition, int], int] = lambda tp, rf: rf,
) -> list[str]:
    """What makes a proposed plan invalid: unknown or missing partitions, a replication factor other than
    `expected_rf(tp, current)` (default: kept), duplicate replicas, replicas off the target brokers."""
    old = before.assignment()
    problems = [f"{tp}: no such partition" for tp in changes if tp not in old]
    allowed = set(targets)
    for tp, replicas in changes.items():
        if tp not in old:
            continue
        if len(replicas) != expected_rf(tp, len(old[tp])):
            problems.append(f"{tp}: replication factor {len(old[tp])} -> {len(replicas)}")
        if len(set(replicas)) != len(replicas):
            problems.append(f"{tp}: duplicate replicas {list(replicas)}")
        if not set(replicas) <= allowed:
            problems.append(f"{tp}: replicas {sorted(set(replicas) - allowed)} outside the target brokers")
    after = before.with_assignment(changes)
    wanted = {p.tp: expected_rf(p.tp, len(p.replicas)) for p in before.partitions()}
    problems += [
        f"{p.tp}: replication factor {len(p.replicas)}, expected {wanted[p.tp]}"
        for p in after.partitions()
        if len(p.replicas) != wanted[p.tp]
    ][:5]
    off = sorted({b for p in after.partitions() for b in p.replicas} - allowed)
    if off:
        problems.append(f"replicas left on non-target brokers {off}")
    return problems


def dominates(a: Score, b: Score) -> bool:
    """`a` at least as good as `b` on every figure and better on one."""
    fa, fb = a.figures(), b.figures()
    return all(x <= y for x, y in zip(fa, fb, strict=True)) and fa != fb
