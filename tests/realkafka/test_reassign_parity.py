"""`reassign verify`, `reassign list` and `reassign check-execute` against Kafka 4.4.0's own
`kafka-reassign-partitions.sh` (ReassignPartitionsCommand) `--verify`, `--list` and `--execute`'s refusals on the
same live cluster: a reassignment kept in progress by a 1 B/s throttle, one already done, one never started."""

from __future__ import annotations

import json
import re
import time

import pytest
from realkafka.real_cluster import PRODUCER_PERF, REASSIGN

PREFIX = "test_reassign_parity-"
SLOW = PREFIX + "slow"
DONE = PREFIX + "done"


@pytest.fixture(scope="module")
def topics(real_kafka):
    real_kafka.create_topic(SLOW, [[1, 2], [2, 3]])
    real_kafka.create_topic(DONE, [[1, 2], [3, 4]])
    yield real_kafka
    real_kafka.delete_topics(SLOW, DONE)


def _reassign(cluster, *args: str) -> tuple[int, str, str]:
    return cluster.run_tool(REASSIGN, "--bootstrap-server", cluster.bootstrap, *args)


def _json(path, moves: list[tuple[str, int, list[int]]]) -> str:
    path.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves]})
    )
    return str(path)


def test_verify_and_list_with_a_reassignment_in_progress(topics, planner_cli, tmp_path):
    rc, _, err = topics.run_tool(
        PRODUCER_PERF, "--topic", SLOW, "--num-records", "400", "--record-size", "1000", "--throughput", "-1",
        "--producer-props", f"bootstrap.servers={topics.bootstrap}", "acks=all",
    )  # fmt: skip
    assert rc == 0, err
    # partition 0 moves to 3,4 at 1 B/s (stays in progress); partition 1 keeps its replicas
    plan = _json(tmp_path / "plan.json", [(SLOW, 0, [3, 4]), (SLOW, 1, [2, 3])])
    rc, out, err = _reassign(topics, "--execute", "--reassignment-json-file", plan, "--throttle", "1")
    assert rc == 0, err + out
    try:
        # the other file: a partition at its target (done), one elsewhere with no reassignment (never started)
        other = _json(tmp_path / "other.json", [(DONE, 0, [1, 2]), (DONE, 1, [4, 3])])
        for args in (["--list"], ["--verify", "--preserve-throttles", "--reassignment-json-file", plan]):
            rc, theirs, err = _reassign(topics, *args)
            assert rc == 0, err
            command = ["list"] if args == ["--list"] else ["verify", "--reassignment-json-file", plan]
            code, ours, err = planner_cli("reassign", command[0], topics.url, *command[1:])
            assert code == 0, err
            assert ours == theirs, args
        assert theirs.startswith(f"Status of partition reassignment:\nReassignment of partition {SLOW}-0 is still ")
        rc, theirs, err = _reassign(topics, "--verify", "--preserve-throttles", "--reassignment-json-file", other)
        assert rc == 0, err
        code, ours, err = planner_cli("reassign", "verify", topics.url, "--reassignment-json-file", other)
        assert (code, err) == (0, "")
        assert (
            ours
            == theirs
            == (
                "Status of partition reassignment:\n"
                f"Reassignment of partition {DONE}-0 is completed.\n"
                f"There is no active reassignment of partition {DONE}-1, but replica set is 3,4 rather than 4,3.\n"
                "\n"  # verifyReplicaMoves' println of no log-dir moves
            )
        )
    finally:
        rc, out, err = _reassign(topics, "--cancel", "--reassignment-json-file", plan)
        assert rc == 0, err + out
        deadline = time.monotonic() + 60
        while _reassign(topics, "--list")[1] != "No partition reassignments found.\n":
            assert time.monotonic() < deadline
            time.sleep(0.5)


REFUSALS = {
    "unknown broker": [(DONE, 0, [1, 9])],
    "duplicate replica": [(DONE, 0, [1, 1])],
    "empty replica list": [(DONE, 0, [])],
    "no such topic": [(PREFIX + "missing", 0, [1, 2])],
}


MESSAGES = {
    "unknown broker": "Unknown broker id 9",
    "duplicate replica": f"Partition replica lists may not contain duplicate entries: {DONE}-0 contains multiple "
    "entries for 1",
    "empty replica list": "Partition replica list cannot be empty",
    "no such topic": f"Topic {PREFIX}missing not found.",
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_execute_refusals_are_check_executes(topics, planner_cli, tmp_path, case):
    plan = _json(tmp_path / "plan.json", REFUSALS[case])
    rc, theirs, their_err = _reassign(topics, "--execute", "--reassignment-json-file", plan)
    code, ours, our_err = planner_cli("reassign", "check-execute", topics.url, "--reassignment-json-file", plan)
    assert (rc, their_err, code, ours) == (1, "", 2, "")
    # the tool: `Error: <text>` and a Java stack trace on stdout, the text after the exception's class name where
    # the Admin client's exception is wrapped (UnknownTopicOrPartitionException); the planner: one line
    first = theirs.splitlines()[0]
    assert first.startswith("Error: ")
    text = re.sub(r"^(org\.apache\.kafka\.[\w.]+Exception: )", "", first.removeprefix("Error: "))
    assert our_err == f"error: {text}\n"
    assert text == MESSAGES[case]
