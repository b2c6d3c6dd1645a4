"""The execution use cases (planner/rebalance/execution.py): batches, elections, the checks of a reassignment."""

import pytest
from testkit import build_cluster

from planner.model import Broker, Cluster, PlannerError, TopicPartition, make_topic
from planner.rebalance.execution import (
    batch_count,
    check_reassignment,
    execution,
    leader_election,
    partitions_to_elect,
    summary_figures,
)
from planner.rebalance.moves import Plan

CLUSTER = build_cluster(4, racks=["a", "a", "b", "b"], topics={"t": {0: [0, 2], 1: [1, 3], 2: [2, 0]}})


def test_partitions_to_elect_only_where_the_leader_leaves_or_is_not_the_new_first():
    c = CLUSTER
    proposed = {
        TopicPartition("t", 0): (2, 0),  # leader 0 stays a replica, 2 is the new preferred: elect
        TopicPartition("t", 1): (3, 0),  # leader 1 leaves: the controller elects 3, the new first: no election
        TopicPartition("t", 2): (2, 1),  # leader 2 stays and is first: no election
    }
    plan = Plan(before=c, proposed=proposed, goal="test", brokers=(0, 1, 2, 3))
    assert partitions_to_elect(plan) == [TopicPartition("t", 0)]


def test_execution_batches_and_elections():
    c = CLUSTER
    proposed = {TopicPartition("t", 0): (2, 0), TopicPartition("t", 1): (3, 0)}
    ex = execution(Plan(before=c, proposed=proposed, goal="test", brokers=(0, 1, 2, 3)), batch_size=1)
    assert [list(b) for b in ex.batches] == [[TopicPartition("t", 0)], [TopicPartition("t", 1)]]
    assert ex.elect == [TopicPartition("t", 0)]
    assert ex.throttle is None


@pytest.mark.parametrize(
    "moved, batch_size, expected",
    [(0, None, 0), (0, 2, 0), (1, None, 1), (1, 7, 1), (3, None, 1), (3, 1, 3), (3, 2, 2), (3, 3, 1), (3, 7, 1)],
)
def test_batch_count_is_the_number_of_batches_execution_makes(moved, batch_size, expected):
    """What the summary shows without putting the partitions in batch order."""
    proposed = {TopicPartition("t", 0): (2, 0), TopicPartition("t", 1): (3, 0), TopicPartition("t", 2): (2, 1)}
    plan = Plan(before=CLUSTER, proposed=dict(list(proposed.items())[:moved]), goal="test", brokers=(0, 1, 2, 3))
    assert batch_count(plan, batch_size) == len(execution(plan, batch_size=batch_size).batches) == expected
    for throttle in (None, 50_000_000):
        ex = execution(plan, throttle, batch_size)
        assert summary_figures(plan, throttle, batch_size) == (ex.throttle, expected)
        assert (ex.throttle is None) == (throttle is None)


def test_check_reassignment_reports_rf_changes_and_rack_unsafe_partitions_as_data():
    c = CLUSTER
    proposed = {
        TopicPartition("t", 0): (0, 2),  # unchanged
        TopicPartition("t", 1): (1, 0),  # racks a,a: becomes rack-unsafe
        TopicPartition("t", 2): (2, 0, 1),  # RF 2 -> 3
    }
    checked = check_reassignment(c, proposed, "plan.json")
    assert checked.unchanged == 1
    assert dict(checked.plan.proposed) == {TopicPartition("t", 1): (1, 0), TopicPartition("t", 2): (2, 0, 1)}
    assert checked.rf_changes == ((TopicPartition("t", 2), 2, 3),)
    assert checked.made_rack_unsafe == ((TopicPartition("t", 1), (1, 0), ("a", "a")),)
    assert checked.plan.goal == "check-execute plan.json: valid"


def test_check_reassignment_runs_kafkas_checks_first():
    with pytest.raises(PlannerError, match="5"):
        check_reassignment(CLUSTER, {TopicPartition("t", 0): (0, 5)}, "plan.json")


def test_leader_election_is_a_plan_without_data_moves():
    c = Cluster(brokers=tuple(Broker(i) for i in range(2)), topics=(make_topic("t", {0: [0, 1], 1: [0, 1]}),))
    ex = leader_election(c, None)
    assert dict(ex.plan.proposed) == {TopicPartition("t", 0): (1, 0)}
    assert ex.elect == [TopicPartition("t", 0)]
    assert ex.plan.lower_bound == 0


def test_incoming_bytes_and_brokers_short_of_space():
    from dataclasses import replace

    from planner.rebalance.reassignment import incoming_bytes, short_of_space

    c = CLUSTER
    t = c.topic("t")
    sized = replace(t, partitions=tuple(replace(p, size=100 * (p.id + 1)) for p in t.partitions))
    c = c.with_topic(sized)
    proposed = {TopicPartition("t", 0): (0, 3), TopicPartition("t", 1): (1, 0), TopicPartition("t", 2): (1, 3)}
    assert incoming_bytes(c, proposed) == {3: 100 + 300, 0: 200, 1: 300}
    assert short_of_space(c, proposed, {3: 399, 0: 200, 1: 10_000}) == [(3, 400, 399)]
