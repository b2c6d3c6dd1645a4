"""Splitting a plan into batches that can each be executed (and verified) on their own."""

from __future__ import annotations

from typing import Mapping

from planner.model import Cluster, Partition, TopicPartition, tp_sort_key


def batch_order(
    cluster: Cluster,
    proposed: Mapping[TopicPartition, tuple[int, ...]],
    targets: frozenset[int] | set[int] = frozenset(),
) -> list[TopicPartition]:
    """The order partitions go into batches.

    Every partition's move is complete in itself (Kafka adds the new replicas, waits for them to join the ISR, then
    drops the old ones), so any batch is a valid reassignment and never lowers the replication of what it touches.
    The order makes early batches the most useful and the cheapest: first partitions that leave brokers outside the
    target set (decommission / offline brokers), then pure reorders (no data moves), then the rest by bytes ascending,
    then by topic and partition.
    """
    if len(proposed) >= SORT_ARRAYS_FROM:
        return _order_arrays(cluster, proposed, targets)
    return _order_tuples(cluster, proposed, targets)


def _order_tuples(
    cluster: Cluster, proposed: Mapping[TopicPartition, tuple[int, ...]], targets: frozenset[int] | set[int]
) -> list[TopicPartition]:
    """`batch_order`'s order by a sort of Python tuples."""
    names: dict[str, tuple[tuple[Partition, ...], bytes]] = {}  # per topic: its partitions, its sort key

    def key(tp: TopicPartition):
        if tp.topic not in names:
            names[tp.topic] = cluster.topic(tp.topic).partitions, tp_sort_key(tp)[0]
        parts, name = names[tp.topic]
        part = parts[tp.partition]  # the partitions the plan moves only
        cur, new = part.replicas, proposed[tp]
        leaves_outside = bool(targets) and any(b not in targets for b in cur)
        copies = len(set(new).difference(cur))
        return (not leaves_outside, copies > 0, (part.size or 0) * copies, (name, tp.partition))

    return sorted(proposed, key=key)


SORT_ARRAYS_FROM = 20_000  # partitions from which batch_order sorts NumPy arrays (below: importing it costs more)


def _order_arrays(
    cluster: Cluster, proposed: Mapping[TopicPartition, tuple[int, ...]], targets: frozenset[int] | set[int]
) -> list[TopicPartition]:
    """`batch_order`'s order by one `lexsort` of its keys (group, bytes, topic's rank, partition), where the bytes fit
    in 64 bits (else the sort of Python tuples)."""
    import numpy as np

    tps = list(proposed)
    topics: dict[str, tuple[tuple[Partition, ...], int]] = {}  # per topic: its partitions, its index in `topics`
    group, size, topic = [], [], []
    inside = targets.issuperset if targets else None
    for tp, new in proposed.items():
        if tp.topic not in topics:
            topics[tp.topic] = cluster.topic(tp.topic).partitions, len(topics)
        parts, index = topics[tp.topic]
        part = parts[tp.partition]
        cur = part.replicas
        copies = len(set(new).difference(cur))
        group.append(2 * (inside is None or inside(cur)) + (copies > 0))  # leaves no broker outside: later
        size.append((part.size or 0) * copies)
        topic.append(index)
    if size and max(size) >= 2**63:
        return _order_tuples(cluster, proposed, targets)
    names = sorted(topics, key=lambda name: tp_sort_key(TopicPartition(name, 0)))
    rank = np.empty(len(names), np.int64)
    rank[[topics[name][1] for name in names]] = np.arange(len(names))
    order = np.lexsort(
        (
            np.fromiter((tp.partition for tp in tps), np.int64, len(tps)),
            rank[np.asarray(topic, np.int64)],
            np.asarray(size, np.int64),
            np.asarray(group, np.int64),
        )
    )
    return [tps[i] for i in order.tolist()]


def copied_bytes(cluster: Cluster, tp: TopicPartition, new: tuple[int, ...]) -> int | None:
    """The bytes a partition's move copies: its size once per new replica (None: size unknown, 0: a reorder)."""
    cur = cluster.topic(tp.topic).partitions[tp.partition]
    copies = len(set(new).difference(cur.replicas))
    if not copies:
        return 0
    return None if cur.size is None else cur.size * copies


def batches(
    cluster: Cluster,
    proposed: Mapping[TopicPartition, tuple[int, ...]],
    batch_size: int | None,
    targets: frozenset[int] | set[int] = frozenset(),
    batch_bytes: int | None = None,
    canary: bool = True,
) -> list[dict[TopicPartition, tuple[int, ...]]]:
    """Batches in `batch_order`: at most `batch_size` partitions and at most `batch_bytes` bytes to copy each (a
    partition copying more than `batch_bytes` goes alone; sizes unknown count 0); neither given: one batch.

    With `canary` and more than one batch, the first batch is a canary: the one partition that copies the fewest
    bytes but some (a reorder when nothing copies), so one complete move, throttle and --verify included, is seen
    before the bulk of the bytes moves."""
    order = batch_order(cluster, proposed, targets)
    if not order:
        return []
    size_cap = batch_size if batch_size and batch_size > 0 else None
    byte_cap = batch_bytes if batch_bytes and batch_bytes > 0 else None
    if size_cap is None and byte_cap is None:
        return [{tp: proposed[tp] for tp in order}]
    weight = {tp: copied_bytes(cluster, tp, proposed[tp]) or 0 for tp in order}
    cut = _cut(order, weight, size_cap, byte_cap)
    if canary and len(cut) > 1:
        copying = [tp for tp in order if weight[tp] > 0]
        first = min(copying, key=weight.__getitem__) if copying else order[0]  # min keeps the order's first
        cut = [[first]] + _cut([tp for tp in order if tp != first], weight, size_cap, byte_cap)
    return [{tp: proposed[tp] for tp in b} for b in cut]


def _cut(
    order: list[TopicPartition], weight: Mapping[TopicPartition, int], size_cap: int | None, byte_cap: int | None
) -> list[list[TopicPartition]]:
    """`order` cut into runs of at most `size_cap` partitions and `byte_cap` bytes (one partition at least)."""
    out: list[list[TopicPartition]] = []
    current: list[TopicPartition] = []
    total = 0
    for tp in order:
        w = weight[tp]
        if current and (
            (size_cap is not None and len(current) >= size_cap) or (byte_cap is not None and total + w > byte_cap)
        ):
            out.append(current)
            current, total = [], 0
        current.append(tp)
        total += w
    if current:
        out.append(current)
    return out
