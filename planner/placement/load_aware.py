"""Load-aware placement of a new topic or new partitions (`--placer load-aware`): not Kafka's algorithm, an
alternative under the rebalancer's goals for clusters whose load is uneven (new brokers, say).

Partition by partition, replica by replica, in the rebalancer's goal order: the broker holding fewest replicas
overall (the replica-count goal: the lightest brokers, new ones first, fill up), then fewest replicas of this topic
(the topic goal), then the lowest id. Each partition's first replica (its preferred leader) is the one leading fewest
partitions, then fewest of this topic; then leadership is handed along chains of the new partitions' replicas (a
reordering, as the rebalancer's leader goal does) until all leaders are as even as these replica sets allow and then,
that kept, the topic's. On a cluster with new, empty brokers the new topic goes to them: that evens the replica counts
first, as the goals rank them, and `reassign rebalance` later spreads every topic over every broker. With racks, each
replica goes to a rack the partition does not use yet while one is left (rack-safe: min(RF, racks) racks).
Deterministic; the result prints as Kafka's `--replica-assignment`.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from planner.model import Cluster, PlannerError
from planner.placement.adminutils import broker_metadatas, validate_increase


class _Load:
    def __init__(self, cluster: Cluster, brokers: Sequence[int], topic: str | None):
        self.replicas = {b: 0 for b in brokers}
        self.leaders = {b: 0 for b in brokers}
        self.t_replicas = {b: 0 for b in brokers}
        self.t_leaders = {b: 0 for b in brokers}
        for p in cluster.partitions():
            for pos, b in enumerate(p.replicas):
                if b in self.replicas:
                    self.replicas[b] += 1
                    self.leaders[b] += pos == 0
                    if p.topic == topic:
                        self.t_replicas[b] += 1
                        self.t_leaders[b] += pos == 0

    def add(self, replicas: Sequence[int]) -> None:
        for pos, b in enumerate(replicas):
            self.replicas[b] += 1
            self.t_replicas[b] += 1
            self.leaders[b] += pos == 0
            self.t_leaders[b] += pos == 0


def _pick(pool: Sequence[int], load: _Load) -> int:
    # the rebalancer's goal order: the lightest broker (the replica-count goal: new, empty brokers fill first), then
    # fewest replicas of this topic (the topic goal), then the lowest id
    return min(pool, key=lambda b: (load.replicas[b], load.t_replicas[b], b))


def _partition(brokers: Sequence[int], rack_of: Mapping[int, str | None], rf: int, load: _Load) -> list[int]:
    chosen: list[int] = []
    racks = {rack_of[b] for b in brokers} if all(rack_of[b] is not None for b in brokers) else set()
    for _ in range(rf):
        used = {rack_of[b] for b in chosen}
        pool = [b for b in brokers if b not in chosen]
        fresh = [b for b in pool if rack_of[b] not in used]
        if racks and len(used) < len(racks) and fresh:
            pool = fresh
        chosen.append(_pick(pool, load))
    head = min(chosen, key=lambda b: (load.leaders[b], load.t_leaders[b], b))
    chosen.remove(head)
    chosen.insert(0, head)
    load.add(chosen)
    return chosen


def place_load_aware(
    cluster: Cluster,
    n_partitions: int,
    replication_factor: int,
    *,
    topic: str | None = None,
    start_partition_id: int = 0,
    rack_aware: bool = True,
) -> dict[int, list[int]]:
    """Replica lists of partitions start_partition_id .. +n_partitions-1 on the brokers that take new replicas, as
    the rebalancer's targets and Kafka's placer (`policy.registered_brokers`): online (not offline, not fenced: a
    fenced broker cannot lead, and the controller's placer puts nothing there while unfenced brokers suffice) and not
    cordoned (KIP-1066), counting the load the cluster already carries (and, for new partitions, the topic's existing
    ones)."""
    # the tools' getBrokerMetadatas first, as the default placer (RackAwareMode.Enforced: racks on only some brokers
    # are Kafka's error, with its text)
    rack_of = dict(broker_metadatas([(b.id, b.rack) for b in cluster.brokers if b.placeable], rack_aware))
    brokers = sorted(rack_of)
    if n_partitions <= 0:
        raise PlannerError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise PlannerError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise PlannerError(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    load = _Load(cluster, brokers, topic)
    placed = {
        start_partition_id + p: _partition(brokers, rack_of, replication_factor, load) for p in range(n_partitions)
    }
    _spread_leaders(placed, load)
    return placed


def _spread_leaders(placed: Mapping[int, list[int]], load: _Load) -> None:
    """Hand preferred leadership along a chain of the new partitions (each led by the previous broker of the chain,
    holding the next as a replica: the rebalancer's leader goal reorders replica lists the same way, no data moves),
    in that goal's order: from a broker leading most partitions to one leading at least two fewer, until no such chain
    is left (the leaders per broker as even as these replica sets allow); then, that kept, from a broker leading most
    of the topic to one leading at least two fewer of it and fewer partitions in all. Each chain lowers the sum of
    squares of all leader counts (first), or of the topic's while that of all does not grow (then), so it ends."""
    parts = list(placed.values())
    t_lead, lead = load.t_leaders, load.leaders
    rules: tuple[tuple[dict[int, int], Callable[[int, int], bool]], ...] = (
        (lead, lambda u, v: lead[v] + 2 <= lead[u]),
        (t_lead, lambda u, v: t_lead[v] + 2 <= t_lead[u] and lead[v] < lead[u]),
    )
    while True:
        heads = {r[0] for r in parts}
        path = None
        for counts, ends in rules:
            for u0 in sorted(heads, key=lambda b: (-counts[b], b)):
                path = _chain(parts, [u0], ends)
                if path is not None:
                    break
            if path is not None:
                break
        if path is None:
            return
        for u, i, v in path:
            parts[i].remove(v)
            parts[i].insert(0, v)
            for b, d in ((u, -1), (v, 1)):
                lead[b] += d
                t_lead[b] += d


def _chain(
    parts: Sequence[list[int]], starts: Sequence[int], ends: Callable[[int, int], bool]
) -> list[tuple[int, int, int]] | None:
    """The shortest chain of leadership hand-overs (broker, partition it leads, replica taking over) from one of
    `starts` (u) to a broker v with ends(u, v); None if there is none."""
    led: dict[int, list[int]] = {}
    for i, replicas in enumerate(parts):
        led.setdefault(replicas[0], []).append(i)
    via: dict[int, tuple[int, int]] = {}  # broker -> (the broker it takes leadership from, the partition)
    root = {b: b for b in starts}
    frontier = list(starts)
    while frontier:
        nxt = []
        for u in frontier:
            for i in led.get(u, ()):
                for v in parts[i][1:]:
                    if v in root:
                        continue
                    root[v] = root[u]
                    via[v] = (u, i)
                    if ends(root[v], v):
                        path = []
                        while v in via:
                            u, i = via[v]
                            path.append((u, i, v))
                            v = u
                        return path
                    nxt.append(v)
        frontier = nxt
    return None


class LoadAwarePlacer:
    """`load-aware`: not Kafka's; the lightest brokers first (new ones first), rack-safe."""

    name = "load-aware"
    description = (
        "not Kafka's; fills the lightest brokers (new ones first), rack-safe; "
        "print it with --format replica-assignment for kafka-topics --create"
    )
    how = "load-aware placement (not Kafka's): lightest brokers first, rack-safe"

    def new_topic(
        self,
        cluster: Cluster,
        n_partitions: int,
        replication_factor: int,
        *,
        start_index: int | None,
        seed: int | None,
        rack_aware: bool,
    ) -> tuple[dict[int, list[int]], str]:
        return place_load_aware(cluster, n_partitions, replication_factor, rack_aware=rack_aware), self.how

    def new_partitions(
        self, cluster: Cluster, topic: str, new_total: int, *, rack_aware: bool, seed: int | None
    ) -> tuple[dict[int, list[int]], str]:
        t = cluster.topic(topic)
        validate_increase(topic, t.partition_count, new_total)
        assignment = place_load_aware(
            cluster,
            new_total - t.partition_count,
            t.replication_factor,
            topic=topic,
            start_partition_id=t.partition_count,
            rack_aware=rack_aware,
        )
        return assignment, self.how
