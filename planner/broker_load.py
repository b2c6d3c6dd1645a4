"""Per-broker load: replicas, preferred leaders, current leaders, bytes, replicas per topic, leader imbalance.

Preferred leaders (and so the imbalance ratio) leave out topics marked for deletion, as the controller's
`checkAndTriggerAutoLeaderRebalance` does; replicas and current leaders count every topic.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from planner.leadership import cluster_states
from planner.model import Cluster


@dataclass(frozen=True)
class BrokerLoad:
    broker: int
    replicas: int = 0
    preferred_leaders: int = 0
    leaders: int = 0
    bytes: int = 0
    per_topic: dict[str, int] = field(default_factory=dict, hash=False)
    preferred_not_leading: int = 0  # partitions preferring this broker, led by another (or by none)

    @property
    def imbalance(self) -> float:
        """The ZooKeeper controller's leader imbalance ratio for this broker
        (`core/src/main/scala/kafka/controller/KafkaController.scala` `checkAndTriggerAutoLeaderRebalance`)."""
        return self.preferred_not_leading / self.preferred_leaders if self.preferred_leaders else 0.0

    @property
    def topics(self) -> int:
        return len(self.per_topic)

    @property
    def max_per_topic(self) -> int:
        return max(self.per_topic.values(), default=0)


def broker_loads(cluster: Cluster) -> dict[int, BrokerLoad]:
    replicas: Counter = Counter()
    preferred: Counter = Counter()
    leaders: Counter = Counter()
    size: Counter = Counter()
    not_leading: Counter = Counter()
    per_topic: dict[int, Counter] = {b: Counter() for b in cluster.broker_ids}
    states = cluster_states(cluster)
    for t in cluster.topics:
        for p, st in zip(t.partitions, states[t.name]):
            if not t.marked_for_deletion:  # the controller leaves topics being deleted out of the ratio
                preferred[p.replicas[0]] += 1
                if st.leader != p.replicas[0]:
                    not_leading[p.replicas[0]] += 1
            if st.has_leader:
                leaders[st.leader] += 1
            for b in p.replicas:
                replicas[b] += 1
                per_topic[b][t.name] += 1
                if p.size is not None:
                    size[b] += p.size
    return {
        b: BrokerLoad(b, replicas[b], preferred[b], leaders[b], size[b], dict(per_topic[b]), not_leading[b])
        for b in cluster.broker_ids
    }


def spread(values) -> int:
    values = list(values)
    return max(values) - min(values) if values else 0
