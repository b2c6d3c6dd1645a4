"""Odd input and small limits (issue 33): numbers of thousands of digits, devices and endless files as input, control
characters in echoed names, waits that never end, a znode ZooKeeper would refuse by size, a small stack or address
space: one line on stderr, the right exit code, never a traceback or a crash."""

import subprocess
import sys

import pytest

BIG = "9" * 5000
LONG_NUMBER = "a number of 5000 digits; Kafka's numbers are Java ints and longs (at most 19 digits)"


def test_a_5000_digit_number_in_a_topology_names_the_file_and_line(planner_cli_here, tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(f"brokers:\n  - id: {BIG}\n")
    assert planner_cli_here("describe", str(p)) == (2, "", f"error: {p}:2: {LONG_NUMBER}\n")


def test_a_5000_digit_number_in_json_and_tool_output(planner_cli_here, topo, tmp_path):
    r = tmp_path / "r.json"
    r.write_text('{"version":1,"partitions":[{"topic":"a","partition":' + BIG + ',"replicas":[1]}]}')
    assert planner_cli_here("reassign", "verify", topo, "--reassignment-json-file", str(r)) == (
        2,
        "",
        f"error: --reassignment-json-file {r}:1: {LONG_NUMBER}\n",
    )
    assert planner_cli_here("reassign", "rebalance", topo, "--sizes", str(r)) == (
        2,
        "",
        f"error: --sizes {r}:1: {LONG_NUMBER}\n",
    )
    d = tmp_path / "describe.txt"
    d.write_text(f"Topic: t\tTopicId: x\tPartitionCount: 1\n\tTopic: t\tPartition: 0\tLeader: {BIG}\n")
    assert planner_cli_here("twin", "--describe", str(d), "-o", str(tmp_path / "o.yaml")) == (
        2,
        "",
        f"error: --describe {d}:2: {LONG_NUMBER}\n",
    )


def test_a_5000_digit_throttle_and_keys(planner_cli_here, topo, tmp_path):
    assert planner_cli_here("reassign", "rebalance", topo, "--throttle", BIG) == (
        2,
        "",
        "error: --throttle '99999999999999999999'... (5000 characters) is beyond a Java long of bytes per second\n",
    )
    out_of_long = "is not a valid long key: out of range -9223372036854775808..9223372036854775807\n"
    shown = "'" + "9" * 40 + "'... (5000 characters)"
    for partitioner in ("default", "legacy-scala"):
        assert planner_cli_here(
            "partition", "--partitions", "6", "--key-type", "long", "--partitioner", partitioner, "--", BIG
        ) == (2, "", f"error: key {shown} {out_of_long}")
    keys = tmp_path / "keys"
    keys.write_text(f"1\n{BIG}\n")
    code, out, err = planner_cli_here("partition", "--partitions", "6", "--key-type", "long", "--keys-file", str(keys))
    assert (code, err) == (2, f"error: key {shown} {out_of_long}")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_an_input_file_is_refused_before_reading(planner_cli_here, topo, tmp_path, device):
    refused = "is a device, not a file; give a file (or a FIFO such as <(command))"
    assert planner_cli_here("describe", device) == (2, "", f"error: {device}: {refused}\n")
    assert planner_cli_here("reassign", "verify", topo, "--reassignment-json-file", device) == (
        2,
        "",
        f"error: --reassignment-json-file {device}: {refused}\n",
    )
    assert planner_cli_here("kafka", "export", "kafka://127.0.0.1:1", "--command-config", device) == (
        2,
        "",
        f"error: --command-config {device}: {refused}\n",
    )
    assert planner_cli_here("partition", "--partitions", "6", "--keys-file", device) == (
        2,
        "",
        f"error: keys file {device}: is a device, not a file; give a file, '-' or a FIFO such as <(command)\n",
    )


def test_a_directory_is_refused_and_a_fifo_is_read(planner_cli, planner_cli_here, topo, tmp_path):
    code, _, err = planner_cli("describe", str(tmp_path))
    assert (code, err) == (2, f"error: {tmp_path}: is a directory, expected a file\n")
    proc = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m planner brokers <(cat "{topo}")'], capture_output=True, text=True
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == planner_cli_here("brokers", topo)


def test_an_endless_keys_line_stops_at_16_mib(tmp_path):
    proc = subprocess.run(
        [
            "bash",
            "-c",
            f'head -c 40000000 /dev/zero | "{sys.executable}" -m planner partition --partitions 6 --keys-file -',
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "error: keys file -: a line longer than 16 MiB; keys are one a line (Kafka's default max.request.size is "
        "1 MiB)\n",
    )


def test_control_characters_in_names_are_escaped_in_errors(planner_cli_here, topo, tmp_path):
    code, out, err = planner_cli_here(
        "create-topic", topo, "--topic", "a\x1b[2Jb\nc", "--partitions", "3", "--replication-factor", "3"
    )
    assert (code, out, err) == (
        2,
        "",
        'error: Topic name "a\\x1b[2Jb\\nc" is illegal, it contains a character other than ASCII alphanumerics, '
        "'.', '_' and '-'\n",
    )
    p = tmp_path / "t.yaml"
    p.write_text('brokers:\n  - {id: 1}\ntopics:\n  - name: "x\\e[2J\\r\\ny"\n    partitions: 1\n')
    code, out, err = planner_cli_here("describe", str(p))
    assert (code, out) == (2, "")
    assert err.startswith(f'error: {p}:4: topics[0].name: Topic name "x\\x1b[2J\\r\\ny" is illegal')
    assert err.count("\n") == 1 and "\x1b" not in err


@pytest.mark.parametrize("value", ["inf", "nan", "1e400", "3601", "-1"])
def test_poll_that_never_ends_is_refused_at_parse_time(planner_cli_here, tmp_path, value):
    code, out, err = planner_cli_here(
        "kafka", "submit", "kafka://127.0.0.1:1", "--reassignment-json-file", "x.json", "--wait", "--poll", value
    )
    bound = "greater than or equal to 0.05" if value == "-1" else "less than or equal to 3600"  # nan: not <= 3600
    assert (code, out, err) == (
        2,
        "",
        f"error: Invalid value for '--poll': Input should be {bound} (see 'kafka-planner kafka submit --help')\n",
    )


def test_timeouts_that_never_end_are_refused(planner_cli_here):
    assert planner_cli_here("kafka", "export", "kafka://127.0.0.1:1", "--timeout", "inf") == (
        2,
        "",
        "error: Invalid value for '--timeout': Input should be less than or equal to 86400 "
        "(see 'kafka-planner kafka export --help')\n",
    )
    assert planner_cli_here("describe", "kafka://127.0.0.1:1", env={"KAFKA_PLANNER_KAFKA_TIMEOUT": "inf"}) == (
        2,
        "",
        "error: $KAFKA_PLANNER_KAFKA_TIMEOUT: expected a number of seconds from 0.1 to 86400\n",
    )


def test_zk_submit_over_jute_maxbuffer_is_refused_before_connecting(planner_cli_here, tmp_path):
    import json

    r = tmp_path / "big.json"
    parts = [{"topic": "t" * 200, "partition": i, "replicas": [1, 2, 3]} for i in range(5000)]
    r.write_text(json.dumps({"version": 1, "partitions": parts}))
    expected = (
        2,
        "",
        f"error: {r}: /admin/reassign_partitions would be 1243918 bytes, a request of 1244001 bytes, over "
        "ZooKeeper's jute.maxbuffer of 1048575 bytes (1 MiB less one): split the reassignment into batches "
        "(reassign ... --batch-size N) and submit them one after another\n",
    )
    # port 1: nothing listens, so an attempt to connect would fail differently; the dry run is refused too
    assert planner_cli_here("zk", "submit", "zk://127.0.0.1:1/kafka", "--reassignment-json-file", str(r)) == expected
    assert (
        planner_cli_here("zk", "submit", "zk://127.0.0.1:1/kafka", "--reassignment-json-file", str(r), "--execute")
        == expected
    )


def test_jute_request_size_of_a_small_create():
    from planner.adapters.zk import znodes

    # header 8 + path (4 + 26) + data (4 + 2) + ACL vector (4 + perms 4 + "world" 9 + "anyone" 10) + flags 4
    assert znodes.create_request_bytes("/admin/reassign_partitions", b"{}") == 79


def _limited(limit: str, *argv: str) -> subprocess.CompletedProcess:
    quoted = " ".join(f"'{a}'" for a in argv)
    return subprocess.run(
        ["bash", "-c", f'ulimit {limit}; exec "{sys.executable}" -m planner {quoted}'],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deep_yaml_under_a_small_stack_is_one_line_not_a_segfault(tmp_path):
    p = tmp_path / "deep.yaml"
    p.write_text("[" * 999 + "]" * 999 + "\n")
    proc = _limited("-s 256", "describe", str(p))
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        f"error: {p}:1: YAML nested more than 64 levels deep, the most a stack of 256 KiB (ulimit -s) holds; a "
        "topology or group file needs about 6\n",
    )


def test_out_of_memory_names_ulimit_v(topo):
    proc = _limited("-v 300000", "describe", topo)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        "error: out of memory (ulimit -v is 300000 KiB: raise it, or give a smaller input)\n",
    )


@pytest.mark.parametrize(
    "error", [ValueError("18 is not a valid ACLOperation"), TypeError("'NoneType' object is not iterable")]
)
def test_a_malformed_answer_decoded_by_kafka_python_is_one_line_naming_the_broker(error):
    from planner.adapters.kafka.connection import KafkaOptions, KafkaSession, parse_url
    from planner.model import EnvironmentFailure

    session = object.__new__(KafkaSession)  # no connection: `call` is what turns the client's errors into one line
    session.url, session.kurl, session.opts = "kafka://127.0.0.1:1", parse_url("kafka://127.0.0.1:1"), KafkaOptions()

    def decode():
        raise error

    with pytest.raises(EnvironmentFailure) as exc:
        session.call("describe the ACLs", decode)
    assert str(exc.value) == (
        f"kafka://127.0.0.1:1: a malformed answer while trying to describe the ACLs ({type(error).__name__} decoding "
        "it): is a Kafka broker listening at 127.0.0.1:1?"
    )
