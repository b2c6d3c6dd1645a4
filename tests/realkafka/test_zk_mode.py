"""The planner's `zk://` commands against a real Apache Kafka 3.9.1 cluster in ZooKeeper mode (issue 29 part 6;
tests/realkafka/zk_cluster.py): the ZooKeeper read equals the Admin API read of the same cluster, `zk submit`'s
reassignment and `zk elect-leaders`' election are carried out by the real controller, and `zk status` and
`describe zk://` print what Kafka 3.9.1's own tools print on the same cluster. docs/zookeeper.md names what differs.
"""

from __future__ import annotations

import json
import time

import yaml
from realkafka.real_cluster import REASSIGN, TOPICS


def _wait(read, expected, what: str, timeout: float = 60.0) -> None:
    """Until read() == expected (the last reading in the error otherwise)."""
    deadline = time.monotonic() + timeout
    while (value := read()) != expected:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s; last {value!r}")
        time.sleep(0.3)


def _describe_theirs(cluster, *args: str) -> str:
    rc, out, err = cluster.run_tool(TOPICS, "--bootstrap-server", cluster.bootstrap, "--describe", *args)
    assert rc == 0, err
    return out


def _describe_ours(cli, cluster, *args: str) -> str:
    code, out, err = cli("describe", cluster.zk_url, *args)
    assert code == 0, err
    return out


def _partition_lines(cluster, topic: str) -> list[str]:
    return _describe_theirs(cluster, "--topic", topic).splitlines()[1:]


def test_zk_read_equals_the_admin_api_read(real_kafka_zk, planner_cli, tmp_path):
    cluster = real_kafka_zk
    cluster.create_topic("test_zk_mode-export", [[1, 2, 3], [2, 3, 1], [3, 1, 2]], {"retention.ms": "3600000"})
    cluster.create_topic("test_zk_mode-export-rf1", [[2], [1]])
    try:
        zk_file, api_file = tmp_path / "zk.yaml", tmp_path / "api.yaml"
        code, _, err = planner_cli("zk", "export", cluster.zk_url, "-o", str(zk_file))
        assert code == 0, err
        code, _, err = planner_cli("kafka", "export", cluster.url, "-o", str(api_file))
        assert code == 0, err
        ours, theirs = yaml.safe_load(zk_file.read_text()), yaml.safe_load(api_file.read_text())

        assert ours["mode"] == "zookeeper"
        assert {b["id"]: b["rack"] for b in ours["brokers"]} == {1: "rack-a", 2: "rack-b", 3: "rack-c"}
        topic = next(t for t in ours["topics"] if t["name"] == "test_zk_mode-export")
        assert topic["assignment"] == {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
        assert topic["state"] == {
            0: {"leader": 1, "isr": [1, 2, 3], "leader_epoch": 0},
            1: {"leader": 2, "isr": [2, 3, 1], "leader_epoch": 0},
            2: {"leader": 3, "isr": [3, 1, 2], "leader_epoch": 0},
        }
        rf1 = next(t for t in ours["topics"] if t["name"] == "test_zk_mode-export-rf1")
        assert rf1["assignment"] == {0: [2], 1: [1]}

        # What only the Admin API has: partition sizes (DescribeLogDirs) and the brokers' disk space. Its `mode` is
        # ZooKeeper's too: a ZooKeeper-mode broker lacks DescribeTopicPartitions (docs/zookeeper.md).
        for broker in theirs["brokers"]:
            assert broker.pop("usable_bytes") > 0 and broker.pop("total_bytes") > 0
        for t in theirs["topics"]:
            assert set(t.pop("sizes")) == set(t["assignment"])
        assert ours["mode"] == theirs["mode"] == "zookeeper"
        assert ours == theirs
    finally:
        cluster.delete_topics("test_zk_mode-export", "test_zk_mode-export-rf1")


def test_zk_submit_is_carried_out_and_status_matches_verify(real_kafka_zk, planner_cli, tmp_path):
    cluster = real_kafka_zk
    name = "test_zk_mode-submit"
    cluster.create_topic(name, [[1, 2], [2, 3], [3, 1], [1, 3]])
    try:
        plan = {
            "version": 1,
            "partitions": [
                {"topic": name, "partition": 0, "replicas": [3, 2], "log_dirs": ["any", "any"]},
                {"topic": name, "partition": 1, "replicas": [2, 3], "log_dirs": ["any", "any"]},
                {"topic": name, "partition": 2, "replicas": [1, 2, 3], "log_dirs": ["any", "any", "any"]},
                {"topic": name, "partition": 3, "replicas": [2], "log_dirs": ["any"]},
            ],
        }
        plan_file = tmp_path / "proposed.json"
        plan_file.write_text(json.dumps(plan))
        code, out, err = planner_cli(
            "zk", "submit", cluster.zk_url, "--reassignment-json-file", str(plan_file), "--execute", "-q"
        )
        assert code == 0, err
        rollback = (
            '{"version":1,"partitions":['
            f'{{"topic":"{name}","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}},'
            f'{{"topic":"{name}","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}},'
            f'{{"topic":"{name}","partition":2,"replicas":[3,1],"log_dirs":["any","any"]}},'
            f'{{"topic":"{name}","partition":3,"replicas":[1,3],"log_dirs":["any","any"]}}]}}'
        )
        assert out == (
            "Current partition replica assignment\n\n"
            f"{rollback}\n\n"
            "Save this to use as the --reassignment-json-file option during rollback\n"
            "Successfully started reassignment of partitions.\n"
        )

        # the real controller carries it out: replica lists as planned, the znode gone; partition 0's leader 1 left
        # its replicas, so the controller elected the first live in-sync replica of the new list (3)
        expected = [
            f"\tTopic: {name}\tPartition: 0\tLeader: 3\tReplicas: 3,2\tIsr: 2,3\tElr: N/A\tLastKnownElr: N/A",
            f"\tTopic: {name}\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2,3\tElr: N/A\tLastKnownElr: N/A",
            f"\tTopic: {name}\tPartition: 2\tLeader: 3\tReplicas: 1,2,3\tIsr: 3,1,2\tElr: N/A\tLastKnownElr: N/A",
            f"\tTopic: {name}\tPartition: 3\tLeader: 2\tReplicas: 2\tIsr: 2\tElr: N/A\tLastKnownElr: N/A",
        ]
        _wait(lambda: _partition_lines(cluster, name), expected, "the reassignment")
        _wait(lambda: "reassign_partitions" in _zk_admin_children(cluster), False, "/admin/reassign_partitions gone")

        code, ours, err = planner_cli("zk", "status", cluster.zk_url, "--reassignment-json-file", str(plan_file))
        assert code == 0, err
        rc, theirs, err = cluster.run_tool(
            REASSIGN, "--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", str(plan_file)
        )
        assert rc == 0, err
        # Kafka's --verify then clears the throttles (there are none): lines ZooKeeper's read does not print
        clearing = [
            "Clearing broker-level throttles on brokers 1,2,3",
            f"Clearing topic-level throttles on topic {name}",
        ]
        assert theirs.splitlines()[-2:] == clearing
        assert ours.splitlines() == theirs.splitlines()[:-2]
        assert ours == (
            "Status of partition reassignment:\n"
            f"Reassignment of partition {name}-0 is completed.\n"
            f"Reassignment of partition {name}-1 is completed.\n"
            f"Reassignment of partition {name}-2 is completed.\n"
            f"Reassignment of partition {name}-3 is completed.\n"
            "\n"
        )
        # describe zk:// on the moved topic, byte for byte
        assert _describe_ours(planner_cli, cluster, "--topic", name) == _describe_theirs(cluster, "--topic", name)
    finally:
        cluster.delete_topics(name)


def test_zk_submit_rollback_json_is_kafka_3_9_tools(real_kafka_zk, planner_cli, tmp_path):
    """The rollback block `zk submit` prints (log dirs "any") against the one Kafka 3.9.1's
    `kafka-reassign-partitions.sh --bootstrap-server --execute` prints on the same JSON and state: the same bytes.
    3.9.1's tool writes "any" for every replica (`currentPartitionReplicaAssignmentToString` passes an empty log-dir
    map to `formatAsReassignmentJson`), as the 2.x `--zookeeper` path did (ZooKeeper holds no log dirs); 4.x's tool
    writes the replicas' real log dirs, which `kafka submit` follows. The lines after the block differ (docs)."""
    cluster = real_kafka_zk
    name = "test_zk_mode-rollback"
    cluster.create_topic(name, [[1, 2], [2, 3], [3, 1]])
    try:
        plan_file = tmp_path / "proposed.json"
        plan_file.write_text(
            json.dumps(
                {
                    "version": 1,
                    "partitions": [
                        {"topic": name, "partition": 2, "replicas": [1, 2], "log_dirs": ["any", "any"]},
                        {"topic": name, "partition": 0, "replicas": [2, 3]},
                    ],
                }
            )
        )
        code, ours, err = planner_cli(
            "zk", "submit", cluster.zk_url, "--reassignment-json-file", str(plan_file), "-q"
        )  # the dry run: nothing written
        assert (code, err) == (0, "")
        rc, theirs, err = cluster.run_tool(
            REASSIGN, "--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", str(plan_file)
        )
        assert rc == 0, err
        block = (
            "Current partition replica assignment\n\n"
            f'{{"version":1,"partitions":[{{"topic":"{name}","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}},'
            f'{{"topic":"{name}","partition":2,"replicas":[3,1],"log_dirs":["any","any"]}}]}}\n\n'
            "Save this to use as the --reassignment-json-file option during rollback\n"
        )
        assert ours.startswith(block) and theirs.startswith(block)
        assert theirs[len(block) :] == f"Successfully started partition reassignments for {name}-0,{name}-2\n"
        assert ours[len(block) :].startswith("Dry run: would create /admin/reassign_partitions with\n")

        # carried out (before the topic is deleted): the replica lists as planned
        def replicas() -> list[str]:
            return [line.split("\tReplicas: ")[1].split("\t")[0] for line in _partition_lines(cluster, name)]

        _wait(replicas, ["2,3", "2,3", "1,2"], "the reassignment")
    finally:
        cluster.delete_topics(name)


def _topic_blocks(text: str) -> list[str]:
    """The describe output cut into one block per topic (its topic line and partition lines), in printed order."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("Topic: "):
            blocks.append([])
        blocks[-1].append(line)
    return ["\n".join(block) for block in blocks]


def _zk_admin_children(cluster) -> list[str]:
    """The children of /admin under the chroot (kazoo: the test's own look, not the planner's)."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=cluster.zk_hosts, timeout=10)
    client.start(timeout=20)
    try:
        return client.get_children("/kafka-3.9/admin")
    finally:
        client.stop()
        client.close()


def test_zk_elect_leaders_and_describe_with_a_broker_down(real_kafka_zk, planner_cli, tmp_path):
    cluster = real_kafka_zk
    name = "test_zk_mode-elect"
    cluster.create_topic(name, [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 3, 2]])
    try:
        cluster.stop_broker(1)  # controlled shutdown: broker 1 leads nothing and leaves every ISR
        try:
            down = [
                f"\tTopic: {name}\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: N/A\tLastKnownElr: N/A",
                f"\tTopic: {name}\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3\tElr: N/A\tLastKnownElr: N/A",
                f"\tTopic: {name}\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,2\tElr: N/A\tLastKnownElr: N/A",
                f"\tTopic: {name}\tPartition: 3\tLeader: 3\tReplicas: 1,3,2\tIsr: 3,2\tElr: N/A\tLastKnownElr: N/A",
            ]
            _wait(lambda: _partition_lines(cluster, name), down, "broker 1 out of every ISR")
            for flags in ([], ["--under-replicated-partitions"], ["--unavailable-partitions"]):
                args = ["--topic", name, *flags]
                assert _describe_ours(planner_cli, cluster, *args) == _describe_theirs(cluster, *args), flags
        finally:
            cluster.start_broker(1)
        back = [
            f"\tTopic: {name}\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3,1\tElr: N/A\tLastKnownElr: N/A",
            f"\tTopic: {name}\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3,1\tElr: N/A\tLastKnownElr: N/A",
            f"\tTopic: {name}\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,2,1\tElr: N/A\tLastKnownElr: N/A",
            f"\tTopic: {name}\tPartition: 3\tLeader: 3\tReplicas: 1,3,2\tIsr: 3,2,1\tElr: N/A\tLastKnownElr: N/A",
        ]
        _wait(lambda: _partition_lines(cluster, name), back, "broker 1 back in every ISR")

        election = tmp_path / "election.json"
        election.write_text(
            json.dumps(
                {"partitions": [{"topic": name, "partition": p} for p in (0, 3)] + [{"topic": "nope", "partition": 0}]}
            )
        )
        code, out, err = planner_cli(
            "zk", "elect-leaders", cluster.zk_url, "--path-to-json-file", str(election), "--execute"
        )
        assert code == 0, err
        assert err == (
            "2 partition(s): 0 already led by the preferred replica, 2 to move leadership "
            "(if the preferred replica is alive and in the ISR)\n"
        )
        assert out == (
            f"Created preferred replica election path with {name}-0,{name}-3\n"
            f"Successfully started preferred replica election for partitions Set({name}-0, {name}-3)\n"
            "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.\n"
        )
        elected = [
            f"\tTopic: {name}\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 2,3,1\tElr: N/A\tLastKnownElr: N/A",
            back[1],
            back[2],
            f"\tTopic: {name}\tPartition: 3\tLeader: 1\tReplicas: 1,3,2\tIsr: 3,2,1\tElr: N/A\tLastKnownElr: N/A",
        ]
        _wait(lambda: _partition_lines(cluster, name), elected, "the preferred leaders elected")
        _wait(lambda: "preferred_replica_election" in _zk_admin_children(cluster), False, "the election znode gone")
        # all topics, byte for byte as Kafka 3.9.1's kafka-topics.sh prints them, in its order too (the HashMap of
        # DescribeTopicsResult.allTopicNames(): formats/describe.py admin_client_order)
        others = ["test_zk_mode-b", "test_zk_mode-a", "test_zk_mode-x", "test_zk_mode-c2", "test_zk_mode-10"]
        for other in others:
            cluster.create_topic(other, [[2, 3, 1]])
        try:
            theirs, ours = _topic_blocks(_describe_theirs(cluster)), _topic_blocks(_describe_ours(planner_cli, cluster))
            assert theirs == ours
            assert len(ours) == 6 and ours != sorted(ours)
        finally:
            cluster.delete_topics(*others)
    finally:
        cluster.delete_topics(name)
