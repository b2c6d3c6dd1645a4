"""Load-aware placement (`--placer load-aware`): the lightest brokers fill first, rack-safe, each topic spread."""

from collections import Counter

from planner.model import Broker, Cluster, make_topic
from planner.placement.adminutils import assign_replicas_to_brokers
from planner.placement.load_aware import place_load_aware
from planner.rebalance.moves import rack_safe


def _uneven():
    # 9 brokers in 3 racks; the first 6 hold a 60-partition topic placed by Kafka, the last 3 are new and empty
    metas = [(b, f"r{b % 3}") for b in range(6)]
    old = make_topic("old", assign_replicas_to_brokers(metas, 60, 3, fixed_start_index=0))
    return Cluster(brokers=tuple(Broker(b, rack=f"r{b % 3}") for b in range(9)), topics=(old,))


def test_load_aware_placement_fills_the_new_brokers_first_and_stays_rack_safe():
    c = _uneven()
    placed = place_load_aware(c, 30, 3, topic="new")
    counts = Counter(b for r in placed.values() for b in r)
    assert {b: counts[b] for b in range(9)} == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 30, 7: 30, 8: 30}
    rack_of = c.rack_of()
    assert all(rack_safe(r, rack_of, 3) for r in placed.values())
    leaders = Counter(r[0] for r in placed.values())
    assert {b: leaders[b] for b in (6, 7, 8)} == {6: 10, 7: 10, 8: 10}
    # deterministic
    assert place_load_aware(c, 30, 3, topic="new") == placed


def test_load_aware_placement_on_a_balanced_cluster_spreads_the_topic_within_1():
    c = Cluster(brokers=tuple(Broker(b, rack=f"r{b % 3}") for b in range(9)))
    placed = place_load_aware(c, 12, 2, topic="t")
    counts = Counter(b for r in placed.values() for b in r)
    assert sorted(counts[b] for b in range(9)) == [2, 2, 2, 3, 3, 3, 3, 3, 3]
    leaders = Counter(r[0] for r in placed.values())
    assert max(leaders.values()) - min(leaders[b] for b in range(9)) <= 1
    assert all(len({b % 3 for b in r}) == 2 for r in placed.values())


def test_load_aware_placement_keeps_off_fenced_brokers():
    # broker 3 is fenced (registered, but takes no new replica and cannot lead until unfenced) and empty, so the
    # lightest: Kafka's placers keep off it while unfenced brokers suffice, and so does this one (it put 3 of the 6
    # replicas and a preferred leader there; with RF 1, partitions with no leader)
    c = Cluster(
        brokers=(Broker(0), Broker(1), Broker(2), Broker(3, state="fenced")),
        topics=(make_topic("a", {0: (0, 1), 1: (1, 2), 2: (2, 0)}),),
    )
    assert place_load_aware(c, 3, 2, topic="x") == {0: [0, 1], 1: [2, 0], 2: [1, 2]}
    assert place_load_aware(c, 3, 1, topic="x") == {0: [0], 1: [1], 2: [2]}
