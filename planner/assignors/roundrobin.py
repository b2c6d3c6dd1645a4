"""Classic `RoundRobinAssignor` (`clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java`):
all partitions, topics sorted by name, handed out over a circular list of members in MemberInfo order, skipping
members not subscribed to the partition's topic."""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.assignors.group import Member, all_partitions, sorted_members, subscribed_topics
from planner.model import TopicPartition


def assign(members: Sequence[Member], partitions_per_topic: Mapping[str, int]) -> dict[str, list[TopicPartition]]:
    topics = subscribed_topics(members, partitions_per_topic)
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in members}
    ring = sorted_members(members)
    if not ring:
        return out
    subs = [set(m.topics) for m in ring]
    i = 0
    for tp in all_partitions(topics):
        while tp.topic not in subs[i]:
            i = (i + 1) % len(ring)
        out[ring[i].id].append(tp)
        i = (i + 1) % len(ring)
    return out
