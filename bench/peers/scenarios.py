"""The seeded clusters the peers' planners and ours are compared on (Kafka-placed topics, heavy-tailed sizes).

Topics are placed as a ZooKeeper-mode Kafka places them at creation (AdminUtils' rack-aware round robin with a
random start drawn from java.util.Random), on the brokers that existed then; scale-outs then register new, empty
brokers. Sizes are heavy-tailed: a Pareto-distributed size per topic, spread unevenly over its partitions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from planner.java import JavaRandom
from planner.model import Broker, Cluster, TopicPartition, make_topic
from planner.placement.adminutils import assign_replicas_to_brokers

MIB = 1 << 20
OFFSETS = "__consumer_offsets"


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    cluster: Cluster  # as ZooKeeper holds it (new brokers registered, still empty)
    sizes: dict[TopicPartition, int] = field(hash=False)  # bytes on one replica
    decommission: tuple[int, ...] = ()  # brokers to empty; () = a rebalance over every broker
    replication: tuple[str, int] | None = None  # (topic, new replication factor): an RF change instead

    @property
    def action(self) -> str:
        if self.replication:
            return "set-replication-factor"
        return "decommission" if self.decommission else "rebalance"

    def expected_rf(self, tp: TopicPartition, current: int) -> int:
        return self.replication[1] if self.replication and tp.topic == self.replication[0] else current

    @property
    def targets(self) -> tuple[int, ...]:
        return tuple(b for b in self.cluster.broker_ids if b not in self.decommission)


def _racks(ids: range, racks: list[str]) -> dict[int, str]:
    return {b: racks[(b - 1) % len(racks)] for b in ids}


def _build(seed: int, racks: dict[int, str], old: list[int], topics: list[tuple[str, int, int]]) -> tuple:
    """The cluster with `topics` (name, partitions, RF) placed by Kafka on `old`, and heavy-tailed sizes."""
    rng = random.Random(seed)
    jrnd = JavaRandom(seed)
    metas = [(b, racks[b]) for b in sorted(old)]
    placed, sizes = [], {}
    for name, n, rf in topics:
        placed.append(make_topic(name, assign_replicas_to_brokers(metas, n, rf, rnd=jrnd)))
        scale = (2 * MIB if name == OFFSETS else 64 * MIB) * min(rng.paretovariate(1.16), 400.0)
        for pid in range(n):
            sizes[TopicPartition(name, pid)] = int(scale * rng.lognormvariate(0, 0.6))
    brokers = tuple(Broker(b, rack=racks[b], host="127.0.0.1", port=9092) for b in sorted(racks))
    return Cluster(brokers=brokers, topics=tuple(sorted(placed, key=lambda t: t.name)), mode="zookeeper"), sizes


def _topics(rng: random.Random, count: int, counts: list[int], rf3_share: float = 0.85) -> list[tuple[str, int, int]]:
    return [(f"topic-{i:03d}", rng.choice(counts), 3 if rng.random() < rf3_share else 2) for i in range(count)]


def scale_out() -> Scenario:
    rng = random.Random(11)
    racks = _racks(range(1, 13), ["a", "b", "c"])
    topics = _topics(rng, 31, [6, 8, 12, 12, 16, 18, 24, 24, 30, 36, 48]) + [(OFFSETS, 50, 3)]
    cluster, sizes = _build(11, racks, list(range(1, 10)), topics)
    return Scenario(
        "scale-out", "scale-out 9 -> 12 brokers, 3 racks, 31 Kafka-placed topics + __consumer_offsets", cluster, sizes
    )


def decommission_uneven_racks() -> Scenario:
    rng = random.Random(22)
    racks = {**{b: "a" for b in range(1, 6)}, **{b: "b" for b in range(6, 9)}, **{b: "c" for b in range(9, 12)}}
    topics = _topics(rng, 40, [4, 6, 8, 11, 12, 16, 22, 24, 33]) + [(OFFSETS, 50, 3)]
    cluster, sizes = _build(22, racks, list(range(1, 12)), topics)
    return Scenario(
        "decommission", "decommission broker 3 of 11, racks of 5/3/3 brokers", cluster, sizes, decommission=(3,)
    )


def large_scale_out() -> Scenario:
    rng = random.Random(33)
    racks = _racks(range(1, 61), [f"r{i}" for i in range(6)])
    topics: list[tuple[str, int, int]] = [(OFFSETS, 50, 3)]
    left = 10_000 - 50
    while left > 0:
        n = min(left, rng.choice([10, 12, 20, 24, 30, 40, 50, 60, 64, 100, 120, 128, 200]))
        topics.append((f"topic-{len(topics):03d}", n, 3))
        left -= n
    cluster, sizes = _build(33, racks, list(range(1, 51)), topics)
    return Scenario("large", "scale-out 50 -> 60 brokers, 6 racks, 10,000 partitions", cluster, sizes)


def small_topics() -> Scenario:
    rng = random.Random(44)
    racks = _racks(range(1, 25), ["a", "b", "c"])
    topics = _topics(rng, 300, list(range(1, 24))) + [(OFFSETS, 50, 3)]
    cluster, sizes = _build(44, racks, list(range(1, 19)), topics)
    return Scenario("small-topics", "scale-out 18 -> 24 brokers, 300 topics of 1-23 partitions", cluster, sizes)


def raise_rf() -> Scenario:
    rng = random.Random(55)
    racks = _racks(range(1, 10), ["a", "b", "c"])
    topics = _topics(rng, 20, [6, 12, 18, 24, 36], rf3_share=0.7) + [("orders", 72, 2), (OFFSETS, 50, 3)]
    cluster, sizes = _build(55, racks, list(range(1, 10)), topics)
    return Scenario(
        "raise-rf",
        "raise topic orders (72 partitions) from RF 2 to 3 on 9 brokers, 3 racks",
        cluster,
        sizes,
        replication=("orders", 3),
    )


SCENARIOS = {
    "scale-out": scale_out,
    "decommission": decommission_uneven_racks,
    "small-topics": small_topics,
    "raise-rf": raise_rf,
    "large": large_scale_out,
}
