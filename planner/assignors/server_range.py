"""KIP-848 server-side `range` assignor, stateless since KAFKA-16944 (3.9)
(`group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/RangeAssignor.java`).

Members sorted like the classic MemberInfo order (instance id first, then member id); per topic, its subscribers
take consecutive ranges of `P // C` partitions, +1 for the first `P % C` (C = subscribers of that topic).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.assignors.group import Member, sorted_members, subscribed_topics
from planner.java import sorted_java
from planner.model import TopicPartition


def assign(members: Sequence[Member], partitions_per_topic: Mapping[str, int]) -> dict[str, list[TopicPartition]]:
    topics = subscribed_topics(members, partitions_per_topic)
    order = sorted_members(members)
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in members}
    for topic in sorted_java(list(topics)):
        subs = [m for m in order if topic in m.topics]
        quota, extra = divmod(topics[topic], len(subs))
        start = 0
        for i, m in enumerate(subs):
            length = quota + (1 if i < extra else 0)
            out[m.id].extend(TopicPartition(topic, p) for p in range(start, start + length))
            start += length
    return out
