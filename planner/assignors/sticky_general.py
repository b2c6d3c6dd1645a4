"""Kafka's `AbstractStickyAssignor.GeneralAssignmentBuilder` (sticky / cooperative-sticky with mixed subscriptions).

A line-by-line model of the trunk algorithm: keep valid owned partitions, assign the rest (topics with the fewest
potential consumers first) to the least-loaded eligible member (KIP-881 rack match first when racks are in use), then
move partitions towards balance — previous owners of a lower generation first, `PartitionMovements` keeping moves
sticky — and keep the result only if it scores better than before. Java's iteration orders are reproduced where they
decide the result: the subscriptions HashMap (member ids), the TreeSet of members by (partition count, member id), and
the HashSet of moved partitions in `getTheActualPartitionToBeMoved`.

One deliberate difference: when a partition's previous (lower-generation) owner is a member that can no longer take
part in reassignment, Kafka's `performReassignments` dereferences a missing map entry (NullPointerException, the
rebalance fails); this model skips the previous-owner step for that partition and goes on with the usual moves.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.java import hashmap_order, int32, string_hash_code, string_sort_key
from planner.model import TopicPartition

DEFAULT_GENERATION = -1


def _tp_hash(tp: TopicPartition) -> int:
    """TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode()."""
    return int32(31 * (31 + tp.partition) + string_hash_code(tp.topic))


class _JavaHashSet:
    """Iteration order of a java.util.HashSet<TopicPartition>: by bucket, then insertion order (resizes keep it)."""

    def __init__(self):
        self.items: dict[TopicPartition, int] = {}
        self.capacity = 16
        self.seq = 0

    def add(self, tp: TopicPartition) -> None:
        if tp in self.items:
            return
        self.items[tp] = self.seq
        self.seq += 1
        if len(self.items) > self.capacity * 0.75:
            self.capacity *= 2

    def remove(self, tp: TopicPartition) -> None:
        self.items.pop(tp, None)

    def __len__(self) -> int:
        return len(self.items)

    def first(self) -> TopicPartition:
        def key(tp):
            h = _tp_hash(tp) & 0xFFFFFFFF
            return ((h ^ (h >> 16)) & (self.capacity - 1), self.items[tp])

        return min(self.items, key=key)


class _PartitionMovements:
    def __init__(self):
        self.by_topic: dict[str, dict[tuple[str, str], _JavaHashSet]] = {}
        self.moves: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        per_topic = self.by_topic[tp.topic]
        per_topic[pair].remove(tp)
        if not len(per_topic[pair]):
            del per_topic[pair]
        if not per_topic:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, _JavaHashSet()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            existing = self._remove_record(tp)
            if existing[0] != new:  # not moving back to where it came from
                self._add_record(tp, (existing[0], new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        if tp.topic not in self.by_topic:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = self.by_topic[tp.topic].get((new, old))
        if reverse is None:
            return tp
        return reverse.first()


def general_assign(  # noqa: C901
    members: Sequence, topics: Mapping[str, int], owned: Mapping[str, list[TopicPartition]], rack=None
) -> dict[str, list[TopicPartition]]:
    """members: planner.assignors.group.Member; owned: claim-resolved owned partitions per member
    (allSubscriptionsEqual);
    rack: sticky._RackInfo or None."""
    by_id = {m.id: m for m in members}
    order = hashmap_order([m.id for m in members])  # the subscriptions HashMap
    consumer_rack = rack.consumer_rack if rack is not None else {}
    partition_racks = rack.partition_racks if rack is not None else {}

    def mismatch(c: str, tp: TopicPartition) -> bool:
        r = consumer_rack.get(c)
        return r is not None and r not in partition_racks.get(tp, ())

    topic_consumers: dict[str, list[str]] = {t: [] for t in topics}
    consumer_topics: dict[str, list[str]] = {}
    for mid in order:
        mine = [t for t in dict.fromkeys(by_id[mid].topics) if t in topics]
        consumer_topics[mid] = mine
        for t in mine:
            topic_consumers[t].append(mid)
    current: dict[str, list[TopicPartition]] = {mid: list(owned.get(mid, [])) for mid in order}
    owner: dict[TopicPartition, str] = {tp: mid for mid, tps in current.items() for tp in tps}
    sorted_topics = sorted(topics, key=lambda t: (len(topic_consumers[t]), string_sort_key(t)))
    sorted_all = [TopicPartition(t, p) for t in sorted_topics for p in range(topics[t])]

    # prepopulateCurrentAssignments: the latest lower-generation owner of each partition
    max_gen = max([m.generation for m in members if m.generation is not None] + [DEFAULT_GENERATION])
    prev: dict[TopicPartition, tuple[str, int]] = {}
    for mid in order:
        m = by_id[mid]
        if m.generation is not None and m.generation < max_gen:
            gen = m.generation
        elif m.generation is None and max_gen > DEFAULT_GENERATION:
            gen = DEFAULT_GENERATION
        else:
            continue
        for tp in m.owned:
            if tp not in prev or gen > prev[tp][1]:
                prev[tp] = (mid, gen)

    # assignOwnedPartitions
    revocation_required = False
    assigned: set[TopicPartition] = set()
    for mid in order:
        keep = []
        for tp in current[mid]:
            if tp.topic not in consumer_topics[mid] or mismatch(mid, tp):
                revocation_required = True  # (Kafka leaves its currentPartitionConsumer entry in place)
            else:
                keep.append(tp)
                assigned.add(tp)
        current[mid] = keep
    unassigned = [tp for tp in sorted_all if tp not in assigned]

    def ranked() -> list[str]:  # the TreeSet sortedCurrentSubscriptions
        return sorted(current, key=lambda c: (len(current[c]), string_sort_key(c)))

    def max_size(c: str) -> int:
        return sum(topics[t] for t in consumer_topics[c])

    # balance()
    initializing = all(not tps for tps in current.values())

    def maybe_assign(parts: list[TopicPartition], use_rack: bool) -> list[TopicPartition]:
        left = []
        for tp in parts:
            if not topic_consumers[tp.topic]:
                left.append(tp)
                continue
            for c in ranked():
                if tp.topic in consumer_topics[c] and not (use_rack and mismatch(c, tp)):
                    current[c].append(tp)
                    owner[tp] = c
                    break
            else:
                left.append(tp)
        return left

    to_assign = unassigned
    if consumer_rack:
        to_assign = maybe_assign(list(unassigned), True)
    maybe_assign(to_assign, False)

    fixed_topics = {t for t in topic_consumers if len(topic_consumers[t]) < 2}
    sorted_all = [tp for tp in sorted_all if tp.topic not in fixed_topics]
    unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]
    fixed: dict[str, list[TopicPartition]] = {}
    for c in list(consumer_topics):
        can = len(current[c]) < max_size(c) or any(len(topic_consumers[tp.topic]) >= 2 for tp in current[c])
        if not can:
            fixed[c] = current.pop(c)

    pre_current = {c: list(v) for c, v in current.items()}
    pre_owner = dict(owner)
    movements = _PartitionMovements()

    def is_balanced() -> bool:
        if not current:
            return True
        sizes = sorted(len(v) for v in current.values())
        if sizes[0] >= sizes[-1] - 1:
            return True
        for c in ranked():
            count = len(current[c])
            if count == max_size(c):
                continue
            mine = set(current[c])
            for t in consumer_topics[c]:
                for p in range(topics[t]):
                    tp = TopicPartition(t, p)
                    if tp not in mine:
                        other = owner.get(tp)  # every partition of a shared topic is held by a member in play
                        if other is not None and count + 1 < len(current[other]):
                            return False
        return True

    def move(tp: TopicPartition, new: str) -> None:
        old_holder = owner[tp]
        actual = movements.actual_partition_to_move(tp, old_holder, new)
        old = owner[actual]
        movements.move(actual, old, new)
        current[old].remove(actual)
        current[new].append(actual)
        owner[actual] = new

    def move_to_least_loaded(tp: TopicPartition) -> None:
        new = next(c for c in ranked() if tp.topic in consumer_topics[c])
        move(tp, new)

    def perform(parts: list[TopicPartition]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in parts:
                if is_balanced():
                    break
                c = owner[tp]
                if tp in prev and prev[tp][0] in current and len(current[c]) > len(current[prev[tp][0]]) + 1:
                    move(tp, prev[tp][0])
                    performed = modified = True
                    continue
                c_rack = consumer_rack.get(c)
                p_racks = partition_racks.get(tp, frozenset())
                found = False
                if c_rack is not None and p_racks and c_rack in p_racks:
                    for other in topic_consumers[tp.topic]:
                        o_rack = consumer_rack.get(other)
                        if o_rack is None or o_rack not in p_racks:
                            continue
                        if len(current[c]) > len(current[other]) + 1:
                            move_to_least_loaded(tp)
                            performed = modified = found = True
                            break
                if not found:
                    for other in topic_consumers[tp.topic]:
                        if len(current[c]) > len(current[other]) + 1:
                            move_to_least_loaded(tp)
                            performed = modified = True
                            break
            if not modified:
                return performed

    if not revocation_required:
        perform(unassigned)
    performed = perform(sorted_all)

    def score(assignment) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    if not initializing and performed and score(current) >= score(pre_current):
        current = pre_current
        owner = pre_owner
    current.update(fixed)
    return {m.id: current[m.id] for m in members}
