"""KIP-848 server-side `uniform` assignor (the new consumer protocol's default), kafka-facts §7.4.

Homogeneous groups (one shared subscription) follow `UniformHomogeneousAssignmentBuilder`: members in group order
(the coordinator's HashMap of member ids) get quota `total // members`, +1 for the first `total % members`; each keeps
its current partitions of subscribed topics up to its quota and the excess is revoked; the pool — partitions nobody
holds (topic by topic, ascending), then the revoked ones — fills the members below quota in order. Kafka walks the
topics in the iteration order of a HashSet of topic ids (and a member's current topics in HashMap order of their ids):
when the topology gives every subscribed topic a `topic_id`, that order is reproduced from `Uuid.hashCode`; otherwise
topics are taken in name order.

Heterogeneous groups use the planner's own balanced, sticky algorithm (`_heterogeneous`), not Kafka's
`UniformHeterogeneousAssignmentBuilder` tie-breaking.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from planner.clients.group import Member, subscribed_topics
from planner.java import hashmap_order, int32, sorted_java, string_sort_key
from planner.model import PlannerError, TopicPartition


def uuid_hash_code(topic_id: str) -> int:
    """org.apache.kafka.common.Uuid.hashCode of a base64url topic id: h = msb ^ lsb; (int)(h >> 32) ^ (int) h."""
    import base64

    raw = base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
    if len(raw) != 16:
        raise PlannerError(f"topic id {topic_id!r} is not a 22-character base64url Kafka Uuid")
    h = int.from_bytes(raw[:8], "big") ^ int.from_bytes(raw[8:], "big")
    return int32((h >> 32) ^ h)


def topic_order(topics: Sequence[str], topic_ids: Mapping[str, str] | None, hash_set: bool = True) -> list[str]:
    """Kafka's iteration order over topic ids: `new HashSet<>(ids)` (hash_set) or a `new HashMap<>()` keyed by them."""
    names = sorted_java(list(topics))
    if not topic_ids or any(not topic_ids.get(t) for t in names):
        return names
    capacity = max(int(len(names) / 0.75) + 1, 16) if hash_set else None
    return hashmap_order(names, hash_of=lambda t: uuid_hash_code(topic_ids[t]), initial_capacity=capacity)


def assign(members: Sequence[Member], partitions_per_topic: Mapping[str, int],
           topic_ids: Mapping[str, str] | None = None) -> dict[str, list[TopicPartition]]:
    """member id -> partitions. A member's `owned` partitions are its current assignment.
    `topic_ids`: topic name -> base64url topic id, for Kafka's iteration order over topics."""
    if not members:
        return {}
    topics = subscribed_topics(members, partitions_per_topic)
    if len({frozenset(m.topics) for m in members}) > 1:
        return _heterogeneous(members, topics, _current(members, topics))
    order = topic_order(list(topics), topic_ids)
    by_id = {m.id: m for m in members}
    held = {tp for m in members for tp in m.owned if tp.topic in topics and tp.partition < topics[tp.topic]}
    pool = [TopicPartition(t, p) for t in order for p in range(topics[t]) if TopicPartition(t, p) not in held]
    total = sum(topics.values())
    min_q, extra = divmod(total, len(members))
    out: dict[str, list[TopicPartition]] = {}
    unfilled: list[tuple[str, int]] = []
    seen: set[TopicPartition] = set()
    for mid in hashmap_order([m.id for m in members]):
        quota = min_q
        if extra > 0:
            quota += 1
            extra -= 1
        keep: list[TopicPartition] = []
        current = [tp for tp in by_id[mid].owned if tp.topic in topics and tp.partition < topics[tp.topic]
                   and tp not in seen]
        for topic in topic_order(list(dict.fromkeys(tp.topic for tp in current)), topic_ids, hash_set=False):
            parts = sorted(tp.partition for tp in current if tp.topic == topic)
            for p in parts:
                tp = TopicPartition(topic, p)
                if quota > 0:
                    keep.append(tp)
                    quota -= 1
                else:
                    pool.append(tp)
                seen.add(tp)
        out[mid] = keep
        if quota > 0:
            unfilled.append((mid, quota))
    kept = {tp for tps in out.values() for tp in tps}
    queued = set(pool)
    # a partition two members both claimed (not possible in Kafka's target assignment): the first keeps it
    pool += [tp for tp in sorted(held, key=lambda tp: (tp.topic, tp.partition)) if tp not in kept and tp not in queued]
    i = 0
    for mid, quota in unfilled:
        take = pool[i:i + quota]
        i += len(take)
        out[mid].extend(take)
    if i < len(pool):
        raise AssertionError("Partitions were left unassigned")
    return {m.id: sorted(out[m.id], key=lambda tp: (tp.topic, tp.partition)) for m in members}


def _current(members: Sequence[Member], topics: Mapping[str, int]) -> dict[str, list[TopicPartition]]:
    owner: dict[TopicPartition, str] = {}
    for m in members:
        for tp in m.owned:
            if tp.topic in m.topics and tp.topic in topics and tp.partition < topics[tp.topic]:
                owner.setdefault(tp, m.id)
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in members}
    for tp, mid in owner.items():
        out[mid].append(tp)
    return out


def _heterogeneous(members: Sequence[Member], topics: Mapping[str, int], owned) -> dict[str, list[TopicPartition]]:
    """Heterogeneous subscriptions: keep each member's valid current partitions, hand every other partition (topics with
    the fewest subscribers first, then by name; partitions ascending) to the eligible member with the fewest partitions
    (ties: member id), then move partitions from a member to an eligible one with at least two fewer until no such move
    exists, preferring partitions that member did not hold before."""
    subs = {m.id: {t for t in m.topics if t in topics} for m in members}
    out: dict[str, list[TopicPartition]] = {m.id: [tp for tp in owned.get(m.id, []) if tp.topic in subs[m.id]]
                                            for m in members}
    previous = {tp: mid for mid, tps in owned.items() for tp in tps}
    taken = {tp for tps in out.values() for tp in tps}
    potential = {t: sorted((mid for mid in subs if t in subs[mid]), key=string_sort_key) for t in topics}
    order = sorted(topics, key=lambda t: (len(potential[t]), string_sort_key(t)))
    for t in order:
        for p in range(topics[t]):
            tp = TopicPartition(t, p)
            if tp in taken or not potential[t]:
                continue
            mid = min(potential[t], key=lambda c: (len(out[c]), string_sort_key(c)))
            out[mid].append(tp)
            taken.add(tp)
    # balance: move from a member to an eligible member with at least two fewer partitions
    while True:
        best = None
        for src in sorted(out, key=lambda c: (-len(out[c]), string_sort_key(c))):
            candidates = sorted(out[src], key=lambda tp: (previous.get(tp) == src, string_sort_key(tp.topic), tp.partition))
            for tp in candidates:
                dst = min((c for c in potential[tp.topic] if len(out[c]) + 1 < len(out[src])),
                          key=lambda c: (len(out[c]), string_sort_key(c)), default=None)
                if dst is not None:
                    best = (src, dst, tp)
                    break
            if best:
                break
        if best is None:
            break
        src, dst, tp = best
        out[src].remove(tp)
        out[dst].append(tp)
    return out
