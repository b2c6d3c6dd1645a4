"""Carrying out a plan folder on the real cluster, with Kafka's own tools or with `kafka-planner kafka ...`, and
reading back what the cluster holds (issue 29, parts 3 and 4). Polls, never sleeps a fixed time."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from realkafka.real_cluster import CONFIGS, ELECT, REASSIGN, TOPICS
from testkit import run_planner


def proposed_files(folder: Path) -> list[Path]:
    """proposed.json, or proposed-001.json, proposed-002.json... in order."""
    return sorted(folder.glob("proposed*.json"))


def election_partitions(folder: Path) -> list[tuple[str, int]]:
    """The partitions leader-election.json names (none when the plan wrote none: no preferred leader changes)."""
    if not (folder / "leader-election.json").exists():
        return []
    data = json.loads((folder / "leader-election.json").read_text())
    return [(p["topic"], p["partition"]) for p in data["partitions"]]


def state(cluster, topic: str) -> dict[int, tuple[list[int], int]]:
    """Partition -> (replicas, actual leader), as `kafka-topics.sh --describe --topic` shows them."""
    rc, out, err = cluster.run_tool(TOPICS, "--bootstrap-server", cluster.bootstrap, "--describe", "--topic", topic)
    assert rc == 0, err
    found = {}
    for line in out.splitlines():
        m = re.match(r"\tTopic: \S+\tPartition: (\d+)\tLeader: (-?\d+|none)\tReplicas: ([\d,]*)\t", line)
        if m:
            leader = -1 if m[2] == "none" else int(m[2])
            found[int(m[1])] = ([int(b) for b in m[3].split(",") if b], leader)
    return found


def replicas_after(start: dict[int, tuple[list[int], int]], *files: Path) -> dict[int, list[int]]:
    """The replicas the plan says each partition ends with: the start, then each JSON file in order."""
    out = {p: list(r) for p, (r, _) in start.items()}
    for f in files:
        for p in json.loads(f.read_text())["partitions"]:
            out[p["partition"]] = list(p["replicas"])
    return out


def throttle_lines(cluster, topic: str) -> list[str]:
    """Every *.throttled.* config that `kafka-configs.sh --describe` shows for the brokers and the topic."""
    found = []
    for entity in (["--entity-type", "brokers"], ["--entity-type", "topics", "--entity-name", topic]):
        rc, out, err = cluster.run_tool(CONFIGS, "--bootstrap-server", cluster.bootstrap, "--describe", *entity)
        assert rc == 0, err
        found += [line.strip() for line in out.splitlines() if ".throttled." in line]
    return found


def reassign_tool(cluster, *args: str) -> tuple[int, str, str]:
    return cluster.run_tool(REASSIGN, "--bootstrap-server", cluster.bootstrap, *args)


def verify_until_done(cluster, json_file: Path, timeout: float = 120.0) -> str:
    """`--verify` every half second until no partition is still in progress, nor shows no reassignment with a replica
    set other than its target: its last output (throttles cleared). Kafka's tool reads the reassignments from the
    controller and the replica sets from a broker's metadata, a moment behind: in CI it printed "There is no active
    reassignment of partition ...-1, but replica set is 2,1,4 rather than 2,1." for one that had just completed.
    A mismatch that lasts fails at the timeout, with that output."""
    deadline = time.monotonic() + timeout
    while True:
        rc, out, err = reassign_tool(cluster, "--reassignment-json-file", str(json_file), "--verify")
        assert rc == 0, out + err
        if "is still in progress" not in out and "There is no active reassignment of partition" not in out:
            return out
        assert time.monotonic() < deadline, out
        time.sleep(0.5)


def with_kafka_tools(cluster, files: list[Path], election: Path | None, throttle: int) -> list[str]:
    """kafka-reassign-partitions.sh --execute --throttle on each file in order, --verify until complete, then
    kafka-leader-election.sh --election-type PREFERRED on `election` (when it names partitions). Returns the
    tools' outputs."""
    outputs = []
    for f in files:
        rc, out, err = reassign_tool(
            cluster, "--reassignment-json-file", str(f), "--execute", "--throttle", str(throttle)
        )
        assert rc == 0, out + err
        outputs += [out, verify_until_done(cluster, f)]
    if election is not None and election.exists() and json.loads(election.read_text())["partitions"]:
        rc, out, err = cluster.run_tool(
            ELECT, "--bootstrap-server", cluster.bootstrap, "--election-type", "PREFERRED",
            "--path-to-json-file", str(election),
        )  # fmt: skip
        assert rc == 0, out + err
        outputs.append(out)
    return outputs


def with_planner(cluster, files: list[Path], election: Path | None, throttle: int, rollback: Path) -> list[str]:
    """`kafka submit --execute --throttle --wait` on the files (one call, in order), `kafka status`, then
    `kafka elect-leaders --execute`. Returns the outputs."""
    args = [a for f in files for a in ("--reassignment-json-file", str(f))]
    code, out, err = run_planner(
        "kafka", "submit", cluster.url, *args, "--execute", "--throttle", str(throttle), "--wait", "--poll", "0.2",
        "--rollback-file", str(rollback), "-q",
    )  # fmt: skip
    assert code == 0, out + err
    outputs = [out]
    code, out, err = run_planner("kafka", "status", cluster.url, *args)
    assert code == 0, out + err
    outputs.append(out)
    if election is not None and election.exists() and json.loads(election.read_text())["partitions"]:
        code, out, err = run_planner(
            "kafka", "elect-leaders", cluster.url, "--path-to-json-file", str(election), "--execute"
        )
        assert code == 0, out + err
        outputs.append(out)
    return outputs


def write_election(path: Path, topic: str, partitions) -> Path:
    path.write_text(json.dumps({"partitions": [{"topic": topic, "partition": p} for p in partitions]}))
    return path
