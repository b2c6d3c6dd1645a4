"""Consumer-group members as the assignors see them, and the classic protocol's member order.

A `Member` is one consumer's subscription: member id, optional `group.instance.id` (static membership, KIP-345),
optional `client.rack` (KIP-881), subscribed topics, and for the sticky assignors its owned partitions and generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from planner.java import string_sort_key
from planner.model import TopicPartition

DEFAULT_GENERATION = -1  # AbstractStickyAssignor.DEFAULT_GENERATION

Assignment = dict  # member id -> list[TopicPartition]


@dataclass(frozen=True)
class Member:
    id: str
    topics: tuple[str, ...]
    instance_id: str | None = None
    rack: str | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None  # None: the subscription carries no generation


def member_sort_key(m: Member):
    """AbstractPartitionAssignor.MemberInfo.compareTo (2.3+): static members first by instance id, then by member id."""
    if m.instance_id is not None:
        return (0, string_sort_key(m.instance_id), string_sort_key(m.id))
    return (1, string_sort_key(m.id), b"")


def sorted_members(members: Iterable[Member]) -> list[Member]:
    return sorted(members, key=member_sort_key)


def subscribed_topics(members: Sequence[Member], partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    """The topic metadata an assignor sees: subscribed topics that exist with a non-zero partition count."""
    wanted = {t for m in members for t in m.topics}
    return {t: n for t, n in partitions_per_topic.items() if t in wanted and n > 0}


def all_partitions(partitions_per_topic: Mapping[str, int]) -> list[TopicPartition]:
    """Every partition, topics sorted by name, partitions ascending (a TreeSet<TopicPartition>)."""
    out: list[TopicPartition] = []
    for topic in sorted(partitions_per_topic, key=string_sort_key):
        out.extend(TopicPartition(topic, p) for p in range(partitions_per_topic[topic]))
    return out
