"""plan_metrics: the figures every plan (ours or a peer's) is scored by."""

from testkit import build_cluster

from planner.model import TopicPartition as TP
from planner.rebalance.metrics import PlacementMetrics, plan_metrics

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
