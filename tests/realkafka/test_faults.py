"""Faults on the real KRaft cluster (issue 29, part 4; issue 32's exit codes): a broker killed (SIGKILL) while a
reassignment kept slow by a 1 B/s throttle runs, read by `kafka status` and by Kafka 4.4.0's
`kafka-reassign-partitions.sh --verify`; what `describe --offline-brokers` predicted for it from the topology
exported before; a plan onto the dead broker (Kafka's tool against `kafka submit`); the reassignment resumed when the
broker is back, then rolled back with the rollback JSON; a cancelled reassignment; a wrong SASL password.

One broker is stopped and started once for the whole module (each costs 10-20 s); it is started again in `finally`
because the session shares one cluster."""

from __future__ import annotations

import json
import os
import time

import pytest
import yaml
from realkafka.plan_steps import state, throttle_lines
from realkafka.real_cluster import PRODUCER_PERF, REASSIGN, SCRAM_PASSWORD, TOPICS

PREFIX = "test_faults-"
MOVE = PREFIX + "move"  # partition 0 moves 1,2 -> 3,4 at 1 B/s while broker 4 dies
SPREAD = PREFIX + "spread"  # broker 4 as leader, follower, only replica; min.insync.replicas=1
ONE = PREFIX + "one"  # broker 4 the only replica
MIN2 = PREFIX + "min2"  # the same with min.insync.replicas=2: KIP-966's ELR fills
CANCEL = PREFIX + "cancel"
DEAD = 4
TOPICS_RE = f"{SPREAD}|{ONE}|{MIN2}"


def _reassign(cluster, *args: str) -> tuple[int, str, str]:
    return cluster.run_tool(REASSIGN, "--bootstrap-server", cluster.bootstrap, *args)


def _json(path, moves: list[tuple[str, int, list[int]]]) -> str:
    path.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves]})
    )
    return str(path)


def _produce(cluster, topic: str) -> None:
    rc, _, err = cluster.run_tool(
        PRODUCER_PERF, "--topic", topic, "--num-records", "400", "--record-size", "1000", "--throughput", "-1",
        "--producer-props", f"bootstrap.servers={cluster.bootstrap}", "acks=all",
    )  # fmt: skip
    assert rc == 0, err


def _describe_tool(cluster, *args: str) -> str:
    rc, out, err = cluster.run_tool(TOPICS, "--bootstrap-server", cluster.bootstrap, "--describe", *args)
    assert rc == 0, err
    return out


def _wait_until(check, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def _no_reassignment(cluster) -> bool:
    return _reassign(cluster, "--list")[1] == "No partition reassignments found.\n"


@pytest.fixture(scope="module")
def topics(real_kafka):
    real_kafka.create_topic(MOVE, [[1, 2], [2, 3]])
    real_kafka.create_topic(SPREAD, [[4, 1, 2], [1, 4, 3], [2, 3, 1], [4, 3, 2]])
    real_kafka.create_topic(ONE, [[4], [2]])
    real_kafka.create_topic(MIN2, [[4, 1], [1, 4], [2, 3]], {"min.insync.replicas": "2"})
    real_kafka.create_topic(CANCEL, [[1, 2]])
    yield real_kafka
    real_kafka.delete_topics(MOVE, SPREAD, ONE, MIN2, CANCEL)


def test_broker_killed_mid_reassignment(topics, planner_cli, tmp_path):
    cluster = topics
    _produce(cluster, MOVE)
    # the twin, before anything fails: what `describe --offline-brokers 4` predicts
    twin = tmp_path / "twin.yaml"
    code, _, err = planner_cli("kafka", "export", cluster.url, "-o", str(twin))
    assert code == 0, err
    code, predicted, err = planner_cli("describe", str(twin), "--offline-brokers", str(DEAD), "--topic", TOPICS_RE)
    assert code == 0, err

    plan = _json(tmp_path / "plan.json", [(MOVE, 0, [3, 4])])
    code, out, err = planner_cli(
        "kafka", "submit", cluster.url, "--reassignment-json-file", plan, "--throttle", "1", "--execute"
    )
    assert code == 0, err
    rollback = plan + ".rollback.json"
    try:
        _killed_resumed_rolled_back(cluster, planner_cli, tmp_path, plan, rollback, predicted)
    finally:  # whatever failed: nothing left moving for the next tests
        if not _no_reassignment(cluster):
            _reassign(cluster, "--cancel", "--reassignment-json-file", plan)
            _wait_until(lambda: _no_reassignment(cluster), "still reassigning")


def _killed_resumed_rolled_back(cluster, planner_cli, tmp_path, plan: str, rollback: str, predicted: str) -> None:
    try:
        cluster.stop_broker(DEAD, kill=True)
        # the controller fences the broker (session timeout 6 s) and takes it out of every ISR at once
        admin = cluster.admin()
        try:
            _wait_until(
                lambda: all(
                    DEAD not in p["isr_nodes"]
                    for t in admin.describe_topics([SPREAD, ONE, MIN2])
                    for p in t["partitions"]
                ),
                "broker 4 still in an ISR",
            )
        finally:
            admin.close()
        code, ours, err = planner_cli("describe", cluster.url, "--topic", TOPICS_RE)
        assert code == 0, err
        theirs = _describe_tool(cluster, "--topic", TOPICS_RE)
        assert ours == theirs
        # leaders, ISR and ELR as predicted, byte for byte (KIP-966, on by default for new 4.1+ clusters): the
        # fenced replica goes to the ELR where the ISR falls below min.insync.replicas, and a partition with no ISR
        # member left has an empty ISR with it in Elr and, as its last leader, in LastKnownElr
        # (PartitionChangeBuilder.maybePopulateTargetElr, maybeUpdateLastKnownLeader). SIGKILL or a clean stop end
        # alike while the broker is down (handleBrokerFenced and handleBrokerInControlledShutdown both take it out
        # of the ISRs as `brokerToRemove`); only its restart after an unclean shutdown differs (it leaves the ELRs,
        # handleBrokerUncleanShutdown), and the prediction is of the cluster while it is down.
        assert theirs == predicted
        # a twin built from that capture has broker 4 down as the Admin API reads it: fenced (registered, not
        # active), found as the ELR member of the leaderless one-0 (KIP-966 leaves its ISR empty)
        (tmp_path / "describe.txt").write_text(theirs)
        racks = ",".join(f"{b}:{r}" for b, r in cluster.brokers.items())
        code, twin, err = planner_cli("twin", "--describe", str(tmp_path / "describe.txt"), "--racks", racks, "-q")
        assert code == 0, err
        code, exported, err = planner_cli("kafka", "export", cluster.url)
        assert code == 0, err
        assert (
            [(b["id"], b["rack"], b.get("state", "online")) for b in yaml.safe_load(twin)["brokers"]]
            == [(b["id"], b["rack"], b.get("state", "online")) for b in yaml.safe_load(exported)["brokers"]]
            == [(1, "rack-a", "online"), (2, "rack-b", "online"), (3, "rack-c", "online"), (4, "rack-a", "fenced")]
        )
        assert f"\tTopic: {ONE}\tPartition: 0\tLeader: none\tReplicas: 4\tIsr: \tElr: 4\tLastKnownElr: 4\n" in theirs
        assert f"\tTopic: {MIN2}\tPartition: 0\tLeader: 1\tReplicas: 4,1\tIsr: 1\tElr: 4\tLastKnownElr: \n" in theirs
        assert (
            f"\tTopic: {SPREAD}\tPartition: 3\tLeader: 3\tReplicas: 4,3,2\tIsr: 3,2\tElr: \tLastKnownElr: \n" in theirs
        )

        # the reassignment onto the dead broker is still in progress: Kafka's --verify and ours agree
        rc, their_status, err = _reassign(cluster, "--verify", "--reassignment-json-file", plan)
        code, our_status, our_err = planner_cli("kafka", "status", cluster.url, "--reassignment-json-file", plan)
        assert (rc, code, our_err) == (0, 0, "")
        assert (
            our_status
            == their_status
            == (f"Status of partition reassignment:\nReassignment of partition {MOVE}-0 is still in progress.\n\n")
        )
        code, _, _ = planner_cli("kafka", "status", cluster.url, "--reassignment-json-file", plan, "--exit-code")
        assert code == 3

        # a plan onto the dead broker: Kafka's tool refuses it before the controller sees it (verifyBrokerIds: the
        # fenced broker is not in DescribeCluster), and so does `kafka submit`, with the same text
        onto = _json(tmp_path / "onto.json", [(MOVE, 1, [4, 3])])
        rc, their_refusal, err = _reassign(
            cluster, "--execute", "--additional", "--reassignment-json-file", onto, "--throttle", "1"
        )
        assert (rc, their_refusal.splitlines()[0]) == (1, "Error: Unknown broker id 4")
        code, out, err = planner_cli(
            "kafka", "submit", cluster.url, "--reassignment-json-file", onto, "--additional", "--execute"
        )
        assert (code, out, err) == (2, "", "error: Unknown broker id 4\n")
        assert state(cluster, MOVE)[1] == ([2, 3], 2)
    finally:
        cluster.start_broker(DEAD)
    # resumed: broker 4 back, the copy goes on; resubmitted with a higher throttle (--additional), it completes
    code, out, err = planner_cli(
        "kafka", "submit", cluster.url, "--reassignment-json-file", plan, "--additional", "--throttle", "100000000",
        "--execute", "--rollback-file", str(tmp_path / "again.json"), "--wait", "--poll", "0.5",
    )  # fmt: skip
    assert code == 0, err
    # the rollback of a resubmission in progress names the adding replicas too (Kafka's own current assignment)
    assert '"partition":0,"replicas":[3,4,1,2],' in out
    done = (
        f"Status of partition reassignment:\nReassignment of partition {MOVE}-0 is completed.\n\n"
        "Clearing broker-level throttles on brokers 1,2,3,4\n"
        f"Clearing topic-level throttles on topic {MOVE}\n"
    )
    assert out.endswith(done)
    rc, their_status, err = _reassign(cluster, "--verify", "--reassignment-json-file", plan)
    code, our_status, our_err = planner_cli("kafka", "status", cluster.url, "--reassignment-json-file", plan)
    assert (rc, code, our_err, our_status, their_status) == (0, 0, "", done, done)
    assert (state(cluster, MOVE), throttle_lines(cluster, MOVE)) == ({0: ([3, 4], 3), 1: ([2, 3], 2)}, [])
    # rolled back with the rollback JSON written before anything changed
    assert json.loads(open(rollback).read())["partitions"] == [
        {"topic": MOVE, "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}
    ]
    code, out, err = planner_cli(
        "kafka", "submit", cluster.url, "--reassignment-json-file", rollback, "--execute", "--wait", "--poll", "0.5",
        "--rollback-file", str(tmp_path / "back.json"),
    )  # fmt: skip
    assert code == 0, err
    _wait_until(lambda: state(cluster, MOVE)[0][1] == 1, "leader 1 not back")  # the rollback moves the leader
    assert (state(cluster, MOVE), throttle_lines(cluster, MOVE)) == ({0: ([1, 2], 1), 1: ([2, 3], 2)}, [])


def test_cancelled_reassignment(topics, planner_cli, tmp_path):
    """Kafka's --cancel, then our `kafka cancel --execute` on the same reassignment started again: the same text
    (the tool's missing line break after "active." included) and the same end: the original replicas, no throttle."""
    cluster = topics
    _produce(cluster, CANCEL)
    plan = _json(tmp_path / "plan.json", [(CANCEL, 0, [3, 4])])
    texts = {}
    for who in ("kafka", "planner"):
        rc, out, err = _reassign(cluster, "--execute", "--reassignment-json-file", plan, "--throttle", "1")
        assert rc == 0, err + out
        assert state(cluster, CANCEL)[0][0] == [3, 4, 1, 2]  # adding 3,4: in progress
        if who == "kafka":
            texts[who] = _reassign(cluster, "--cancel", "--reassignment-json-file", plan)
        else:
            texts[who] = planner_cli("kafka", "cancel", cluster.url, "--reassignment-json-file", plan, "--execute")
        _wait_until(lambda: _no_reassignment(cluster), "still reassigning")
        assert (state(cluster, CANCEL), throttle_lines(cluster, CANCEL)) == ({0: ([1, 2], 1)}, []), who
    assert (
        texts["kafka"]
        == texts["planner"]
        == (
            0,
            f"Successfully cancelled partition reassignment for: {CANCEL}-0\n"
            "None of the specified partition moves are active."
            "Clearing broker-level throttles on brokers 1,2,3,4\n"
            f"Clearing topic-level throttles on topic {CANCEL}\n",
            "",
        )
    )


def test_wrong_sasl_password(topics, planner_cli, tmp_path):
    """A wrong SCRAM password on the SASL_SSL listener: one line, exit 1 (the cluster refused), the password in no
    output; Kafka's tool says `invalid credentials` too."""
    cluster = topics
    wrong = "wrong-" + SCRAM_PASSWORD + "-x9"
    bad = tmp_path / "bad.properties"
    bad.write_text(cluster.command_config.read_text().replace(SCRAM_PASSWORD, wrong))
    expected = (
        f"error: {cluster.sasl_url}: SASL authentication failed (Authentication failed during authentication due "
        f"to invalid credentials): check the user and password in sasl.jaas.config of --command-config {bad}\n"
    )
    plan = _json(tmp_path / "plan.json", [(CANCEL, 0, [1, 2])])
    env = {**os.environ, "KAFKA_PLANNER_KAFKA_COMMAND_CONFIG": str(bad), "KAFKA_PLANNER_KAFKA_TIMEOUT": "5"}
    for args in (
        ["kafka", "export", cluster.sasl_url, "--command-config", str(bad), "--timeout", "5"],
        ["kafka", "status", cluster.sasl_url, "--command-config", str(bad), "--reassignment-json-file", plan],
        ["describe", cluster.sasl_url],  # no --command-config: the environment's
    ):
        code, out, err = planner_cli(*args, env=env)
        said = (
            expected
            if args[0] == "kafka"
            else expected.replace("--command-config", "$KAFKA_PLANNER_KAFKA_COMMAND_CONFIG")
        )
        assert (code, out, err) == (1, "", said), args
        assert wrong not in out + err and SCRAM_PASSWORD not in out + err
    rc, out, err = cluster.run_tool(
        TOPICS, "--bootstrap-server", cluster.sasl_bootstrap, "--command-config", str(bad), "--list", timeout=60
    )
    assert (rc, out) == (
        1,
        "Error while executing topic command : Authentication failed during authentication due to invalid "
        "credentials with SASL mechanism SCRAM-SHA-512\n",
    )
