"""Topology YAML: loading, validation messages (file:line: path: problem), round trip."""

import pytest

from planner.adapters.topology_yaml import dump_topology, load_topology, parse_topology
from planner.model import PlannerError

BASE = "brokers: [{id: 1, rack: a}, {id: 2, rack: b}, {id: 3, rack: c}]\n"


def error(text):
    with pytest.raises(PlannerError) as e:
        parse_topology(text, "x.yaml")
    return str(e.value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("brokers: [{id: 1}, {id: 1}]\n", "x.yaml:1: brokers[1].id: duplicate broker id 1"),
        (
            BASE + "topics:\n  - name: t\n    assignment: {0: [1, 7]}\n",
            "x.yaml:4: topics[0].assignment.0[1]: unknown broker 7 (brokers: 1,2,3)",
        ),
        (
            BASE + "topics:\n  - name: t\n    assignment: {0: [1, 1]}\n",
            "x.yaml:4: topics[0].assignment.0: duplicate replicas 1 in [1, 1]",
        ),
        (
            BASE + "topics:\n  - name: t\n    assignment:\n      0: [1, 2]\n      1: [2]\n    replication_factor: 2\n",
            "x.yaml:6: topics[0].assignment.1: replication factor 1 differs from replication_factor 2",
        ),
        (
            BASE + "topics:\n  - name: t\n    partitions: 0\n    replication_factor: 1\n",
            "x.yaml:4: topics[0].partitions: must be at least 1, got 0",
        ),
        (
            BASE + "topics:\n  - name: t\n    partitions: 3\n    replication_factor: 4\n",
            "x.yaml:5: topics[0].replication_factor: Replication factor: 4 larger than available brokers: 3.",
        ),
        (
            BASE + "topics:\n  - name: t\n    partitons: 3\n",
            "x.yaml:4: topics[0].partitons: unknown key 'partitons' (expected one of: name, partitions, "
            "replication_factor, "
            "assignment, state, sizes, configs, topic_id, marked_for_deletion, adding, removing)",
        ),
        (
            BASE + "topics:\n  - name: t\n    partitions: three\n    replication_factor: 1\n",
            "x.yaml:4: topics[0].partitions: expected an integer, got 'three'",
        ),
        (
            BASE
            + "topics:\n  - name: t\n    assignment:\n      0: [1, 2]\n      1: [2, 3, 1]\n    adding: {1: [3, 1]}\n"
            + "    replication_factor: 2\n",
            "x.yaml:6: topics[0].assignment.1: replication factor 1 (3 replicas, 2 adding) differs from "
            "replication_factor 2",
        ),
        ("brokers: [{id: 1}\n", None),
        (
            BASE + "topics:\n  - name: t\n    assignment: {0: [1], 2: [2]}\n",
            "x.yaml:4: topics[0].assignment: partition ids must be 0..1; missing 1",
        ),
        (
            "brokers: [{id: 1, state: sleeping}]\n",
            "x.yaml:1: brokers[0].state: must be one of online, offline, fenced, got 'sleeping'",
        ),
        (
            BASE + "topics:\n  - name: t\n    assignment: {0: [1, 2]}\n    state: {0: {leader: 1, isr: [1, 3]}}\n",
            "x.yaml:5: topics[0].state.0.isr: ISR members 3 not among the replicas [1, 2]",
        ),
        (
            BASE + "topics:\n  - name: t\n    assignment: {0: [1, 2]}\n    state: {0: {leader: 3, isr: [1]}}\n",
            "x.yaml:5: topics[0].state.0.leader: leader 3 not among the replicas [1, 2]",
        ),
        (
            "brokers:\n  - {id: 1}\n  - {id: 2, cordoned: yes please}\n",
            "x.yaml:3: brokers[1].cordoned: expected true or false, got 'yes please'",
        ),
        (
            "brokers:\n  - {id: 1, usable_bytes: -5}\n",
            "x.yaml:2: brokers[0].usable_bytes: must be at least 0, got -5",
        ),
        (
            "brokers:\n  - {id: 1, usable_bytes: 10, total_bytes: 9}\n",
            "x.yaml:2: brokers[0].usable_bytes: 10 is more than total_bytes 9",
        ),
        (
            "brokers:\n  - {id: 1, total_bytes: 1 TB}\n",
            "x.yaml:2: brokers[0].total_bytes: expected an integer, got '1 TB'",
        ),
    ],
)
def test_validation_messages(text, message):
    got = error(text)
    if message is None:
        assert got.startswith("x.yaml:2: malformed YAML: ")
    else:
        assert got == message


def test_missing_file():
    with pytest.raises(PlannerError) as e:
        load_topology("/nonexistent/t.yaml")
    assert str(e.value) == "/nonexistent/t.yaml: no such topology file (see topologies/ for examples)"


def test_round_trip_of_every_shipped_topology():
    for name in ("producer-0", "six-brokers", "offline-broker"):
        cluster = load_topology(f"topologies/{name}.yaml")
        assert parse_topology(dump_topology(cluster)) == cluster


def test_producer_0_is_the_classic_example():
    c = load_topology("topologies/producer-0.yaml")
    assert c.broker_ids == (1, 2, 3)
    assert c.topic("producer-0").assignment() == {0: (2, 1), 1: (3, 2), 2: (1, 3)}


def test_six_brokers_has_a_50_partition_consumer_offsets_rack_safe():
    c = load_topology("topologies/six-brokers.yaml")
    t = c.topic("__consumer_offsets")
    racks = c.rack_of()
    assert t.partition_count == 50 and t.replication_factor == 3
    assert all(len({racks[b] for b in p.replicas}) == 3 for p in t.partitions)


def test_unplaced_topics_are_placed_deterministically():
    text = BASE + "topics:\n  - name: t\n    partitions: 6\n    replication_factor: 2\n"
    assert parse_topology(text) == parse_topology(text)
    t = parse_topology(text).topic("t")
    assert sorted(p.replicas[0] for p in t.partitions) == [1, 1, 2, 2, 3, 3]


def test_partial_reassignment_rf_is_replicas_minus_adding():
    # One partition is moving (target [3, 1] added to the original [2, 1]), the other is not: the topic's
    # replication factor is still 2, as kafka-topics --describe prints it (replicas minus adding).
    cluster = parse_topology(
        BASE + "topics:\n  - name: t\n    replication_factor: 2\n    assignment:\n"
        "      0: [3, 1, 2]\n      1: [2, 3]\n    adding: {0: [3]}\n    removing: {0: [2]}\n"
    )
    t = cluster.topic("t")
    assert [p.replicas for p in t.partitions] == [(3, 1, 2), (2, 3)]
    assert t.partitions[0].adding == (3,) and t.partitions[0].removing == (2,)


def test_cordoned_brokers_load_and_dump():
    text = (
        "mode: kraft\nbrokers:\n  - {id: 1, cordoned: true}\n  - {id: 2, state: fenced, cordoned: true}\n"
        "  - {id: 3, cordoned: false}\ntopics: []\n"
    )
    c = parse_topology(text)
    assert [(b.id, b.state, b.cordoned, b.placeable) for b in c.brokers] == [
        (1, "online", True, False),
        (2, "fenced", True, False),
        (3, "online", False, True),
    ]
    assert (c.cordoned_ids, c.placeable_ids, c.online_ids) == ({1, 2}, {3}, {1, 3})
    assert dump_topology(c) == text.replace(", cordoned: false", "")


def test_usable_and_total_bytes_load_and_dump():
    """DescribeLogDirs' usable/total bytes per broker (what `kafka export` writes); either may be missing."""
    text = (
        "brokers:\n  - {id: 1, usable_bytes: 600, total_bytes: 6100}\n  - {id: 2, total_bytes: 100}\n"
        "  - {id: 3}\ntopics: []\n"
    )
    c = parse_topology(text)
    assert [(b.usable_bytes, b.total_bytes) for b in c.brokers] == [(600, 6100), (None, 100), (None, None)]
    assert dump_topology(c) == "mode: kraft\n" + text


TOPIC = BASE + "topics:\n  - name: t\n"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            BASE + "topics:\n  - partitions: 1\n    replication_factor: 1\n",
            "x.yaml:3: topics[0].name: missing topic name",
        ),
        (
            TOPIC + "    configs: {retention.ms: null}\n    assignment: {0: [1]}\n",
            "x.yaml:4: topics[0].configs.retention.ms: expected a value",
        ),
        (TOPIC + "    assignment: {}\n", "x.yaml:4: topics[0].assignment: assignment is empty"),
        (
            TOPIC + "    partitions: 2\n    assignment: {0: [1]}\n",
            "x.yaml:4: topics[0].partitions: says 2 but the assignment has 1 partitions",
        ),
        (
            TOPIC + "    assignment: {0: []}\n",
            "x.yaml:4: topics[0].assignment.0: Cannot have replication factor of 0 for partition id 0.",
        ),
        (
            TOPIC + "    partitions: 2\n",
            "x.yaml:3: topics[0]: a topic needs either 'assignment' or both 'partitions' and 'replication_factor'",
        ),
        (
            TOPIC + "    assignment: {0: [1]}\n    sizes: {3: 10}\n",
            "x.yaml:5: topics[0].sizes.3: partition 3 does not exist (the topic has 1 partitions)",
        ),
        (
            TOPIC + "    assignment: {0: [1]}\n    state: {0: {leader: 1}}\n",
            "x.yaml:5: topics[0].state.0: partition state needs 'leader' (broker id, or -1 / none) and 'isr'",
        ),
        (
            TOPIC + "    assignment: {0: [1]}\n    state: {0: {leader: 7, isr: [1]}}\n",
            "x.yaml:5: topics[0].state.0.leader: unknown broker 7 (brokers: 1,2,3)",
        ),
        (
            TOPIC + "    assignment: {0: [1]}\n    state: {0: {leader: 1, isr: [1, 2]}}\n",
            "x.yaml:5: topics[0].state.0.isr: ISR members 2 not among the replicas [1]",
        ),
        (
            TOPIC + "    assignment: {0: [1]}\n    state: {2: {leader: 1, isr: [1]}}\n",
            "x.yaml:5: topics[0].state.2: partition 2 does not exist (the topic has 1 partitions)",
        ),
        (
            TOPIC + "    assignment: {0: [1]}\n    state: {0: {leader: 1, isr: [1], elr: [9]}}\n",
            "x.yaml:5: topics[0].state.0.elr[0]: unknown broker 9 (brokers: 1,2,3)",
        ),
        (
            TOPIC + "    assignment: {0: [1, 2]}\n    adding: {0: [3]}\n",
            "x.yaml:5: topics[0].adding.0: brokers 3 must also be in the partition's replicas",
        ),
        (
            TOPIC + "    assignment: {0: [1, 2]}\n    removing: {1: [1]}\n",
            "x.yaml:5: topics[0].removing.1: partition 1 does not exist (the topic has 1 partitions)",
        ),
        (
            TOPIC + "    assignment: {0: [1, 2]}\n    replication_factor: 3\n",
            "x.yaml:5: topics[0].replication_factor: says 3 but the assignment has 2 replicas per partition",
        ),
        (
            TOPIC + "    assignment:\n      0: [1, 2]\n      1: [1, 2, 3]\n    adding: {1: [2, 3]}\n"
            "    replication_factor: 2\n",
            "x.yaml:6: topics[0].assignment.1: replication factor 1 (3 replicas, 2 adding) differs from "
            "replication_factor 2",
        ),
    ],
)
def test_topic_validation_messages(text, message):
    """Every check of a topic entry: its exact file:line: path: problem text."""
    assert error(text) == message


def test_partitions_of_a_topic_may_differ_in_replication_factor():
    # Kafka lets a reassignment change some partitions' replication factor only; the file round-trips (kafka export)
    text = BASE + "topics:\n  - name: t\n    assignment:\n      0: [1, 2, 3]\n      1: [2, 3]\n"
    cluster = parse_topology(text, "x.yaml")
    assert [p.replicas for p in cluster.topic("t").partitions] == [(1, 2, 3), (2, 3)]
    assert cluster.topic("t").replication_factor == 3  # partition 0's, as kafka-topics --describe prints it
    assert parse_topology(dump_topology(cluster), "y.yaml") == cluster


@pytest.mark.parametrize(
    "text, dumped",
    [
        (
            TOPIC
            + "    assignment:\n      0: [1, 2]\n      1: [1, 2, 3]\n    adding: {1: [3]}\n    removing: {0: [2]}\n",
            "mode: kraft\nbrokers:\n  - {id: 1, rack: a}\n  - {id: 2, rack: b}\n  - {id: 3, rack: c}\ntopics:\n  - "
            "name: t\n    assignment:\n      0: [1, 2]\n      1: [1, 2, 3]\n    adding:\n      1: [3]\n    removing:\n "
            "     0: [2]\n",
        ),
        (
            TOPIC
            + "    configs: {compact: true, retention.ms: 1000}\n    assignment: {0: [1, 2]}\n    sizes: {0: 5}\n    "
            "state: {0: {leader: none, isr: [], leader_epoch: 4, elr: [2], last_known_elr: [1]}}\n",
            "mode: kraft\nbrokers:\n  - {id: 1, rack: a}\n  - {id: 2, rack: b}\n  - {id: 3, rack: c}\ntopics:\n  - "
            "name: t\n    configs:\n      compact: 'true'\n      retention.ms: '1000'\n    assignment:\n      0: [1, "
            "2]\n    state:\n      0: {leader: -1, isr: [], leader_epoch: 4, elr: [2], last_known_elr: [1]}\n    "
            "sizes:\n      0: 5\n",
        ),
    ],
)
def test_in_progress_state_sizes_and_configs_dump_exactly(text, dumped):
    assert dump_topology(parse_topology(text, "x.yaml")) == dumped
    assert dump_topology(parse_topology(dumped, "x.yaml")) == dumped


def test_a_partitions_topic_partition_is_made_once_and_no_field():
    from dataclasses import fields, replace

    from planner.model import Partition, TopicPartition

    p = Partition("orders", 7, (3, 1, 2), size=1_024)
    assert p.tp == TopicPartition("orders", 7) and str(p.tp) == "orders-7"
    assert p.tp is p.tp  # kept in the partition on first use
    assert [f.name for f in fields(p)] == ["topic", "id", "replicas", "adding", "removing", "observed", "size"]
    assert p == Partition("orders", 7, (3, 1, 2), size=1_024) and hash(p) == hash(
        Partition("orders", 7, (3, 1, 2), size=1_024)
    )
    assert replace(p, id=8).tp == TopicPartition("orders", 8)
