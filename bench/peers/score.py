"""One scoring function for every tool's plan: `score(before, after, sizes, targets)`, the rebalancer's own
`planner.rebalance.metrics.plan_metrics` (the figures `reassign` summaries show) flattened into one row; and the
benchmark's second target, `topic_targets`: the spread of each topic with at least as many partitions as brokers."""

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


def _held(cluster: Cluster, topic: str, brokers: Sequence[int]) -> list[int]:
    counts = {b: 0 for b in brokers}
    for p in cluster.topic(topic).partitions:
        for b in p.replicas:
            if b in counts:
                counts[b] += 1
    return list(counts.values())


def _spread(values: Sequence[int]) -> int:
    return max(values) - min(values) if values else 0


@dataclass(frozen=True)
class TopicTargets:
    """The per-topic target of a plan, over the topics with at least as many partitions as target brokers: each within
    1 over all brokers (`held`, `wide`: how many and their largest spread), unless racks of different sizes force
    it wider (`forced`: (topic, spread over all brokers, its lower bound, largest spread inside the brokers it is
    balanced within), `planner.rebalance.goals.geometry.forced_in`); for a replication-factor change, only the
    topic changed (`others`: the largest spread of the other topics before and after, which it leaves alone)."""

    held: int
    wide: int
    forced: tuple[tuple[str, int, int, int], ...] = ()
    others: tuple[int, int, int] | None = None  # (how many, largest spread before, after)
    changed: str | None = None

    @property
    def met(self) -> bool:
        return self.wide <= 1 and all(inside <= 1 for *_, inside in self.forced)


def topic_targets(before: Cluster, after: Cluster, targets: Sequence[int], changed: str | None = None) -> TopicTargets:
    from planner.rebalance.goals.geometry import forced_in

    brokers = tuple(sorted(targets))
    big = [t.name for t in after.topics if t.partition_count >= len(brokers)]
    others = None
    if changed is not None:
        rest = [t for t in big if t != changed]
        others = (
            len(rest),
            max((_spread(_held(before, t, brokers)) for t in rest), default=0),
            max((_spread(_held(after, t, brokers)) for t in rest), default=0),
        )
        big = [t for t in big if t == changed]
    why = forced_in(after, brokers) if changed is None else {}
    forced = []
    for t in (t for t in big if t in why):
        held = dict(zip(brokers, _held(after, t, brokers)))
        inside = max(_spread([held[b] for b in c]) for c in why[t].classes)
        forced.append((t, _spread(list(held.values())), why[t].bound, inside))
    rest = [_spread(_held(after, t, brokers)) for t in big if t not in why]
    return TopicTargets(len(rest), max(rest, default=0), tuple(forced), others, changed)


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
