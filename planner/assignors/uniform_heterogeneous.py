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


def assign(  # noqa: C901
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
    index = {mid: i for i, mid in enumerate(ids)}
    subs = {mid: set(subscriptions.get(mid, ())) for mid in ids}
    subscribers: dict[str, list[int]] = {}
    for i, mid in enumerate(ids):
        for topic in sorted(subs[mid]):
            if topic not in partitions_per_topic:
                raise PlannerError(
                    f"Members are subscribed to topic {topic} which doesn't exist in the topic metadata."
                )
            subscribers.setdefault(topic, []).append(i)
    if not subscribers:
        return {}
    counts = {t: partitions_per_topic[t] for t in subscribers}

    def topic_order(topics: Iterable[str]) -> list[str]:
        return sorted(topics, key=lambda t: (-(counts[t] / len(subscribers[t])), len(subscribers[t]), topic_key(t)))

    sizes = [0] * len(ids)
    owners = {t: [-1] * counts[t] for t in subscribers}
    target: dict[str, dict[str, set[int]]] = {mid: {} for mid in ids}

    # maybeRevokePartitions: keep what a member holds of the topics it still subscribes to
    for mid in ids:
        i = index[mid]
        for tp in current.get(mid, ()):
            if tp.topic in subs[mid]:
                if not 0 <= tp.partition < counts[tp.topic]:
                    raise PlannerError(f"{mid} holds {tp}, but {tp.topic} has {counts[tp.topic]} partitions")
                if owners[tp.topic][tp.partition] != -1:
                    raise PlannerError(f"{tp} is held by both {ids[owners[tp.topic][tp.partition]]} and {mid}")
                owners[tp.topic][tp.partition] = i
                target[mid].setdefault(tp.topic, set()).add(tp.partition)
                sizes[i] += 1

    def add(topic: str, partition: int, i: int) -> None:
        old = owners[topic][partition]
        if old != -1:
            held = target[ids[old]][topic]
            held.discard(partition)
            if not held:
                del target[ids[old]][topic]
            sizes[old] -= 1
        target[ids[i]].setdefault(topic, set()).add(partition)
        owners[topic][partition] = i
        sizes[i] += 1

    # assignRemainingPartitions
    unassigned = {t: [p for p in range(counts[t]) if owners[t][p] == -1] for t in subscribers}
    balancer = _Balancer(sizes)
    for topic in topic_order(t for t, parts in unassigned.items() if parts):
        balancer.initialize(subscribers[topic])
        for partition in unassigned[topic]:
            add(topic, partition, balancer.next_least_loaded())

    # balance / balanceTopics
    movable = topic_order(t for t in subscribers if len(subscribers[t]) >= 2)
    last_rebalanced = -1
    for _ in range(MAX_ITERATION_COUNT if movable else 0):
        for k, topic in enumerate(movable):
            if k == last_rebalanced:
                break
            if (
                _balance_topic(topic, counts[topic], owners[topic], subscribers[topic], balancer, add) > 0
                or last_rebalanced == -1
            ):
                last_rebalanced = k
        else:
            continue
        break

    return {mid: [TopicPartition(t, p) for t in sorted(target[mid]) for p in sorted(target[mid][t])] for mid in ids}


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
