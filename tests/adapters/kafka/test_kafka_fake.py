"""The fake KRaft cluster's controller, driven through kafka-python's KafkaAdminClient over real sockets.

Expected values follow Kafka's ReplicationControlManagerTest (testAlterPartitionReassignment,
testCancelReassignPartitions) and PartitionReassignmentReplicasTest / PartitionReassignmentRevertTest.
"""

from __future__ import annotations

import pytest
from fake_cluster import INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS


@pytest.fixture
def admin(kraft):
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kraft.bootstrap, request_timeout_ms=5000)
    try:
        yield client
    finally:
        client.close()


def tp(topic, p):
    from kafka import TopicPartition

    return TopicPartition(topic, p)


def test_reassignment_lists_target_then_removing_and_completes_as_replicas_catch_up(kraft, admin):
    assert admin.alter_partition_reassignments({tp("orders", 0): [3, 2]}) == {tp("orders", 0): None}
    # PartitionReassignmentReplicas: replicas = target + removing, adding = target - current
    assert admin.list_partition_reassignments() == {
        tp("orders", 0): {"replicas": [3, 2, 1], "adding_replicas": [3], "removing_replicas": [1]}
    }
    kraft.step(400)
    dirs = {d["broker"]: d["log_dirs"][0]["topics"] for d in admin.describe_log_dirs(brokers=[3])}
    assert dirs[3][0]["partitions"][0] == {
        "partition_index": 0,
        "partition_size": 400,
        "offset_lag": 600,
        "is_future_key": False,
    }
    assert admin.list_partition_reassignments() != {}
    kraft.step(600)  # 1000 bytes: broker 3 joins the ISR and the reassignment completes
    assert admin.list_partition_reassignments() == {}
    part = admin.describe_topics(["orders"])[0]["partitions"][0]
    # the leader (1) left: PartitionChangeBuilder elects the first target replica in the ISR, a new epoch
    assert (part["replica_nodes"], part["isr_nodes"], part["leader_id"], part["leader_epoch"]) == ([3, 2], [2, 3], 3, 1)


def test_cancel_reverts_to_the_original_replicas(kraft, admin):
    admin.alter_partition_reassignments({tp("payments", 0): [1, 3, 2]})
    assert admin.list_partition_reassignments() == {}  # a reorder of replicas in the ISR completes at once
    assert kraft.partition("payments", 0).replicas == [1, 3, 2]
    admin.alter_partition_reassignments({tp("orders", 1): [1, 3]})  # [2, 3] -> replicas [1, 3, 2]
    assert admin.alter_partition_reassignments({tp("orders", 1): None}) == {tp("orders", 1): None}
    part = admin.describe_topics(["orders"])[0]["partitions"][1]
    # PartitionReassignmentRevert: replicas minus adding, in the reassignment's order: [3, 2], not [2, 3]
    assert (part["replica_nodes"], part["isr_nodes"], part["leader_id"]) == ([3, 2], [2, 3], 2)
    errors = admin.alter_partition_reassignments({tp("orders", 1): None})
    assert errors[tp("orders", 1)].errno == NO_REASSIGNMENT_IN_PROGRESS


def test_invalid_assignments_get_kafkas_error_and_text(kraft):
    assert kraft.alter_reassignment("orders", 0, [1, 9]) == (
        INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 9, but no such broker is registered.",
    )
    assert kraft.alter_reassignment("orders", 0, [2, 2]) == (
        INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes the broker 2 more than once.",
    )
    assert kraft.alter_reassignment("orders", 7, [1]) == (3, "Unable to find partition orders:7.")
    assert kraft.alter_reassignment("nope", 0, [1]) == (3, "Unable to find a topic named nope.")


def test_elect_leaders_and_throttle_configs(kraft, admin):
    from kafka import errors as Errors
    from kafka.admin import ConfigResource, ConfigResourceType

    kraft.partition("orders", 2).leader = 1
    response = admin.elect_leaders(0, {"orders": [2]})
    assert response.replica_election_results[0].partition_result[0].error_code == 0
    assert kraft.partition("orders", 2).leader == 3 and kraft.partition("orders", 2).leader_epoch == 1
    with pytest.raises(Errors.PreferredLeaderNotAvailableError):
        kraft.partition("orders", 1).isr = [3]
        kraft.partition("orders", 1).leader = 3
        admin.elect_leaders(0, {"orders": [1]})
    admin.alter_configs(
        [
            ConfigResource(ConfigResourceType.BROKER, "2", {"leader.replication.throttled.rate": "1000"}),
            ConfigResource(ConfigResourceType.TOPIC, "orders", {"leader.replication.throttled.replicas": "0:1,0:2"}),
        ],
        raise_on_unknown=False,
    )
    described = admin.describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, "2"), ConfigResource(ConfigResourceType.TOPIC, "orders")]
    )
    assert described["broker"]["2"]["leader.replication.throttled.rate"]["value"] == "1000"
    assert {k: v["value"] for k, v in described["topic"]["orders"].items()} == {
        "leader.replication.throttled.replicas": "0:1,0:2",
        "min.insync.replicas": "2",
    }


def test_describe_topic_partitions_pages_and_elr(kraft, admin):
    kraft.partition("orders", 1).elr = [3]
    kraft.partition("orders", 1).last_known_elr = [2]
    first = admin.describe_topic_partitions(["orders", "payments"], response_partition_limit=2)
    assert [p["partition_index"] for t in first["topics"] for p in t["partitions"]] == [0, 1]
    assert first["topics"][0]["partitions"][1]["eligible_leader_replicas"] == [3]
    assert first["topics"][0]["partitions"][1]["last_known_elr"] == [2]
    assert first["next_cursor"] == {"topic_name": "orders", "partition_index": 2}
    rest = admin.describe_topic_partitions(["orders", "payments"], 2, first["next_cursor"])
    assert [(t["name"], p["partition_index"]) for t in rest["topics"] for p in t["partitions"]] == [
        ("orders", 2),
        ("payments", 0),
    ]
    assert rest["next_cursor"] is None


def test_alter_replica_log_dirs_moves_through_a_future_replica():
    from fake_cluster import FakeBroker, FakeCluster
    from kafka.admin import KafkaAdminClient

    with FakeCluster([FakeBroker(1, "a", log_dirs=("/d1", "/d2")), FakeBroker(2, "b")]) as cluster:
        cluster.add_topic("t", [[1, 2]], sizes=[100])
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=5000)
        try:
            result = client.alter_replica_log_dirs({("t", 0, 1): "/d2"})
            assert [e.__name__ for e in result.values()] == ["NoError"]
            cluster.step(30)
            dirs = client.describe_log_dirs(brokers=[1])[0]["log_dirs"]
            assert [
                (
                    d["log_dir"],
                    [(p["partition_size"], p["is_future_key"]) for t in d["topics"] for p in t["partitions"]],
                )
                for d in dirs
            ] == [("/d1", [(100, False)]), ("/d2", [(30, True)])]
            cluster.step(70)
            dirs = client.describe_log_dirs(brokers=[1])[0]["log_dirs"]
            assert [len(d["topics"]) for d in dirs] == [0, 1]
        finally:
            client.close()
