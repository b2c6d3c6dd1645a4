"""Run the consumer assignors over a cluster and a group: per member its partitions, count and the brokers it fetches
from (the partitions' leaders); per strategy the spread. Pure: the CLI renders the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from planner.assignors.group import Member
from planner.model import NO_LEADER, Cluster, PlannerError, TopicPartition, tp_sort_key

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range")
DESCRIPTIONS = {
    "range": "classic RangeAssignor (client side; KIP-881 rack-aware when racks apply)",
    "roundrobin": "classic RoundRobinAssignor",
    "sticky": "classic StickyAssignor (eager)",
    "cooperative-sticky": "classic CooperativeStickyAssignor",
    "uniform": "KIP-848 server-side UniformAssignor (group.consumer.assignors default)",
    "server-range": "KIP-848 server-side RangeAssignor (3.9+, stateless)",
}


@dataclass(frozen=True)
class StrategyResult:
    strategy: str
    assignment: dict  # member id -> sorted list[TopicPartition]
    exact: bool  # Kafka's exact result (False: see `note`)
    first_round: dict | None = None  # cooperative-sticky: what the first rebalance hands out
    withheld: dict = field(default_factory=dict)  # cooperative-sticky: TopicPartition -> new owner, for a later round
    rounds: int = 1
    note: str | None = None  # why the result is not exactly Kafka's, when it is not

    @property
    def counts(self) -> dict:
        return {m: len(v) for m, v in self.assignment.items()}

    @property
    def spread(self) -> int:
        c = list(self.counts.values())
        return max(c) - min(c) if c else 0


def partition_counts(cluster: Cluster, members: Sequence[Member]) -> tuple[dict[str, int], list[str]]:
    """Partition counts of subscribed topics the cluster has; and the subscribed topics it lacks."""
    counts, missing = {}, []
    for topic in sorted({t for m in members for t in m.topics}):
        if cluster.has_topic(topic):
            counts[topic] = cluster.topic(topic).partition_count
        else:
            missing.append(topic)
    return counts, missing


def replica_racks(cluster: Cluster) -> dict[TopicPartition, frozenset[str]]:
    racks = cluster.rack_of()
    return {p.tp: frozenset(r for b in p.replicas if (r := racks.get(b))) for p in cluster.partitions()}


def leaders(cluster: Cluster, topics) -> dict[TopicPartition, int]:
    from planner.leadership import topic_states

    out = {}
    for name in topics:
        topic = cluster.topic(name)
        for p, state in zip(topic.partitions, topic_states(cluster, topic)):
            out[p.tp] = state.leader
    return out


def run_strategy(
    strategy: str,
    members: Sequence[Member],
    counts: dict[str, int],
    racks: dict[TopicPartition, frozenset[str]],
    topic_ids: dict[str, str] | None = None,
) -> StrategyResult:
    from planner.assignors import range as range_a
    from planner.assignors import roundrobin, server_range, sticky, uniform

    def tidy(assignment):
        return {m.id: sorted(assignment.get(m.id, []), key=tp_sort_key) for m in members}

    if strategy == "range":
        return StrategyResult(strategy, tidy(range_a.assign(members, counts, racks)), True)
    if strategy == "roundrobin":
        return StrategyResult(strategy, tidy(roundrobin.assign(members, counts)), True)
    if strategy == "sticky":
        r = sticky.assign(members, counts, racks)
        return StrategyResult(strategy, tidy(r.assignment), True, withheld=dict(r.transferring))
    if strategy == "cooperative-sticky":
        first = sticky.cooperative_first_round(members, counts, racks)
        converged, rounds = sticky.cooperative_converged(members, counts, racks)
        return StrategyResult(
            strategy,
            tidy(converged.assignment),
            True,
            first_round=tidy(first.assignment),
            withheld=dict(first.transferring),
            rounds=rounds,
        )
    if strategy == "uniform":
        note = uniform_inexact_note(members, counts, topic_ids)
        return StrategyResult(strategy, tidy(uniform.assign(members, counts, topic_ids)), note is None, note=note)
    if strategy == "server-range":
        return StrategyResult(strategy, tidy(server_range.assign(members, counts)), True)
    raise PlannerError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")


def uniform_inexact_note(
    members: Sequence[Member], counts: dict[str, int], topic_ids: dict[str, str] | None
) -> str | None:
    """Why `uniform` cannot give Kafka's exact answer for this group, or None when it does."""
    from planner.assignors import uniform

    return uniform.inexact_note(members, counts, topic_ids)


def fetch_brokers(assignment: dict, leader_of: dict[TopicPartition, int]) -> dict[str, list[int]]:
    """Per member: the distinct leaders of its partitions (a leaderless partition shows as -1)."""
    return {m: sorted({leader_of.get(tp, NO_LEADER) for tp in tps}) for m, tps in assignment.items()}
