"""Leaders and ISR (`PartitionChangeBuilder.java`, `PartitionStateMachine.scala`), including Kafka's
`core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala` vectors; KIP-966's ELR after
brokers are fenced (`elr_partition_state`), each expected value also what Kafka 4.4.0's own PartitionChangeBuilder
gives (tests/realkafka/test_elr_fences.py runs it on seeded cases)."""

import pytest

from planner.leadership import (
    LeaderState,
    elect_controlled_shutdown,
    elect_offline,
    elect_preferred,
    elect_reassign,
    elr_partition_state,
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


# -- KIP-966: eligible leader replicas (4.1+ KRaft) -------------------------------------------------------------------
@pytest.mark.parametrize(
    "replicas, min_isr, expected",
    [
        # what the real 4.4.0 cluster of tests/realkafka/test_faults.py shows once broker 4 is fenced: the only ISR
        # member gone leaves an empty ISR, 4 in the ELR and as the last known leader (maybeUpdateLastKnownLeader)
        ([4], 1, LeaderState(NO_LEADER, (), False, (4,), (4,))),
        # the ISR below min.insync.replicas=2 keeps the fenced replica in the ELR; the leader is clean
        ([4, 1], 2, LeaderState(1, (1,), False, (4,), ())),
        ([1, 4], 2, LeaderState(1, (1,), False, (4,), ())),
        # the ISR still at min.insync.replicas=1: no ELR (maybePopulateTargetElr clears it)
        ([4, 3, 2], 1, LeaderState(3, (3, 2), False, (), ())),
    ],
)
def test_elr_after_one_broker_is_fenced(replicas, min_isr, expected):
    assert elr_partition_state(p(replicas), frozenset({1, 2, 3}), False, min_isr) == expected


def test_elr_member_elected_when_the_isr_empties():
    # PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElrCanBeElected(lastKnownLeaderEnabled=true): ISR [1],
    # ELR [3], min.insync.replicas 3, replica 1 offline -> leader 3, ISR [3], ELR [1], LastKnownElr empty
    observed = ObservedState(leader=1, isr=(1,), elr=(3,), last_known_elr=())
    assert elr_partition_state(p([1, 2, 3, 4], observed), frozenset({2, 3, 4}), False, 3) == LeaderState(
        3, (3,), False, (1,), ()
    )


def test_elr_brokers_fenced_one_at_a_time():
    # every replica down, min.insync.replicas 3: the controller fences one stale broker per event
    # (ReplicationControlManager.maybeFenceOneStaleBroker), here in ascending id order: broker 1 leaves an ISR of 4
    # (3 left: not below min ISR, so not in the ELR), 2, 3 and 4 go to the ELR, 4 led last.
    # (PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrCanShrinkToZero empties the ISR in one change and
    # gets ELR 1,2,3,4 and LastKnownElr 1.)
    assert elr_partition_state(p([1, 2, 3, 4]), frozenset(), False, 3) == LeaderState(
        NO_LEADER, (), False, (2, 3, 4), (4,)
    )


def test_elr_in_java_hash_set_order():
    # the ELR comes out of a java.util.HashSet: by bucket (id mod 16 here), then insertion order (the old ELR, then
    # the old ISR): 1001 and 1017 share bucket 9
    observed = ObservedState(leader=1017, isr=(1017, 1001, 16, 33))
    part = p([1017, 16, 1001, 33], observed)
    assert elr_partition_state(part, frozenset({33}), False, 4) == LeaderState(33, (33,), False, (16, 1001, 1017), ())
    assert elr_partition_state(part, frozenset({1}), False, 4) == LeaderState(
        NO_LEADER, (), False, (16, 33, 1001, 1017), (1017,)
    )


def test_elr_unclean_election_clears_the_elr():
    # ISR [1,2] of replicas [1,2,3] both down, unclean.leader.election.enable: 3 leads alone, the ELR is cleared
    # (maybeUpdateRecordElr on an unclean election)
    observed = ObservedState(leader=1, isr=(1, 2))
    assert elr_partition_state(p([1, 2, 3], observed), frozenset({3}), True, 1) == LeaderState(3, (3,), True, (), ())


def test_elr_only_in_the_kraft_4_1_era_of_describe():
    from dataclasses import replace

    from planner.formats import describe as d

    brokers = (Broker(1), Broker(2), Broker(3), Broker(4, state="offline"))
    topics = (make_topic("min2", {0: [4, 1]}, {"min.insync.replicas": "2"}), make_topic("one", {0: [4]}))
    cluster = Cluster(brokers=brokers, topics=topics)

    def lines(cluster, version):
        text = d.render_kafka(cluster, d.select(cluster, d.DescribeOptions(version=version)), version)
        return [line for line in text.splitlines() if line.startswith("\t")]

    assert lines(cluster, (4, 1)) == [
        "\tTopic: min2\tPartition: 0\tLeader: 1\tReplicas: 4,1\tIsr: 1\tElr: 4\tLastKnownElr: ",
        "\tTopic: one\tPartition: 0\tLeader: none\tReplicas: 4\tIsr: \tElr: 4\tLastKnownElr: 4",
    ]
    # 3.8 - 4.0 (the feature off by default): the last ISR member stays, no ELR, as before
    assert lines(cluster, (4, 0)) == [
        "\tTopic: min2\tPartition: 0\tLeader: 1\tReplicas: 4,1\tIsr: 1\tElr: \tLastKnownElr: ",
        "\tTopic: one\tPartition: 0\tLeader: none\tReplicas: 4\tIsr: 4\tElr: \tLastKnownElr: ",
    ]
    assert lines(replace(cluster, mode="zookeeper"), (4, 1)) == [
        "\tTopic: min2\tPartition: 0\tLeader: 1\tReplicas: 4,1\tIsr: 1\tElr: N/A\tLastKnownElr: N/A",
        "\tTopic: one\tPartition: 0\tLeader: none\tReplicas: 4\tIsr: 4\tElr: N/A\tLastKnownElr: N/A",
    ]


@pytest.mark.parametrize("min_isr", [1, 3])
def test_a_live_eligible_leader_replica_leads_a_partition_with_an_empty_isr(min_isr):
    # KIP-966: the controller elects an ELR member as soon as it is unfenced (handleBrokerUnfenced runs an election on
    # every partition with no leader); the first live one in replica order, ISR [it], it leaves the ELR, LastKnownElr
    # cleared; the same whether the describe era computes ELR fences or not
    p = Partition("t", 0, (2, 0, 1), observed=ObservedState(leader=NO_LEADER, isr=(), elr=(1, 0), last_known_elr=(2,)))
    live = frozenset({0, 1})
    want = LeaderState(0, (0,), False, (1,), ())
    assert partition_state(p, live) == want
    assert elr_partition_state(p, live, False, min_isr) == want
    # no ELR member live: nothing changes
    assert partition_state(p, frozenset({2})) == LeaderState(NO_LEADER, ())
