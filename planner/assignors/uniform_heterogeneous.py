"""KIP-848 `uniform` for groups whose members subscribe to different topics: Kafka's
`UniformHeterogeneousAssignmentBuilder` (group-coordinator, org.apache.kafka.coordinator.group.assignor), step by step.

1. Members are numbered in the GroupSpec's order (the coordinator's HashMap of member ids); each topic's subscribers
   are listed in that numbering. A member keeps its current partitions of topics it still subscribes to; the rest of
   its assignment is dropped.
2. Topics are sorted by partitions per subscriber (descending; Java `double` division), then subscriber count
   (ascending), then topic id (`Uuid.compareTo`). Topic by topic, the unowned partitions (ascending) go to the topic's
   subscribers with the fewest partitions: the subscribers are sorted by (partition count, member number) once per
   topic, and a "least loaded range" of members with the lowest count is filled round-robin, widening when it has
   caught up with the next members.
3. Balance: over the topics with two or more subscribers (same order), up to 16 rounds; per topic, partitions move
   from the most loaded subscribers (each gives its highest-numbered partition of the topic; members holding none of
   it are skipped) to the least loaded ones, until the two ranges' counts differ by one or less. The rounds stop once
   a whole pass over the topics moved nothing.

Balanced per topic, not globally: with overlapping subscriptions Kafka's result can differ by more than one between
members (the builder's own documentation says so), and so does this port.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

from planner.model import PlannerError, TopicPartition

MAX_ITERATION_COUNT = 16  # UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT


class _Balancer:
    """MemberAssignmentBalancer: a least-loaded range growing rightwards and a most-loaded range growing leftwards over
    the members sorted by (partition count, member number). Reads the live partition counts, as Kafka does."""

    def __init__(self, sizes: list[int]):
        self.sizes = sizes
        self.members: list[int] = []
        self.least_end = 0  # exclusive
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0  # inclusive
        self.most_end = 0  # exclusive
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: Sequence[int]) -> int:
        if not members:
            raise AssertionError("Cannot balance an empty subscriber list.")
        sizes = self.sizes
        self.members = sorted(members, key=lambda i: (sizes[i], i))
        first, last = self.members[0], self.members[-1]
        self.least_end = 0
        self.least_count = sizes[first] - 1
        self.next_least = 0
        self.most_start = len(self.members)
        self.most_end = len(self.members)
        self.most_count = sizes[last] + 1
        self.next_most = len(self.members) - 1
        return sizes[last] - sizes[first]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.members) and self.sizes[self.members[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.members[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                # the range was emptied by exclusions: restart from the next member's count so that it expands
                self.most_count = self.sizes[self.members[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.members[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.members[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Swap the member last returned by next_most_loaded to the end of the most-loaded range and shrink it."""
        i = self.next_most + 1
        self.members[i], self.members[self.most_end - 1] = self.members[self.most_end - 1], self.members[i]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


def assign(
    member_ids: Sequence[str],
    subscriptions: Mapping[str, Iterable[str]],
    current: Mapping[str, Iterable[TopicPartition]],
    partitions_per_topic: Mapping[str, int],
    topic_key: Callable[[str], object] = lambda t: t,
) -> dict[str, list[TopicPartition]]:
    """member id -> partitions (ascending by topic name, then partition).

    `member_ids`: the GroupSpec's member order (Kafka: HashMap order of the ids). `subscriptions`: member -> subscribed
    topics (every one must be in `partitions_per_topic`, as Kafka's PartitionAssignorException demands).
    `current`: member -> its partitions in the previous target assignment (each partition held by at most one member).
    `topic_key`: sort key standing for `Uuid.compareTo` of the topics' ids, the comparator's last tie-break."""
    ids = list(member_ids)
    subs = {mid: set(subscriptions.get(mid, ())) for mid in ids}
    subscribers = _topic_subscribers(ids, subs, partitions_per_topic)
    if not subscribers:
        return {}
    return _Builder(ids, subs, subscribers, partitions_per_topic, topic_key).build(current)


def _topic_subscribers(
    ids: list[str], subs: Mapping[str, set[str]], partitions_per_topic: Mapping[str, int]
) -> dict[str, list[int]]:
    """Each subscribed topic's subscribers by member number; a topic missing from the metadata is Kafka's error."""
    subscribers: dict[str, list[int]] = {}
    for i, mid in enumerate(ids):
        for topic in sorted(subs[mid]):
            if topic not in partitions_per_topic:
                raise PlannerError(
                    f"Members are subscribed to topic {topic} which doesn't exist in the topic metadata."
                )
            subscribers.setdefault(topic, []).append(i)
    return subscribers


class _Builder:
    """UniformHeterogeneousAssignmentBuilder: `owners` is targetAssignmentPartitionOwners (-1: unassigned), `sizes`
    memberTargetAssignmentSizes, `target` the target assignment (member -> topic -> partitions)."""

    def __init__(
        self,
        ids: list[str],
        subs: Mapping[str, set[str]],
        subscribers: dict[str, list[int]],
        partitions_per_topic: Mapping[str, int],
        topic_key: Callable[[str], object],
    ):
        self.ids = ids
        self.subs = subs
        self.subscribers = subscribers
        self.counts = {t: partitions_per_topic[t] for t in subscribers}
        self.topic_key = topic_key
        self.sizes = [0] * len(ids)
        self.owners = {t: [-1] * self.counts[t] for t in subscribers}
        self.target: dict[str, dict[str, set[int]]] = {mid: {} for mid in ids}
        self.balancer = _Balancer(self.sizes)  # reads the live sizes

    def build(self, current: Mapping[str, Iterable[TopicPartition]]) -> dict[str, list[TopicPartition]]:
        self._maybe_revoke_partitions(current)
        self._assign_remaining_partitions(self._compute_unassigned_partitions())
        self._balance()
        target = self.target
        return {
            mid: [TopicPartition(t, p) for t in sorted(target[mid]) for p in sorted(target[mid][t])] for mid in target
        }

    def _sort_topic_ids(self, topics: Iterable[str]) -> list[str]:
        """Partitions per subscriber descending (Java double division), subscribers ascending, topic id."""
        counts, subscribers = self.counts, self.subscribers
        return sorted(
            topics, key=lambda t: (-(counts[t] / len(subscribers[t])), len(subscribers[t]), self.topic_key(t))
        )

    def _maybe_revoke_partitions(self, current: Mapping[str, Iterable[TopicPartition]]) -> None:
        """Keep what a member holds of the topics it still subscribes to."""
        index = {mid: i for i, mid in enumerate(self.ids)}
        for mid in self.ids:
            for tp in current.get(mid, ()):
                if tp.topic in self.subs[mid]:
                    self._keep(mid, index[mid], tp)

    def _keep(self, mid: str, i: int, tp: TopicPartition) -> None:
        if not 0 <= tp.partition < self.counts[tp.topic]:
            raise PlannerError(f"{mid} holds {tp}, but {tp.topic} has {self.counts[tp.topic]} partitions")
        if self.owners[tp.topic][tp.partition] != -1:
            raise PlannerError(f"{tp} is held by both {self.ids[self.owners[tp.topic][tp.partition]]} and {mid}")
        self.owners[tp.topic][tp.partition] = i
        self.target[mid].setdefault(tp.topic, set()).add(tp.partition)
        self.sizes[i] += 1

    def _compute_unassigned_partitions(self) -> dict[str, list[int]]:
        return {t: [p for p in range(self.counts[t]) if self.owners[t][p] == -1] for t in self.subscribers}

    def _assign_remaining_partitions(self, unassigned: dict[str, list[int]]) -> None:
        """Topic by topic, each unowned partition to the next least-loaded subscriber."""
        for topic in self._sort_topic_ids(t for t, parts in unassigned.items() if parts):
            self.balancer.initialize(self.subscribers[topic])
            for partition in unassigned[topic]:
                self._assign_partition(topic, partition, self.balancer.next_least_loaded())

    def _balance(self) -> None:
        """balance / balanceTopics: rounds over the topics with 2+ subscribers until a whole pass moved nothing."""
        movable = self._sort_topic_ids(t for t in self.subscribers if len(self.subscribers[t]) >= 2)
        last_rebalanced = -1
        for _ in range(MAX_ITERATION_COUNT if movable else 0):
            for k, topic in enumerate(movable):
                if k == last_rebalanced:
                    return
                owner = self.owners[topic]
                moved = _balance_topic(
                    topic, self.counts[topic], owner, self.subscribers[topic], self.balancer, self._assign_partition
                )
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = k

    def _assign_partition(self, topic: str, partition: int, i: int) -> None:
        """Move the partition from its owner (if any) to member `i`."""
        old = self.owners[topic][partition]
        if old != -1:
            held = self.target[self.ids[old]][topic]
            held.discard(partition)
            if not held:
                del self.target[self.ids[old]][topic]
            self.sizes[old] -= 1
        self.target[self.ids[i]].setdefault(topic, set()).add(partition)
        self.owners[topic][partition] = i
        self.sizes[i] += 1


def _balance_topic(topic: str, n: int, owner: list[int], members: Sequence[int], balancer: _Balancer, add) -> int:
    """balanceTopic: moves from the most to the least loaded subscribers of one topic; the number of moves."""
    moved = 0
    if balancer.initialize(members) <= 1:
        return moved
    parts = sorted(range(n), key=lambda p: (owner[p], p))  # grouped by owner
    start: dict[int, int] = {}
    end: dict[int, int] = {}  # exclusive
    for i, p in enumerate(parts):
        start.setdefault(owner[p], i)
        end[owner[p]] = i + 1
    while not balancer.is_balanced():
        while True:
            src = balancer.next_most_loaded()
            if src == -1:
                break
            if src not in end or end[src] - start[src] <= 0:
                balancer.exclude_most_loaded()
                continue
            break
        if src == -1:
            break
        partition = parts[end[src] - 1]
        end[src] -= 1
        dst = balancer.next_least_loaded()
        if balancer.is_balanced():
            break
        add(topic, partition, dst)
        moved += 1
    return moved
