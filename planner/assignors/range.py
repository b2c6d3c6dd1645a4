"""Classic `RangeAssignor` (client side), including the KIP-881 rack-aware variant (3.5+)
(`clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java`).

Per topic: subscribers in MemberInfo order, quota `P // C` (+1 for the first `P % C`), consecutive ranges.
Rack-aware: when some subscriber has a rack that some partition's replica racks contain, and not every partition
has every rack, partitions are first matched to consumers on their racks (co-partitioned topics — same
subscribers, same partition count — together), then the plain range pass assigns what is left.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.assignors.group import Member, sorted_members, subscribed_topics
from planner.java import hashmap_order, sorted_java
from planner.model import TopicPartition, tp_sort_key


class _TopicState:
    def __init__(
        self,
        topic: str,
        n: int,
        members: list[Member],
        racks_of_consumer: Mapping[str, str],
        partition_racks: Mapping[TopicPartition, frozenset[str]],
        prefer_rack_aware: bool = False,
    ):
        self.topic = topic
        self.consumers = [m.id for m in members]
        self.consumer_rack = {c: racks_of_consumer.get(c) for c in self.consumers}
        self.unassigned = [TopicPartition(topic, p) for p in range(n)]
        self.assigned = {c: 0 for c in self.consumers}
        self.quota = n // len(self.consumers) if self.consumers else 0
        self.extra = n % len(self.consumers) if self.consumers else 0
        consumer_racks = {r for c in self.consumers if (r := racks_of_consumer.get(c))}
        self.racks: dict[TopicPartition, frozenset[str]] = {}
        all_racks: set[str] = set()
        if consumer_racks:
            for tp in self.unassigned:
                self.racks[tp] = frozenset(partition_racks.get(tp, ()))
                all_racks |= self.racks[tp]
        if not consumer_racks or not (consumer_racks & all_racks):
            self.needs_rack = False
        elif prefer_rack_aware:
            self.needs_rack = True
        else:
            self.needs_rack = not all(r == all_racks for r in self.racks.values())
        self.group_key = (tuple((c, self.consumer_rack[c]) for c in self.consumers), len(self.racks))

    def racks_match(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_rack[consumer]
        return rack is None or rack in self.racks.get(tp, ())

    def max_assignable(self, consumer: str) -> int:
        return max(0, self.quota + (1 if self.extra > 0 else 0) - self.assigned[consumer])

    def on_assigned(self, consumer: str, tps: list[TopicPartition]) -> None:
        self.assigned[consumer] += len(tps)
        if self.assigned[consumer] > self.quota:
            self.extra -= 1
        gone = set(tps)
        self.unassigned = [tp for tp in self.unassigned if tp not in gone]


def _assign_ranges(state: _TopicState, may_assign, out: dict[str, list[TopicPartition]]) -> None:
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        take = [tp for tp in state.unassigned if may_assign(consumer, tp)][:limit]
        if take:
            out[consumer].extend(take)
            state.on_assigned(consumer, take)


def assign(
    members: Sequence[Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
    prefer_rack_aware: bool = False,
) -> dict[str, list[TopicPartition]]:
    """member id -> its partitions. `partition_racks`: racks of all replicas of each partition (for KIP-881)."""
    topics = subscribed_topics(members, partitions_per_topic)
    racks_of_consumer = {m.id: m.rack for m in members if m.rack}
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in members}
    order = sorted_members(members)
    # partitionsPerTopic is a HashMap: per-member lists follow its iteration order unless rack-aware sorts them
    states = [
        _TopicState(
            t,
            topics[t],
            [m for m in order if t in m.topics],
            racks_of_consumer,
            partition_racks or {},
            prefer_rack_aware,
        )
        for t in hashmap_order(sorted_java(list(topics)))
    ]
    use_rack = any(s.needs_rack for s in states)
    if use_rack:
        groups: dict = {}
        for s in states:
            groups.setdefault(s.group_key[0], {}).setdefault(s.group_key[1], []).append(s)
        for by_count in groups.values():
            for n, co in by_count.items():
                if len(co) > 1:
                    _co_partitioned(co, n, out)
                elif co[0].needs_rack:
                    _assign_ranges(co[0], co[0].racks_match, out)
    for s in states:
        _assign_ranges(s, lambda c, tp: True, out)
    if use_rack:
        for lst in out.values():
            lst.sort(key=tp_sort_key)
    return out


def _co_partitioned(states: list[_TopicState], n: int, out: dict[str, list[TopicPartition]]) -> None:
    remaining = list(states[0].consumers)
    for p in range(n):
        match = next(
            (
                c
                for c in remaining
                if all(s.racks_match(c, TopicPartition(s.topic, p)) and s.max_assignable(c) > 0 for s in states)
            ),
            None,
        )
        if match is None:
            continue
        for s in states:
            tp = TopicPartition(s.topic, p)
            out[match].append(tp)
            s.on_assigned(match, [tp])
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break
