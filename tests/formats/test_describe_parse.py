"""`kafka-topics --describe` text parsed back: render -> parse -> render gives the same text in every era."""

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.adapters.tool_output import TwinFiles, TwinParsers, build_twin
from planner.adapters.topology_yaml import dump_topology, load_topology, parse_topology
from planner.formats import describe as d
from planner.formats.kafka_json import parse_current_assignment, parse_log_dirs_replicas
from planner.model import (
    FENCED,
    NO_LEADER,
    OFFLINE,
    ONLINE,
    Broker,
    Cluster,
    ObservedState,
    Partition,
    PlannerError,
    Topic,
)

PARSERS = TwinParsers(d.parse_describe, parse_current_assignment, parse_log_dirs_replicas)
ROOT = Path(__file__).resolve().parents[2]
ERAS = ["0.11", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "3.0", "3.7", "3.8", "4.1"]
TOPOLOGIES = sorted(ROOT.glob("topologies/*.yaml"))


def render(cluster, version):
    v = d.parse_version(version)
    return d.render_kafka(cluster, d.select(cluster, d.DescribeOptions(version=v)), v)


def twin_of(text):
    """The twin of one describe text, written as topology YAML and loaded back as every command loads it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "describe.txt"
        path.write_text(text, encoding="utf-8")
        return parse_topology(dump_topology(build_twin(TwinFiles(describe=str(path)), PARSERS)), "twin.yaml")


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("topology", TOPOLOGIES, ids=[p.name for p in TOPOLOGIES])
def test_round_trip_shipped_topologies(topology, version):
    text = render(load_topology(str(topology)), version)
    assert render(twin_of(text), version) == text


@pytest.mark.parametrize("version", ["3.8", "4.1"])
def test_round_trip_zookeeper_mode_elr_not_available(version):
    cluster = load_topology(str(ROOT / "topologies/offline-broker.yaml"))
    text = render(cluster, version)
    assert "\tElr: N/A\tLastKnownElr: N/A" in text
    twin = twin_of(text)  # no topic ids: only ZooKeeper-mode Kafka prints that
    assert twin.mode == "zookeeper" and render(twin, version) == text


def twin_in_mode(text, mode):
    """The twin of `text`; where the text leaves the mode unknown (`Elr: N/A` with topic ids: ZooKeeper mode or KRaft
    before 3.8), the twin says kraft, and `mode` (what a --brokers file would say) is put in its place."""
    twin = twin_of(text)
    if d.parse_describe(text, "d.txt").mode == "unknown":
        assert twin.mode == "kraft"
        twin = replace(twin, mode=mode)
    return twin


def test_parsed_fields_trunk_kraft():
    text = (
        "Topic: foo\tTopicId: NPmZHyhbR9y00wMglMH2sg\tPartitionCount: 2\tReplicationFactor: 3\t"
        "Configs: cleanup.policy=compact,delete,min.insync.replicas=2\n"
        "\tTopic: foo\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: 1\tLastKnownElr: \n"
        "\tTopic: foo\tPartition: 1\tLeader: 2\tReplicas: 2,3,4,1\tIsr: 2,3,1\tAdding Replicas: 4\t"
        "Removing Replicas: 1\tElr: \tLastKnownElr: \n"
    )
    parsed = d.parse_describe(text, "describe.txt")
    assert parsed.mode == "kraft" and parsed.headers == {"foo": 1}
    (foo,) = parsed.topics
    assert foo == Topic(
        name="foo",
        topic_id="NPmZHyhbR9y00wMglMH2sg",
        configs={"cleanup.policy": "compact,delete", "min.insync.replicas": "2"},
        partitions=(
            Partition("foo", 0, (1, 2, 3), observed=ObservedState(leader=2, isr=(2, 3), elr=(1,))),
            Partition(
                "foo", 1, (2, 3, 4, 1), adding=(4,), removing=(1,), observed=ObservedState(leader=2, isr=(2, 3, 1))
            ),
        ),
    )


def test_pre_2_4_text_is_zookeeper_and_minus_one_is_no_leader():
    text = (
        "Topic:gone\tPartitionCount:1\tReplicationFactor:1\tConfigs:\tMarkedForDeletion:true\n"
        "\tTopic: gone\tPartition: 0\tLeader: -1\tReplicas: 3\tIsr: 3\n"
    )
    parsed = d.parse_describe(text, "old.txt")
    assert parsed.mode == "zookeeper"
    assert parsed.topics == (
        Topic("gone", (Partition("gone", 0, (3,), observed=ObservedState(NO_LEADER, (3,))),), marked_for_deletion=True),
    )


def test_configs_continue_list_values():
    assert d.parse_configs("") == {}
    assert d.parse_configs("a=1,cleanup.policy=compact,delete,b=") == {
        "a": "1",
        "cleanup.policy": "compact,delete",
        "b": "",
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("hello\n", "d.txt:1: not a line of kafka-topics --describe output: 'hello'"),
        ("", "d.txt: no topics found; expected the output of kafka-topics --describe"),
        (
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n",
            "d.txt:1: partition line of topic 'foo' without its 'Topic: foo' header line: give the whole "
            "`kafka-topics --describe` output (without --under-replicated-partitions, --unavailable-partitions, "
            "--under-min-isr-partitions, --at-min-isr-partitions, --topics-with-overrides)",
        ),
        (
            "Topic: foo\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n",
            "d.txt:1: PartitionCount: 2 but no line for partition(s) 1 of foo: give the whole `kafka-topics "
            "--describe` "
            "output (without --under-replicated-partitions, --unavailable-partitions, --under-min-isr-partitions, "
            "--at-min-isr-partitions, --topics-with-overrides)",
        ),
        (
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1,x\tIsr: 1\n",
            "d.txt:2: Replicas: '1,x' is not a comma-separated list of broker ids",
        ),
        (
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,3\n",
            "d.txt:2: Isr: broker 3 is not among the Replicas 1,2",
        ),
        (
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 4\tReplicas: 1,2\tIsr: 1,2\n",
            "d.txt:2: Leader: broker 4 is not among the Replicas 1,2",
        ),
        (
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tOffline: 2\n",
            "d.txt:2: unexpected field 'Offline: 2' (expected Topic, Partition, Leader, Replicas, Isr, Adding "
            "Replicas, "
            "Removing Replicas, Elr, LastKnownElr, MarkedForDeletion)",
        ),
        (
            "Topic: foo\tPartitionCount: x\tReplicationFactor: 1\tConfigs: \n",
            "d.txt:1: PartitionCount: 'x' is not a number of at least 1",
        ),
        (
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1,2,3,4\tIsr: 1,2,3\n",
            "d.txt:1: ReplicationFactor: 3 but partition foo-0 (line 2) lists 4 replicas: a reassignment in progress? "
            "kafka-topics before 2.6 does not say which replicas are being added; describe with Kafka 2.6 or later",
        ),
        (
            "Topic: foo\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: \n"
            "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n"
            "\tTopic: foo\tPartition: 1\tLeader: 1\tReplicas: 1,2\tIsr: 1\n",
            "d.txt:3: partition foo-1 has 2 replicas (not counting adding ones) but foo-0 has 1: the planner needs one "
            "replication factor per topic",
        ),
        (
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
            "Topic: foo\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n",
            "d.txt:2: topic 'foo' described twice (also line 1)",
        ),
        (
            "Topic: foo\tTopicId: abc\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n",
            "d.txt:1: TopicId: 'abc' is not a Kafka topic id (22 characters of base64url)",
        ),
    ],
)
def test_bad_describe_text(text, message):
    with pytest.raises(PlannerError) as e:
        d.parse_describe(text, "d.txt")
    assert str(e.value) == message


# -- random clusters ---------------------------------------------------------------------------------------------


@st.composite
def clusters(draw, reassigning):
    ids = sorted(draw(st.sets(st.integers(0, 30), min_size=1, max_size=6)))
    brokers = tuple(Broker(i, state=draw(st.sampled_from([ONLINE, ONLINE, OFFLINE, FENCED]))) for i in ids)
    legal = st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True).filter(lambda n: n not in (".", ".."))
    names = sorted(draw(st.sets(legal, min_size=1, max_size=4)))
    topics = [draw(topics_of(name, ids, reassigning)) for name in names]
    return Cluster(brokers, tuple(topics), mode=draw(st.sampled_from(["kraft", "zookeeper"])))


@st.composite
def topics_of(draw, name, ids, reassigning):
    rf, count = draw(st.integers(1, len(ids))), draw(st.integers(1, 4))
    configs = draw(
        st.dictionaries(
            st.from_regex(r"[a-z][a-z.]{0,10}", fullmatch=True),
            st.from_regex(r"[a-z0-9,.]{0,8}", fullmatch=True),
            max_size=3,
        )
    )
    if draw(st.booleans()):
        configs["unclean.leader.election.enable"] = "true"
    parts = [draw(partitions_of(name, pid, ids, rf, reassigning)) for pid in range(count)]
    topic_id = draw(st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9_-]{22}", fullmatch=True)))
    return Topic(name, tuple(parts), configs, topic_id, marked_for_deletion=draw(st.booleans()))


@st.composite
def partitions_of(draw, name, pid, ids, rf, reassigning):
    target = tuple(draw(st.permutations(ids))[:rf])
    replicas, adding, removing = target, (), ()
    if reassigning and draw(st.booleans()):
        original = draw(st.permutations(ids))[:rf]
        replicas = target + tuple(o for o in original if o not in target)
        adding = tuple(t for t in target if t not in original)
        removing = tuple(o for o in original if o not in target)
    observed = None
    if draw(st.booleans()):
        isr = tuple(draw(st.permutations([r for r in replicas if draw(st.booleans())])))
        rest = [r for r in replicas if r not in isr]
        observed = ObservedState(
            leader=draw(st.sampled_from(isr + (NO_LEADER,))),  # Kafka's leader is in the ISR (or there is none)
            isr=isr,
            elr=tuple(r for r in rest if draw(st.booleans())),
            last_known_elr=tuple(r for r in rest if draw(st.booleans())),
        )
    return Partition(name, pid, replicas, adding, removing, observed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=clusters(reassigning=False), version=st.sampled_from(ERAS))
def test_round_trip_random_clusters(cluster, version):
    text = render(cluster, version)
    assert render(twin_in_mode(text, cluster.mode), version) == text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=clusters(reassigning=True), version=st.sampled_from(["2.6", "2.8", "3.8", "4.1"]))
def test_round_trip_random_clusters_mid_reassignment(cluster, version):
    text = render(cluster, version)
    assert render(twin_in_mode(text, cluster.mode), version) == text


@pytest.mark.parametrize("version", ["3.8", "4.1"])
def test_round_trip_elr_beside_an_isr_says_nothing_of_the_elr_members(version):
    # leaderless with an ISR left: an ELR member may not lead (isValidNewLeader), so the twin does not take broker 3
    # for down; partition 1 keeps its full ISR. (Found by test_round_trip_random_clusters.)
    brokers = (Broker(0, state=OFFLINE), *(Broker(i) for i in (1, 2, 3)))
    lost = ObservedState(leader=0, isr=(0,), elr=(3,), last_known_elr=())
    parts = (Partition("t", 0, (0, 1, 2, 3), observed=lost), Partition("t", 1, (1, 2, 3, 0)))
    cluster = Cluster(brokers, (Topic("t", parts, {}),), mode="kraft")
    text = render(cluster, version)
    assert "Partition: 1\tLeader: 1\tReplicas: 1,2,3,0\tIsr: 1,2,3\t" in text
    assert render(twin_in_mode(text, cluster.mode), version) == text


@pytest.mark.parametrize("version", ["2.2", "2.3"])
@pytest.mark.parametrize("topology", TOPOLOGIES, ids=[p.name for p in TOPOLOGIES])
def test_round_trip_2_2_bootstrap_server(topology, version):
    """2.2 - 2.3 through --bootstrap-server (`Leader: none`, empty Isr, HashMap topic order) reads back the same."""
    v = d.parse_version(version)

    def admin(cluster):
        return d.render_kafka(cluster, d.select(cluster, d.DescribeOptions(version=v, admin_client=True)), v, True)

    text = admin(load_topology(str(topology)))
    assert admin(twin_of(text)) == text


# -- what operators paste: a terminal's spaces for the TABs, log4j lines among the output ----------------------------
@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("topology", ["offline-broker.yaml", "six-brokers.yaml"])
def test_pasted_from_a_terminal_reads_as_the_tabbed_text(topology, version):
    # a terminal shows each TAB as spaces up to the next 8-column stop (one space where a field ends at 7 mod 8)
    path = ROOT / "topologies" / topology
    text = render(load_topology(str(path)), version)
    pasted = "\n".join("   " + line.expandtabs(8) + "  " for line in text.splitlines()) + "\n"
    assert "\t" not in pasted
    assert render(twin_of(pasted), version) == render(twin_of(text), version)


# A capture from a Kafka 3.8 client against a KRaft 3.7 cluster, copied from a terminal as a tutorial shows it
# (single spaces where a field ends at a tab stop: "...8-2_g PartitionCount").
CAPTURE = ROOT / "tests" / "data" / "captures" / "describe-3.8-client-kraft-3.7-pasted.txt"


def test_a_pasted_3_8_capture_with_its_log4j_warning(planner_cli_here):
    code, out, err = planner_cli_here("twin", "--describe", str(CAPTURE))
    assert code == 0
    assert out == (
        "mode: kraft\nbrokers:\n  - {id: 0}\ntopics:\n  - name: my-topic1\n    topic_id: AorH8CLzRuSy8u7BB8-2_g\n"
        "    assignment:\n      0: [0]\n      1: [0]\n      2: [0]\n"
    )
    assert err == (
        f"note: {CAPTURE}: skipped 1 log line of the tool (line 1), e.g. the WARN a 3.8+ client prints against "
        "brokers without the DescribeTopicPartitions API\n"
        f"note: {CAPTURE}: 'Elr: N/A' (a 3.8+ client against ZooKeeper-mode brokers or KRaft brokers before 3.8): "
        "the mode is unknown, written as kraft; give 'mode: zookeeper' in a --brokers file if ZooKeeper runs the "
        "cluster\n"
    )


def test_elr_not_available_is_an_unknown_mode():
    parsed = d.parse_describe(CAPTURE.read_text(encoding="utf-8"), "c.txt")
    assert (parsed.mode, parsed.log_lines) == ("unknown", (1,))


def test_a_missing_field_names_the_file_and_line_once():
    with pytest.raises(PlannerError) as e:
        d.parse_describe("Topic: foo   PartitionCount: 1   ReplicationFactor: 1\n", "pasted.txt")
    assert str(e.value) == "pasted.txt:1: missing field 'Configs:'"


def test_adding_and_removing_replicas_pasted():
    text = (
        "Topic: t  TopicId: AorH8CLzRuSy8u7BB8-2_g PartitionCount: 1 ReplicationFactor: 2 Configs: a=1\n"
        "    Topic: t Partition: 0 Leader: 1 Replicas: 3,1,2 Isr: 1,2 Adding Replicas: 3 Removing Replicas: 2\n"
    )
    p = d.parse_describe(text, "p.txt").topics[0].partitions[0]
    assert (p.replicas, p.adding, p.removing) == ((3, 1, 2), (3,), (2,))
