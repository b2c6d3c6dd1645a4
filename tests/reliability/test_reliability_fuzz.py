"""A bounded, seeded fuzz run over the four kinds of input (topology YAML, Kafka JSON, consumer-group YAML, CLI
arguments): every case ends with exit 0 and output that loads back, or exit 2 with exactly one line on stderr and no
traceback. A few hundred cases per kind, in this process (about 20 s in all)."""

from __future__ import annotations

import json
import random

import pytest

from planner.adapters.topology_yaml import load_topology
from planner.formats.group_yaml import parse_group

CASES = 250
TOPOLOGY = """\
cluster: fuzz
brokers:
  - {id: 1, rack: a, host: k1, port: 9092}
  - {id: 2, rack: b}
  - {id: 3, rack: c, state: online}
  - {id: 4, rack: a, state: fenced}
topics:
  - name: orders
    configs: {min.insync.replicas: "2", cleanup.policy: delete}
    assignment: {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
    sizes: {0: 1000, 1: 2000, 2: 3000}
    state: {0: {leader: 1, isr: [1, 2]}}
  - name: moving
    assignment: {0: [1, 2, 3, 4]}
    adding: {0: [4]}
    removing: {0: [3]}
  - name: planned
    partitions: 4
    replication_factor: 2
"""
REASSIGNMENT = (
    '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,1,3],'
    '"log_dirs":["any","any","any"]},{"topic":"planned","partition":1,"replicas":[1,3]}]}'
)
GROUP = """\
group: g
members:
  - {id: a, topics: [orders, planned], rack: a}
  - {id: b, topics: [orders], instance_id: i-b, owned: [orders-0, orders-2], generation: 3}
  - {id: c, topics: [planned], owned: {planned: [0, 1]}}
"""
ODD = [
    "",
    "-1",
    "0",
    "2147483648",
    "-99999999999999999999",
    "1e20",
    "1.5",
    "null",
    "~",
    "true",
    "[]",
    "{}",
    "'",
    '"',
    "bad name!",
    "a\tb",
    "\u00e9",
    "\u202e",
    "&x",
    "*x",
    "!!python/object:os.system",
    "? ",
    "- ",
    "[[[[",
    "{{",
    ": ",
    "#",
    "%YAML 1.1",
    "---",
    "...",
    "0x10",
    "010",
    ".inf",
    ".nan",
    "\\x00",
    "9" * 40,
]


def _mutate_text(rnd: random.Random, text: str) -> str:
    for _ in range(rnd.randint(1, 3)):
        kind = rnd.randrange(6)
        if kind == 0 and text:  # replace a token
            tokens = text.split(" ")
            tokens[rnd.randrange(len(tokens))] = rnd.choice(ODD)
            text = " ".join(tokens)
        elif kind == 1:  # insert odd text
            at = rnd.randrange(len(text) + 1)
            text = text[:at] + rnd.choice(ODD) + text[at:]
        elif kind == 2:  # drop a line
            lines = text.split("\n")
            del lines[rnd.randrange(len(lines))]
            text = "\n".join(lines)
        elif kind == 3:  # duplicate a line
            lines = text.split("\n")
            i = rnd.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif kind == 4:  # truncate
            text = text[: rnd.randrange(len(text) + 1)]
        else:  # change a digit
            digits = [i for i, c in enumerate(text) if c.isdigit()]
            if digits:
                i = rnd.choice(digits)
                text = text[:i] + rnd.choice("0123456789") + text[i + 1 :]
    return text


def _check(case: str, code: int, err: str) -> bool:
    """True for exit 0; exit 2 must be one line."""
    assert "Traceback" not in err, case
    if code == 2:
        assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, (case, err)
        return False
    assert code == 0, (case, code, err)
    return True


def test_fuzz_topology_yaml(tmp_path, planner_cli_here):
    rnd = random.Random(1301)
    src, out = tmp_path / "t.yaml", tmp_path / "out.yaml"
    for n in range(CASES):
        text = _mutate_text(rnd, TOPOLOGY)
        src.write_text(text)
        out.unlink(missing_ok=True)
        code, _, err = planner_cli_here(
            "create-topic",
            str(src),
            "--topic",
            "fuzz",
            "--partitions",
            "3",
            "--replication-factor",
            "1",
            "--write",
            str(out),
        )
        if _check(f"topology case {n}: {text!r}", code, err):
            load_topology(str(out))  # what the tool wrote loads back


def test_fuzz_kafka_json(tmp_path, planner_cli_here):
    rnd = random.Random(1302)
    topo, src, out = tmp_path / "t.yaml", tmp_path / "r.json", tmp_path / "out.yaml"
    topo.write_text(TOPOLOGY)
    for n in range(CASES):
        text = _mutate_text(rnd, REASSIGNMENT)
        src.write_text(text)
        out.unlink(missing_ok=True)
        code, _, err = planner_cli_here(
            "reassign", "apply", str(topo), "--reassignment-json-file", str(src), "--write", str(out)
        )
        if _check(f"json case {n}: {text!r}", code, err):
            load_topology(str(out))
        code, stdout, err = planner_cli_here("reassign", "verify", str(topo), "--reassignment-json-file", str(src))
        if _check(f"json verify case {n}: {text!r}", code, err):
            assert stdout.startswith("Status of partition reassignment:\n"), stdout


def test_fuzz_group_yaml(tmp_path, planner_cli_here):
    rnd = random.Random(1303)
    topo, src = tmp_path / "t.yaml", tmp_path / "g.yaml"
    topo.write_text(TOPOLOGY)
    for n in range(CASES):
        text = _mutate_text(rnd, GROUP)
        src.write_text(text)
        code, stdout, err = planner_cli_here(
            "consumers",
            str(topo),
            "--group-file",
            str(src),
            "--strategy",
            "range",
            "--strategy",
            "cooperative-sticky",
            "--format",
            "json",
        )
        if _check(f"group case {n}: {text!r}", code, err):
            json.loads(stdout)
            parse_group(text)


COMMANDS = [
    ["describe", "T", "--kafka-version", "V", "--topic", "S"],
    ["brokers", "T"],
    ["create-topic", "T", "--topic", "S", "--partitions", "N", "--replication-factor", "N", "--format", "json"],
    ["add-partitions", "T", "--topic", "S", "--partitions", "N"],
    ["reassign", "rebalance", "T", "--broker-list", "L", "--max-moves", "N", "--throttle", "S", "--format", "json"],
    ["reassign", "decommission", "T", "--brokers", "L", "--batch-size", "N", "--format", "json"],
    ["reassign", "replace-broker", "T", "--source", "N", "--target", "N", "--format", "json"],
    ["reassign", "set-replication-factor", "T", "--topic", "S", "--replication-factor", "N", "--format", "json"],
    ["reassign", "elect-leaders", "T", "--topic", "S", "--format", "json"],
    ["failures", "T", "--max-failed-brokers", "N", "--top", "N", "--format", "json"],
    ["partition", "--partitions", "N", "K", "--encoding", "S"],
    ["coordinator", "S", "--partitions", "N"],
]
NUMBERS = ["0", "1", "2", "3", "4", "-1", "5", "2147483647", "2147483648", "-99999999999999999999", "1e3", "x", ""]
STRINGS = [
    "orders",
    "planned",
    "moving",
    "nope",
    "",
    "bad name!",
    "a\tb",
    "'orders'",
    '"orders"',
    "UTF-16",
    "UTF-8",
    "2.3",
    "9.9",
    "4.1",
    "50MB",
    "0",
    "1,2",
    ",",
    "1,,2",
    "x",
    "\u00e9",
    "-",
]
LISTS = ["1,2,3", "1", "", ",", "1,x", "2147483648", "-1", "4", "9", "1,1"]


def _argument(rnd: random.Random, slot: str, topo: str) -> str:
    if slot == "T":
        return topo
    if slot == "N":
        return rnd.choice(NUMBERS)
    if slot in ("S", "K", "V"):
        return rnd.choice(STRINGS)
    if slot == "L":
        return rnd.choice(LISTS)
    return slot


def test_fuzz_cli_arguments(tmp_path, planner_cli_here):
    rnd = random.Random(1304)
    topo = tmp_path / "t.yaml"
    topo.write_text(TOPOLOGY)
    for n in range(CASES):
        template = rnd.choice(COMMANDS)
        args = []
        for i, slot in enumerate(template):
            if slot.startswith("--") and rnd.random() < 0.3:  # sometimes leave an option out
                continue
            if i and template[i - 1].startswith("--") and args and args[-1] != template[i - 1]:
                continue  # its option was left out
            args.append(_argument(rnd, slot, str(topo)))
        code, stdout, err = planner_cli_here(*args)
        if _check(f"cli case {n}: {args!r}", code, err) and "--format" in args and args[-1] == "json":
            json.loads(stdout)


@pytest.fixture(autouse=True)
def _no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
