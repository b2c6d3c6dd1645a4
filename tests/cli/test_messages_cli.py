"""The partition / consumers / coordinator commands end to end, and GROUP.yaml errors."""

import json

import pytest

from planner.coordinator import partition_for
from planner.formats.group_yaml import parse_group
from planner.model import PlannerError
from planner.model import TopicPartition as TP
from planner.producer.murmur2 import murmur2

TOPOLOGY = """\
cluster: test
mode: kraft
brokers:
  - {id: 1, rack: r1}
  - {id: 2, rack: r2}
  - {id: 3, rack: r3}
topics:
  - name: __consumer_offsets
    assignment: {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1], 5: [3, 2], 6: [1, 2], 7: [2, 3], 8: [3, 1],
                 9: [1, 3]}
  - name: orders
    assignment: {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3]}
    state:
      2: {leader: 1, isr: [1]}
  - name: events
    assignment: {0: [1], 1: [2], 2: [3]}
"""


@pytest.fixture()
def topo(tmp_path):
    path = tmp_path / "topo.yaml"
    path.write_text(TOPOLOGY)
    return str(path)


def test_partition_tsv_kafka_python_vectors(planner_cli):
    rc, out, err = planner_cli(
        "partition", "--partitions", "1000", "--format", "tsv", "", "a", "ab", "abc", "123456789"
    )
    assert rc == 0, err
    assert out == "\t681\na\t524\nab\t434\nabc\t107\n123456789\t566\n"


def test_partition_with_topology_prints_leader_and_replicas(topo, planner_cli):
    keys = ["k1", "k2", "k3", "k4", "k5"]
    rc, out, err = planner_cli("partition", "--topology", topo, "--topic", "orders", "--format", "tsv", *keys)
    assert rc == 0, err
    replicas = {0: "1,2", 1: "2,3", 2: "3,1", 3: "1,3"}
    leader = {0: "1", 1: "2", 2: "1", 3: "1"}  # partition 2's observed leader is 1
    want = "".join(
        f"{k}\t{p}\t{leader[p]}\t{replicas[p]}\n" for k in keys for p in [(murmur2(k.encode()) & 0x7FFFFFFF) % 4]
    )
    assert out == want


def test_partition_offline_leader_shows_none(topo, planner_cli):
    rc, out, _ = planner_cli(
        "partition",
        "--topology",
        topo,
        "--topic",
        "events",
        "--offline-brokers",
        "2",
        "--format",
        "json",
        "k1",
        "k2",
        "k3",
        "k4",
        "k5",
        "k6",
    )
    assert rc == 0
    data = json.loads(out)
    assert data["partitions"] == 3
    for item in data["keys"]:
        assert item["partition"] == (murmur2(item["key"].encode()) & 0x7FFFFFFF) % 3
        assert item["leader"] == (None if item["partition"] == 1 else item["partition"] + 1)


def test_partition_key_types_and_legacy_scala(planner_cli):
    rc, out, _ = planner_cli("partition", "--partitions", "12", "--key-type", "int", "--format", "tsv", "--", "1", "-5")
    one = (murmur2(bytes([0, 0, 0, 1])) & 0x7FFFFFFF) % 12
    minus5 = (murmur2(bytes([0xFF, 0xFF, 0xFF, 0xFB])) & 0x7FFFFFFF) % 12
    assert out == f"1\t{one}\n-5\t{minus5}\n"
    rc, out, _ = planner_cli(
        "partition", "--partitions", "10", "--partitioner", "legacy-scala", "--format", "tsv", "foo"
    )
    assert out == "foo\t4\n"


def test_keys_file_streams_summary_and_lines(tmp_path, planner_cli):
    keys = [f"user-{i}" for i in range(5000)] + ["", "ü"]
    path = tmp_path / "keys.txt"
    path.write_bytes(
        ("\r\n".join(keys[:10]) + "\n" + "\n".join(keys[10:])).encode()
    )  # CRLF lines too; no final newline
    rc, out, err = planner_cli("partition", "--partitions", "7", "--keys-file", str(path), "--format", "tsv")
    assert rc == 0, err
    want = [f"{k}\t{(murmur2(k.encode()) & 0x7FFFFFFF) % 7}" for k in keys]
    assert out.splitlines() == want
    rc, out, _ = planner_cli(
        "partition", "--partitions", "7", "--keys-file", str(path), "--summary", "--format", "json"
    )
    data = json.loads(out)
    counts = [0] * 7
    for k in keys:
        counts[(murmur2(k.encode()) & 0x7FFFFFFF) % 7] += 1
    assert data["counts"] == counts and data["summary"]["keys"] == len(keys)
    assert data["summary"]["skew_max_over_mean"] == round(max(counts) / (len(keys) / 7), 4)


def test_keys_file_chunk_boundaries(tmp_path, monkeypatch):
    from planner.adapters import keys_file

    monkeypatch.setattr(keys_file, "CHUNK_BYTES", 7)  # lines straddle many chunk borders
    path = tmp_path / "k.txt"
    keys = ["alpha", "", "b", "a-little-bit-long-string", "x" * 30, "tail"]
    path.write_text("\n".join(keys) + "\n")
    got = []
    for data, starts, lengths in keys_file.line_chunks(str(path)):
        got += [bytes(data[a : a + b]).decode() for a, b in zip(starts, lengths)]
    assert got == keys


def test_null_key_simulation_json(topo, planner_cli):
    rc, out, err = planner_cli(
        "partition",
        "--topology",
        topo,
        "--topic",
        "events",
        "--offline-brokers",
        "3",
        "--null-key-simulation",
        "--records",
        "3000",
        "--batch-size",
        "100",
        "--seed",
        "9",
        "--format",
        "json",
    )
    assert rc == 0, err
    data = json.loads(out)
    assert data["available"] == [0, 1]
    for era in ("round-robin", "sticky", "uniform-sticky"):
        counts = data["eras"][era]["counts"]
        assert sum(counts) == 3000 and counts[2] == 0
    assert data["eras"]["round-robin"]["counts"][:2] == [1500, 1500]
    rc2, out2, _ = planner_cli(
        "partition",
        "--topology",
        topo,
        "--topic",
        "events",
        "--offline-brokers",
        "3",
        "--null-key-simulation",
        "--records",
        "3000",
        "--batch-size",
        "100",
        "--seed",
        "9",
        "--format",
        "json",
    )
    assert out2 == out


def test_partition_help_explains_eras(planner_cli):
    rc, out, _ = planner_cli("partition", "--help")
    assert rc == 0
    flat = " ".join(out.split())
    for text in ("2.3", "2.4 - 3.2", "3.3+", "legacy-scala", "murmur2"):
        assert text in flat


@pytest.mark.parametrize(
    "args,message",
    [
        (["partition", "k"], "error: give --partitions N, or --topology TOPOLOGY --topic T\n"),
        (
            ["partition", "--partitions", "3", "--key-type", "int", "1.5"],
            "error: key '1.5' is not a valid int key: expected an integer (optional sign, digits only)\n",
        ),
        (["partition", "--partitions", "3"], None),
        (["coordinator", "g", "--offline-brokers", "1"], "error: --offline-brokers needs --topology\n"),
    ],
)
def test_one_line_errors(args, message, planner_cli):
    rc, out, err = planner_cli(*args)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    if message:
        assert err == message


def test_coordinator_tsv_and_topology(topo, planner_cli):
    rc, out, _ = planner_cli("coordinator", "--partitions", "2", "--format", "tsv", "one", "two", "b", "a")
    assert out == "one\t0\ntwo\t0\nb\t0\na\t1\n"
    rc, out, _ = planner_cli("coordinator", "--topology", topo, "--format", "json", "foo", "polygenelubricants")
    data = json.loads(out)
    assert data["partitions"] == 10  # the topic's real partition count
    assert data["ids"] == [
        {"id": "foo", "partition": 4, "coordinator": 2, "replicas": [2, 1]},
        {"id": "polygenelubricants", "partition": 0, "coordinator": 1, "replicas": [1, 2]},
    ]
    rc, out, err = planner_cli("coordinator", "--topology", topo, "--partitions", "50", "foo")
    assert rc == 2 and "contradicts" in err
    rc, out, err = planner_cli("coordinator", "--topology", topo, "--transactional", "--format", "tsv", "tx-1")
    assert rc == 0 and "no __transaction_state topic" in err
    assert out == f"tx-1\t{partition_for('tx-1', 50)}\n"


def test_consumers_json_all_strategies(topo, tmp_path, planner_cli):
    group = tmp_path / "g.yaml"
    group.write_text("""\
group: g1
members:
  - {id: c1, rack: r1, topics: [orders, events], owned: [orders-0, orders-1, orders-2, orders-3], generation: 2}
  - {id: c2, rack: r2, topics: [orders, events], generation: 2}
""")
    rc, out, err = planner_cli("consumers", topo, "--group-file", str(group), "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert list(data["strategies"]) == [
        "range",
        "roundrobin",
        "sticky",
        "cooperative-sticky",
        "uniform",
        "server-range",
    ]
    rr = data["strategies"]["roundrobin"]["members"]
    assert rr["c1"]["partitions"] == ["events-0", "events-2", "orders-1", "orders-3"]
    assert rr["c1"]["fetch_from"] == [1, 2, 3]  # leaders of events-0, events-2, orders-1, orders-3
    # uniform walks the topics in the hash order of their ids; this topology has none, so the order is not Kafka's
    assert [(name, s["exact"]) for name, s in data["strategies"].items() if not s["exact"]] == [("uniform", False)]
    assert data["strategies"]["uniform"]["not_exact_because"] == (
        "no topic_id for events, orders in the topology: Kafka walks the topics in the hash order of their ids, "
        "the planner in name order"
    )
    for s in data["strategies"].values():
        assert s["spread"] <= 1
        assert sorted(p for m in s["members"].values() for p in m["partitions"]) == sorted(
            [f"events-{i}" for i in range(3)] + [f"orders-{i}" for i in range(4)]
        )


def test_consumers_cooperative_table_from_example(planner_cli):
    rc, out, err = planner_cli(
        "consumers",
        "topologies/six-brokers.yaml",
        "--group-file",
        "examples/group-sticky.yaml",
        "--strategy",
        "cooperative-sticky",
    )
    assert rc == 0, err
    assert "first round" in out and "converged" in out
    assert "withheld in the first round until revoked: orders-2->consumer-3-07ce, orders-5->consumer-3-07ce" in out


def test_consumers_mixed_example_sticky_and_uniform_exact(planner_cli):
    # mixed subscriptions: sticky is Kafka's GeneralAssignmentBuilder, KIP-848 uniform its
    # UniformHeterogeneousAssignmentBuilder. audit-log has no topic_id, but no other topic ties with it (partitions per
    # subscriber 3.0 with 1 subscriber; orders 3.0 with 2; clicks 4.0 with 3), so both are exact
    rc, out, err = planner_cli(
        "consumers",
        "topologies/six-brokers.yaml",
        "--group-file",
        "examples/group-mixed.yaml",
        "--strategy",
        "sticky",
        "--strategy",
        "uniform",
        "--format",
        "json",
    )
    assert rc == 0, err
    data = json.loads(out)["strategies"]
    assert data["sticky"]["exact"] is True and data["uniform"]["exact"] is True
    assert "not_exact_because" not in data["uniform"]
    assert {m: v["count"] for m, v in data["sticky"]["members"].items()} == {
        "consumer-1": 7,
        "consumer-2": 7,
        "consumer-3": 7,
    }
    assert data["sticky"]["members"]["consumer-3"]["partitions"] == [f"clicks-{i}" for i in (0, 1, 2, 3, 5, 8, 11)]
    # members numbered in HashMap order consumer-3, consumer-2, consumer-1: clicks (4.0 per subscriber) dealt round
    # robin, audit-log to consumer-2, orders to the less loaded consumer-1 first; then clicks rebalanced to consumer-3
    assert {m: v["partitions"] for m, v in data["uniform"]["members"].items()} == {
        "consumer-1": ["clicks-2", "clicks-5"] + [f"orders-{i}" for i in (0, 1, 2, 3, 5)],
        "consumer-2": ["audit-log-0", "audit-log-1", "audit-log-2", "clicks-1", "clicks-4", "clicks-7", "orders-4"],
        "consumer-3": [f"clicks-{i}" for i in (0, 3, 6, 8, 9, 10, 11)],
    }
    rc, out, err = planner_cli(
        "consumers",
        "topologies/six-brokers.yaml",
        "--group-file",
        "examples/group-mixed.yaml",
        "--strategy",
        "sticky",
        "--strategy",
        "uniform",
    )
    assert rc == 0, err
    assert "== sticky: classic StickyAssignor (eager)\n" in out
    assert "== uniform: KIP-848 server-side UniformAssignor (group.consumer.assignors default)\n" in out


@pytest.mark.parametrize(
    "text,message",
    [
        ("members: []\n", "g.yaml:1: members: expected a non-empty list of members"),
        ("members:\n  - {id: a}\n", "g.yaml:2: members[0].topics: missing"),
        (
            "members:\n  - {id: a, topics: [t]}\n  - {id: a, topics: [t]}\n",
            "g.yaml:3: members[1].id: duplicate member id 'a' (also members[0])",
        ),
        (
            "members:\n  - {id: a, topics: [t], owned: [t0]}\n",
            "g.yaml:2: members[0].owned[0]: 't0' is not a partition: write TOPIC-PARTITION, e.g. orders-3",
        ),
        (
            "members:\n  - {id: a, topics: [t], colour: red}\n",
            "g.yaml:2: members[0].colour: unknown key 'colour' (expected one of: id, instance_id, rack, topics, owned, "
            "generation)",
        ),
        (
            "members:\n  - {id: a, topics: [t], generation: x}\n",
            "g.yaml:2: members[0].generation: expected an integer generation id",
        ),
        (
            "members:\n  - {id: a, topics: [t], owned: {t: [-1]}}\n",
            "g.yaml:2: members[0].owned.t[0]: expected a partition number (0 or more)",
        ),
    ],
)
def test_group_yaml_errors(text, message):
    with pytest.raises(PlannerError) as err:
        parse_group(text, "g.yaml")
    assert str(err.value) == message


def test_group_yaml_parses_both_owned_forms():
    g = parse_group(
        "group: x\nmembers:\n  - {id: a, instance_id: i, rack: r, topics: [t, u], owned: {t: [1, 0]}, generation: 3}\n"
        "  - {id: b, topics: [t], owned: [my-topic-2]}\n"
    )
    assert g.name == "x"
    assert g.members[0].owned == (TP("t", 1), TP("t", 0)) and g.members[0].generation == 3
    assert g.members[1].owned == (TP("my-topic", 2),) and g.members[1].generation is None


def test_coordinator_without_leader(topo, planner_cli):
    # "foo" → partition 4 of 10, replicas [2, 1]: both down, no coordinator
    rc, out, _ = planner_cli("coordinator", "--topology", topo, "--offline-brokers", "1,2", "foo")
    assert rc == 0
    assert out.splitlines()[2].split(None, 2) == ["foo", "4", "none (COORDINATOR_NOT_AVAILABLE)  2,1"]
    rc, out, _ = planner_cli("coordinator", "--topology", topo, "--offline-brokers", "1,2", "--format", "tsv", "foo")
    assert out == "foo\t4\tnone\t2,1\n"


def test_keys_file_streams_one_document_across_chunks(tmp_path, monkeypatch, capsys):
    # every chunk of a keys file is rendered on its own: the JSON must still be one document, the table one header
    from planner.adapters import keys_file
    from planner.cli import partition as cli_partition

    monkeypatch.setattr(keys_file, "CHUNK_BYTES", 8)
    path = tmp_path / "k.txt"
    path.write_text("a\nb\nabc\n\nlonger-key\n")
    args = dict(
        keys=[],
        partitions=1000,
        topology=None,
        topic=None,
        key_type="string",
        encoding="utf-8",
        keys_file=str(path),
        summary=False,
        partitioner="default",
        null_key_simulation=False,
        records=0,
        batch_size=1,
        seed=0,
        offline_brokers=None,
    )
    cli_partition.run(**args, fmt="json")
    assert json.loads(capsys.readouterr().out)["keys"] == [
        {"key": "a", "partition": 524},
        {"key": "b", "partition": 796},
        {"key": "abc", "partition": 107},
        {"key": "", "partition": 681},
        {"key": "longer-key", "partition": 294},
    ]
    cli_partition.run(**args, fmt="table")
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "# 1000 partitions, string keys, toPositive(murmur2(key)) % partitions",
        "key  partition",
        "---  ---------",
    ]
    assert [line.split()[0] for line in lines[3:]] == ["a", "b", "abc", '""', "longer-key"]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    cli_partition.run(**{**args, "keys_file": str(empty)}, fmt="json")
    assert json.loads(capsys.readouterr().out)["keys"] == []


def test_consumers_uniform_exact_with_topic_ids(planner_cli):
    # group-basic: one subscription, both topics have a topic_id in six-brokers.yaml: every strategy is Kafka's own
    rc, out, err = planner_cli(
        "consumers", "topologies/six-brokers.yaml", "--group-file", "examples/group-basic.yaml", "--format", "json"
    )
    assert rc == 0, err
    data = json.loads(out)["strategies"]
    assert {name: s["exact"] for name, s in data.items()} == dict.fromkeys(data, True)
    assert "not_exact_because" not in data["uniform"]
    assert {m: v["partitions"] for m, v in data["uniform"]["members"].items()} == {
        "consumer-1-9d3a": [f"clicks-{i}" for i in range(6)],
        "consumer-2-41bf": [f"clicks-{i}" for i in range(6, 12)],
        "consumer-3-07ce": [f"orders-{i}" for i in range(6)],
    }


def test_consumers_notes_owned_partitions_no_strategy_can_keep(tmp_path, planner_cli):
    group = tmp_path / "g.yaml"
    group.write_text(
        "members:\n  - {id: a, topics: [orders], owned: [orders-99, clicks-0, orders-1], generation: 1}\n"
        "  - {id: b, topics: [orders, nope]}\n"
    )
    rc, out, err = planner_cli(
        "consumers",
        "topologies/six-brokers.yaml",
        "--group-file",
        str(group),
        "--strategy",
        "sticky",
        "--format",
        "json",
    )
    assert rc == 0
    assert err.splitlines() == [
        f"note: {group}: subscribed topic 'nope' is not in topologies/six-brokers.yaml; Kafka assigns nothing for it "
        "until it exists",
        f"note: {group}: a owns orders-99, but orders has 6 partitions in topologies/six-brokers.yaml: ignored",
        f"note: {group}: a owns clicks-0 but does not subscribe clicks: no strategy keeps it there",
    ]
    members = json.loads(out)["strategies"]["sticky"]["members"]
    # the valid claim (orders-1) is kept; the subscriptions differ (b also names 'nope'), so this is the general path
    assert "orders-1" in members["a"]["partitions"] and members["a"]["count"] == members["b"]["count"] == 3


NEVER = (
    "cooperative-sticky never settles for this group: Kafka's CooperativeStickyAssignor repeats rebalances 2-3 "
    "forever, withholding t0-0->m0-5, t0-1->m0-5 in turn"
)


def test_consumers_cooperative_sticky_that_never_settles(tmp_path, planner_cli):
    """A group for which Kafka's CooperativeStickyAssignor repeats two rebalances forever (racks, mixed
    subscriptions): the other strategies print as usual, cooperative-sticky names the cycle."""
    topology = tmp_path / "racks.yaml"
    topology.write_text("""\
brokers: [{id: 1, rack: a}, {id: 2, rack: b}, {id: 3, rack: c}, {id: 4}, {id: 5}]
topics:
  - name: t0
    assignment: {0: [2, 3], 1: [1, 2], 2: [4, 5]}
  - name: t1
    assignment: {0: [1, 3], 1: [2, 4], 2: [2, 3], 3: [4, 5], 4: [1, 3], 5: [1, 3], 6: [4, 5], 7: [4, 5], 8: [4, 5]}
""")
    group = tmp_path / "group.yaml"
    group.write_text("""\
members:
  - {id: m0-0, rack: b, topics: [t0, t1], owned: [t1-5], generation: 5}
  - {id: m0-1, rack: b, topics: [t1], owned: [t1-1, t1-3], generation: 5}
  - {id: m0-2, rack: b, topics: [t1, t0], owned: [t1-2], generation: 5}
  - {id: m0-3, topics: [t0], owned: [t0-2, t0-0], generation: 5}
  - {id: m0-4, topics: [t1], owned: [t1-7, t1-8, t1-6], generation: 5}
  - {id: m0-5, rack: b, topics: [t0], generation: 5}
""")
    rc, out, err = planner_cli(
        "consumers", str(topology), "--group-file", str(group), "--strategy", "cooperative-sticky"
    )
    assert (rc, err) == (0, "")
    assert "m0-3      -           -       2        t0 1-2         t0 1-2                1,4\n" in out
    assert f"withheld in the first round until revoked: t0-0->m0-5; {NEVER}\n" in out
    rc, out, err = planner_cli("consumers", str(topology), "--group-file", str(group), "--format", "json")
    assert (rc, err) == (0, "")
    coop = json.loads(out)["strategies"]["cooperative-sticky"]
    assert coop["rebalances_to_converge"] is None
    assert coop["never_converges"] == NEVER
    assert coop["members"]["m0-3"]["partitions"] == ["t0-1", "t0-2"]
