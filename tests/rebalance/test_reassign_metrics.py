"""plan_metrics: the figures every plan (ours or a peer's) is scored by; the order of a plan's batches."""

import random
from dataclasses import replace

import pytest
from testkit import build_cluster

from planner.model import TopicPartition as TP
from planner.rebalance.batches import _order_arrays, _order_tuples
from planner.rebalance.metrics import PlacementMetrics, plan_metrics, plan_score, score
from planner.rebalance.moves import Plan

BEFORE = build_cluster(
    4,
    racks=2,
    topics={
        "__consumer_offsets": {0: (0, 2), 1: (0, 1), 2: (0, 3), 3: (1, 2)},
        "t": {0: (0, 2), 1: (0, 2), 2: (1, 3)},
    },
)
AFTER = BEFORE.with_assignment({TP("t", 1): (3, 0), TP("__consumer_offsets", 2): (2, 3)})


def test_plan_metrics_counts_moves_and_spreads_before_and_after():
    m = plan_metrics(BEFORE, AFTER)
    assert (m.replica_moves, m.bytes_moved, m.unknown_size_moves, m.brokers) == (2, None, 0, (0, 1, 2, 3))
    # replicas 5,3,4,2 -> 4,3,4,3; leaders 5,2,0,0 -> 3,2,1,1; __consumer_offsets replicas 3,2,2,1 -> 2,2,3,1,
    # leaders 3,1,0,0 -> 2,1,1,0; t leaders 2,1,0,0 -> 1,1,0,1; racks r0 = {0, 2}, r1 = {1, 3}: (0, 2) and (1, 3)
    # are rack-unsafe
    assert m.before == PlacementMetrics(
        replica_spread=3,
        leader_spread=5,
        topic_replica_spread=2,
        topics_replica_spread_over_1=1,
        topic_leader_spread=3,
        topics_leader_spread_over_1=2,
        internal_leader_spread=3,
        bytes_max_over_mean=None,
        bytes_spread=None,
        rack_unsafe=4,
    )
    assert m.after == PlacementMetrics(
        replica_spread=1,
        leader_spread=2,
        topic_replica_spread=2,
        topics_replica_spread_over_1=1,
        topic_leader_spread=2,
        topics_leader_spread_over_1=1,
        internal_leader_spread=2,
        bytes_max_over_mean=None,
        bytes_spread=None,
        rack_unsafe=3,
    )
    assert m.as_dict()["after"]["leader_spread"] == 2


def test_plan_metrics_sizes_unknown_are_not_zero_and_brokers_default_leaves_out_emptied_ones():
    sizes = {TP("t", 0): 100, TP("t", 1): 300, TP("t", 2): 200}  # __consumer_offsets: unknown
    m = plan_metrics(BEFORE, AFTER, sizes)
    assert (m.bytes_moved, m.unknown_size_moves) == (300, 1)
    # known bytes (t only) per broker before: 400, 200, 400, 200 (mean 300); after: 400, 200, 100, 500
    assert (m.before.bytes_max_over_mean, m.before.bytes_spread) == (400 / 300, 200)
    assert (m.after.bytes_max_over_mean, m.after.bytes_spread) == (500 / 300, 400)
    # a plan that empties broker 3: the spreads are over brokers 0..2
    empty = BEFORE.with_assignment({TP("t", 2): (1, 2), TP("__consumer_offsets", 2): (0, 1)})
    assert plan_metrics(BEFORE, empty).brokers == (0, 1, 2)
    assert plan_metrics(BEFORE, empty, brokers=[0, 1, 2, 3]).brokers == (0, 1, 2, 3)


def _random_plan(seed: int) -> Plan:
    """A cluster of mixed replication factors, racks (some brokers without one in odd seeds), sizes partly unknown,
    an empty topic, and a plan that moves, reorders, changes replication factors and names a broker outside it."""
    rng = random.Random(seed)
    n = rng.randint(3, 9)
    racks = [None if seed % 2 and k == 0 else f"r{k % 3}" for k in range(n)]
    topics = {
        f"t{t}": {
            p: tuple(rng.sample(range(n), rng.randint(0 if t == 1 else 1, min(n, 4)))) for p in range(rng.randint(1, 9))
        }
        for t in range(6)
    }
    topics["empty"] = {}
    cluster = build_cluster(n, racks=racks, topics=topics)
    sized = replace(
        cluster,
        topics=tuple(
            replace(
                t, partitions=tuple(replace(p, size=rng.choice([None, 0, rng.randint(1, 2**40)])) for p in t.partitions)
            )
            for t in cluster.topics
        ),
    )
    proposed = {}
    for p in sized.partitions():
        pick = rng.random()
        if pick < 0.3:
            proposed[p.tp] = tuple(rng.sample(range(n + 1), rng.randint(1, min(n, 4))))  # broker n: not in the cluster
        elif pick < 0.4:
            proposed[p.tp] = tuple(reversed(p.replicas)) or (0,)
    brokers = () if seed % 3 == 0 else tuple(sorted(rng.sample(range(n), rng.randint(1, n))))
    return Plan(before=sized, proposed=proposed, goal="test", brokers=brokers)


@pytest.mark.parametrize("seed", range(40))
def test_plan_score_is_score_of_the_cluster_after_the_plan(seed):
    plan = _random_plan(seed)
    got = plan_score(plan, arrays=True)
    want = score(plan.before, plan.after, brokers=list(plan.brokers) or list(plan.before.broker_ids))
    assert got[0] == want[0]
    for a, b in zip(got[1:], want[1:]):
        assert (a.members, a.known, a.unsafe, a.topic_replica, a.topic_leader) == (
            b.members,
            b.known,
            b.unsafe,
            b.topic_replica,
            b.topic_leader,
        )
        for x, y in ((a.replicas, b.replicas), (a.leaders, b.leaders), (a.data, b.data)):
            assert set(plan.before.broker_ids) <= set(x)  # every broker of the cluster is counted, 0 or not
            assert {k: v for k, v in x.items() if v} == {k: v for k, v in y.items() if v}
    assert plan.scored[0] == got[0]  # the pure-Python path below ARRAYS_FROM partitions
    assert (got[0].replica_moves, got[0].bytes_moved) == (plan.replica_moves, plan.moved_bytes())


def test_plan_score_beyond_64_bit_byte_sums_counts_exactly():
    cluster = build_cluster(3, topics={"t": {0: (0, 1), 1: (1, 2)}})
    big = replace(
        cluster,
        topics=(
            replace(cluster.topics[0], partitions=tuple(replace(p, size=2**70) for p in cluster.topics[0].partitions)),
        ),
    )
    plan = Plan(before=big, proposed={TP("t", 0): (2, 0)}, goal="test")
    m, t0, t1 = plan_score(plan, arrays=True)
    assert (m.replica_moves, m.bytes_moved) == (1, 2**70)
    assert (t0.data, t1.data) == ({0: 2**70, 1: 2**71, 2: 2**70}, {0: 2**70, 1: 2**70, 2: 2**71})


@pytest.mark.parametrize("seed", range(20))
def test_batch_order_over_arrays_is_the_order_of_the_tuples(seed):
    plan = _random_plan(seed)
    proposed = {tp: r for tp, r in plan.proposed.items() if r}
    for targets in (frozenset(), frozenset(plan.brokers)):
        assert _order_arrays(plan.before, proposed, targets) == _order_tuples(plan.before, proposed, targets)
    # sizes beyond 64 bits: the tuples
    big = replace(
        plan.before,
        topics=tuple(
            replace(t, partitions=tuple(replace(p, size=2**70) for p in t.partitions)) for t in plan.before.topics
        ),
    )
    assert _order_arrays(big, proposed, frozenset()) == _order_tuples(big, proposed, frozenset())
