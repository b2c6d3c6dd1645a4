"""`kafka-topics.sh --describe` text, byte for byte, per Kafka era (`TopicCommand.java`, `TopicCommand.scala`,
`tools/src/test/java/org/apache/kafka/tools/TopicCommandTest.java`)."""

import json

import pytest

from planner.adapters.topology_yaml import parse_topology
from planner.formats import describe as d
from planner.model import PlannerError

TOPO = """
mode: {mode}
brokers: [{{id: 0}}, {{id: 1}}, {{id: 2}}, {{id: 3, state: offline}}]
topics:
  - name: foo
    topic_id: NPmZHyhbR9y00wMglMH2sg
    configs: {{min.insync.replicas: "2", segment.bytes: "1073741824"}}
    assignment: {{0: [0, 1, 2], 1: [1, 2, 3], 2: [3, 0, 1]}}
    state:
      0: {{leader: 0, isr: [0, 1], elr: [2], last_known_elr: []}}
  - name: gone
    marked_for_deletion: true
    assignment: {{0: [3]}}
  - name: __consumer_offsets
    assignment: {{0: [0, 1, 2]}}
  - name: moving
    assignment: {{0: [0, 1, 2, 3]}}
    adding: {{0: [3]}}
    removing: {{0: [0]}}
"""


def cluster(mode="kraft"):
    return parse_topology(TOPO.format(mode=mode), "t.yaml")


def text(version, mode="kraft", **opts):
    v = d.parse_version(version)
    c = cluster(mode)
    return d.render_kafka(c, d.select(c, d.DescribeOptions(version=v, **opts)), v)


def test_trunk_format_kraft():
    assert text("4.0", topics=("foo",)) == (
        "Topic: foo\tTopicId: NPmZHyhbR9y00wMglMH2sg\tPartitionCount: 3\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2,segment.bytes=1073741824\n"
        "\tTopic: foo\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1\tElr: 2\tLastKnownElr: \n"
        "\tTopic: foo\tPartition: 1\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tElr: \tLastKnownElr: \n"
        "\tTopic: foo\tPartition: 2\tLeader: 0\tReplicas: 3,0,1\tIsr: 0,1\tElr: \tLastKnownElr: \n"
    )


def test_zookeeper_mode_3_8_prints_na_for_elr():
    assert text("3.8", mode="zookeeper", topics=("__consumer_offsets",)) == (
        "Topic: __consumer_offsets\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
        "\tTopic: __consumer_offsets\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1,2\tElr: N/A\tLastKnownElr: "
        "N/A\n"
    )


def test_2_3_format_no_spaces_leader_minus_one_marked_for_deletion():
    assert text("2.3", topics=("gone",)) == (
        "Topic:gone\tPartitionCount:1\tReplicationFactor:1\tConfigs:\tMarkedForDeletion:true\n"
        "\tTopic: gone\tPartition: 0\tLeader: -1\tReplicas: 3\tIsr: 3\n"
    )


def test_2_3_marked_for_deletion_on_partition_lines_only_without_header():
    assert text("2.3", topics=("gone",), unavailable=True) == (
        "\tTopic: gone\tPartition: 0\tLeader: -1\tReplicas: 3\tIsr: 3\tMarkedForDeletion: true\n"
    )


def test_2_4_format_spaced_and_marked_everywhere():
    assert text("2.4", topics=("gone",)) == (
        "Topic: gone\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true\n"
        "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3\tMarkedForDeletion: true\n"
    )


def test_reassignment_rf_and_adding_removing_by_version():
    # 2.4: RF = replica count, no Adding/Removing; 2.5: RF = replicas - adding; 2.6+: Adding/Removing shown
    assert text("2.4", topics=("moving",)).splitlines()[0].endswith("ReplicationFactor: 4\tConfigs: ")
    assert text("2.5", topics=("moving",)).splitlines()[0].endswith("ReplicationFactor: 3\tConfigs: ")
    assert text("2.7", topics=("moving",)).splitlines()[1] == (
        "\tTopic: moving\tPartition: 0\tLeader: 0\tReplicas: 0,1,2,3\tIsr: 0,1,2\tAdding Replicas: 3\tRemoving "
        "Replicas: 0"
    )


def test_topic_id_from_2_8():
    assert "TopicId" not in text("2.7", topics=("foo",))
    assert text("2.8", topics=("foo",)).startswith("Topic: foo\tTopicId: NPmZHyhbR9y00wMglMH2sg\tPartitionCount: 3")


def test_topics_sorted_by_name():
    headers = [line.split("\t")[0] for line in text("3.7").splitlines() if not line.startswith("\t")]
    assert headers == ["Topic: __consumer_offsets", "Topic: foo", "Topic: gone", "Topic: moving"]


def test_filters():
    under = text("3.7", under_replicated=True)
    assert under == (
        "\tTopic: foo\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1\n"
        "\tTopic: foo\tPartition: 1\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\n"
        "\tTopic: foo\tPartition: 2\tLeader: 0\tReplicas: 3,0,1\tIsr: 0,1\n"
    )  # gone keeps its last ISR member (RF 1 - 1 = 0); moving: RF 4 - 1 adding = 3 = |ISR|
    assert text("3.7", unavailable=True) == "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3\n"
    # min.insync.replicas=2 on foo: every partition has 2 ISR members -> at min; gone has no leader -> under min
    assert [l.split("\t")[1:3] for l in text("3.7", at_min_isr=True).splitlines()] == [
        ["Topic: foo", "Partition: 0"],
        ["Topic: foo", "Partition: 1"],
        ["Topic: foo", "Partition: 2"],
        ["Topic: gone", "Partition: 0"],  # ISR 3 (kept) == default min.insync.replicas 1
    ]
    assert text("3.7", under_min_isr=True) == "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3\n"
    assert text("3.7", with_overrides=True) == (
        "Topic: foo\tTopicId: NPmZHyhbR9y00wMglMH2sg\tPartitionCount: 3\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2,segment.bytes=1073741824\n"
    )
    assert "__consumer_offsets" not in text("3.7", exclude_internal=True)
    assert "__consumer_offsets" in text("3.7")


def test_topic_regex_include_list():
    lines = [l for l in text("3.7", topics=("fo.*,gone",)).splitlines() if not l.startswith("\t")]
    assert [l.split("\t")[0] for l in lines] == ["Topic: foo", "Topic: gone"]


@pytest.mark.parametrize("version, shown", [("3.6", "nope"), ("3.7", "Optional[nope]"), ("3.9", "nope")])
def test_missing_topic_text(version, shown):
    with pytest.raises(PlannerError) as e:
        text(version, topics=("nope",))
    assert str(e.value) == f"Topic '{shown}' does not exist as expected"


def test_partial_regex_does_not_match():
    with pytest.raises(PlannerError):
        text("3.9", topics=("fo",))


def test_bad_version():
    with pytest.raises(PlannerError, match="--kafka-version 'x3'"):
        d.parse_version("x3")


def test_json_and_table_render_the_same_selection():
    c = cluster()
    sections = d.select(c, d.DescribeOptions(topics=("foo",)))
    data = json.loads(d.render_json(sections))
    assert data["topics"][0]["partitions"][2] == {
        "partition": 2,
        "leader": 0,
        "replicas": [3, 0, 1],
        "isr": [0, 1],
        "adding_replicas": [],
        "removing_replicas": [],
        "unclean_leader": False,
    }
    table = d.render_table(c, sections)
    assert "foo" in table and "3,0,1" in table


def admin_text(version, **opts):
    v = d.parse_version(version)
    c = cluster("zookeeper")
    return d.render_kafka(c, d.select(c, d.DescribeOptions(version=v, admin_client=True, **opts)), v, True)


@pytest.mark.parametrize("version", ["2.2", "2.3"])
def test_2_2_bootstrap_server_leader_none_empty_isr_and_hashmap_order(version):
    """TopicCommand 2.2/2.3 AdminClientTopicService: no MarkedForDeletion, `Leader: none` and an empty ISR without a
    live leader (MetadataCache's LEADER_NOT_AVAILABLE answer of those brokers), topics in HashMap order."""
    assert admin_text(version) == (
        "Topic:moving\tPartitionCount:1\tReplicationFactor:4\tConfigs:\n"
        "\tTopic: moving\tPartition: 0\tLeader: 0\tReplicas: 0,1,2,3\tIsr: 0,1,2\n"
        "Topic:__consumer_offsets\tPartitionCount:1\tReplicationFactor:3\tConfigs:\n"
        "\tTopic: __consumer_offsets\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1,2\n"
        "Topic:foo\tPartitionCount:3\tReplicationFactor:3\tConfigs:min.insync.replicas=2,segment.bytes=1073741824\n"
        "\tTopic: foo\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1\n"
        "\tTopic: foo\tPartition: 1\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\n"
        "\tTopic: foo\tPartition: 2\tLeader: 0\tReplicas: 3,0,1\tIsr: 0,1\n"
        "Topic:gone\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n"
        "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: \n"
    )
    # the filters count the ISR as printed: gone-0's empty ISR is under-replicated and under min ISR (no leader test)
    assert admin_text(version, topics=("gone",), under_replicated=True) == (
        "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: \n"
    )
    assert admin_text(version, under_min_isr=True) == "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: \n"
    assert admin_text(version, at_min_isr=True, topics=("foo",)).count("\n") == 3
    assert admin_text(version, topics=("nope",)) == ""  # this path has no "does not exist" check


def test_admin_client_topic_order():
    # String.hashCode spread (h ^ h >>> 16) & 7: clicks 1, orders 2, __consumer_offsets 6, audit-log 6; four names in
    # new HashMap<>(4) grow it to 8 buckets; within bucket 6 the sorted insertion order stays
    names = ["orders", "audit-log", "__consumer_offsets", "clicks"]
    assert d.admin_client_order(names) == ["clicks", "orders", "__consumer_offsets", "audit-log"]


@pytest.mark.parametrize(
    "via, version, message",
    [
        (
            "zookeeper",
            None,
            "--via zookeeper: kafka-topics the newest has no --zookeeper (removed in 3.0); leave --via out or give "
            "--kafka-version 2.8 or earlier",
        ),
        (
            "zookeeper",
            "3.0",
            "--via zookeeper: kafka-topics 3.0 has no --zookeeper (removed in 3.0); leave --via out or give "
            "--kafka-version 2.8 or earlier",
        ),
        ("bootstrap-server", "2.1", "--via bootstrap-server: kafka-topics has --bootstrap-server from 2.2 on, not 2.1"),
    ],
)
def test_via_only_where_kafka_topics_had_it(via, version, message, capsys):
    from planner.cli.app import run

    args = ["describe", "topologies/producer-0.yaml", "--via", via]
    with pytest.raises(SystemExit) as exc:
        run(args + (["--kafka-version", version] if version else []))
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"error: {message}\n"


SIX = ["orders", "audit-log", "__consumer_offsets", "clicks"]


@pytest.mark.parametrize(
    "args, order",
    [
        ((), ["clicks", "orders", "__consumer_offsets", "audit-log"]),
        (("--kafka-version", "3.0"), ["clicks", "orders", "__consumer_offsets", "audit-log"]),
        (("--kafka-version", "2.8"), ["__consumer_offsets", "audit-log", "clicks", "orders"]),
        (
            ("--kafka-version", "2.8", "--via", "bootstrap-server"),
            ["clicks", "orders", "__consumer_offsets", "audit-log"],
        ),
        (("--format", "table"), ["__consumer_offsets", "audit-log", "clicks", "orders"]),
    ],
)
def test_default_topic_order_is_the_admin_clients_from_3_0(args, order, planner_cli_here):
    # 3.0+ kafka-topics goes through the AdminClient only: its HashMap order (test_admin_client_topic_order); 2.8
    # defaults to --zookeeper (sorted); table and json stay sorted
    code, out, err = planner_cli_here("describe", "topologies/six-brokers.yaml", *args)
    assert code == 0, err
    if args[:1] == ("--format",):
        table = out.split("\n\n")[0].splitlines()[2:]  # the topics table
        shown = [line.split()[0] for line in table]
    else:
        shown = [line.split("\t")[0].split(":")[1].strip() for line in out.splitlines() if line.startswith("Topic:")]
    assert shown == order


def test_kafka_topic_command_test_mixed_order():
    # TopicCommandTest.testDescribeUnderMinIsrPartitionsMixed expects `under-min-isr-topic` before `offline-topic`
    names = ["offline-topic", "under-min-isr-topic", "fully-replicated-topic"]
    assert d.admin_client_order(names)[:2] == ["under-min-isr-topic", "offline-topic"]
