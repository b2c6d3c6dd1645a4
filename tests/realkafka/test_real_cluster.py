"""The real KRaft cluster itself (tests/realkafka/real_cluster.py) as the planner reads it: the brokers and racks
Kafka reports, a topic created with an explicit assignment, and the SASL_SSL listener (SCRAM-SHA-512) through
`--command-config`. Byte parity with Kafka's own tools lives in the other tests of this folder."""

import yaml
from realkafka.real_cluster import TOPICS


def test_brokers_and_racks_as_kafka_reports_them(real_kafka, planner_cli):
    assert real_kafka.live_brokers() == {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a"}
    code, out, err = planner_cli("brokers", real_kafka.url, "--format", "json")
    assert code == 0, err
    brokers = {b["id"]: b["rack"] for b in yaml.safe_load(out)["brokers"]}
    assert brokers == {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a"}


def test_assignment_reads_back_as_kafka_topics_describes_it(real_kafka, planner_cli):
    real_kafka.create_topic("smoke-assignment", [[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    try:
        rc, theirs, _ = real_kafka.run_tool(
            TOPICS, "--bootstrap-server", real_kafka.bootstrap, "--describe", "--topic", "smoke-assignment"
        )
        assert rc == 0
        code, ours, err = planner_cli("describe", real_kafka.url, "--topic", "smoke-assignment")
        assert code == 0, err
        # the partition lines, byte for byte (the topic line's Configs: is the describe parity tests' matter)
        line = "\tTopic: smoke-assignment\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}\tElr: \tLastKnownElr: "
        expected = [line.format(0, 1, "1,2,3", "1,2,3"), line.format(1, 2, "2,3,4", "2,3,4")]
        expected.append(line.format(2, 3, "3,4,1", "3,4,1"))
        assert ours.splitlines()[1:4] == theirs.splitlines()[1:4] == expected
    finally:
        real_kafka.delete_topics("smoke-assignment")


def test_sasl_ssl_listener_with_command_config(real_kafka, planner_cli, tmp_path):
    real_kafka.create_topic("smoke-sasl", [[4, 1]])
    try:
        out = tmp_path / "cluster.yaml"
        code, _, err = planner_cli(
            "kafka", "export", real_kafka.sasl_url, "--command-config", str(real_kafka.command_config), "-o", str(out)
        )
        assert code == 0, err
        topology = yaml.safe_load(out.read_text())
        assert {b["id"]: b["rack"] for b in topology["brokers"]} == real_kafka.brokers
        topic = next(t for t in topology["topics"] if t["name"] == "smoke-sasl")
        assert topic["assignment"] == {0: [4, 1]}
    finally:
        real_kafka.delete_topics("smoke-sasl")
