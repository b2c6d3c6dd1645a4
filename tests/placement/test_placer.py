"""The ReplicaPlacer registry (planner/placement/placer.py): the CLI's --placer choices come from it."""

import pytest

from planner.cli.topics import Placer
from planner.model import Broker, Cluster, PlannerError, make_topic
from planner.placement.placer import PLACERS, get_placer, plan_new_topic, register_placer


def test_registered_placers_in_order_and_offered_by_the_cli():
    assert list(PLACERS) == ["kafka", "kraft", "load-aware"]
    assert [p.value for p in Placer] == ["kafka", "kraft", "load-aware"]


def test_unknown_placer_names_the_registered_ones():
    with pytest.raises(PlannerError, match=r"^unknown placer 'zk': use kafka, kraft, load-aware$"):
        get_placer("zk")


def test_a_registered_placer_is_dispatched_to():
    class EveryReplicaOnTheFirstBrokers:
        name = "first-brokers"
        description = "test placer"

        def new_topic(self, cluster, n_partitions, replication_factor, *, start_index, seed, rack_aware):
            ids = sorted(b.id for b in cluster.brokers)[:replication_factor]
            return {p: list(ids) for p in range(n_partitions)}, "first brokers"

        def new_partitions(self, cluster, topic, new_total, *, rack_aware, seed):
            raise NotImplementedError

    cluster = Cluster(brokers=tuple(Broker(i) for i in (3, 1, 2)), topics=(make_topic("t", {0: [1, 2]}),))
    register_placer(EveryReplicaOnTheFirstBrokers())
    try:
        assert plan_new_topic(cluster, 2, 2, placer="first-brokers") == ({0: [1, 2], 1: [1, 2]}, "first brokers")
    finally:
        del PLACERS["first-brokers"]


def test_each_builtin_placer_says_how_it_chose():
    cluster = Cluster(brokers=tuple(Broker(i) for i in range(4)), topics=())
    assert plan_new_topic(cluster, 4, 2, start_index=1) == (
        {0: [1, 3], 1: [2, 0], 2: [3, 1], 3: [0, 2]},
        "Kafka AdminUtils, rack-unaware, fixed start index 1",
    )
    assert plan_new_topic(cluster, 2, 2, placer="kraft", seed=0)[1] == "KRaft striped placer, seed 0"
    assert plan_new_topic(cluster, 2, 2, placer="load-aware") == (
        {0: [0, 1], 1: [2, 3]},
        "load-aware placement (not Kafka's): lightest brokers first, rack-safe",
    )
