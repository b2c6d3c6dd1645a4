"""Leaders and ISR (`PartitionChangeBuilder.java`, `PartitionStateMachine.scala`), including Kafka's
`core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala` vectors."""

import pytest

from planner.leadership import (
    LeaderState,
    elect_controlled_shutdown,
    elect_offline,
    elect_preferred,
    elect_reassign,
    partition_state,
    topic_states,
)
from planner.model import NO_LEADER, Broker, Cluster, ObservedState, Partition, make_topic


@pytest.mark.parametrize(
    "assignment, isr, live, unclean, expected",
    [
        ([2, 4], [2, 4], {4}, False, (4, False)),
        ([2, 4], [2], {4}, False, (NO_LEADER, False)),
        ([2, 4], [2], {4}, True, (4, True)),
    ],
)
def test_offline_election(assignment, isr, live, unclean, expected):
    assert elect_offline(assignment, isr, live, unclean) == expected


@pytest.mark.parametrize(
    "target, isr, live, expected",
    [([2, 4], [2, 4], {4}, 4), ([2, 4], [2], set(), NO_LEADER), ([2, 4], [], {2}, NO_LEADER)],
)
def test_reassign_election(target, isr, live, expected):
    assert elect_reassign(target, isr, live) == expected


@pytest.mark.parametrize(
    "assignment, isr, live, expected",
    [
        ([2, 4], [2, 4], {2, 4}, 2),
        ([2, 4], [2], set(), NO_LEADER),
        ([2, 4], [4], {2, 4}, NO_LEADER),
        ([2, 4], [], set(), NO_LEADER),
    ],
)
def test_preferred_election(assignment, isr, live, expected):
    assert elect_preferred(assignment, isr, live) == expected


@pytest.mark.parametrize(
    "isr, shutting, expected", [([2, 4], {2}, 4), ([2], {2}, NO_LEADER), ([2, 4], {2, 4}, NO_LEADER)]
)
def test_controlled_shutdown_election(isr, shutting, expected):
    assert elect_controlled_shutdown([2, 4], isr, {2, 4}, shutting) == expected


def p(replicas, observed=None):
    return Partition(topic="t", id=0, replicas=tuple(replicas), observed=observed)


def test_steady_state_is_preferred_leader_and_full_isr_in_replica_order():
    assert partition_state(p([3, 1, 2]), frozenset({1, 2, 3})) == LeaderState(3, (3, 1, 2))


def test_quickstart_example_killing_broker_1():
    # docs/quickstart.html: Replicas 1,2,0 after broker 1 dies -> Leader 2, Isr 2,0
    assert partition_state(p([1, 2, 0]), frozenset({0, 2})) == LeaderState(2, (2, 0))


def test_offline_election_keeps_old_isr_order():
    observed = ObservedState(leader=1, isr=(1, 3, 2))
    assert partition_state(p([1, 2, 3], observed), frozenset({2, 3})) == LeaderState(2, (3, 2))


def test_no_leader_keeps_last_isr_member():
    assert partition_state(p([0]), frozenset()) == LeaderState(NO_LEADER, (0,))
    observed = ObservedState(leader=1, isr=(1, 2))
    assert partition_state(p([1, 2], observed), frozenset()) == LeaderState(NO_LEADER, (2,))


def test_unclean_election_from_topic_config():
    brokers = (Broker(1), Broker(2, state="offline"))
    observed = ObservedState(leader=2, isr=(2,))
    part = Partition(topic="m", id=0, replicas=(2, 1), observed=observed)
    clean = Cluster(brokers=brokers, topics=(make_topic("m", {0: [2, 1]}),))
    topic = clean.topics[0]
    from dataclasses import replace

    t_unclean = replace(topic, partitions=(part,), configs={"unclean.leader.election.enable": "true"})
    t_clean = replace(topic, partitions=(part,))
    assert topic_states(clean, t_unclean) == [LeaderState(1, (1,), unclean=True)]
    assert topic_states(clean, t_clean) == [LeaderState(NO_LEADER, (2,))]


def test_fenced_broker_cannot_lead():
    brokers = (Broker(1, state="fenced"), Broker(2))
    cluster = Cluster(brokers=brokers, topics=(make_topic("t", {0: [1, 2]}),))
    assert topic_states(cluster, cluster.topics[0]) == [LeaderState(2, (2,))]
