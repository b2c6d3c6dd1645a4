"""KIP-1066: a broker whose log dirs are all cordoned keeps its replicas (or gives some up) and gets no new one from
any plan: rebalance, decommission, replace-broker, set-replication-factor (exact plans), and a property over random
clusters."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.formats.plan import word_note
from planner.model import Broker, Cluster, Partition, PlannerError, Topic
from planner.rebalance.decommission import decommission, replace_broker
from planner.rebalance.goals import balance
from planner.rebalance.moves import count_targets
from planner.rebalance.replication import set_replication_factor


def moves(plan):
    return {str(tp): r for tp, r in sorted(plan.proposed.items())}


RING = {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 2], 4: [2, 3], 5: [3, 1]}


def test_a_new_cordoned_broker_gets_nothing(make_cluster):
    plan = balance(make_cluster(4, first_id=1, topics={"orders": RING}, cordoned={4}))
    assert moves(plan) == {}
    assert [word_note(n) for n in plan.notes] == [
        "broker(s) 4 have every log dir cordoned (cordoned.log.dirs, KIP-1066): they keep their replicas or give "
        "some up, and take none"
    ]
    uncordoned = make_cluster(4, first_id=1, topics={"orders": RING})
    assert moves(balance(uncordoned)) == {"orders-0": (4, 1), "orders-1": (2, 4), "orders-2": (3, 4)}


def test_scale_out_past_cordoned_brokers_moves_their_excess_to_the_new_ones(make_cluster):
    """KIP-1066's scale-out: the old brokers 1 and 2 are cordoned, 3 and 4 are new: half of the replicas leave."""
    plan = balance(
        make_cluster(4, first_id=1, topics={"orders": {p: [1 + p % 2, 2 - p % 2] for p in range(8)}}, cordoned={1, 2})
    )
    assert moves(plan) == {
        "orders-0": (3, 1),
        "orders-1": (3, 2),
        "orders-2": (4, 1),
        "orders-3": (4, 2),
        "orders-4": (1, 3),
        "orders-5": (2, 3),
        "orders-6": (1, 4),
        "orders-7": (2, 4),
    }
    assert (plan.replica_moves, plan.lower_bound) == (8, 8)


def test_a_cordoned_broker_below_its_share_keeps_what_it_has_and_the_others_share_the_rest(make_cluster):
    assert count_targets({1: 8, 2: 4, 3: 0}, [1, 2, 3], 12, frozenset({3})) == {3: 0, 1: 6, 2: 6}
    assert count_targets({1: 8, 2: 4, 3: 5}, [1, 2, 3], 17, frozenset({3})) == {3: 5, 1: 6, 2: 6}
    plan = balance(
        make_cluster(3, first_id=1, topics={"orders": {p: [1 if p < 8 else 2] for p in range(12)}}, cordoned={3})
    )
    assert moves(plan) == {"orders-0": (2,), "orders-1": (2,)}
    assert (plan.replica_moves, plan.lower_bound) == (2, 2)


def test_decommission_and_replace_broker_skip_the_cordoned_broker(make_cluster):
    c = make_cluster(4, first_id=1, topics={"orders": {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 2]}}, cordoned={4})
    assert moves(decommission(c, [1])) == {"orders-0": (2, 3), "orders-2": (3, 2), "orders-3": (3, 2)}
    with pytest.raises(PlannerError) as exc:
        replace_broker(c, 1, 4)
    assert str(exc.value) == (
        "--target broker 4 has every log dir cordoned (cordoned.log.dirs, KIP-1066) and takes no new replicas; "
        "pick another broker or uncordon it"
    )
    # where the target holds the partition already, the fallback is an uncordoned broker (3, not the lighter 4)
    three = make_cluster(4, first_id=1, topics={"orders": {0: [1, 2], 1: [2, 3], 2: [3, 1]}}, cordoned={4})
    assert moves(replace_broker(three, 1, 2)) == {
        "orders-0": (3, 2),
        "orders-2": (3, 2),
    }


def test_set_replication_factor_adds_no_replica_to_a_cordoned_broker(make_cluster):
    c = make_cluster(4, first_id=1, topics={"orders": {0: [1, 2], 1: [2, 3], 2: [3, 1]}}, cordoned={4})
    assert moves(set_replication_factor(c, "orders", 3)) == {
        "orders-0": (1, 2, 3),
        "orders-1": (2, 3, 1),
        "orders-2": (3, 1, 2),
    }
    with pytest.raises(PlannerError) as exc:
        set_replication_factor(
            make_cluster(4, first_id=1, topics={"orders": {0: [1, 2], 1: [2, 1]}}, cordoned={3, 4}), "orders", 3
        )
    assert str(exc.value) == (
        "cannot add a replica of orders-0: every online broker without one has all its log dirs cordoned "
        "(cordoned.log.dirs, KIP-1066): 3,4"
    )


def test_rack_repair_does_not_need_the_rack_of_a_cordoned_broker(make_cluster):
    c = make_cluster(4, first_id=1, racks=["a", "b", "c", "a"], topics={"orders": {0: [1, 4], 1: [2, 4]}}, cordoned={3})
    assert moves(balance(c)) == {"orders-0": (1, 2)}


@st.composite
def cordoned_clusters(draw):
    n = draw(st.integers(3, 7))
    n_racks = draw(st.integers(0, 3))
    closed = draw(st.sets(st.integers(0, n - 1), max_size=n - 2))
    brokers = tuple(Broker(i, rack=f"r{i % n_racks}" if n_racks else None, cordoned=i in closed) for i in range(n))
    topics = []
    for t in range(draw(st.integers(1, 3))):
        rf = draw(st.integers(1, 2))
        parts = tuple(
            Partition(f"t{t}", p, tuple(draw(st.permutations(range(n)))[:rf]), size=draw(st.integers(0, 99)))
            for p in range(draw(st.integers(1, 10)))
        )
        topics.append(Topic(f"t{t}", parts))
    return Cluster(brokers=brokers, topics=tuple(topics)), closed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cordoned_clusters(), st.data())
def test_no_plan_adds_a_replica_to_a_cordoned_broker(drawn, data):
    c, closed = drawn
    open_ids = sorted(set(c.broker_ids) - closed)
    plans = [balance(c)]
    if len(open_ids) > 2:
        try:
            plans.append(decommission(c, [data.draw(st.sampled_from(open_ids))]))
        except PlannerError as exc:  # racks may need a cordoned broker: refused, never placed there
            assert "have every log dir cordoned and take none" in str(exc)
    for plan in plans:
        cur = plan.current
        for tp, r in plan.proposed.items():
            assert not (set(r) - set(cur[tp])) & closed, (tp, cur[tp], r)


def test_a_partition_no_move_can_repair_is_named_and_left_out_of_the_bound(make_cluster):
    # t-0 (racks a, a, b) lacks rack c, whose only broker (4) is cordoned; in the second cluster t-0 (a, a) lacks
    # rack b, whose only broker (3) has 50 B usable for its 100 B. No move repairs it: it stays, a note names it, and
    # the bound counts no repair for it (it said "lower bound 1: the goals are out of reach" with no note to read)
    from dataclasses import replace

    from planner.rebalance.moves import with_sizes

    unrepaired = (
        "1 rack-unsafe partition(s) could not be repaired (t-0): every broker of the racks they lack has all its log "
        "dirs cordoned or too few usable bytes for the copy"
    )
    c = make_cluster(
        4, ["a", "a", "b", "c"], {"t": {0: (1, 2, 3), 1: (2, 3, 4), 2: (3, 4, 1)}}, cordoned=[4], first_id=1
    )
    plan = balance(c)
    assert (dict(plan.proposed), plan.replica_moves, plan.lower_bound) == ({}, 0, 0)
    assert word_note(plan.notes[0]) == unrepaired
    c = make_cluster(3, ["a", "a", "b"], {"t": {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3)}}, first_id=1)
    c = replace(c, brokers=tuple(replace(b, usable_bytes=50) if b.id == 3 else b for b in c.brokers))
    plan = balance(with_sizes(c, {p.tp: 100 for p in c.partitions()}))
    assert (dict(plan.proposed), plan.replica_moves, plan.lower_bound) == ({}, 0, 0)
    # broker 3 can take nothing: above the ceiling and below the floor both (issue 32)
    assert [n.kind for n in plan.notes] == ["unmet", "unmet-floor", "unrepaired", "disk-space"]
    assert word_note(plan.notes[2]) == unrepaired


def test_the_repair_bound_lets_a_cordoned_broker_below_its_share_keep_what_it_holds(make_cluster):
    # racks a = {2}, b = {0, 1, 3}; broker 1 (b) is cordoned and holds nothing, below its share of rack b's replicas:
    # it takes none, so 0 and 3 share them (as the count targets say). t-2 (3, 0) is rack-unsafe: one move repairs
    # it and leaves the counts in range. The bound with repairs had 0 and 3 shed replicas for broker 1 to take: 2
    c = make_cluster(4, ["b", "b", "a", "b"], {"t": {0: (2, 3), 1: (0, 2), 2: (3, 0), 3: (3, 2)}}, cordoned=[1])
    plan = balance(c)
    assert {tp.partition: r for tp, r in plan.proposed.items()} == {2: (2, 0)}
    assert (plan.replica_moves, plan.lower_bound) == (1, 1)


def test_a_replication_factor_raised_where_a_rack_cannot_take_a_replica_says_which_partitions_are_rack_unsafe(
    make_cluster,
):
    # Racks a = {1, 4}, b = {2, 5}, c = {3, 6}; broker 3 is cordoned and broker 6 has 50 B usable. Raising t to RF 3,
    # t-0 and t-1 (100 B) find no broker of rack c for their third replica and take one of a rack they use: before,
    # only the summary's rack-unsafe figure (0 -> 2) showed it. t-2 (40 B) fits on broker 6, t-3 holds it already.
    from dataclasses import replace

    from planner.rebalance.moves import with_sizes

    c = make_cluster(
        6, ["a", "b", "c", "a", "b", "c"], {"t": {0: [1], 1: [2], 2: [4], 3: [6]}}, cordoned={3}, first_id=1
    )
    c = replace(c, brokers=tuple(replace(b, usable_bytes=50) if b.id == 6 else b for b in c.brokers))
    c = with_sizes(c, {p.tp: s for p, s in zip(c.partitions(), [100, 100, 40, 100])})
    plan = set_replication_factor(c, "t", 3)
    assert moves(plan) == {"t-0": (1, 5, 2), "t-1": (2, 1, 4), "t-2": (4, 5, 6), "t-3": (6, 1, 2)}
    assert [(n.kind, n.partitions, n.topics, n.values) for n in plan.notes[:1]] == [
        (
            "rack-unsafe",
            (plan.before.topic("t").partitions[0].tp, plan.before.topic("t").partitions[1].tp),
            ("c",),
            (1, 3, 6),
        )
    ]
    assert word_note(plan.notes[0]) == (
        "2 partition(s) are rack-unsafe at the new replication factor (t-0, t-1): no broker of rack(s) c, which they "
        "lack, can take a replica: broker(s) 3 have every log dir cordoned (cordoned.log.dirs, KIP-1066); broker(s) 6 "
        "report too few usable bytes for the copy (DescribeLogDirs)"
    )
    # with room on broker 6 (no size known) both take rack c there: no rack note (broker 3, cordoned, keeps t wide)
    plan = set_replication_factor(
        make_cluster(6, ["a", "b", "c", "a", "b", "c"], {"t": {0: [1], 1: [2]}}, cordoned={3}, first_id=1), "t", 3
    )
    assert moves(plan) == {"t-0": (1, 5, 6), "t-1": (2, 4, 6)}
    assert [(n.goal, n.kind) for n in plan.notes] == [("topic-spread", "unmet")]


def test_a_plan_whose_only_target_is_cordoned_and_empty_moves_nothing_and_says_why(make_cluster):
    # Broker 1 (cordoned, empty) is the only broker left when broker 2 is decommissioned; t-0 on broker 2 is excluded
    # (or mid-reassignment), so nothing must move. No broker could lead: the leader goal divided by the zero brokers
    # that can (ZeroDivisionError, a traceback from `reassign decommission --exclude-topic t`).
    from dataclasses import replace

    c = make_cluster(2, first_id=1, topics={"t": {0: [2]}}, cordoned={1})
    moving = replace(c, topics=(replace(c.topics[0], partitions=(replace(c.topics[0].partitions[0], adding=(2,)),)),))
    for plan in (decommission(c, [2], exclude_topics=("t",)), decommission(moving, [2]), balance(moving, brokers=[1])):
        assert (dict(plan.proposed), plan.replica_moves, plan.lower_bound) == ({}, 0, 0)
        assert [n.kind for n in plan.notes] == [
            "cordoned",
            "excluded" if plan.before is c else "in-progress",
            "stranded",
        ]
    assert word_note(decommission(c, [2], exclude_topics=("t",)).notes[2]) == (
        "1 excluded or in-progress partition(s) keep replicas on brokers outside the target set (t-0)"
    )
