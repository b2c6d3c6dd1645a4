"""An offline twin assembled from Kafka's tool output (`planner.adapters.tool_output`): exact topology YAML per
input."""

import pytest

from planner.adapters.tool_output import TwinFiles, TwinParsers, build_twin, parse_racks
from planner.adapters.topology_yaml import dump_topology, parse_topology
from planner.formats.describe import parse_describe
from planner.formats.kafka_json import parse_current_assignment, parse_log_dirs_replicas
from planner.model import Broker, PlannerError, TopicPartition

PARSERS = TwinParsers(parse_describe, parse_current_assignment, parse_log_dirs_replicas)
JSON = (
    '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[7,8],"log_dirs":["any","any"]},'
    '{"topic":"bar","partition":1,"replicas":[8,7],"log_dirs":["any","any"]}]}'
)


def files(tmp_path, **texts):
    paths = {}
    for key, text in texts.items():
        path = tmp_path / key
        path.write_text(text, encoding="utf-8")
        paths[key] = str(path)
    return paths


def twin_yaml(tmp_path, racks=None, **texts):
    cluster = build_twin(TwinFiles(racks=racks, **files(tmp_path, **texts)), PARSERS)
    text = dump_topology(cluster)
    assert parse_topology(text, "twin.yaml") == cluster  # loads back as every command loads it
    return text


@pytest.mark.parametrize(
    "text",
    [
        JSON,
        f"Current partition replica assignment\n{JSON}\n\nProposed partition reassignment configuration\n{JSON}\n",
        f"Current partition replica assignment\n\n{JSON}\n\nSave this to use as the --reassignment-json-file option "
        "during rollback\nSuccessfully started partition reassignments for bar-0,bar-1\n",
    ],
)
def test_current_assignment_from_generate_execute_or_bare_json(text):
    entries = parse_current_assignment(text, "g.txt")
    assert [(e.tp, e.replicas, e.log_dirs) for e in entries] == [
        (TopicPartition("bar", 0), (7, 8), ("any", "any")),
        (TopicPartition("bar", 1), (8, 7), ("any", "any")),
    ]


def test_assignment_alone(tmp_path):
    assert twin_yaml(tmp_path, assignment=JSON) == (
        "mode: kraft\nbrokers:\n  - {id: 7}\n  - {id: 8}\ntopics:\n  - name: bar\n    assignment:\n"
        "      0: [7, 8]\n      1: [8, 7]\n"
    )


def test_assignment_adds_topics_the_describe_text_leaves_out(tmp_path):
    describe = (
        "Topic: foo\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: foo\tPartition: 0\tLeader: 7\tReplicas: 7\tIsr: 7\n"
    )
    assert twin_yaml(tmp_path, describe=describe, assignment=JSON, racks="7:a,8:b,9:c") == (
        "mode: zookeeper\nbrokers:\n  - {id: 7, rack: a}\n  - {id: 8, rack: b}\n  - {id: 9, rack: c}\ntopics:\n"
        "  - name: bar\n    assignment:\n      0: [7, 8]\n      1: [8, 7]\n"
        "  - name: foo\n    assignment:\n      0: [7]\n"
    )


def test_assignment_must_cover_every_partition_of_a_new_topic(tmp_path):
    text = JSON.replace('"partition":0', '"partition":2')
    with pytest.raises(PlannerError) as e:
        twin_yaml(tmp_path, assignment=text)
    assert str(e.value) == (
        f"{tmp_path}/assignment: partitions[0].partition: bar-2 but no entry for partition(s) 0: "
        "give every partition of topic bar"
    )


def test_brokers_down_as_the_describe_text_shows(tmp_path):
    # no leader: the kept ISR member (3) is down; unclean election on: every replica (3, 4) is down
    describe = (
        "Topic: a\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
        "\tTopic: a\tPartition: 0\tLeader: none\tReplicas: 1,3\tIsr: 3\n"
        "Topic: b\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: unclean.leader.election.enable=true\n"
        "\tTopic: b\tPartition: 0\tLeader: none\tReplicas: 4,5\tIsr: 5\n"
    )
    brokers = (
        "cluster: lab\nbrokers:\n  - {id: 1, state: fenced}\n  - {id: 3}\n  - {id: 4, host: k4, port: 9092}\n"
        "  - {id: 5}\n  - {id: 6, rack: null}\n"
    )
    assert twin_yaml(tmp_path, describe=describe, brokers=brokers) == (
        "cluster: lab\nmode: zookeeper\nbrokers:\n  - {id: 1, state: fenced}\n  - {id: 3, state: offline}\n"
        "  - {id: 4, host: k4, port: 9092, state: offline}\n  - {id: 5, state: offline}\n  - {id: 6}\ntopics:\n"
        "  - name: a\n    assignment:\n      0: [1, 3]\n    state:\n      0: {leader: -1, isr: [3]}\n"
        "  - name: b\n    configs:\n      unclean.leader.election.enable: 'true'\n    assignment:\n      0: [4, 5]\n"
        "    state:\n      0: {leader: -1, isr: [5]}\n"
    )


def test_elr_members_of_a_leaderless_partition_are_down(tmp_path):
    # kafka-topics.sh 4.4 against a 4.4 cluster (KIP-966 on): broker 3 fenced took one-0's last ISR member into the
    # ELR (empty ISR, LastKnownElr 3); brokers 2 and 4, both in the ELR of e-0, are down too; e-1 keeps its leader,
    # so broker 1 of its ELR (a replica out of the ISR) may be up, and LastKnownElr 5 of e-2 (out of the ELR after
    # an unclean shutdown) may be up as well
    describe = (
        "Topic: e\tTopicId: 9xGhoF4IRiS6C6DeW1JZ6A\tPartitionCount: 3\tReplicationFactor: 2\t"
        "Configs: min.insync.replicas=2\n"
        "\tTopic: e\tPartition: 0\tLeader: none\tReplicas: 2,4\tIsr: \tElr: 2,4\tLastKnownElr: 4\n"
        "\tTopic: e\tPartition: 1\tLeader: 6\tReplicas: 6,1\tIsr: 6\tElr: 1\tLastKnownElr: \n"
        "\tTopic: e\tPartition: 2\tLeader: none\tReplicas: 5,6\tIsr: \tElr: \tLastKnownElr: 5\n"
        "Topic: one\tTopicId: Yb2nq1VDRVqvMa1q0gGDCw\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: one\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: \tElr: 3\tLastKnownElr: 3\n"
    )
    text = twin_yaml(tmp_path, describe=describe, racks="1:a,2:b,3:c,4:a,5:b,6:c")
    assert text.split("topics:")[0] == (
        "mode: kraft\nbrokers:\n  - {id: 1, rack: a}\n  - {id: 2, rack: b, state: fenced}\n"
        "  - {id: 3, rack: c, state: fenced}\n  - {id: 4, rack: a, state: fenced}\n  - {id: 5, rack: b}\n"
        "  - {id: 6, rack: c}\n"
    )


def test_brokers_file_mode_wins(tmp_path):
    describe = (
        "Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n"
    )
    assert twin_yaml(tmp_path, describe=describe, brokers="mode: kraft\nbrokers: [{id: 1}]\n").startswith(
        "mode: kraft\n"
    )
    assert twin_yaml(tmp_path, describe=describe, brokers="brokers: [{id: 1}]\n").startswith("mode: zookeeper\n")


def test_log_dirs_sizes_future_replicas_and_other_topics(tmp_path):
    log_dirs = (
        "Querying brokers for log directories information\n"
        "Received log directory information from brokers 7,8\n"
        '{"version":1,"brokers":[{"broker":7,"logDirs":[{"logDir":"/d1","error":null,"partitions":['
        '{"partition":"bar-0","size":100,"offsetLag":0,"isFuture":false},'
        '{"partition":"bar-1","size":999,"offsetLag":0,"isFuture":true},'
        '{"partition":"other-0","size":5,"offsetLag":0,"isFuture":false}]}]},'
        '{"broker":8,"logDirs":[{"logDir":"/d1","error":null,"partitions":['
        '{"partition":"bar-0","size":90,"offsetLag":10,"isFuture":false},'
        '{"partition":"bar-1","size":40,"offsetLag":0,"isFuture":false}]}]}]}\n'
    )
    assert twin_yaml(tmp_path, assignment=JSON, log_dirs=log_dirs).endswith("    sizes:\n      0: 100\n      1: 40\n")


def test_racks():
    assert parse_racks(" 1:a, 3:b c ,2:a,") == (Broker(1, "a"), Broker(2, "a"), Broker(3, "b c"))
    with pytest.raises(PlannerError, match=r"^--racks '': no brokers \(e.g. --racks 1:a,2:b,3:c\)$"):
        parse_racks("")
