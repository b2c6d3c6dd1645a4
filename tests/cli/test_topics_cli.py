"""The topic commands end to end, through the installed entry point (exit codes, stdout, stderr, files)."""

import os
import subprocess
import sys

import pytest

from planner.adapters.topology_yaml import load_topology


def test_describe_classic_example_byte_for_byte(planner_cli):
    code, out, err = planner_cli("describe", "topologies/producer-0.yaml", "--kafka-version", "3.7")
    assert (code, err) == (0, "")
    assert out == (
        "Topic: producer-0\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: \n"
        "\tTopic: producer-0\tPartition: 0\tLeader: 2\tReplicas: 2,1\tIsr: 2,1\n"
        "\tTopic: producer-0\tPartition: 1\tLeader: 3\tReplicas: 3,2\tIsr: 3,2\n"
        "\tTopic: producer-0\tPartition: 2\tLeader: 1\tReplicas: 1,3\tIsr: 1,3\n"
    )


def test_describe_with_offline_brokers_2_3(planner_cli):
    code, out, _ = planner_cli(
        "describe",
        "topologies/producer-0.yaml",
        "--offline-brokers",
        "2,3",
        "--kafka-version",
        "2.4",
        "--unavailable-partitions",
    )
    assert code == 0
    # both ISR members gone: no leader, the last ISR member stays (our rule for simultaneous failures)
    assert out == "\tTopic: producer-0\tPartition: 1\tLeader: none\tReplicas: 3,2\tIsr: 2\n"


def test_describe_offline_broker_topology_unavailable(planner_cli):
    code, out, _ = planner_cli("describe", "topologies/offline-broker.yaml", "--unavailable-partitions")
    assert code == 0
    assert out == "\tTopic: legacy\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3\tElr: N/A\tLastKnownElr: N/A\n"


def test_brokers_table_totals_and_spread(planner_cli):
    code, out, _ = planner_cli("brokers", "topologies/producer-0.yaml")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "broker",
        "rack",
        "state",
        "replicas",
        "preferred",
        "leaders",
        "imbalance",
        "topics",
        "max/topic",
    ]
    assert lines[2].split()[:4] == ["1", "-", "online", "2"]
    assert lines[-2].split()[:5] == ["total", "3/3", "online", "6", "3"]
    assert lines[-1].split()[:4] == ["spread", "(max-min,", "online)", "0"]


def test_create_topic_fixed_start_matches_kafka_and_prints_describe_lines(planner_cli):
    code, out, err = planner_cli(
        "create-topic",
        "topologies/producer-0.yaml",
        "--topic",
        "new",
        "--partitions",
        "4",
        "--replication-factor",
        "2",
        "--start-index",
        "0",
        "--format",
        "replica-assignment",
    )
    assert code == 0
    # brokers 1,2,3, start = shift = 0: p0 [1,2] p1 [2,3] p2 [3,1]; p3 crosses n=3 so shift 1: [1,3]
    assert out == "1:2,2:3,3:1,1:3\n"
    assert err.startswith("Kafka AdminUtils, rack-unaware, fixed start index 0\n")
    code, out, _ = planner_cli(
        "create-topic",
        "topologies/producer-0.yaml",
        "--topic",
        "new",
        "--partitions",
        "1",
        "--replication-factor",
        "3",
        "--start-index",
        "1",
        "--kafka-version",
        "3.9",
    )
    # start = shift = 1: leader index 1 (broker 2), followers (2 + (1+j)%2)%3 -> indexes 0, 2
    assert out == (
        "Topic: new\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
        "\tTopic: new\tPartition: 0\tLeader: 2\tReplicas: 2,1,3\tIsr: 2,1,3\tElr: \tLastKnownElr: \n"
    )


def test_create_topic_default_is_deterministic_and_balanced(planner_cli):
    args = (
        "create-topic",
        "topologies/six-brokers.yaml",
        "--topic",
        "payments",
        "--partitions",
        "12",
        "--replication-factor",
        "3",
        "--format",
        "replica-assignment",
    )
    first, second = planner_cli(*args), planner_cli(*args)
    assert first == second and first[0] == 0
    lists = [list(map(int, p.split(":"))) for p in first[1].strip().split(",")]
    cluster = load_topology("topologies/six-brokers.yaml")
    racks = cluster.rack_of()
    assert all(len({racks[b] for b in r}) == 3 for r in lists)
    assert sorted(r[0] for r in lists) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]


def test_create_topic_kraft_placer_seeded(planner_cli):
    code, out, err = planner_cli(
        "create-topic",
        "topologies/six-brokers.yaml",
        "--topic",
        "k",
        "--partitions",
        "3",
        "--replication-factor",
        "3",
        "--placer",
        "kraft",
        "--seed",
        "5",
        "--format",
        "replica-assignment",
    )
    assert code == 0
    assert err.startswith("KRaft striped placer, seed 5\n")
    from planner.java import JavaRandom
    from planner.placement.striped import place_striped

    brokers = [(b, f"eu-west-1{'abc'[(b - 1) % 3]}", False) for b in range(1, 7)]
    expected = place_striped(brokers, 3, 3, JavaRandom(5))
    assert out == ",".join(":".join(map(str, expected[p])) for p in range(3)) + "\n"


def test_add_partitions_kafka_rule(tmp_path, planner_cli):
    out_file = tmp_path / "after.yaml"
    code, out, err = planner_cli(
        "add-partitions",
        "topologies/producer-0.yaml",
        "--topic",
        "producer-0",
        "--partitions",
        "5",
        "--format",
        "replica-assignment",
        "--write",
        str(out_file),
    )
    assert code == 0
    # partition 0's leader is 2 -> fixed start index 1 (brokers 1,2,3); startPartitionId 3 -> shift 1 + 1 on p3:
    # p3 first (3+1)%3=1 -> 2, follower (1+1+(2%2))%3=2 -> 3; p4 first 2 -> 3, follower 0 -> 1
    assert out == "2:1,3:2,1:3,2:3,3:1\n"
    assert load_topology(str(out_file)).topic("producer-0").partition_count == 5


@pytest.mark.parametrize(
    "args, message",
    [
        (("describe", "nope.yaml"), "error: nope.yaml: no such topology file (see topologies/ for examples)"),
        (
            (
                "create-topic",
                "topologies/producer-0.yaml",
                "--topic",
                "x",
                "--partitions",
                "3",
                "--replication-factor",
                "4",
            ),
            "error: Replication factor: 4 larger than available brokers: 3.",
        ),
        (
            (
                "create-topic",
                "topologies/producer-0.yaml",
                "--topic",
                "x",
                "--partitions",
                "0",
                "--replication-factor",
                "1",
            ),
            "error: Number of partitions must be larger than 0.",
        ),
        (
            (
                "create-topic",
                "topologies/producer-0.yaml",
                "--topic",
                "producer-0",
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ),
            "error: Topic 'producer-0' already exists.",
        ),
        (
            (
                "create-topic",
                "topologies/producer-0.yaml",
                "--topic",
                "bad name",
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ),
            'error: Topic name "bad name" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'",
        ),
        (
            ("describe", "topologies/producer-0.yaml", "--offline-brokers", "9"),
            "error: --offline-brokers: unknown broker id(s) 9; the cluster has brokers 1,2,3",
        ),
        (
            ("describe", "topologies/producer-0.yaml", "--topic", "nope"),
            "error: Topic 'nope' does not exist as expected",
        ),
        (
            ("add-partitions", "topologies/producer-0.yaml", "--topic", "producer-0", "--partitions", "2"),
            "error: The number of partitions for a topic can only be increased. Topic producer-0 currently has 3 "
            "partitions, "
            "2 would not be an increase.",
        ),
    ],
)
def test_errors_are_one_line_exit_2(args, message, planner_cli):
    code, out, err = planner_cli(*args)
    assert (code, out, err) == (2, "", message + "\n")


def test_malformed_yaml_names_file_and_line_and_writes_nothing(tmp_path, planner_cli):
    bad = tmp_path / "bad.yaml"
    bad.write_text("brokers:\n  - {id: 1\n")
    target = tmp_path / "out.yaml"
    code, out, err = planner_cli(
        "create-topic",
        str(bad),
        "--topic",
        "t",
        "--partitions",
        "1",
        "--replication-factor",
        "1",
        "--write",
        str(target),
    )
    assert code == 2 and out == ""
    assert err.startswith(f"error: {bad}:3: malformed YAML: ") and err.count("\n") == 1
    assert not target.exists() and os.listdir(tmp_path) == ["bad.yaml"]


def test_python_dash_m_and_console_script_agree(planner_cli):
    script = os.path.join(os.path.dirname(sys.executable), "kafka-planner")
    a = subprocess.run([script, "describe", "topologies/producer-0.yaml"], capture_output=True, text=True)
    b = planner_cli("describe", "topologies/producer-0.yaml")
    assert (a.returncode, a.stdout) == (b[0], b[1])


def test_describe_does_not_import_numpy_kazoo_or_pyspark():
    probe = (
        "import sys\nsys.argv = ['kafka-planner', 'describe', 'topologies/six-brokers.yaml']\n"
        "import planner.cli as c\ntry:\n    c.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(','.join(m for m in ('numpy', 'kazoo', 'pyspark') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.stderr == ""


def test_create_topic_json_is_kafkas_reassignment_format(planner_cli):
    code, out, _ = planner_cli(
        "create-topic",
        "topologies/producer-0.yaml",
        "--topic",
        "j",
        "--partitions",
        "2",
        "--replication-factor",
        "2",
        "--start-index",
        "0",
        "--format",
        "json",
    )
    assert code == 0
    assert out == (
        '{"version":1,"partitions":[{"topic":"j","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"j","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}\n'
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["describe"], "error: Missing argument 'TOPOLOGY'. (see 'kafka-planner describe --help')\n"),
        (
            ["describe", "topologies/producer-0.yaml", "--bogus"],
            "error: No such option: --bogus (see 'kafka-planner describe --help')\n",
        ),
    ],
)
def test_usage_errors_are_one_line_exit_2(args, message, planner_cli):
    code, out, err = planner_cli(*args)
    assert (code, out, err) == (2, "", message)


def test_bad_option_value_is_one_line_naming_the_option(planner_cli):
    # the middle of the message is typer's own wording, which changes between typer versions
    code, out, err = planner_cli(
        "create-topic", "topologies/producer-0.yaml", "--topic", "t", "--partitions", "x", "--replication-factor", "1"
    )
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("error: Invalid value for '--partitions': ")
    assert err.endswith(" (see 'kafka-planner create-topic --help')\n")


def test_no_command_prints_help_exit_2(planner_cli):
    code, out, err = planner_cli()
    assert code == 2 and out == ""
    assert err.startswith("Usage: kafka-planner [OPTIONS] COMMAND [ARGS]...\n")
    assert "create-topic" in err


def test_create_topic_load_aware_placement_prints_a_replica_assignment(tmp_path):
    # brokers 4-6 are new and empty: the load-aware placer (not Kafka's) fills them first, one replica per rack
    path = tmp_path / "c.yaml"
    path.write_text(
        "brokers:\n"
        + "".join(f"  - {{id: {i}, rack: r{i % 3}}}\n" for i in range(1, 7))
        + "topics:\n  - name: old\n    assignment: {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner",
            "create-topic",
            str(path),
            "--topic",
            "new",
            "--partitions",
            "3",
            "--replication-factor",
            "3",
            "--placer",
            "load-aware",
            "--format",
            "replica-assignment",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "4:5:6,5:4:6,6:4:5\n"
    assert proc.stderr.startswith("load-aware placement (not Kafka's): lightest brokers first, rack-safe\n")


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["create-topic", "--placer", "load-aware", "--seed", "5"],
            "create-topic --placer load-aware does not use --seed (its placement is deterministic); leave it out",
        ),
        (
            ["create-topic", "--placer", "load-aware", "--start-index", "0"],
            "create-topic --placer load-aware does not use --start-index (its placement is deterministic); "
            "leave it out",
        ),
        (
            ["create-topic", "--placer", "kraft", "--start-index", "1"],
            "create-topic --placer kraft does not use --start-index (--start-index is AdminUtils' fixedStartIndex, "
            "--placer kafka); leave it out",
        ),
        (
            ["create-topic", "--seed", "1", "--start-index", "0"],
            "--start-index and --seed are alternatives (Kafka's fixed start index, or its random draw); give one",
        ),
        (
            ["add-partitions", "--seed", "3"],
            "add-partitions --placer kafka does not use --seed (Kafka's addPartitions starts at partition 0's first "
            "replica, without a random draw); leave it out",
        ),
        (
            ["add-partitions", "--placer", "load-aware", "--seed", "3"],
            "add-partitions --placer load-aware does not use --seed (its placement is deterministic); leave it out",
        ),
    ],
)
def test_placement_options_the_placer_does_not_use_are_refused(planner_cli_here, args, message):
    # they were ignored silently: --placer load-aware --seed 5 printed the same placement as without it, and
    # --seed 1 --start-index 0 the fixed start's
    command, *rest = args
    sizes = ["--partitions", "3"] if command == "add-partitions" else ["--partitions", "3", "--replication-factor", "2"]
    code, out, err = planner_cli_here(command, "topologies/producer-0.yaml", "--topic", "producer-0", *sizes, *rest)
    assert (code, out, err) == (2, "", f"error: {message}\n")
