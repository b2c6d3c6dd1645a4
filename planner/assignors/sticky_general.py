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

from planner.java import hashmap_order, string_sort_key
from planner.model import TopicPartition, tp_hash

DEFAULT_GENERATION = -1


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
            h = tp_hash(tp) & 0xFFFFFFFF
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


class _GeneralAssignmentBuilder:
    """AbstractStickyAssignor.GeneralAssignmentBuilder, method by method. `current` is `currentAssignment` (member ->
    partitions, in the subscriptions HashMap's order), `owner` is `currentPartitionConsumer`."""

    def __init__(self, members: Sequence, topics: Mapping[str, int], owned: Mapping[str, list[TopicPartition]], rack):
        self.members = members
        self.topics = topics
        self.by_id = {m.id: m for m in members}
        self.order = hashmap_order([m.id for m in members])  # the subscriptions HashMap
        self.consumer_rack = rack.consumer_rack if rack is not None else {}
        self.partition_racks = rack.partition_racks if rack is not None else {}
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in topics}  # topic2AllPotentialConsumers
        self.consumer_topics: dict[str, list[str]] = {}  # consumer2AllPotentialTopics
        for mid in self.order:
            mine = [t for t in dict.fromkeys(self.by_id[mid].topics) if t in topics]
            self.consumer_topics[mid] = mine
            for t in mine:
                self.topic_consumers[t].append(mid)
        self.current: dict[str, list[TopicPartition]] = {mid: list(owned.get(mid, [])) for mid in self.order}
        self.owner: dict[TopicPartition, str] = {tp: mid for mid, tps in self.current.items() for tp in tps}
        sorted_topics = sorted(topics, key=lambda t: (len(self.topic_consumers[t]), string_sort_key(t)))
        self.sorted_all = [TopicPartition(t, p) for t in sorted_topics for p in range(topics[t])]
        self.revocation_required = False
        self.movements = _PartitionMovements()

    def build(self) -> dict[str, list[TopicPartition]]:
        prev = self._prepopulate_current_assignments()
        assigned = self._assign_owned_partitions()
        self._balance(prev, self._unassigned_partitions(assigned))
        return {m.id: self.current[m.id] for m in self.members}

    def _racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        """RackInfo.racksMismatch."""
        r = self.consumer_rack.get(consumer)
        return r is not None and r not in self.partition_racks.get(tp, ())

    def _prepopulate_current_assignments(self) -> dict[TopicPartition, tuple[str, int]]:
        """The latest lower-generation owner of each partition (prevAssignment)."""
        max_gen = max([m.generation for m in self.members if m.generation is not None] + [DEFAULT_GENERATION])
        prev: dict[TopicPartition, tuple[str, int]] = {}
        for mid in self.order:
            m = self.by_id[mid]
            if m.generation is not None and m.generation < max_gen:
                _update_prev_assignment(prev, m.owned, mid, m.generation)
            elif m.generation is None and max_gen > DEFAULT_GENERATION:
                _update_prev_assignment(prev, m.owned, mid, DEFAULT_GENERATION)
        return prev

    def _assign_owned_partitions(self) -> set[TopicPartition]:
        """Keep each member's owned partitions of topics it subscribes to on its racks; revoke the others."""
        assigned: set[TopicPartition] = set()
        for mid in self.order:
            keep = []
            for tp in self.current[mid]:
                if tp.topic not in self.consumer_topics[mid] or self._racks_mismatch(mid, tp):
                    self.revocation_required = True  # (Kafka leaves its currentPartitionConsumer entry in place)
                else:
                    keep.append(tp)
                    assigned.add(tp)
            self.current[mid] = keep
        return assigned

    def _unassigned_partitions(self, assigned: set[TopicPartition]) -> list[TopicPartition]:
        return [tp for tp in self.sorted_all if tp not in assigned]

    def _sorted_current_subscriptions(self) -> list[str]:
        """The TreeSet sortedCurrentSubscriptions: by (partition count, member id)."""
        return sorted(self.current, key=lambda c: (len(self.current[c]), string_sort_key(c)))

    def _max_assignment_size(self, consumer: str) -> int:
        return sum(self.topics[t] for t in self.consumer_topics[consumer])

    def _is_balanced(self) -> bool:
        if not self.current:
            return True
        sizes = sorted(len(v) for v in self.current.values())
        if sizes[0] >= sizes[-1] - 1:
            return True
        for c in self._sorted_current_subscriptions():
            if len(self.current[c]) != self._max_assignment_size(c) and self._could_take_more(c):
                return False
        return True

    def _could_take_more(self, consumer: str) -> bool:
        """isBalanced's inner loop: a partition `consumer` could hold sits with a member 2+ partitions ahead."""
        count = len(self.current[consumer])
        mine = set(self.current[consumer])
        for t in self.consumer_topics[consumer]:
            for p in range(self.topics[t]):
                tp = TopicPartition(t, p)
                if tp not in mine:
                    other = self.owner.get(tp)  # every partition of a shared topic is held by a member in play
                    if other is not None and count + 1 < len(self.current[other]):
                        return True
        return False

    def _maybe_assign_partition(self, tp: TopicPartition, use_rack: bool) -> bool:
        """To the least-loaded subscriber (on the partition's racks when `use_rack`)."""
        for c in self._sorted_current_subscriptions():
            if tp.topic in self.consumer_topics[c] and not (use_rack and self._racks_mismatch(c, tp)):
                self.current[c].append(tp)
                self.owner[tp] = c
                return True
        return False

    def _maybe_assign(self, parts: list[TopicPartition], use_rack: bool) -> list[TopicPartition]:
        """The partitions left unassigned (no subscriber, or none on their racks)."""
        left = []
        for tp in parts:
            if not self.topic_consumers[tp.topic] or not self._maybe_assign_partition(tp, use_rack):
                left.append(tp)
        return left

    def _can_topic_participate_in_reassignment(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _can_consumer_participate_in_reassignment(self, consumer: str) -> bool:
        tps = self.current[consumer]
        if len(tps) < self._max_assignment_size(consumer):
            return True
        return any(self._can_topic_participate_in_reassignment(tp.topic) for tp in tps)

    def _balance(self, prev: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]) -> None:
        initializing = all(not tps for tps in self.current.values())
        to_assign = unassigned
        if self.consumer_rack:  # first with rack matching, then the rest without
            to_assign = self._maybe_assign(list(unassigned), True)
        self._maybe_assign(to_assign, False)

        # only the partitions and members that can change take part
        fixed_topics = {t for t in self.topic_consumers if not self._can_topic_participate_in_reassignment(t)}
        self.sorted_all = [tp for tp in self.sorted_all if tp.topic not in fixed_topics]
        unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for c in list(self.consumer_topics):
            if not self._can_consumer_participate_in_reassignment(c):
                fixed[c] = self.current.pop(c)

        pre_current = {c: list(v) for c, v in self.current.items()}
        pre_owner = dict(self.owner)
        if not self.revocation_required:
            self._perform_reassignments(unassigned, prev)
        performed = self._perform_reassignments(self.sorted_all, prev)
        if not initializing and performed and _balance_score(self.current) >= _balance_score(pre_current):
            self.current = pre_current
            self.owner = pre_owner
        self.current.update(fixed)

    def _perform_reassignments(self, parts: list[TopicPartition], prev: dict[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in parts:
                if self._is_balanced():
                    break
                if self._reassign_if_better(tp, prev):
                    performed = modified = True
            if not modified:
                return performed

    def _reassign_if_better(self, tp: TopicPartition, prev: dict[TopicPartition, tuple[str, int]]) -> bool:
        """performReassignments' step for one partition: back to its previous owner, or to the least-loaded
        subscriber when some subscriber (on its racks first, then any) holds 2+ fewer. Whether it moved."""
        c = self.owner[tp]
        previous = prev.get(tp)
        if (
            previous is not None
            and previous[0] in self.current
            and len(self.current[c]) > len(self.current[previous[0]]) + 1
        ):
            self._reassign_partition_to(tp, previous[0])
            return True
        if self._rack_consumer_has_fewer(tp, c) or self._consumer_has_fewer(tp, c):
            self._reassign_partition(tp)
            return True
        return False

    def _rack_consumer_has_fewer(self, tp: TopicPartition, consumer: str) -> bool:
        c_rack = self.consumer_rack.get(consumer)
        p_racks = self.partition_racks.get(tp, frozenset())
        if c_rack is None or not p_racks or c_rack not in p_racks:
            return False
        for other in self.topic_consumers[tp.topic]:
            o_rack = self.consumer_rack.get(other)
            if o_rack is not None and o_rack in p_racks and len(self.current[consumer]) > len(self.current[other]) + 1:
                return True
        return False

    def _consumer_has_fewer(self, tp: TopicPartition, consumer: str) -> bool:
        return any(len(self.current[consumer]) > len(self.current[o]) + 1 for o in self.topic_consumers[tp.topic])

    def _reassign_partition(self, tp: TopicPartition) -> None:
        """To the least-loaded member subscribed to its topic."""
        new = next(c for c in self._sorted_current_subscriptions() if tp.topic in self.consumer_topics[c])
        self._reassign_partition_to(tp, new)

    def _reassign_partition_to(self, tp: TopicPartition, new: str) -> None:
        actual = self.movements.actual_partition_to_move(tp, self.owner[tp], new)
        self._process_partition_movement(actual, new)

    def _process_partition_movement(self, tp: TopicPartition, new: str) -> None:
        old = self.owner[tp]
        self.movements.move(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.owner[tp] = new


def _update_prev_assignment(
    prev: dict[TopicPartition, tuple[str, int]], partitions, consumer: str, generation: int
) -> None:
    """Only the latest previous owner of each partition is kept."""
    for tp in partitions:
        if tp not in prev or generation > prev[tp][1]:
            prev[tp] = (consumer, generation)


def _balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    """getBalanceScore: the sum of the size differences of all pairs of members (0: perfectly balanced)."""
    sizes = [len(v) for v in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])


def general_assign(
    members: Sequence, topics: Mapping[str, int], owned: Mapping[str, list[TopicPartition]], rack=None
) -> dict[str, list[TopicPartition]]:
    """members: planner.assignors.group.Member; owned: claim-resolved owned partitions per member
    (allSubscriptionsEqual);
    rack: sticky._RackInfo or None."""
    return _GeneralAssignmentBuilder(members, topics, owned, rack).build()
