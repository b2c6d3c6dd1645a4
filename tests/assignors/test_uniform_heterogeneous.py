"""KIP-848 `uniform` with mixed subscriptions: Kafka's UniformHeterogeneousAssignmentBuilder. Every vector of
group-coordinator/src/test/java/org/apache/kafka/coordinator/group/assignor/UniformHeterogeneousAssignmentBuilderTest.java
(members iterated in sorted order there, as here), CommonAssignorTests' reuse and stickiness checks, the topic-id
tie-break, and when the planner flags the result as not exact."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.assignors import uniform
from planner.assignors import uniform_heterogeneous as het
from planner.assignors.group import Member
from planner.assignors.uniform import uuid_sort_key
from planner.model import PlannerError
from planner.model import TopicPartition as TP

# the test's Uuid.fromString ids
IDS = {
    "topic1": "T1-A4s3VTwiI5CTbEp6POw",
    "topic2": "T2-B4s3VTwiI5YHbPp6YUe",
    "topic3": "T3-CU8fVTLCz5YMkLoDQsa",
    "topic4": "T4-Tw9fVTLCz5HbPp6YQsa",
}


def by_id(topic):
    return uuid_sort_key(IDS[topic])


def build(counts, subs, owned=None, order=None, key=by_id):
    """Run the builder, members in sorted order (the test's TreeMap), and return {member: {topic: [partitions]}}."""
    current = {m: [TP(t, p) for t, ps in o.items() for p in ps] for m, o in (owned or {}).items()}
    out = het.assign(order or sorted(subs), subs, current, counts, key)
    result = {}
    for member, tps in out.items():
        per_topic = result.setdefault(member, {})
        for tp in tps:
            per_topic.setdefault(tp.topic, []).append(tp.partition)
    return result


def test_two_members_no_topic_subscription():
    assert build({"topic1": 3}, {"A": [], "B": []}) == {}


def test_two_members_subscribed_to_nonexistent_topics():
    with pytest.raises(PlannerError, match="doesn't exist in the topic metadata"):
        build({"topic1": 3}, {"A": ["topic3"], "B": ["topic2"]})


def test_first_assignment_two_members_two_topics():
    assert build({"topic1": 3, "topic3": 6}, {"A": ["topic1", "topic3"], "B": ["topic3"]}) == {
        "A": {"topic1": [0, 1, 2], "topic3": [4]},
        "B": {"topic3": [0, 1, 2, 3, 5]},
    }


def test_first_assignment_num_members_greater_than_total_num_partitions():
    assert build({"topic3": 1, "topic1": 2}, {"A": ["topic3"], "B": ["topic3"], "C": ["topic1"]}) == {
        "A": {"topic3": [0]},
        "B": {},
        "C": {"topic1": [0, 1]},
    }


def test_reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment():
    got = build(
        {"topic1": 6, "topic2": 4, "topic3": 4},
        {"A": ["topic1"], "B": ["topic1", "topic2"], "C": ["topic1", "topic2", "topic3"]},
        {
            "A": {"topic1": [0, 1, 2]},
            "B": {"topic1": [3], "topic2": [0]},
            "C": {"topic1": [4, 5], "topic2": [1, 2, 3], "topic3": [0, 1, 2, 3]},
        },
    )
    assert got == {
        "A": {"topic1": [0, 1, 2, 5]},
        "B": {"topic1": [3], "topic2": [0, 1, 2, 3]},
        "C": {"topic1": [4], "topic3": [0, 1, 2, 3]},
    }


def test_reassignment_when_partitions_are_added_for_two_members():
    got = build(
        {"topic1": 6, "topic2": 5, "topic3": 3, "topic4": 3},
        {"A": ["topic1", "topic3"], "B": ["topic1", "topic2", "topic3", "topic4"]},
        {"A": {"topic1": [0, 1, 2, 3], "topic3": [0, 1]}, "B": {"topic2": [0, 1, 2], "topic4": [0, 1, 2]}},
    )
    assert got == {
        "A": {"topic1": [0, 1, 2, 3, 4, 5], "topic3": [0, 1, 2]},
        "B": {"topic2": [0, 1, 2, 3, 4], "topic4": [0, 1, 2]},
    }


def test_reassignment_when_one_member_added_and_partitions_added_two_members_two_topics():
    got = build(
        {"topic1": 6, "topic2": 7},
        {"A": ["topic1"], "B": ["topic1", "topic2"], "C": ["topic1", "topic2"]},
        {"A": {"topic1": [0, 2], "topic2": [0]}, "B": {"topic1": [1], "topic2": [1, 2]}},
    )
    assert got == {
        "A": {"topic1": [0, 2, 3, 4, 5]},
        "B": {"topic1": [1], "topic2": [1, 2, 6]},
        "C": {"topic2": [0, 3, 4, 5]},
    }


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_three_topics():
    got = build(
        {"topic1": 3, "topic2": 8, "topic3": 3},
        {"A": ["topic1", "topic3"], "B": ["topic2"]},
        {"A": {"topic1": [0, 1, 2], "topic3": [0, 1]}, "B": {"topic2": [3, 4, 5, 6]}},
    )
    assert got == {"A": {"topic1": [0, 1, 2], "topic3": [0, 1, 2]}, "B": {"topic2": list(range(8))}}


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics():
    got = build(
        {"topic1": 3, "topic2": 5},
        {"A": ["topic1"], "B": ["topic1", "topic2"]},
        {"A": {"topic1": [0, 2], "topic2": [1, 3]}, "B": {"topic1": [1], "topic2": [0, 2, 4]}},
    )
    assert got == {"A": {"topic1": [0, 1, 2]}, "B": {"topic2": [0, 1, 2, 3, 4]}}


RUN_OUT = (
    {"topic1": 2, "topic2": 2, "topic3": 2},
    {"A": ["topic1", "topic2", "topic3"], "B": ["topic1", "topic2", "topic3"]},
    {"A": {"topic1": [0, 1], "topic2": [0, 1], "topic3": [0, 1]}},
)


def test_reassignment_when_topic_partitions_run_out_and_members_have_no_partitions():
    assert build(*RUN_OUT) == {"A": {"topic2": [0], "topic3": [0, 1]}, "B": {"topic1": [0, 1], "topic2": [1]}}


def test_first_assignment_with_two_members_including_one_without_subscriptions():
    assert build({"topic1": 3}, {"A": ["topic1"], "B": []}) == {"A": {"topic1": [0, 1, 2]}, "B": {}}


def test_the_three_tied_topics_are_taken_in_topic_id_order():
    # RUN_OUT's topics tie on partitions per subscriber and subscriber count: only Uuid.compareTo orders them
    # (T1-… < T2-… < T3-…). Reversed ids reverse the result's roles of topic1 and topic3.
    reverse = {"topic1": 3, "topic2": 2, "topic3": 1}
    assert build(*RUN_OUT, key=reverse.__getitem__) == {
        "A": {"topic1": [0, 1], "topic2": [0]},
        "B": {"topic2": [1], "topic3": [0, 1]},
    }


def test_uuid_order_is_signed():
    # Uuid.compareTo of kafka-clients 4.4.0 (the release the real-cluster tests run): the high, then the low 64 bits,
    # each as a signed long. Checked there: "gAAA…" (high bit set) < ZERO, "AAAAAAAAAAC…" (low long negative) < ZERO,
    # "f___…" > "gAAA…"; tests/realkafka/test_uniform_assignor.py runs Kafka's builder on random ids.
    zero, neg_high, neg_low = "AAAAAAAAAAAAAAAAAAAAAA", "gAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAACAAAAAAAAAAA"
    assert uuid_sort_key(neg_high) < uuid_sort_key(neg_low) < uuid_sort_key(zero)
    assert uuid_sort_key("f_____________________") > uuid_sort_key(IDS["topic4"]) > uuid_sort_key(IDS["topic1"])
    assert sorted(IDS.values(), key=uuid_sort_key) == [IDS[t] for t in ("topic1", "topic2", "topic3", "topic4")]


def test_common_assignor_reuse_and_stickiness():
    # CommonAssignorTests.testAssignmentReuse / testReassignmentStickiness, HETEROGENEOUS: topics 2, 5 and 7 partitions,
    # A, B, C subscribed to all three. Rerun on its own result, in any member order, the assignment does not change.
    counts = {"topic1": 2, "topic2": 5, "topic3": 7}
    subs = {m: list(counts) for m in "ABC"}
    first = het.assign(["A", "B", "C"], subs, {}, counts, by_id)
    assert sorted(len(v) for v in first.values()) == [4, 5, 5]
    for order in itertools.permutations("ABC"):
        assert het.assign(list(order), subs, first, counts, by_id) == first


def test_overlapping_subscriptions_chain():
    # a chain of overlapping subscriptions, everything on the middle member: t1 is balanced first (20 over m1, m2),
    # then t2 takes m2's share down to m3
    counts = {"t1": 20, "t2": 10}
    subs = {"m1": ["t1"], "m2": ["t1", "t2"], "m3": ["t2"]}
    got = het.assign(["m1", "m2", "m3"], subs, {"m2": [TP("t1", p) for p in range(20)]}, counts)
    assert {m: len(v) for m, v in got.items()} == {"m1": 10, "m2": 10, "m3": 10}


# -- through the planner's entry point: Member objects, the coordinator's HashMap member order, topic ids ----------


def M(mid, topics, owned=()):
    return Member(id=mid, topics=tuple(topics), owned=tuple(owned))


def test_assign_dispatches_mixed_subscriptions_to_the_builder():
    members = [
        M("A", ["topic1", "topic2"], [TP("topic1", 3), TP("topic2", 0)]),
        M(
            "B",
            ["topic1", "topic2", "topic3"],
            [
                TP("topic1", 4),
                TP("topic1", 5),
                TP("topic2", 1),
                TP("topic2", 2),
                TP("topic2", 3),
                TP("topic3", 0),
                TP("topic3", 1),
                TP("topic3", 2),
                TP("topic3", 3),
            ],
        ),
        M("C", ["topic1"], [TP("topic1", p) for p in range(3)]),
    ]
    got = uniform.assign(members, {"topic1": 6, "topic2": 4, "topic3": 4}, IDS)
    # the Kafka vector with its members renamed, (A, B, C) here being (B, C, A) there: the numbering of the members
    # differs (A..C hash in name order), the result is still the vector's
    assert got == {
        "A": [TP("topic1", 3)] + [TP("topic2", p) for p in range(4)],
        "B": [TP("topic1", 4)] + [TP("topic3", p) for p in range(4)],
        "C": [TP("topic1", p) for p in (0, 1, 2, 5)],
    }
    assert uniform.inexact_note(members, {"topic1": 6, "topic2": 4, "topic3": 4}, None) is None  # no ties


def test_owned_partitions_of_unsubscribed_or_missing_topics_are_dropped():
    members = [M("A", ["topic1"], [TP("topic1", 0), TP("topic2", 1), TP("topic1", 9)]), M("B", ["topic1", "topic2"])]
    got = uniform.assign(members, {"topic1": 3, "topic2": 5}, IDS)
    assert got == {"A": [TP("topic1", 0), TP("topic1", 1), TP("topic1", 2)], "B": [TP("topic2", p) for p in range(5)]}


TIED = {"x": 2, "y": 2, "z": 1}


def tied_members():
    return [M("A", ["x", "y"], [TP("x", 0), TP("x", 1), TP("y", 0), TP("y", 1)]), M("B", ["x", "y"]), M("C", ["z"])]


def test_tied_topics_without_ids_are_flagged_only_when_their_order_matters():
    members = tied_members()
    # x and y: 1.0 partitions per subscriber, 2 subscribers each. By name x is balanced first and A gives it away ...
    assert uniform.assign(members, TIED) == {
        "A": [TP("y", 0), TP("y", 1)],
        "B": [TP("x", 0), TP("x", 1)],
        "C": [TP("z", 0)],
    }
    # ... with y's id below x's, Kafka balances y first
    ids = {"x": "AAAAAAAAAAAAAAAAAAAAAg", "y": "AAAAAAAAAAAAAAAAAAAAAQ", "z": "AAAAAAAAAAAAAAAAAAAAAw"}
    assert uniform.assign(members, TIED, ids) == {
        "A": [TP("x", 0), TP("x", 1)],
        "B": [TP("y", 0), TP("y", 1)],
        "C": [TP("z", 0)],
    }
    assert uniform.inexact_note(members, TIED, ids) is None
    assert uniform.inexact_note(members, TIED, {"x": ids["x"], "z": ids["z"]}) == (
        "no topic_id for y in the topology: Kafka orders topics with equal partitions per subscriber and equal "
        "subscriber counts (x, y) by topic id, the planner by name, and here the order changes the result"
    )
    # z has no tie: its id does not matter
    assert uniform.inexact_note(members, TIED, {"x": ids["x"], "y": ids["y"]}) is None
    # nobody owns anything: either order gives the same assignment, so it is exact without ids
    fresh = [M(m.id, m.topics) for m in members]
    assert uniform.inexact_note(fresh, TIED, None) is None
    assert uniform.assign(fresh, TIED) == {
        "A": [TP("x", 0), TP("y", 0)],
        "B": [TP("x", 1), TP("y", 1)],
        "C": [TP("z", 0)],
    }


def test_homogeneous_without_ids_keeps_its_flag():
    members = [M("A", ["x", "y"]), M("B", ["x", "y"])]
    assert uniform.inexact_note(members, {"x": 1, "y": 1}, None) == (
        "no topic_id for x, y in the topology: Kafka walks the topics in the hash order of their ids, the planner in "
        "name order"
    )


@st.composite
def mixed_groups(draw):
    counts = {f"t{i}": draw(st.integers(1, 9)) for i in range(draw(st.integers(1, 4)))}
    names = list(counts)
    members = []
    for i in range(draw(st.integers(1, 6))):
        subs = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        tps = [TP(t, p) for t in subs for p in range(counts[t])]
        owned = draw(st.lists(st.sampled_from(tps), unique=True, max_size=6))
        members.append(M(f"m{draw(st.integers(0, 99))}-{i}", subs, owned))
    return members, counts


@settings(max_examples=200, deadline=None)
@given(mixed_groups())
def test_rerun_on_its_own_result_changes_nothing(group):
    members, counts = group
    first = uniform.assign(members, counts)
    again = uniform.assign([M(m.id, m.topics, first[m.id]) for m in members], counts)
    assert {k: set(v) for k, v in again.items()} == {k: set(v) for k, v in first.items()}


def test_inconsistent_current_assignment_texts():
    def error(*args):
        with pytest.raises(PlannerError) as exc:
            het.assign(*args)
        return str(exc.value)

    assert error(["a", "b"], {"a": ["t"], "b": ["t"]}, {"a": [TP("t", 0)], "b": [TP("t", 0)]}, {"t": 2}) == (
        "t-0 is held by both a and b"
    )
    assert error(["a"], {"a": ["t"]}, {"a": [TP("t", 5)]}, {"t": 2}) == "a holds t-5, but t has 2 partitions"
    assert error(["a"], {"a": ["t", "u"]}, {}, {"t": 2}) == (
        "Members are subscribed to topic u which doesn't exist in the topic metadata."
    )
