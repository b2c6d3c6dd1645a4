"""KIP-1066 in placement: a broker whose log dirs are all cordoned is not a usable broker (ClusterDescriber
`usableBrokers`), for Kafka's placers and the load-aware one, with the 4.3 error texts (Kafka's
CreateTopicsRequestTest: "... registered or some brokers have all their log directories cordoned.")."""

import pytest

from planner.model import PlannerError
from planner.placement.load_aware import place_load_aware
from planner.placement.placer import place_new_partitions, plan_new_topic

ORDERS = {"orders": {0: [1, 2], 1: [2, 3], 2: [3, 1]}}


def _used(assignment):
    return sorted({b for r in assignment.values() for b in r})


@pytest.mark.parametrize("placer", ["kafka", "kraft"])
def test_new_topics_and_partitions_skip_the_cordoned_broker(placer, make_cluster):
    c = make_cluster(4, first_id=1, topics=ORDERS, cordoned={4})
    assignment, _ = plan_new_topic(c, 6, 2, placer=placer, seed=3)
    assert _used(assignment) == [1, 2, 3]
    assert _used(place_new_partitions(c, "orders", 9, placer=placer, seed=3)[0]) == [1, 2, 3]
    assert _used(place_load_aware(c, 6, 2, topic="events")) == [1, 2, 3]
    none_cordoned = make_cluster(4, first_id=1, topics=ORDERS)
    assert _used(plan_new_topic(none_cordoned, 6, 2, placer=placer, seed=3)[0]) == [1, 2, 3, 4]


def test_exact_placements_without_the_cordoned_broker(make_cluster):
    c = make_cluster(4, first_id=1, topics=ORDERS, cordoned={2})
    assert plan_new_topic(c, 3, 2, placer="kraft", seed=7)[0] == {0: [3, 4], 1: [4, 1], 2: [1, 3]}
    assert plan_new_topic(c, 3, 2, placer="kafka", start_index=0)[0] == {0: [1, 3], 1: [3, 4], 2: [4, 1]}
    assert place_load_aware(c, 2, 2, topic="events") == {0: [4, 1], 1: [3, 4]}


@pytest.mark.parametrize(
    "cordoned, rf, message",
    [
        (
            {3, 4},
            3,
            "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached "
            "because only 2 broker(s) are registered or some brokers have all their log directories cordoned.",
        ),
        (
            {1, 2, 3, 4},
            1,
            "Unable to replicate the partition 1 time(s): All brokers are currently fenced, or have all their log "
            "directories cordoned.",
        ),
    ],
)
def test_kraft_placer_texts_of_kafka_4_3(cordoned, rf, message, make_cluster):
    with pytest.raises(PlannerError) as exc:
        plan_new_topic(make_cluster(4, first_id=1, topics=ORDERS, cordoned=cordoned), 1, rf, placer="kraft")
    assert str(exc.value) == message
