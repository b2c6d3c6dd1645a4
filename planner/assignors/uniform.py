"""KIP-848 server-side `uniform` assignor (the new consumer protocol's default)
(`group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/UniformAssignor.java`).

Homogeneous groups (one shared subscription) follow Kafka 4.4.0's `UniformHomogeneousAssignmentBuilder`: members in
group order (the coordinator's HashMap of member ids, filled from its TimelineHashMap of members: `member_order_of`)
get quota `total // members`, and an extra slot while
`total % members` slots remain; each keeps its current partitions of subscribed topics up to its quota and the excess
is revoked; a member that cannot fill its extra slot from what it holds gives the slot up to the members after it
while enough of them remain (so the extras go to members already holding that many); the pool — partitions nobody
holds (topic by topic, ascending), then the revoked ones — fills the members below quota in order. Kafka walks the
topics in the iteration order of a HashSet of topic ids, and a member's current topics in the order of a HashMap of
their ids filled in the order of the member's target-assignment record (here: the order the topics first appear in
`owned`), each topic's partitions in the order of a HashSet: when the topology gives every subscribed topic a
`topic_id`, those orders are reproduced from `Uuid.hashCode`; otherwise topics are taken in name order.
tests/realkafka/test_uniform_assignor.py checks all of it against Kafka's own UniformAssignor on seeded groups.

Heterogeneous groups (members subscribing to different topics) follow `UniformHeterogeneousAssignmentBuilder`
(planner/assignors/uniform_heterogeneous.py), with the same member order. Its last tie-break between topics is
`Uuid.compareTo` of their ids (signed high, then low 64 bits, as in kafka-clients 4.4.0): topics with a `topic_id` are
ordered as Kafka does; topics without one are ordered by name, and `inexact_note` says when that stand-in changes the
result.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.assignors.group import Member, subscribed_topics
from planner.java import hashmap_order, int32, sorted_java, string_sort_key, timeline_hashmap_order
from planner.model import PlannerError, TopicPartition


def uuid_hash_code(topic_id: str) -> int:
    """org.apache.kafka.common.Uuid.hashCode of a base64url topic id: h = msb ^ lsb; (int)(h >> 32) ^ (int) h."""
    import base64

    raw = base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
    if len(raw) != 16:
        raise PlannerError(f"topic id {topic_id!r} is not a 22-character base64url Kafka Uuid")
    h = int.from_bytes(raw[:8], "big") ^ int.from_bytes(raw[8:], "big")
    return int32((h >> 32) ^ h)


def topic_order(
    topics: Sequence[str], topic_ids: Mapping[str, str] | None, hash_set: bool = True, as_given: bool = False
) -> list[str]:
    """Kafka's iteration order over topic ids: `new HashSet<>(ids)` (hash_set) or a `new HashMap<>()` keyed by them.
    Ids sharing a bucket keep their insertion order: `topics` as given (as_given), else by name."""
    names = list(topics) if as_given else sorted_java(list(topics))
    if not topic_ids or any(not topic_ids.get(t) for t in names):
        return names
    capacity = max(int(len(names) / 0.75) + 1, 16) if hash_set else None
    return hashmap_order(names, hash_of=lambda t: uuid_hash_code(topic_ids[t]), initial_capacity=capacity)


def member_order_of(members: Sequence[Member]) -> list[str]:
    """`groupSpec.memberIds()` as Kafka 4.4.0's coordinator builds it: `TargetAssignmentBuilder.build` puts each
    member into a `new HashMap<>()` while walking the members it was given, an `OverlayMap`
    (`UpdatedMembersAndTargetAssignmentView`) of the group's members (`ModernGroup.members`, a `TimelineHashMap`)
    followed by the member whose heartbeat brought the change, when that member is new. The HashMap's buckets decide;
    members sharing a bucket keep that walk's order. The group file lists members in the order they joined: the
    members that hold a target assignment (`owned`, or a `generation`) are put into the TimelineHashMap in that
    order, and the members joining now (neither) follow them."""
    joined = [m.id for m in members if m.owned or m.generation is not None]
    joining = [m.id for m in members if not (m.owned or m.generation is not None)]
    return hashmap_order(timeline_hashmap_order(joined) + joining)


def assign(
    members: Sequence[Member], partitions_per_topic: Mapping[str, int], topic_ids: Mapping[str, str] | None = None
) -> dict[str, list[TopicPartition]]:
    """member id -> partitions. A member's `owned` partitions are its current assignment.
    `topic_ids`: topic name -> base64url topic id, for Kafka's iteration order over topics."""
    if not members:
        return {}
    topics = subscribed_topics(members, partitions_per_topic)
    if len({frozenset(m.topics) for m in members}) > 1:
        return _heterogeneous(members, topics, topic_ids)
    order = topic_order(list(topics), topic_ids)
    by_id = {m.id: m for m in members}
    held = {tp for m in members for tp in m.owned if tp.topic in topics and tp.partition < topics[tp.topic]}
    pool = [TopicPartition(t, p) for t in order for p in range(topics[t]) if TopicPartition(t, p) not in held]
    total = sum(topics.values())
    min_q, extra = divmod(total, len(members))
    out: dict[str, list[TopicPartition]] = {}
    unfilled: list[tuple[str, int]] = []
    seen: set[TopicPartition] = set()
    member_order = member_order_of(members)
    for index, mid in enumerate(member_order):
        quota = min_q
        has_extra = extra > 0
        if has_extra:
            quota += 1
        keep: list[TopicPartition] = []
        current = [
            tp for tp in by_id[mid].owned if tp.topic in topics and tp.partition < topics[tp.topic] and tp not in seen
        ]
        # the member's current assignment: a HashMap of topic ids filled in the order of its target-assignment record
        # (Assignment.fromRecord, Collectors.toMap), which is the order its topics first appear in `owned`
        for topic in topic_order(list(dict.fromkeys(tp.topic for tp in current)), topic_ids, False, as_given=True):
            # new HashSet<>(the record's partitions): bucket order (ascending below the table size)
            listed = [tp.partition for tp in current if tp.topic == topic]
            parts = hashmap_order(listed, initial_capacity=max(int(len(listed) / 0.75) + 1, 16))
            for p in parts:
                tp = TopicPartition(topic, p)
                if quota > 0:
                    keep.append(tp)
                    quota -= 1
                else:
                    pool.append(tp)
                seen.add(tp)
        # 4.x: a member that cannot fill its extra slot from what it holds gives the slot up while enough members
        # remain after it to take the remaining extras (UniformHomogeneousAssignmentBuilder.maybeRevokePartitions:
        # `quota > 0 && hasExtra && numberOfMembers - memberIndex > remainingMembersToGetAnExtraPartition`), so the
        # extras go to members already holding that many and fewer partitions move
        if quota > 0 and has_extra and len(member_order) - index > extra:
            quota -= 1
            has_extra = False
        if has_extra:
            extra -= 1
        out[mid] = keep
        if quota > 0:
            unfilled.append((mid, quota))
    kept = {tp for tps in out.values() for tp in tps}
    queued = set(pool)
    # a partition two members both claimed (not possible in Kafka's target assignment): the first keeps it
    pool += [tp for tp in sorted(held, key=lambda tp: (tp.topic, tp.partition)) if tp not in kept and tp not in queued]
    i = 0
    for mid, quota in unfilled:
        take = pool[i : i + quota]
        i += len(take)
        out[mid].extend(take)
    if i < len(pool):
        raise AssertionError("Partitions were left unassigned")
    return {m.id: sorted(out[m.id], key=lambda tp: (tp.topic, tp.partition)) for m in members}


def uuid_sort_key(topic_id: str) -> tuple[int, int]:
    """Uuid.compareTo (kafka-clients 4.4.0, org/apache/kafka/common/Uuid.java): the high 64 bits, then the low 64 bits,
    each compared as a signed `long` (`this.mostSignificantBits > other.mostSignificantBits`)."""
    import base64

    raw = base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
    if len(raw) != 16:
        raise PlannerError(f"topic id {topic_id!r} is not a 22-character base64url Kafka Uuid")
    return int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True)


def _current(members: Sequence[Member], topics: Mapping[str, int]) -> dict[str, list[TopicPartition]]:
    """Each member's current partitions of topics it subscribes to and that exist. A partition two members both claim
    (impossible in Kafka's target assignment) stays with the first in the group file."""
    owner: dict[TopicPartition, str] = {}
    for m in members:
        for tp in m.owned:
            if tp.topic in m.topics and tp.topic in topics and tp.partition < topics[tp.topic]:
                owner.setdefault(tp, m.id)
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in members}
    for tp, mid in owner.items():
        out[mid].append(tp)
    return out


def _topic_key(topic_ids: Mapping[str, str] | None):
    """The heterogeneous builder's last tie-break (Uuid.compareTo): topics with a topic id in id order; topics without
    one after them, by name (`inexact_note` says when that stand-in can matter)."""
    ids = topic_ids or {}
    return lambda t: (0, uuid_sort_key(ids[t]), b"") if ids.get(t) else (1, (0, 0), string_sort_key(t))


def _heterogeneous(
    members: Sequence[Member], topics: Mapping[str, int], topic_ids: Mapping[str, str] | None, topic_key=None
) -> dict[str, list[TopicPartition]]:
    from planner.assignors import uniform_heterogeneous

    order = member_order_of(members)
    subs = {m.id: [t for t in m.topics if t in topics] for m in members}
    key = topic_key or _topic_key(topic_ids)
    out = uniform_heterogeneous.assign(order, subs, _current(members, topics), topics, key)
    return {m.id: out.get(m.id, []) for m in members}


def _tied_topics(members: Sequence[Member], topics: Mapping[str, int]) -> list[list[str]]:
    """Groups of subscribed topics the heterogeneous builder's comparator can only order by topic id: same partitions
    per subscriber (as a Java double) and same number of subscribers."""
    groups: dict[tuple[float, int], list[str]] = {}
    for t in sorted_java(list(topics)):
        n = sum(1 for m in members if t in m.topics)
        if n:
            groups.setdefault((topics[t] / n, n), []).append(t)
    return [g for g in groups.values() if len(g) > 1]


MAX_TIE_ORDERS = 720  # orders of tied topics tried before giving up on proving the result does not depend on them


def inexact_note(
    members: Sequence[Member], partitions_per_topic: Mapping[str, int], topic_ids: Mapping[str, str] | None
) -> str | None:
    """Why `assign` may not be Kafka's exact answer for this group, or None when it is."""
    import itertools
    import math

    topics = subscribed_topics(members, partitions_per_topic)
    missing = [t for t in sorted_java(list(topics)) if not (topic_ids or {}).get(t)]
    if not missing or len(topics) < 2:
        return None
    if len({frozenset(m.topics) for m in members}) <= 1:
        return (
            f"no topic_id for {', '.join(missing)} in the topology: Kafka walks the topics in the hash order of "
            f"their ids, the planner in name order"
        )
    tied = [g for g in _tied_topics(members, topics) if any(t in missing for t in g)]
    if not tied:
        return None
    # the result may still not depend on how the tied topics are ordered: try every order
    if math.prod(math.factorial(len(g)) for g in tied) <= MAX_TIE_ORDERS:
        base = {t: i for i, t in enumerate(sorted(topics, key=_topic_key(topic_ids)))}
        results = set()
        for perms in itertools.product(*(itertools.permutations(g) for g in tied)):
            rank = dict(base)
            for group, perm in zip(tied, perms):
                for t, slot in zip(perm, sorted(base[x] for x in group)):
                    rank[t] = slot
            out = _heterogeneous(members, topics, None, topic_key=rank.__getitem__)
            results.add(tuple(sorted((mid, tuple(tps)) for mid, tps in out.items())))
            if len(results) > 1:
                break
        if len(results) == 1:
            return None
    groups = "; ".join(", ".join(g) for g in tied)
    unknown = [t for g in tied for t in g if t in missing]
    return (
        f"no topic_id for {', '.join(unknown)} in the topology: Kafka orders topics with equal partitions per "
        f"subscriber and equal subscriber counts ({groups}) by topic id, the planner by name, and here the order "
        f"changes the result"
    )
