"""Seeded clusters the rebalance tests share: the issue's scale-out (9 -> 12 brokers, 3 racks, 31 topics placed by
Kafka's AdminUtils plus __consumer_offsets 50x3)."""

from planner.java import JavaRandom
from planner.model import Broker, Cluster, make_topic
from planner.placement.adminutils import assign_replicas_to_brokers


def scale_out(seed: int = 11, old: int = 9, new: int = 3, racks: int = 3, topics: int = 31) -> Cluster:
    """`old` brokers hold 31 topics (partitions 3..60, RF 2 or 3, start indexes drawn as Kafka draws them) and
    __consumer_offsets; `new` empty brokers join; racks r0..r{racks-1} round robin over broker ids."""
    rnd = JavaRandom(seed)
    metas = [(b, f"r{b % racks}") for b in range(old)]
    ts = []
    for i in range(topics):
        parts = 3 + rnd.next_int(58)
        rf = 2 + rnd.next_int(2)
        ts.append(make_topic(f"topic-{i:02d}", assign_replicas_to_brokers(metas, parts, rf, rnd=rnd)))
    ts.append(make_topic("__consumer_offsets", assign_replicas_to_brokers(metas, 50, 3, rnd=rnd)))
    brokers = tuple(Broker(b, rack=f"r{b % racks}") for b in range(old + new))
    return Cluster(brokers=brokers, topics=tuple(sorted(ts, key=lambda t: t.name)))
