"""A reassignment under a binding throttle on the real KRaft cluster (issue 29, part 2; issue 32's exit codes): data
made with Kafka's own producer (ProducerPerformance), moved at 1,000 B/s so that it is still copying when it is
checked. While it moves, `kafka status`, `kafka status --exit-code` and `reassign verify kafka:// --exit-code` print
byte for byte what Kafka 4.4.0's `kafka-reassign-partitions.sh --verify` prints, the "still in progress" lines, and
neither tool clears the throttles yet (ReassignPartitionsCommand.verifyAssignment clears them only once no
reassignment is left); once it completes, the first `--verify` (ours or Kafka's) prints the clearing lines and the
throttles are gone. Forward with Kafka's `--execute --throttle` and our `kafka status` loop as the README shows it;
back (the rollback) with our `kafka submit --throttle` and Kafka's `--verify` loop. The topic is deleted after."""

from __future__ import annotations

import json
import time
from pathlib import Path

from realkafka.plan_steps import reassign_tool, state, throttle_lines, verify_until_done
from realkafka.real_cluster import PRODUCER_PERF

TOPIC = "test_throttled_reassignment-move"
START = [[1, 2], [2, 1]]
# each partition gains one replica from its own leader: 1 -> 3 for partition 0, 2 -> 4 for partition 1
TARGET = [[1, 3], [2, 4]]
THROTTLE = 1000  # B/s
RECORDS = 8000  # x 1000 B: about 4 MB per partition
STILL_MOVING = 3


def _json(path, assignment: list[list[int]]) -> str:
    parts = [{"topic": TOPIC, "partition": p, "replicas": r} for p, r in enumerate(assignment)]
    path.write_text(json.dumps({"version": 1, "partitions": parts}))
    return str(path)


def _states(*done: bool) -> str:
    """--verify's text with partition p completed when done[p], still in progress otherwise."""
    lines = [
        f"Reassignment of partition {TOPIC}-{p} is {'completed' if d else 'still in progress'}.\n"
        for p, d in enumerate(done)
    ]
    return "Status of partition reassignment:\n" + "".join(lines) + "\n"  # verifyReplicaMoves' println: no moves


def _in_progress() -> str:
    return _states(False, False)


def _completed() -> str:
    return (
        "Status of partition reassignment:\n"
        f"Reassignment of partition {TOPIC}-0 is completed.\n"
        f"Reassignment of partition {TOPIC}-1 is completed.\n"
        "\n"
        "Clearing broker-level throttles on brokers 1,2,3,4\n"
        f"Clearing topic-level throttles on topic {TOPIC}\n"
    )


def _throttles(leaders: str, followers: str) -> list[str]:
    """What kafka-configs.sh --describe shows while the reassignment runs: the rate on every broker (--execute sets
    it on the brokers of the current and target replicas), the throttled replicas on the topic."""
    rate = THROTTLE
    per_broker = [
        f"follower.replication.throttled.rate={rate} sensitive=false "
        f"synonyms={{DYNAMIC_BROKER_CONFIG:follower.replication.throttled.rate={rate}}}",
        f"leader.replication.throttled.rate={rate} sensitive=false "
        f"synonyms={{DYNAMIC_BROKER_CONFIG:leader.replication.throttled.rate={rate}}}",
    ]
    return per_broker * 4 + [
        f"follower.replication.throttled.replicas={followers} sensitive=false "
        f"synonyms={{DYNAMIC_TOPIC_CONFIG:follower.replication.throttled.replicas={followers}}}",
        f"leader.replication.throttled.replicas={leaders} sensitive=false "
        f"synonyms={{DYNAMIC_TOPIC_CONFIG:leader.replication.throttled.replicas={leaders}}}",
    ]


def _checked_while_moving(cluster, planner_cli, plan: str, ours_first: bool) -> None:
    """Kafka's --verify and ours, without --preserve-throttles, while both partitions still copy: the same text, exit
    0 (3 with --exit-code), and the throttles still set afterwards."""
    texts = []
    for who in ("planner", "kafka") if ours_first else ("kafka", "planner"):
        if who == "kafka":
            rc, out, err = reassign_tool(cluster, "--verify", "--reassignment-json-file", plan)
        else:
            rc, out, err = planner_cli("kafka", "status", cluster.url, "--reassignment-json-file", plan)
        assert (rc, err) == (0, ""), who
        texts.append(out)
    assert texts == [_in_progress()] * 2
    for args in (
        ["kafka", "status", cluster.url, "--reassignment-json-file", plan, "--exit-code"],
        ["reassign", "verify", cluster.url, "--reassignment-json-file", plan, "--exit-code"],
    ):
        assert planner_cli(*args) == (STILL_MOVING, _in_progress(), ""), args[:2]


def _wait_with_status(cluster, planner_cli, plan: str, timeout: float = 300.0) -> str:
    """The README's loop: `kafka status --exit-code` until it stops exiting 3: its last output."""
    began = time.monotonic()
    while True:
        code, out, err = planner_cli("kafka", "status", cluster.url, "--reassignment-json-file", plan, "--exit-code")
        if code != STILL_MOVING:
            assert (code, err) == (0, "")
            return out
        # partitions complete one at a time: until the last, every text is one of these, and nothing is cleared
        assert out in (_in_progress(), _states(True, False), _states(False, True))
        assert time.monotonic() - began < timeout, "the throttled reassignment did not complete"
        time.sleep(1.0)


def test_reassignment_under_a_binding_throttle(real_kafka, planner_cli, tmp_path):
    cluster = real_kafka
    cluster.create_topic(TOPIC, START)
    forward = _json(tmp_path / "forward.json", TARGET)
    back = _json(tmp_path / "back.json", START)
    try:
        rc, _, err = cluster.run_tool(
            PRODUCER_PERF, "--topic", TOPIC, "--num-records", str(RECORDS), "--record-size", "1000",
            "--throughput", "-1", "--producer-props", f"bootstrap.servers={cluster.bootstrap}", "acks=all",
        )  # fmt: skip
        assert rc == 0, err

        # forward: Kafka's --execute at 1,000 B/s; checked at once, then our status loop until it completes
        began = time.monotonic()
        rc, out, err = reassign_tool(
            cluster, "--execute", "--reassignment-json-file", forward, "--throttle", str(THROTTLE)
        )
        assert rc == 0, out + err
        assert out.endswith(
            f"The inter-broker throttle limit was set to {THROTTLE} B/s\n"
            f"Successfully started partition reassignments for {TOPIC}-0,{TOPIC}-1\n"
        )
        assert state(cluster, TOPIC) == {0: ([1, 3, 2], 1), 1: ([2, 4, 1], 2)}  # adding 3 and 4: copying
        _checked_while_moving(cluster, planner_cli, forward, ours_first=False)
        assert throttle_lines(cluster, TOPIC) == _throttles("0:1,0:2,1:1,1:2", "0:3,1:4")
        done = _wait_with_status(cluster, planner_cli, forward)
        # binding: about 4 MB per partition at 1,000 B/s; the replication quota lets whole fetches (up to
        # replica.fetch.max.bytes, 1 MiB) through whenever the rate over its window is below the limit, so it takes
        # far less than 4,000 s but far more than a copy without throttle: measured 55 s (back: 49 s) at load 9-13
        assert time.monotonic() - began > 20
        assert done == _completed()  # ours cleared the throttles, as --verify does once nothing moves
        assert throttle_lines(cluster, TOPIC) == []
        rc, theirs, err = reassign_tool(cluster, "--verify", "--reassignment-json-file", forward)
        assert (rc, theirs, err) == (0, _completed(), "")
        assert planner_cli("reassign", "verify", cluster.url, "--reassignment-json-file", forward, "--exit-code") == (
            0,
            _completed().split("\n\n")[0] + "\n\n",
            "",
        )
        assert state(cluster, TOPIC) == {0: ([1, 3], 1), 1: ([2, 4], 2)}

        # back: our submit at the same throttle; checked at once (ours first), then Kafka's --verify until complete
        began = time.monotonic()
        code, out, err = planner_cli(
            "kafka", "submit", cluster.url, "--reassignment-json-file", back, "--execute", "--throttle", str(THROTTLE),
            "--rollback-file", str(tmp_path / "rollback.json"),
        )  # fmt: skip
        assert code == 0, err
        assert out.endswith(
            f"The inter-broker throttle limit was set to {THROTTLE} B/s\n"
            f"Successfully started partition reassignments for {TOPIC}-0,{TOPIC}-1\n"
        )
        _checked_while_moving(cluster, planner_cli, back, ours_first=True)
        assert throttle_lines(cluster, TOPIC) == _throttles("0:1,0:3,1:2,1:4", "0:2,1:1")
        theirs = verify_until_done(cluster, Path(back), timeout=300.0)
        assert time.monotonic() - began > 20
        assert theirs == _completed()
        assert throttle_lines(cluster, TOPIC) == []
        assert planner_cli("kafka", "status", cluster.url, "--reassignment-json-file", back, "--exit-code") == (
            0,
            _completed(),
            "",
        )
        assert state(cluster, TOPIC) == {0: ([1, 2], 1), 1: ([2, 1], 2)}
    finally:  # whatever failed: nothing left moving or throttled for the next tests
        for plan in (forward, back):
            reassign_tool(cluster, "--cancel", "--reassignment-json-file", plan)
        deadline = time.monotonic() + 60
        while reassign_tool(cluster, "--list")[1] != "No partition reassignments found.\n":
            assert time.monotonic() < deadline
            time.sleep(0.5)
        cluster.delete_topics(TOPIC)
