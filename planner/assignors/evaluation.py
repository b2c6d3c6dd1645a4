"""Running a group's strategies over a cluster: per member its partitions and the brokers it fetches from (the
partitions' leaders), per strategy the spread, and what in the group file does not fit the cluster (as data; the
CLI words it). Pure: the CLI renders the result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from planner.assignors.group import Member
from planner.assignors.registry import ASSIGNORS, StrategyResult, get_assignor
from planner.leadership import topic_states
from planner.model import NO_LEADER, Cluster, TopicPartition


@dataclass(frozen=True)
class OwnedElsewhere:
    """A member owns a partition no strategy keeps: its topic is not subscribed (`count` None) or the partition is
    beyond the topic's `count` partitions."""

    member: str
    tp: TopicPartition
    count: int | None


@dataclass(frozen=True)
class GroupEvaluation:
    counts: dict[str, int]  # subscribed topic the cluster has -> partitions
    missing: list[str]  # subscribed topics the cluster lacks
    ignored: list[OwnedElsewhere]
    leader_of: dict[TopicPartition, int]
    results: list[StrategyResult]


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
    out = {}
    for name in topics:
        topic = cluster.topic(name)
        for p, state in zip(topic.partitions, topic_states(cluster, topic)):
            out[p.tp] = state.leader
    return out


def fetch_brokers(assignment: dict, leader_of: dict[TopicPartition, int]) -> dict[str, list[int]]:
    """Per member: the distinct leaders of its partitions (a leaderless partition shows as -1)."""
    return {m: sorted({leader_of.get(tp, NO_LEADER) for tp in tps}) for m, tps in assignment.items()}


def _ignored(members: Sequence[Member], counts: dict[str, int]) -> list[OwnedElsewhere]:
    out = []
    for m in members:
        for tp in m.owned:
            if tp.topic not in m.topics:
                out.append(OwnedElsewhere(m.id, tp, None))
            elif tp.topic in counts and tp.partition >= counts[tp.topic]:
                out.append(OwnedElsewhere(m.id, tp, counts[tp.topic]))
    return out


def evaluate_group(cluster: Cluster, members: Sequence[Member], strategies: Sequence[str] = ()) -> GroupEvaluation:
    """Run `strategies` (each once, in the order given; none: every registered one) for a group's `members` on
    `cluster`."""
    chosen = list(dict.fromkeys(strategies)) or list(ASSIGNORS)
    assignors = [get_assignor(s) for s in chosen]
    counts, missing = partition_counts(cluster, members)
    racks = replica_racks(cluster)
    topic_ids = {t: tid for t in counts if (tid := cluster.topic(t).topic_id)}
    results = [a.run(members, counts, racks, topic_ids) for a in assignors]
    return GroupEvaluation(counts, missing, _ignored(members, counts), leaders(cluster, counts), results)
