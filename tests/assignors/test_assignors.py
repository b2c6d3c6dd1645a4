"""Classic Range / RoundRobin / Sticky / CooperativeSticky and KIP-848 uniform / range: every vector of Kafka's
`RangeAssignorTest.java`, `RoundRobinAssignorTest.java`, `AbstractStickyAssignorTest.java`,
`AbstractPartitionAssignorTest.java` and the group coordinator's assignor tests."""

from dataclasses import replace

import pytest

from planner.assignors import range as range_assignor
from planner.assignors import roundrobin, server_range, sticky, uniform
from planner.assignors.group import Member, sorted_members
from planner.model import TopicPartition as TP


def tps(*names):
    out = []
    for n in names:
        topic, _, p = n.rpartition("-")
        out.append(TP(topic, int(p)))
    return out


def as_sets(result):
    return {k: set(v) for k, v in result.items()}


def M(mid, topics, instance=None, rack=None, owned=(), gen=None):
    return Member(
        id=mid, topics=tuple(topics), instance_id=instance, rack=rack, owned=tuple(tps(*owned)), generation=gen
    )


# -- member order (AbstractPartitionAssignorTest) -----------------------------------------------------------------


@pytest.mark.parametrize(
    "members,expected",
    [
        ([("a", None), ("b", None), ("c", None)], ["a", "b", "c"]),
        ([("a", "y"), ("b", "z"), ("c", "x")], ["c", "a", "b"]),
        ([("a", None), ("b", "y"), ("c", "x")], ["c", "b", "a"]),
    ],
)
def test_member_info_order(members, expected):
    got = sorted_members([Member(id=i, topics=(), instance_id=s) for i, s in members])
    assert [m.id for m in got] == expected


# -- Range (RangeAssignorTest) ------------------------------------------------------------------------------------


def test_range_basic_vectors():
    assert range_assignor.assign([M("consumer1", [])], {"topic1": 3}) == {"consumer1": []}
    assert range_assignor.assign([M("consumer1", ["nope"])], {"topic1": 3}) == {"consumer1": []}
    assert range_assignor.assign([M("consumer1", ["topic1"])], {"topic1": 3}) == {
        "consumer1": tps("topic1-0", "topic1-1", "topic1-2")
    }
    assert range_assignor.assign([M("consumer1", ["topic1"])], {"topic1": 3, "other": 3}) == {
        "consumer1": tps("topic1-0", "topic1-1", "topic1-2")
    }
    assert as_sets(range_assignor.assign([M("consumer1", ["topic1", "topic2"])], {"topic1": 1, "topic2": 2})) == {
        "consumer1": set(tps("topic1-0", "topic2-0", "topic2-1"))
    }
    assert range_assignor.assign([M("consumer1", ["topic1"]), M("consumer2", ["topic1"])], {"topic1": 1}) == {
        "consumer1": tps("topic1-0"),
        "consumer2": [],
    }
    assert range_assignor.assign([M("consumer1", ["topic1"]), M("consumer2", ["topic1"])], {"topic1": 2}) == {
        "consumer1": tps("topic1-0"),
        "consumer2": tps("topic1-1"),
    }


def test_range_mixed_topics_and_six_partitions():
    got = range_assignor.assign(
        [M("consumer1", ["topic1"]), M("consumer2", ["topic1", "topic2"]), M("consumer3", ["topic1"])],
        {"topic1": 3, "topic2": 2},
    )
    assert as_sets(got) == {
        "consumer1": {TP("topic1", 0)},
        "consumer2": set(tps("topic1-1", "topic2-0", "topic2-1")),
        "consumer3": {TP("topic1", 2)},
    }
    both = ["topic1", "topic2"]
    got = range_assignor.assign([M("consumer1", both), M("consumer2", both)], {"topic1": 3, "topic2": 3})
    assert as_sets(got) == {
        "consumer1": set(tps("topic1-0", "topic1-1", "topic2-0", "topic2-1")),
        "consumer2": set(tps("topic1-2", "topic2-2")),
    }
    for a_instance in ("instance2", None):  # two static / one static + one dynamic
        got = range_assignor.assign(
            [M("consumer-b", both, "instance1"), M("consumer-a", both, a_instance)], {"topic1": 3, "topic2": 3}
        )
        assert as_sets(got) == {
            "consumer-b": set(tps("topic1-0", "topic1-1", "topic2-0", "topic2-1")),
            "consumer-a": set(tps("topic1-2", "topic2-2")),
        }


def test_range_static_members_persistent():
    # RangeAssignorTest.testStaticMemberRangeAssignmentPersistent: three static members and one dynamic; the dynamic
    # member replaced by another keeps the same partitions, the static members' do not change
    both = ["topic1", "topic2"]
    members = [M(f"consumer{i}", both, f"instance{i}") for i in (1, 2, 3)]
    counts = {"topic1": 5, "topic2": 4}
    expected = {
        "consumer1": set(tps("topic1-0", "topic1-1", "topic2-0")),
        "consumer2": set(tps("topic1-2", "topic2-1")),
        "consumer3": set(tps("topic1-3", "topic2-2")),
    }
    assert as_sets(range_assignor.assign(members + [M("consumer4", both)], counts)) == {
        **expected,
        "consumer4": set(tps("topic1-4", "topic2-3")),
    }
    assert as_sets(range_assignor.assign(members + [M("consumer5", both)], counts)) == {
        **expected,
        "consumer5": set(tps("topic1-4", "topic2-3")),
    }


def test_range_static_members_persistent_after_member_id_changes():
    both = ["topic1", "topic2"]
    expected = {
        "instance1": tps("topic1-0", "topic1-1", "topic2-0", "topic2-1"),
        "instance2": tps("topic1-2", "topic1-3", "topic2-2", "topic2-3"),
        "instance3": tps("topic1-4", "topic2-4"),
    }
    for ids in (["consumer1", "consumer2", "consumer3"], ["zz", "m", "a"]):
        members = [M(ids[i], both, f"instance{i + 1}") for i in range(3)]
        got = range_assignor.assign(members, {"topic1": 5, "topic2": 5})
        assert {m.instance_id: set(got[m.id]) for m in members} == {k: set(v) for k, v in expected.items()}


def test_range_javadoc_example():
    both = ["t0", "t1"]
    got = range_assignor.assign([M("C0", both), M("C1", both)], {"t0": 3, "t1": 3})
    assert as_sets(got) == {"C0": set(tps("t0-0", "t0-1", "t1-0", "t1-1")), "C1": set(tps("t0-2", "t1-2"))}


# rack-aware harness of AbstractPartitionAssignorTest.verifyRackAssignment
def _rack_case(topic_sizes, subscriptions, rf, broker_racks, consumer_racks, num_brokers=None):
    racks = "abcdefgh"
    n_brokers = num_brokers or (broker_racks if broker_racks else 3)
    broker_rack = (
        {b: racks[b % broker_racks] for b in range(n_brokers)} if broker_racks else {b: None for b in range(n_brokers)}
    )
    partition_racks = {}
    nxt = 0
    sizes = {}
    for topic, n in topic_sizes:
        sizes[topic] = n
        for i in range(n):
            reps = [(i + j + nxt) % n_brokers for j in range(rf)]
            partition_racks[TP(topic, i)] = frozenset(broker_rack[b] for b in reps if broker_rack[b] is not None)
        nxt += n
    members = [
        M(f"consumer{i}", subs, rack=consumer_racks[i] if consumer_racks else None)
        for i, subs in enumerate(subscriptions)
    ]
    got = range_assignor.assign(members, sizes, partition_racks)
    return [", ".join(sorted(str(tp) for tp in got[f"consumer{i}"])) for i in range(len(members))]


T3 = [("t1", 6), ("t2", 7), ("t3", 2)]
ALL3 = [["t1", "t2", "t3"]] * 3
NON_RACK_UNIFORM = ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]


@pytest.mark.parametrize(
    "rf,broker_racks,consumer_racks,num_brokers",
    [
        (3, 0, list("abc"), 3),
        (3, 3, None, 3),
        (3, 3, list("abc"), 3),
        (4, 4, list("abc"), 4),
        (3, 3, list("def"), 3),
        (3, 3, [None, "e", "f"], 3),
        (3, 2, list("abc"), 3),
    ],
)
def test_range_rack_aware_uniform_non_rack_results(rf, broker_racks, consumer_racks, num_brokers):
    assert _rack_case(T3, ALL3, rf, broker_racks, consumer_racks, num_brokers) == NON_RACK_UNIFORM


def test_range_rack_aware_uniform_subscription():
    assert _rack_case(T3, ALL3, 1, 3, list("abc")) == [
        "t1-0, t1-3, t2-0, t2-3, t2-6",
        "t1-1, t1-4, t2-1, t2-4, t3-0",
        "t1-2, t1-5, t2-2, t2-5, t3-1",
    ]
    assert _rack_case(T3, ALL3, 2, 3, list("abc")) == [
        "t1-0, t1-2, t2-0, t2-2, t2-3, t3-1",
        "t1-1, t1-3, t2-1, t2-4, t3-0",
        "t1-4, t1-5, t2-5, t2-6",
    ]


def test_range_rack_aware_non_equal_subscription():
    subs = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    assert _rack_case(T3, subs, 3, 3, None) == [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
        "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
        "t1-4, t1-5",
    ]
    assert _rack_case(T3, subs, 1, 3, list("abc")) == [
        "t1-0, t1-3, t2-0, t2-2, t2-3, t2-6",
        "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0",
        "t1-2, t1-5, t3-1",
    ]
    assert _rack_case(T3, subs, 2, 3, list("abc")) == [
        "t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1",
        "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0",
        "t1-4, t1-5",
    ]


def test_range_rack_aware_uniform_partitions_non_equal_subscription():
    topics = [("t1", 5), ("t2", 5), ("t3", 5)]
    subs = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    assert _rack_case(topics, subs, 2, 3, list("abc")) == [
        "t1-2, t2-0, t2-1, t2-3, t3-2",
        "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3",
        "t1-1, t1-4, t3-1, t3-4",
    ]
    assert _rack_case(topics, subs, 1, 3, list("abc")) == [
        "t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1",
        "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
        "t1-4, t3-4",
    ]


def test_range_rack_aware_co_partitioning():
    topics = [("t1", 6), ("t2", 6), ("t3", 2), ("t4", 2)]
    subs = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    racks = ["a", "b", "b", "a"]
    assert _rack_case(topics, subs, 1, 2, racks, 2) == [
        "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4",
        "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
        "t3-1, t4-1",
        "t3-0, t4-0",
    ]
    all4 = [["t1", "t2", "t3", "t4"]] * 4
    assert _rack_case(topics, all4, 1, 2, racks, 2) == [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0",
        "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
        "t1-5, t2-5",
        "t1-4, t2-4",
    ]
    assert _rack_case(topics, all4, 1, 3, racks, 3) == [
        "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0",
        "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
        "t1-2, t2-2",
        "t1-5, t2-5",
    ]


def test_range_co_partitioned_same_subscription_forced_rack_logic():
    topics = [("t1", 6), ("t2", 6), ("t3", 2), ("t4", 2), ("t5", 4), ("t6", 4)]
    names = [t for t, _ in topics]
    n_brokers = 3
    partition_racks, nxt = {}, 0
    for topic, n in topics:
        for i in range(n):
            partition_racks[TP(topic, i)] = frozenset("abc"[(i + j + nxt) % n_brokers] for j in range(2))
        nxt += n
    members = [M(f"consumer{i}", names, rack=r) for i, r in enumerate("abc")]
    got = range_assignor.assign(members, dict(topics), partition_racks, prefer_rack_aware=True)
    assert [", ".join(sorted(map(str, got[f"consumer{i}"]))) for i in range(3)] == [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
        "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
    ]


# -- RoundRobin (RoundRobinAssignorTest) --------------------------------------------------------------------------


def test_roundrobin_vectors():
    assert roundrobin.assign([M("consumer", ["topic"])], {"topic": 3}) == {
        "consumer": tps("topic-0", "topic-1", "topic-2")
    }
    assert roundrobin.assign([M("consumer", ["topic1", "topic2"])], {"topic1": 1, "topic2": 2}) == {
        "consumer": tps("topic1-0", "topic2-0", "topic2-1")
    }
    assert roundrobin.assign([M("consumer1", ["topic"]), M("consumer2", ["topic"])], {"topic": 1}) == {
        "consumer1": tps("topic-0"),
        "consumer2": [],
    }
    assert roundrobin.assign([M("consumer1", ["topic"]), M("consumer2", ["topic"])], {"topic": 2}) == {
        "consumer1": tps("topic-0"),
        "consumer2": tps("topic-1"),
    }
    got = roundrobin.assign(
        [M("consumer1", ["topic1"]), M("consumer2", ["topic1", "topic2"]), M("consumer3", ["topic1"])],
        {"topic1": 3, "topic2": 2},
    )
    assert got == {
        "consumer1": tps("topic1-0"),
        "consumer2": tps("topic1-1", "topic2-0", "topic2-1"),
        "consumer3": tps("topic1-2"),
    }
    both = ["topic1", "topic2"]
    assert roundrobin.assign([M("consumer1", both), M("consumer2", both)], {"topic1": 3, "topic2": 3}) == {
        "consumer1": tps("topic1-0", "topic1-2", "topic2-1"),
        "consumer2": tps("topic1-1", "topic2-0", "topic2-2"),
    }
    for a_instance in ("instance2", None):
        got = roundrobin.assign(
            [M("consumer-b", both, "instance1"), M("consumer-a", both, a_instance)], {"topic1": 3, "topic2": 3}
        )
        assert got == {
            "consumer-b": tps("topic1-0", "topic1-2", "topic2-1"),
            "consumer-a": tps("topic1-1", "topic2-0", "topic2-2"),
        }


def test_roundrobin_static_members_persistent():
    both = ["topic1", "topic2"]
    members = [M(f"consumer{i}", both, f"instance{i}") for i in (1, 2, 3)]
    got = roundrobin.assign(members + [M("consumer4", both)], {"topic1": 3, "topic2": 3})
    assert got == {
        "consumer1": tps("topic1-0", "topic2-1"),
        "consumer2": tps("topic1-1", "topic2-2"),
        "consumer3": tps("topic1-2"),
        "consumer4": tps("topic2-0"),
    }
    got = roundrobin.assign(members + [M("consumer5", both)], {"topic1": 3, "topic2": 3})
    assert got["consumer5"] == tps("topic2-0") and got["consumer1"] == tps("topic1-0", "topic2-1")
    for ids in (["consumer1", "consumer2", "consumer3"], ["x", "b", "a"]):
        members = [M(ids[i], both, f"instance{i + 1}") for i in range(3)]
        got = roundrobin.assign(members, {"topic1": 5, "topic2": 5})
        assert {m.instance_id: got[m.id] for m in members} == {
            "instance1": tps("topic1-0", "topic1-3", "topic2-1", "topic2-4"),
            "instance2": tps("topic1-1", "topic1-4", "topic2-2"),
            "instance3": tps("topic1-2", "topic2-0", "topic2-3"),
        }


def test_roundrobin_javadoc_examples():
    both = ["t0", "t1"]
    assert roundrobin.assign([M("C0", both), M("C1", both)], {"t0": 3, "t1": 3}) == {
        "C0": tps("t0-0", "t0-2", "t1-1"),
        "C1": tps("t0-1", "t1-0", "t1-2"),
    }
    got = roundrobin.assign(
        [M("C0", ["t0"]), M("C1", ["t0", "t1"]), M("C2", ["t0", "t1", "t2"])], {"t0": 1, "t1": 2, "t2": 3}
    )
    assert got == {"C0": tps("t0-0"), "C1": tps("t1-0"), "C2": tps("t1-1", "t2-0", "t2-1", "t2-2")}


# -- Sticky / CooperativeSticky (AbstractStickyAssignorTest, CooperativeStickyAssignorTest) --------------------------


def test_sticky_fresh_two_consumers_two_topics():
    both = ["topic1", "topic2"]
    r = sticky.assign([M("consumer1", both, gen=1), M("consumer2", both, gen=1)], {"topic1": 3, "topic2": 3})
    assert r.assignment == {
        "consumer1": tps("topic1-0", "topic1-2", "topic2-1"),
        "consumer2": tps("topic1-1", "topic2-0", "topic2-2"),
    }
    assert r.uniform and r.transferring == {}


def _kafka_sticky_racks(rack_config, topics):
    """AbstractStickyAssignorTest.initializeRacks + partitionInfos: replication factor 3; with broker racks 9 brokers on
    racks a,b,c,a,b,c,... (else 3 brokers without racks); the n-th topic's partition i on brokers (i + j + n) % brokers;
    consumer k on rack "abc"[k % 3] unless consumers have no racks."""
    n_brokers = 9 if rack_config != "NO_BROKER_RACK" else 3
    rack_of = {b: ("abc"[b % 3] if rack_config != "NO_BROKER_RACK" else None) for b in range(n_brokers)}
    racks = {}
    for n, (topic, count) in enumerate(topics):
        for i in range(count):
            racks[TP(topic, i)] = frozenset(r for j in range(3) if (r := rack_of[(i + j + n) % n_brokers]) is not None)
    consumer_rack = (lambda k: None) if rack_config == "NO_CONSUMER_RACK" else (lambda k: "abc"[k % 3])
    return racks, consumer_rack


@pytest.mark.parametrize("rack_config", ["NO_BROKER_RACK", "NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK"])
def test_sticky_mixed_subscriptions_general_path(rack_config):
    # AbstractStickyAssignorTest.testMultipleConsumersMixedTopicSubscriptions: exact lists, in Kafka's order
    racks, rack = _kafka_sticky_racks(rack_config, [("topic1", 3), ("topic2", 2)])
    members = [
        M("consumer1", ["topic1"], rack=rack(0)),
        M("consumer2", ["topic1", "topic2"], rack=rack(1)),
        M("consumer3", ["topic1"], rack=rack(2)),
    ]
    r = sticky.assign(members, {"topic1": 3, "topic2": 2}, racks)
    assert not r.uniform
    assert r.assignment == {
        "consumer1": tps("topic1-0", "topic1-2"),
        "consumer2": tps("topic2-0", "topic2-1"),
        "consumer3": tps("topic1-1"),
    }
    assert r.transferring == {}


def _sticky_rack_case(subscriptions, rf, broker_racks, consumer_racks, owned=None, cooperative=False):
    """AbstractPartitionAssignorTest.verifyRackAssignment for the sticky assignors: the assignment of consumer0..n as
    sorted strings, and the number of partitions given to a consumer whose rack holds no replica of them."""
    n_brokers = len(broker_racks)
    partition_racks, nxt, sizes = {}, 0, {}
    for topic, n in T3:
        sizes[topic] = n
        for i in range(n):
            partition_racks[TP(topic, i)] = frozenset(
                r for j in range(rf) if (r := broker_racks[(i + j + nxt) % n_brokers]) is not None
            )
        nxt += n
    members = [
        M(f"consumer{i}", subs, rack=consumer_racks[i], owned=(owned[i].split(", ") if owned else ()))
        for i, subs in enumerate(subscriptions)
    ]
    run = sticky.cooperative_first_round if cooperative else sticky.assign
    got = run(members, sizes, partition_racks).assignment
    mismatched = sum(1 for m in members if m.rack for tp in got[m.id] if m.rack not in partition_racks[tp])
    return [", ".join(sorted(str(tp) for tp in got[m.id])) for m in members], mismatched


NON_EQUAL = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
NON_RACK_NON_EQUAL = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"]
RF1_NON_EQUAL = ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-5, t3-1"]
RF2_NON_EQUAL = ["t1-3, t2-0, t2-2, t2-5, t2-6", "t1-0, t2-1, t2-3, t2-4, t3-0", "t1-1, t1-2, t1-4, t1-5, t3-1"]


@pytest.mark.parametrize(
    "rf,broker_racks,consumer_racks,expected,mismatched",
    [
        (3, [None] * 3, [None] * 3, NON_RACK_NON_EQUAL, 0),
        (3, [None] * 3, list("abc"), NON_RACK_NON_EQUAL, None),
        (3, list("abc"), [None] * 3, NON_RACK_NON_EQUAL, None),
        (3, list("abc"), list("abc"), NON_RACK_NON_EQUAL, 0),
        (4, list("abcd"), list("abc"), NON_RACK_NON_EQUAL, 0),
        (3, list("abc"), list("def"), NON_RACK_NON_EQUAL, None),
        (3, list("abc"), [None, "e", "f"], NON_RACK_NON_EQUAL, None),
        (1, list("abc"), list("abc"), RF1_NON_EQUAL, 4),  # rack-alignment is best effort
        (2, list("abc"), list("abc"), RF2_NON_EQUAL, 0),
        (3, list("ab"), list("abc"), NON_RACK_NON_EQUAL, 5),  # consumer2's rack holds no replica: balance wins
    ],
)
def test_sticky_rack_aware_non_equal_subscription(rf, broker_racks, consumer_racks, expected, mismatched):
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithNonEqualSubscription: the GeneralAssignmentBuilder, from
    # scratch and again with the expected assignment owned (nothing moves)
    got, bad = _sticky_rack_case(NON_EQUAL, rf, broker_racks, consumer_racks)
    assert got == expected
    if mismatched is not None:
        assert bad == mismatched
    for cooperative in (False, True):
        assert _sticky_rack_case(NON_EQUAL, rf, broker_racks, consumer_racks, expected, cooperative)[0] == expected


OWNED_NON_EQUAL = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]


def test_cooperative_rack_aware_non_equal_subscription_improves_misaligned_owned():
    # the CooperativeStickyAssignor branch of the same Kafka test: a first round withholding what changes owner, then
    # the follow-up rebalance from what the members then own
    abc = list("abc")
    assert _sticky_rack_case(NON_EQUAL, 1, abc, abc, OWNED_NON_EQUAL, True) == (["t1-3", "t2-1", "t3-1"], 0)
    assert _sticky_rack_case(NON_EQUAL, 1, abc, abc, ["t1-3", "t2-1", "t3-1"], True) == (RF1_NON_EQUAL, 4)
    intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
    assert _sticky_rack_case(NON_EQUAL, 3, abc, abc, OWNED_NON_EQUAL, True) == (intermediate, 0)
    assert _sticky_rack_case(NON_EQUAL, 3, abc, abc, intermediate, True) == (
        ["t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6", "t1-0, t1-1, t1-5, t3-0, t3-1"],
        0,
    )


def _kafka_valid_and_balanced(members, assignment):
    """AbstractStickyAssignorTest.verifyValidityAndBalance."""
    subs = {m.id: set(m.topics) for m in members}
    ids = sorted(assignment)
    for i, c in enumerate(ids):
        assert all(tp.topic in subs[c] for tp in assignment[c])
        for d in ids[i + 1 :]:
            assert not set(assignment[c]) & set(assignment[d])
            if abs(len(assignment[c]) - len(assignment[d])) > 1:
                assert not {tp.topic for tp in assignment[c]} & {tp.topic for tp in assignment[d]}


def test_sticky_poor_round_robin_scenario():
    # AbstractStickyAssignorTest.testPoorRoundRobinAssignmentScenario: the sticky result its javadoc gives
    counts = {f"topic{i}": i % 2 + 1 for i in range(1, 6)}
    all5, odd = list(counts), ["topic1", "topic3", "topic5"]
    members = [M("consumer1", all5), M("consumer2", odd), M("consumer3", odd), M("consumer4", all5)]
    r = sticky.assign(members, counts)
    _kafka_valid_and_balanced(members, r.assignment)
    assert as_sets(r.assignment) == {
        "consumer1": set(tps("topic2-0", "topic3-0")),
        "consumer2": set(tps("topic1-0", "topic3-1")),
        "consumer3": set(tps("topic1-1", "topic5-0")),
        "consumer4": set(tps("topic4-0", "topic5-1")),
    }


@pytest.mark.parametrize("gens", [(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)])
def test_sticky_general_same_partition_claimed_in_three_generations(gens):
    # AbstractStickyAssignorTest.testSubscriptionNotEqualAndAssignSamePartitionWith3Generation
    members = [
        M("consumer1", ["topic"], owned=["topic-0", "topic-2"], gen=gens[0]),
        M("consumer2", ["topic"], owned=["topic-1", "topic-2", "topic-3"], gen=gens[1]),
        M("consumer3", ["topic"], owned=["topic-2", "topic-4", "topic-5"], gen=gens[2]),
        M("consumer4", ["topic1"], owned=["topic1-0"], gen=2),
    ]
    got = sticky.assign(members, {"topic": 6, "topic1": 1}).assignment
    given = [tp for v in got.values() for tp in v]
    assert len(given) == len(set(given)) == 7
    assert all(1 <= len(v) <= 2 for v in got.values())


def test_sticky_general_move_existing_assignments():
    # AbstractStickyAssignorTest.testMoveExistingAssignments: already valid and balanced, so nothing moves
    members = [
        M("consumer1", ["topic1", "topic2"], owned=["topic1-0"], gen=1),
        M("consumer2", ["topic1", "topic2", "topic3", "topic4"], owned=["topic2-0", "topic3-0"], gen=1),
        M(
            "consumer3",
            ["topic2", "topic3", "topic4", "topic5", "topic6"],
            owned=["topic4-0", "topic5-0", "topic6-0"],
            gen=1,
        ),
    ]
    r = sticky.assign(members, {f"topic{i}": 1 for i in range(1, 7)})
    _kafka_valid_and_balanced(members, r.assignment)
    assert r.assignment == {m.id: list(m.owned) for m in members}
    assert r.transferring == {}


def test_sticky_general_reassignment_after_one_consumer_leaves():
    # AbstractStickyAssignorTest.testReassignmentAfterOneConsumerLeaves: c_i subscribes t01..t_i, t_i has i partitions
    counts = {f"t{i:02d}": i for i in range(1, 20)}
    members = [M(f"c{i:02d}", [f"t{j:02d}" for j in range(1, i + 1)]) for i in range(1, 20)]
    first = sticky.assign(members, counts).assignment
    _kafka_valid_and_balanced(members, first)
    rest = [M(m.id, m.topics, owned=[str(tp) for tp in first[m.id]], gen=1) for m in members if m.id != "c10"]
    again = sticky.assign(rest, counts).assignment
    _kafka_valid_and_balanced(rest, again)
    assert all(set(first[m.id]) <= set(again[m.id]) for m in rest)  # only c10's partitions move


BOTH12 = ["topic1", "topic2"]


def test_sticky_owning_min_quota_expected_max_quota():
    r = sticky.assign(
        [
            M("consumer1", BOTH12, owned=["topic1-0", "topic2-1"], gen=1),
            M("consumer2", BOTH12, owned=["topic1-1", "topic2-2"], gen=1),
        ],
        {"topic1": 2, "topic2": 3},
    )
    assert r.assignment == {
        "consumer1": tps("topic1-0", "topic2-1", "topic2-0"),
        "consumer2": tps("topic1-1", "topic2-2"),
    }
    assert r.transferring == {}


def test_sticky_max_quota_more_than_expected_max_capacity_members():
    members = [
        M("consumer1", BOTH12, owned=["topic1-0", "topic2-0"], gen=1),
        M("consumer2", BOTH12, owned=["topic1-1", "topic2-1"], gen=1),
        M("consumer3", BOTH12, gen=1),
    ]
    r = sticky.assign(members, {"topic1": 2, "topic2": 2})
    assert r.assignment == {
        "consumer1": tps("topic1-0"),
        "consumer2": tps("topic1-1", "topic2-1"),
        "consumer3": tps("topic2-0"),
    }
    assert r.transferring == {TP("topic2", 0): "consumer3"}
    first = sticky.cooperative_first_round(members, {"topic1": 2, "topic2": 2})
    assert first.assignment == {"consumer1": tps("topic1-0"), "consumer2": tps("topic1-1", "topic2-1"), "consumer3": []}


def test_sticky_all_consumers_under_min_quota():
    r = sticky.assign(
        [
            M("consumer1", BOTH12, owned=["topic1-0"], gen=1),
            M("consumer2", BOTH12, owned=["topic1-1"], gen=1),
            M("consumer3", BOTH12, gen=1),
        ],
        {"topic1": 2, "topic2": 3},
    )
    assert r.assignment == {
        "consumer1": tps("topic1-0", "topic2-1"),
        "consumer2": tps("topic1-1", "topic2-2"),
        "consumer3": tps("topic2-0"),
    }


def test_sticky_add_remove_consumer_one_topic():
    r = sticky.assign([M("consumer1", ["topic"], gen=1)], {"topic": 3})
    assert r.assignment == {"consumer1": tps("topic-0", "topic-1", "topic-2")}
    members = [
        M("consumer1", ["topic"], owned=["topic-0", "topic-1", "topic-2"], gen=1),
        M("consumer2", ["topic"], gen=1),
    ]
    r = sticky.assign(members, {"topic": 3})
    assert r.transferring == {TP("topic", 2): "consumer2"}
    assert r.assignment == {"consumer1": tps("topic-0", "topic-1"), "consumer2": tps("topic-2")}
    first = sticky.cooperative_first_round(members, {"topic": 3})
    assert first.assignment == {"consumer1": tps("topic-0", "topic-1"), "consumer2": []}
    converged, rounds = sticky.cooperative_converged(members, {"topic": 3})
    assert converged.assignment == {"consumer1": tps("topic-0", "topic-1"), "consumer2": tps("topic-2")} and rounds == 2
    r = sticky.assign([M("consumer2", ["topic"], owned=["topic-2"], gen=2)], {"topic": 3})
    assert set(r.assignment["consumer2"]) == set(tps("topic-0", "topic-1", "topic-2")) and r.transferring == {}


def test_sticky_all_consumers_reach_expected_quota():
    r = sticky.assign(
        [
            M("consumer1", ["topic"], owned=["topic-0", "topic-1"], gen=1),
            M("consumer2", ["topic"], owned=["topic-2"], gen=1),
            M("consumer3", ["topic"], gen=1),
        ],
        {"topic": 4},
    )
    assert r.assignment == {
        "consumer1": tps("topic-0", "topic-1"),
        "consumer2": tps("topic-2"),
        "consumer3": tps("topic-3"),
    }


def test_sticky_partition_claimed_by_multiple_consumers_same_generation():
    members = [
        M("consumer1", ["topic"], owned=["topic-0", "topic-1"], gen=1),
        M("consumer2", ["topic"], owned=["topic-0", "topic-2"], gen=1),
        M("consumer3", ["topic"], gen=1),
    ]
    r = sticky.assign(members, {"topic": 3})
    assert r.assignment == {"consumer1": tps("topic-1"), "consumer2": tps("topic-2"), "consumer3": tps("topic-0")}
    assert r.transferring == {TP("topic", 0): "consumer3"}
    # CooperativeStickyAssignorTest, first round: topic-0 withheld until both have revoked it
    assert sticky.cooperative_first_round(members, {"topic": 3}).assignment == {
        "consumer1": tps("topic-1"),
        "consumer2": tps("topic-2"),
        "consumer3": [],
    }
    assert sticky.cooperative_first_round(members, {"topic": 4}).assignment == {
        "consumer1": tps("topic-1", "topic-3"),
        "consumer2": tps("topic-2"),
        "consumer3": [],
    }


@pytest.mark.parametrize("gen2", [9, None])
def test_sticky_stale_generation_invalidated(gen2):
    claim = ["topic-0", "topic-2", "topic2-1"]
    both = ["topic", "topic2"]
    r = sticky.assign(
        [M("consumer1", both, owned=claim, gen=10), M("consumer2", both, owned=claim, gen=gen2)],
        {"topic": 3, "topic2": 3},
    )
    assert as_sets(r.assignment) == {
        "consumer1": set(tps(*claim)),
        "consumer2": set(tps("topic-1", "topic2-0", "topic2-2")),
    }


def test_sticky_multiple_generations():
    both = ["topic", "topic2"]
    r = sticky.assign(
        [
            M("consumer1", both, owned=["topic-0", "topic2-1", "topic-1"], gen=10),
            M("consumer2", both, owned=["topic-0", "topic2-1", "topic2-2"], gen=8),
        ],
        {"topic": 3, "topic2": 3},
    )
    assert as_sets(r.assignment) == {
        "consumer1": set(tps("topic-0", "topic2-1", "topic-1")),
        "consumer2": set(tps("topic-2", "topic2-2", "topic2-0")),
    }


def test_sticky_highest_generation_wins():
    three = ["topic", "topic2", "topic3"]
    r = sticky.assign(
        [
            M("consumer1", three, owned=["topic-0", "topic2-0", "topic3-0"], gen=10),
            M("consumer2", three, owned=["topic-1", "topic2-1", "topic3-1"], gen=9),
            M("consumer3", three, owned=["topic2-1", "topic3-0", "topic3-2"], gen=8),
        ],
        {"topic": 3, "topic2": 3, "topic3": 3},
    )
    assert as_sets(r.assignment) == {
        "consumer1": set(tps("topic-0", "topic2-0", "topic3-0")),
        "consumer2": set(tps("topic-1", "topic2-1", "topic3-1")),
        "consumer3": set(tps("topic-2", "topic2-2", "topic3-2")),
    }


# -- KIP-848 ------------------------------------------------------------------------------------------------------


def test_server_range_three_members_different_subscriptions():
    got = server_range.assign(
        [M("A", ["topic1", "topic2"]), M("B", ["topic3"]), M("C", ["topic2", "topic3"])],
        {"topic1": 3, "topic2": 3, "topic3": 2},
    )
    assert as_sets(got) == {
        "A": set(tps("topic1-0", "topic1-1", "topic1-2", "topic2-0", "topic2-1")),
        "B": {TP("topic3", 0)},
        "C": set(tps("topic2-2", "topic3-1")),
    }


def test_uniform_homogeneous_sticky_and_balanced():
    members = [M("A", ["t"]), M("B", ["t"]), M("C", ["t"])]
    fresh = uniform.assign(members, {"t": 7})
    assert sorted(len(v) for v in fresh.values()) == [2, 2, 3]
    assert sorted(tp for v in fresh.values() for tp in v) == tps(*[f"t-{i}" for i in range(7)])
    # a member joining keeps everyone's partitions except what must move to it
    owned = [M(m, ["t"], owned=[str(tp) for tp in fresh[m]]) for m in "ABC"] + [M("D", ["t"])]
    again = uniform.assign(owned, {"t": 7})
    assert sorted(len(v) for v in again.values()) == [1, 2, 2, 2]
    kept = sum(len(set(again[m]) & set(fresh[m])) for m in "ABC")
    assert kept == 7 - len(again["D"])  # only what D needs moves


def test_uniform_member_order_is_the_coordinators_member_map():
    # A CI run of tests/realkafka/test_messages.py: h28… and I00… joined first (holding orders 0-3 and clicks 0-2), then
    # XCr… joined. h28… and I00… share a bucket of the HashMap the coordinator fills (TargetAssignmentBuilder.build),
    # so the order it walks the group's members in decides: a TimelineHashMap puts h28… first, whichever joined first,
    # and h28… takes the extra slot. The group file's order (the order of joining) used to decide, and gave I00…
    # all three clicks partitions.
    h28, i00, xcr = "h28nqPb4TrmcqdizmoAMvg", "I00wsQ3XRSO3XrjyEbODpQ", "XCrULqTEQFmOltU8LM2VAA"
    counts = {"messages-orders": 4, "messages-clicks": 3}
    orders = [f"messages-orders-{p}" for p in range(4)]
    clicks = [f"messages-clicks-{p}" for p in range(3)]
    expected = {
        xcr: set(tps("messages-clicks-2", "messages-orders-3")),
        h28: set(tps("messages-orders-0", "messages-orders-1", "messages-orders-2")),
        i00: set(tps("messages-clicks-0", "messages-clicks-1")),
    }
    topics = ["messages-clicks", "messages-orders"]
    for first, second in [((i00, clicks), (h28, orders)), ((h28, orders), (i00, clicks))]:
        members = [M(first[0], topics, owned=first[1]), M(second[0], topics, owned=second[1]), M(xcr, topics)]
        assert as_sets(uniform.assign(members, counts)) == expected
    assert uniform.member_order_of(members) == [xcr, h28, i00]


def test_sticky_rack_aware_constrained_assignment():
    # topic t, rf 1: partitions 0,1 on rack a, 2,3 on rack b; consumers c1 (rack a), c2 (rack b)
    racks = {
        TP("t", 0): frozenset("a"),
        TP("t", 1): frozenset("a"),
        TP("t", 2): frozenset("b"),
        TP("t", 3): frozenset("b"),
    }
    members = [M("c1", ["t"], rack="a"), M("c2", ["t"], rack="b")]
    assert sticky.assign(members, {"t": 4}, racks).assignment == {"c1": tps("t-0", "t-1"), "c2": tps("t-2", "t-3")}
    assert sticky.assign(members, {"t": 4}).assignment == {"c1": tps("t-0", "t-2"), "c2": tps("t-1", "t-3")}
    # an owned partition on another rack is given up (maybeRevokedPartitions) and moves to a member on its rack
    owned = [
        M("c1", ["t"], rack="a", owned=["t-0", "t-2"], gen=1),
        M("c2", ["t"], rack="b", owned=["t-1", "t-3"], gen=1),
    ]
    r = sticky.assign(owned, {"t": 4}, racks)
    assert r.assignment == {"c1": tps("t-0", "t-1"), "c2": tps("t-3", "t-2")}
    assert r.transferring == {TP("t", 1): "c1", TP("t", 2): "c2"}
    # every partition on every rack: rack-awareness is not used
    full = {tp: frozenset("ab") for tp in racks}
    assert sticky.assign(members, {"t": 4}, full).assignment == {"c1": tps("t-0", "t-2"), "c2": tps("t-1", "t-3")}


def test_uniform_topic_order_follows_topic_id_hashes():
    from planner.assignors.uniform import topic_order, uuid_hash_code

    assert uuid_hash_code("AAAAAAAAAAAAAAAAAAAAAA") == 0
    assert uuid_hash_code("AAAAAAAAAAEAAAAAAAAAAg") == 3  # msb 1 ^ lsb 2
    ids = {"t1": "AAAAAAAAAAAAAAAAAAAABQ", "t2": "AAAAAAAAAAAAAAAAAAAAAw"}  # hashCodes 5 and 3
    assert topic_order(["t1", "t2"], ids) == ["t2", "t1"]
    assert topic_order(["t1", "t2"], {"t1": ids["t1"]}) == ["t1", "t2"]  # an id missing: name order
    members = [M("A", ["t1", "t2"]), M("B", ["t1", "t2"])]
    # 3 partitions over 2 members: A (first in HashMap order) holds nothing, so it gives the extra slot up to B (4.x:
    # a member that cannot fill its extra slot from what it holds defers it while enough members remain after it);
    # the pool walks topics in id order. Kafka 4.4.0's UniformAssignor gives the same (realkafka/UniformCases.java)
    assert uniform.assign(members, {"t1": 2, "t2": 1}, ids) == {"A": tps("t2-0"), "B": tps("t1-0", "t1-1")}
    assert uniform.assign(members, {"t1": 2, "t2": 1}) == {"A": tps("t1-0"), "B": tps("t1-1", "t2-0")}
    # A holding two keeps its extra slot
    held = [M("A", ["t1", "t2"], owned=("t1-1", "t2-0")), M("B", ["t1", "t2"])]
    assert uniform.assign(held, {"t1": 2, "t2": 1}, ids) == {"A": tps("t1-1", "t2-0"), "B": tps("t1-0")}


def test_cooperative_general_path_transferring_uses_raw_owned_partitions():
    # mixed subscriptions: computePartitionsTransferringOwnership (added to one member ∩ given up by another)
    members = [M("A", ["t1", "t2"], owned=["t1-0"], gen=1), M("B", ["t1"], owned=["t1-0"], gen=1)]
    r = sticky.assign(members, {"t1": 2, "t2": 1})
    assert not r.uniform
    assert r.assignment == {"A": tps("t2-0", "t1-1"), "B": tps("t1-0")}
    assert r.transferring == {}  # B reported t1-0 as owned, so it is not "added" to B
    moved = [M("A", ["t1", "t2"], owned=["t1-0", "t1-1"], gen=1), M("B", ["t1"], gen=1)]
    first = sticky.cooperative_first_round(moved, {"t1": 2, "t2": 1})
    assert first.transferring == {TP("t1", 0): "B"}
    assert first.assignment == {"A": tps("t1-1", "t2-0"), "B": []}


def test_sticky_general_previous_owner_out_of_play():
    # c1 (generation 1) owned t1's partitions, now subscribes only t0 and holds all of it, so it takes no part in
    # reassignment; t1-0's previous owner is c1. Kafka's performReassignments looks c1 up among the members in play and
    # throws a NullPointerException; the planner skips the previous-owner step for t1-0 and balances as usual.
    members = [
        M("c0", ["t1"]),
        M("c1", ["t0"], owned=["t1-1", "t1-0", "t0-0"], gen=1),
        M("c2", ["t1"], owned=["t1-1", "t1-0"], gen=2),
    ]
    r = sticky.assign(members, {"t0": 1, "t1": 2})
    assert r.assignment == {"c0": tps("t1-0"), "c1": tps("t0-0"), "c2": tps("t1-1")}
    assert r.transferring == {TP("t1", 0): "c0"}
    assert sticky.cooperative_first_round(members, {"t0": 1, "t1": 2}).assignment == {
        "c0": [],
        "c1": tps("t0-0"),
        "c2": tps("t1-1"),
    }


def test_sticky_add_remove_two_consumers_two_topics():
    # AbstractStickyAssignorTest.testAddRemoveTwoConsumersTwoTopics: exact lists through two rebalances
    both, counts = ["topic1", "topic2"], {"topic1": 3, "topic2": 4}
    r = sticky.assign([M("consumer1", both), M("consumer2", both)], counts)
    assert r.assignment == {
        "consumer1": tps("topic1-0", "topic1-2", "topic2-1", "topic2-3"),
        "consumer2": tps("topic1-1", "topic2-0", "topic2-2"),
    }
    owned = {m: [str(tp) for tp in v] for m, v in r.assignment.items()}
    members = [
        M("consumer1", both, owned=owned["consumer1"], gen=1),
        M("consumer2", both, owned=owned["consumer2"], gen=1),
        M("consumer3", both, gen=1),
        M("consumer4", both, gen=1),
    ]
    r = sticky.assign(members, counts)
    # owned partitions are kept in (partition, topic) order (KAFKA-16277), so each member keeps both topics
    assert r.transferring == {TP("topic1", 2): "consumer3", TP("topic2", 3): "consumer3", TP("topic2", 2): "consumer4"}
    assert r.assignment == {
        "consumer1": tps("topic1-0", "topic2-1"),
        "consumer2": tps("topic2-0", "topic1-1"),
        "consumer3": tps("topic1-2", "topic2-3"),
        "consumer4": tps("topic2-2"),
    }
    members = [
        M("consumer3", both, owned=["topic1-2", "topic2-3"], gen=1),
        M("consumer4", both, owned=["topic2-2"], gen=1),
    ]
    r = sticky.assign(members, counts)
    assert r.assignment == {
        "consumer3": tps("topic1-2", "topic2-3", "topic1-0", "topic2-1"),
        "consumer4": tps("topic2-2", "topic1-1", "topic2-0"),
    }
    assert r.transferring == {}


def test_sticky_topic_balance_after_reassignment():
    # AbstractStickyAssignorTest.testTopicBalanceAfterReassignment: 1 -> 2 -> 4 -> 2 members over topic1(12),
    # topic2(12);
    # every member holds the same number of partitions of each topic at every step
    both, counts = ["topic1", "topic2"], {"topic1": 12, "topic2": 12}
    steps = [
        ["consumer1"],
        ["consumer1", "consumer2"],
        ["consumer1", "consumer2", "consumer3", "consumer4"],
        ["consumer3", "consumer4"],
    ]
    assignment: dict = {}
    for names, per_topic in zip(steps, [12, 6, 3, 6]):
        members = [M(n, both, owned=[str(tp) for tp in assignment.get(n, [])], gen=1) for n in names]
        r = sticky.assign(members, counts)
        assignment = r.assignment
        for tps_ in assignment.values():
            assert [sum(1 for tp in tps_ if tp.topic == t) for t in both] == [per_topic, per_topic]
        if names == steps[-1]:
            assert r.transferring == {}


UNIFORM_RACK_RESULT = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"]


@pytest.mark.parametrize(
    "rf,broker_racks,consumer_racks,mismatched",
    [
        (3, [None] * 3, list("abc"), None),
        (3, list("abc"), [None] * 3, None),
        (3, list("abc"), list("abc"), 0),
        (4, list("abcd"), list("abc"), 0),
        (3, list("abc"), list("def"), None),
        (3, list("abc"), [None, "e", "f"], None),
        (1, list("abc"), list("abc"), 0),
        (2, list("abc"), list("abc"), 0),
        (3, list("ab"), list("abc"), 5),
    ],
)
def test_sticky_rack_aware_uniform_subscription(rf, broker_racks, consumer_racks, mismatched):
    # AbstractStickyAssignorTest.testRackAwareAssignmentWithUniformSubscription (the ConstrainedAssignmentBuilder): from
    # scratch, and again owning the result (nothing moves)
    all3 = [["t1", "t2", "t3"]] * 3
    got, bad = _sticky_rack_case(all3, rf, broker_racks, consumer_racks)
    assert got == UNIFORM_RACK_RESULT
    if mismatched is not None:
        assert bad == mismatched
    assert _sticky_rack_case(all3, rf, broker_racks, consumer_racks, UNIFORM_RACK_RESULT) == (got, bad)
    # misaligned owned partitions move to members on their racks (rf 1: every partition on one rack)
    if rf == 1:
        assert _sticky_rack_case(all3, rf, broker_racks, consumer_racks, OWNED_NON_EQUAL) == (UNIFORM_RACK_RESULT, 0)


def test_cooperative_sticky_with_racks_never_settles_as_kafka():
    """Mixed subscriptions, members with and without racks: Kafka's CooperativeStickyAssignor (AbstractStickyAssignor's
    GeneralAssignmentBuilder; the same rounds come from its trunk source compiled and run on this group) hands t0-0
    and t0-1 in turn to m0-5 for its rack, balances them back to the rackless m0-3 and withholds the other: the group
    never settles. The planner names the cycle instead of looping."""

    def tps(text):
        return tuple(TP(t, int(p)) for t, p in (x.rsplit("-", 1) for x in text.split()))

    racks = {
        TP(t, p): frozenset(r)
        for t, rs in {"t0": ["bc", "ab", ""], "t1": ["ac", "b", "bc", "", "ac", "ac", "", "", ""]}.items()
        for p, r in enumerate(rs)
    }
    members = [
        Member("m0-0", ("t0", "t1"), rack="b", owned=tps("t1-5"), generation=5),
        Member("m0-1", ("t1",), rack="b", owned=tps("t1-1 t1-3"), generation=5),
        Member("m0-2", ("t1", "t0"), rack="b", owned=tps("t1-2"), generation=5),
        Member("m0-3", ("t0",), owned=tps("t0-2 t0-0"), generation=5),
        Member("m0-4", ("t1",), owned=tps("t1-7 t1-8 t1-6"), generation=5),
        Member("m0-5", ("t0",), rack="b", generation=5),
    ]
    counts = {"t0": 3, "t1": 9}
    first = sticky.cooperative_first_round(members, counts, racks)
    assert first.assignment == {
        "m0-0": list(tps("t1-0 t1-5")),
        "m0-1": list(tps("t1-1 t1-3")),
        "m0-2": list(tps("t1-2 t1-4")),
        "m0-3": list(tps("t0-2 t0-1")),
        "m0-4": list(tps("t1-7 t1-8 t1-6")),
        "m0-5": [],
    }
    assert first.transferring == {TP("t0", 0): "m0-5"}
    second = sticky.cooperative_first_round(
        [replace(m, owned=tuple(first.assignment[m.id]), generation=6) for m in members], counts, racks
    )
    assert second.assignment == {**first.assignment, "m0-3": list(tps("t0-2 t0-0"))}
    assert second.transferring == {TP("t0", 1): "m0-5"}
    with pytest.raises(sticky.NeverSettles) as exc:
        sticky.cooperative_converged(members, counts, racks)
    assert str(exc.value) == (
        "cooperative-sticky never settles for this group: Kafka's CooperativeStickyAssignor repeats rebalances 2-3 "
        "forever, withholding t0-0->m0-5, t0-1->m0-5 in turn"
    )
    assert (exc.value.rounds, exc.value.cycle) == (3, (2, 3))
    assert exc.value.result.assignment == first.assignment
