"""Load-aware placement (`--placer load-aware`): the lightest brokers fill first, rack-safe, each topic spread."""

from collections import Counter

import pytest

from planner.model import Broker, Cluster, PlannerError, make_topic
from planner.placement.adminutils import assign_replicas_to_brokers
from planner.placement.load_aware import place_load_aware
from planner.rebalance.moves import rack_safe


def _uneven():
    # 9 brokers in 3 racks; the first 6 hold a 60-partition topic placed by Kafka, the last 3 are new and empty
    metas = [(b, f"r{b % 3}") for b in range(6)]
    old = make_topic("old", assign_replicas_to_brokers(metas, 60, 3, fixed_start_index=0))
    return Cluster(brokers=tuple(Broker(b, rack=f"r{b % 3}") for b in range(9)), topics=(old,))


def test_load_aware_placement_fills_the_new_brokers_first_and_stays_rack_safe():
    # the replica-count goal before the topic goal, as the rebalancer ranks them: the three new brokers take the
    # whole topic (every broker then holds 30 replicas), one replica per rack
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
    # past the counts' balance the topic spreads over every broker
    placed = place_load_aware(c, 60, 3, topic="new")
    counts = Counter(b for r in placed.values() for b in r)
    assert {b: counts[b] for b in range(9)} == {0: 10, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 40, 7: 40, 8: 40}


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


def _spread(counts, brokers):
    return max(counts[b] for b in brokers) - min(counts[b] for b in brokers)


def test_load_aware_placement_on_seeded_uneven_clusters_fills_the_lightest_and_spreads_the_leaders():
    # 300 clusters without racks, 3-12 brokers, some holding topics and some empty, a new topic of 1-40 partitions
    # and RF 1-4: the heaviest broker after the placement holds the fewest any placement allows (each partition's
    # replicas on distinct brokers: at most one per partition on a broker), the replica spread is never wider than
    # before (or 1), and the leaders handed along the new partitions' replicas leave the leader spread wider than
    # before on 6 clusters, where these replica sets force it (14 with each partition's first pick alone)
    import random

    rnd = random.Random(2)
    worst = Counter()
    for _ in range(300):
        ids = range(1, rnd.randint(3, 12) + 1)
        heavy = rnd.sample(ids, rnd.randint(1, len(ids)))
        topics = []
        for t in range(rnd.randint(0, 3)):
            rf = rnd.randint(1, min(3, len(heavy)))
            topics.append(make_topic(f"o{t}", {p: rnd.sample(heavy, rf) for p in range(rnd.randint(1, 40))}))
        c = Cluster(brokers=tuple(Broker(b) for b in ids), topics=tuple(topics))
        n, rf = rnd.randint(1, 40), rnd.randint(1, min(4, len(ids)))
        placed = place_load_aware(c, n, rf, topic="new")
        replicas = Counter(b for p in c.partitions() for b in p.replicas)
        leaders = Counter(p.replicas[0] for p in c.partitions())
        before = (_spread(replicas, ids), _spread(leaders, ids))
        least = min(m for m in range(10_000) if sum(min(n, max(0, m - replicas[b])) for b in ids) >= n * rf)
        least = max(least, max(replicas[b] for b in ids))
        replicas.update(b for r in placed.values() for b in r)
        leaders.update(r[0] for r in placed.values())
        worst["heaviest above the least"] += max(replicas[b] for b in ids) > least
        worst["replicas wider"] = max(worst["replicas wider"], _spread(replicas, ids) - max(before[0], 1))
        worst["leaders wider"] += _spread(leaders, ids) > max(before[1], 1)
    assert dict(worst) == {"heaviest above the least": 0, "replicas wider": 0, "leaders wider": 6}


def test_load_aware_placement_refuses_racks_on_only_some_brokers_as_kafka_does():
    # it ignored the racks silently (1:2,3:1,2:3 on brokers 1 rack a, 2 rack b, 3 none), where Kafka's tools and the
    # default placer refuse (AdminZkClient.getBrokerMetadatas, RackAwareMode.Enforced); --disable-rack-aware places
    c = Cluster(brokers=(Broker(1, rack="a"), Broker(2, rack="b"), Broker(3)))
    with pytest.raises(PlannerError) as exc:
        place_load_aware(c, 3, 2, topic="x")
    assert str(exc.value) == (
        "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
        "assignment without rack information."
    )
    assert place_load_aware(c, 3, 2, topic="x", rack_aware=False) == {0: [1, 2], 1: [3, 1], 2: [2, 3]}
