"""Validation gaps of the topology loader and the options (Kafka's texts where Kafka has them)."""

import pytest

BASE = "brokers:\n  - {id: 1, port: 9092}\n  - {id: 2}\ntopics:\n  - name: ok\n    assignment: {0: [1, 2]}\n"


@pytest.mark.parametrize(
    "extra,problem",
    [
        (
            '  - name: "bad name!"\n    assignment: {0: [1]}\n',
            '7: topics[1].name: Topic name "bad name!" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'",
        ),
        (
            '  - name: "a\\tb"\n    assignment: {0: [1]}\n',
            '7: topics[1].name: Topic name "a\tb" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'",
        ),
        ('  - name: ".."\n    assignment: {0: [1]}\n', '7: topics[1].name: Topic name cannot be "." or ".."'),
        (
            "  - name: x\n    assignment: {0: [1]}\n    configs: {min.insync.replicas: two}\n",
            "9: topics[1].configs.min.insync.replicas: Invalid value two for configuration min.insync.replicas: "
            "Not a number of type INT",
        ),
        (
            '  - name: x\n    assignment: {0: [1]}\n    configs: {min.insync.replicas: "0"}\n',
            "9: topics[1].configs.min.insync.replicas: Invalid value 0 for configuration min.insync.replicas: "
            "Value must be at least 1",
        ),
    ],
)
def test_topology_refuses_what_kafka_refuses(planner_cli_here, tmp_path, extra, problem):
    p = tmp_path / "t.yaml"
    p.write_text(BASE + extra)
    assert planner_cli_here("describe", str(p)) == (2, "", f"error: {p}:{problem}\n")


@pytest.mark.parametrize(
    "broker,problem",
    [
        ("{id: 3, port: 65536}", "4: brokers[2].port: port 65536 is outside 1..65535"),
        ("{id: 2147483648}", "4: brokers[2].id: broker id 2147483648 is outside 0..2147483647"),
    ],
)
def test_broker_ports_and_ids(planner_cli_here, tmp_path, broker, problem):
    p = tmp_path / "t.yaml"
    p.write_text(BASE.replace("  - {id: 2}\n", f"  - {{id: 2}}\n  - {broker}\n"))
    assert planner_cli_here("describe", str(p)) == (2, "", f"error: {p}:{problem}\n")


def test_throttle_sizes_and_zero(planner_cli_here, topo):
    code, out, _ = planner_cli_here("reassign", "decommission", topo, "--brokers", "1", "--throttle", "50MB")
    assert code == 0 and "Throttle: 50000000 B/s on brokers" in out
    code, out, _ = planner_cli_here("reassign", "decommission", topo, "--brokers", "1", "--throttle", "48MiB")
    assert code == 0 and "Throttle: 50331648 B/s on brokers" in out
    assert planner_cli_here("reassign", "decommission", topo, "--brokers", "1", "--throttle", "0") == (
        2,
        "",
        "error: --throttle must be at least 1 byte per second (0 would stop the moving replicas)\n",
    )
    assert planner_cli_here("reassign", "decommission", topo, "--brokers", "1", "--throttle", "fast") == (
        2,
        "",
        "error: --throttle 'fast' is not a rate in bytes per second (e.g. 50000000, 50MB, 48MiB, 1.5GB, 100MiB/s; KB, "
        "MB, GB, TB: 10^3, 10^6, ...; KiB, MiB, GiB, TiB: 2^10, 2^20, ...)\n",
    )


def test_kafka_version_and_id_lists(planner_cli_here, topo):
    assert planner_cli_here("describe", topo, "--kafka-version", "9.9")[2].startswith(
        "error: --kafka-version '9.9': not a Kafka release; known: 0.8, 0.9, 0.10, 0.11, 1.0, 1.1, 2.0,"
    )
    assert planner_cli_here("reassign", "rebalance", topo, "--broker-list", "") == (
        2,
        "",
        "error: --broker-list '' names no broker id\n",
    )
    assert planner_cli_here("failures", topo, "--offline-brokers", ",") == (
        2,
        "",
        "error: --offline-brokers ',' names no broker id\n",
    )
    assert planner_cli_here("reassign", "decommission", topo, "--brokers", "2147483648") == (
        2,
        "",
        "error: --brokers '2147483648': broker id 2147483648 is outside 0..2147483647 (a Java int)\n",
    )


def test_topic_filter_strips_quotes_as_kafka(planner_cli_here, topo):
    # TopicFilter: trim, ',' -> '|', spaces dropped, leading/trailing quotes stripped
    code, out, _ = planner_cli_here("describe", topo, "--topic", "'foo'")
    assert code == 0 and out.startswith("Topic: foo\t")
    assert planner_cli_here("describe", topo, "--topic", "'fo(o'") == (2, "", "error: fo(o is an invalid regex.\n")


def test_utf16_empty_string_has_no_byte_order_mark():
    from planner.producer.serializers import serialize

    assert serialize("", "string", "UTF-16") == b""  # "".getBytes("UTF-16"): no FE FF
    assert serialize("a", "string", "UTF-16") == b"\xfe\xff\x00a"


def test_planned_topic_beyond_the_memory_guard(planner_cli_here, tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("brokers: [{id: 1}]\ntopics:\n  - {name: big, partitions: 2147483647, replication_factor: 1}\n")
    assert planner_cli_here("describe", str(p)) == (
        2,
        "",
        f"error: {p}:3: topics[0].partitions: 2147483647 partitions: more than this tool places in memory (10000000)\n",
    )
