"""`kafka-planner kafka submit / status / cancel / elect-leaders / export` against the fake KRaft cluster: Kafka's
texts (ReassignPartitionsCommand, LeaderElectionCommand), the throttles as IncrementalAlterConfigs sets them, the
rollback JSON written before anything changes, batches with --wait, Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Iterator

from fake_cluster import run_here

PLAN = {
    "version": 1,
    "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [3, 2]},
        {"topic": "orders", "partition": 1, "replicas": [1, 3]},
    ],
}
ROLLBACK = (
    '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
    '{"topic":"orders","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}'
)
CURRENT = (  # as Kafka 4.4's --execute prints it: each replica's log dir (the fake cluster's one dir per broker)
    "Current partition replica assignment\n\n"
    + ROLLBACK.replace('"any"', '"/var/lib/kafka/data"')
    + "\n\nSave this to use as the --reassignment-json-file option during rollback\n"
)


def _plan(tmp_path, plan=PLAN, name="plan.json"):
    path = tmp_path / name
    path.write_text(json.dumps(plan))
    return str(path)


def _throttles(kraft):
    return (
        {b: dict(c) for b, c in kraft.broker_configs.items() if c},
        {n: {k: v for k, v in t.configs.items() if "throttled" in k} for n, t in kraft.topics.items()},
    )


def test_submit_dry_run_changes_nothing(kraft, tmp_path):
    plan = _plan(tmp_path)
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--throttle", "1000")
    assert (code, err) == (0, "")
    assert out == CURRENT + (
        "Dry run: would start the reassignment of 2 partitions with a throttle of 1000 B/s. "
        "Nothing was changed; add --execute to start it.\n"
    )
    assert not os.path.exists(plan + ".rollback.json")
    assert _throttles(kraft) == ({}, {"orders": {}, "payments": {}})
    assert kraft.partition("orders", 0).replicas == [1, 2]
    kraft.topics["orders"].configs["remote.storage.enable"] = "true"
    kraft.brokers[3].cordoned = ("/var/lib/kafka/data",)
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan)
    assert (code, out) == (2, "")
    assert err == (
        "error: the plan adds replicas of orders-0 to broker(s) 3, whose log dirs are all cordoned "
        "(cordoned.log.dirs, KIP-1066): Kafka's controller refuses that (INVALID_REPLICA_ASSIGNMENT). Plan again "
        "from the live cluster (plans leave cordoned brokers out) or uncordon the broker(s). Nothing was changed.\n"
    )
    kraft.brokers[3].cordoned = ()
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan)
    assert err == (
        "note: remote.storage.enable=true on orders: only local log segments move in a reassignment (the "
        "bytes DescribeLogDirs reports); tiered segments stay in remote storage\n"
    )


def test_submit_warns_when_the_copies_would_fill_a_brokers_disks(kraft, tmp_path):
    # broker 3 holds 5,500 B (orders-1, orders-2, payments-0); with 6,100 B in all it reports 600 B usable, and the
    # plan copies orders-0 (1,000 B) there; broker 1 (1 TiB) takes orders-1 without a word
    kraft.brokers[3].total_bytes = 6100
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", _plan(tmp_path))
    assert code == 0
    assert err == (
        "warning: broker 3 would receive 1000 B of new replicas but its log dirs report 600 B usable "
        "(DescribeLogDirs): the copies would fill its disks\n"
    )
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", _plan(tmp_path), "--quiet")
    assert (code, err) == (0, "")


def test_submit_counts_no_usable_bytes_of_a_cordoned_log_dir(kraft, tmp_path):
    # broker 3's second dir is empty (6,100 B usable) but cordoned: new replicas cannot go there (KIP-1066), so the
    # 1,000 B copied to broker 3 meet only the 600 B of its first dir, as the plans count them
    kraft.brokers[3].total_bytes = 6100
    kraft.brokers[3].log_dirs = ("/var/lib/kafka/data", "/var/lib/kafka/data2")
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", _plan(tmp_path))
    assert (code, err) == (0, "")
    kraft.brokers[3].cordoned = ("/var/lib/kafka/data2",)
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", _plan(tmp_path))
    assert code == 0
    assert err == (
        "warning: broker 3 would receive 1000 B of new replicas but its log dirs report 600 B usable "
        "(DescribeLogDirs): the copies would fill its disks\n"
    )


def test_submit_execute_throttles_status_and_clearing(kraft, tmp_path):
    plan = _plan(tmp_path)
    code, out, err = run_here(
        "kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--throttle", "1000", "--execute"
    )
    assert code == 0, err
    assert out == CURRENT + (
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed.\nThe inter-broker throttle limit was set to 1000 B/s\n"
        "Successfully started partition reassignments for orders-0,orders-1\n"
    )
    assert err == f"wrote the rollback JSON to {plan}.rollback.json\n"
    with open(plan + ".rollback.json", encoding="utf-8") as fh:
        assert fh.read() == ROLLBACK + "\n"
    rates = {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "1000"}
    # calculateLeaderThrottles / calculateFollowerThrottles: sources as leaders, new replicas as followers
    assert _throttles(kraft) == (
        {"1": rates, "2": rates, "3": rates},
        {
            "orders": {
                "leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3",
                "follower.replication.throttled.replicas": "0:3,1:1",
            },
            "payments": {},
        },
    )
    assert (kraft.partition("orders", 0).replicas, kraft.partition("orders", 0).adding) == ([3, 2, 1], [3])

    code, out, err = run_here(
        "kafka",
        "submit",
        kraft.url,
        "--reassignment-json-file",
        plan,
        "--execute",
        "--rollback-file",
        str(tmp_path / "second.json"),
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: Cannot execute because there is an existing partition assignment.  Use --additional to "
        "override this and create a new partition assignment in addition to the existing one. The "
        "--additional flag can also be used to change the throttle by resubmitting the current "
        "reassignment.\n"
    )
    assert not (tmp_path / "second.json").exists()
    code, out, err = run_here(
        "kafka",
        "submit",
        kraft.url,
        "--reassignment-json-file",
        plan,
        "--execute",
        "--additional",
        "--rollback-file",
        "/proc/no/such/dir/rollback.json",
    )
    assert (code, err) == (
        2,
        "error: --rollback-file /proc/no/such/dir/rollback.json: cannot write: No such file or "
        "directory. Nothing was changed.\n",
    )

    code, out, err = run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan)
    assert (code, out, err) == (
        0,
        "Status of partition reassignment:\n"
        "Reassignment of partition orders-0 is still in progress.\n"
        "Reassignment of partition orders-1 is still in progress.\n"
        "\n",  # verifyReplicaMoves' println of no log-dir moves (ReassignPartitionsCommand.java)
        "",
    )
    kraft.step(1000)  # orders-0 (1000 bytes) done, orders-1 (2000) half way
    code, out, err = run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan)
    assert out == (
        "Status of partition reassignment:\nReassignment of partition orders-0 is completed.\n"
        "Reassignment of partition orders-1 is still in progress.\n\n"
    )
    kraft.step(1000)
    code, out, err = run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan)
    assert (code, err) == (0, "")
    assert out == (
        "Status of partition reassignment:\nReassignment of partition orders-0 is completed.\n"
        "Reassignment of partition orders-1 is completed.\n\n"
        "Clearing broker-level throttles on brokers 1,2,3\n"
        "Clearing topic-level throttles on topic orders\n"
    )
    assert _throttles(kraft) == ({}, {"orders": {}, "payments": {}})
    assert kraft.partition("orders", 1).replicas == [1, 3]


def test_cancel_reverts_and_clears_throttles(kraft, tmp_path):
    plan = _plan(tmp_path)
    assert (
        run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--throttle", "500", "--execute")[0]
        == 0
    )
    code, out, _ = run_here("kafka", "cancel", kraft.url, "--reassignment-json-file", plan)
    assert out == (
        "Dry run: would cancel the reassignment of orders-0,orders-1. Nothing was changed; add --execute to cancel.\n"
    )
    code, out, err = run_here("kafka", "cancel", kraft.url, "--reassignment-json-file", plan, "--execute")
    assert (code, err) == (0, "")
    assert out == (
        "Successfully cancelled partition reassignments for: orders-0,orders-1\n"
        "None of the specified partition moves are active.Clearing broker-level throttles on brokers "
        "1,2,3\nClearing topic-level throttles on topic orders\n"
    )
    # PartitionReassignmentRevert: the original replicas (in the reassignment's order), no adding/removing
    assert [(p.replicas, p.adding, p.removing) for p in kraft.topics["orders"].partitions[:2]] == [
        ([2, 1], [], []),
        ([3, 2], [], []),
    ]
    assert _throttles(kraft) == ({}, {"orders": {}, "payments": {}})
    code, out, err = run_here(
        "kafka", "cancel", kraft.url, "--reassignment-json-file", plan, "--execute", "--preserve-throttles"
    )
    assert out == (
        "None of the specified partition reassignments are active.\nNone of the specified partition moves are active.\n"
    )


def test_elect_leaders(kraft, tmp_path):
    kraft.partition("orders", 2).leader = 1
    kraft.partition("orders", 1).leader = 3
    kraft.partition("orders", 1).isr = [3]
    path = tmp_path / "elect.json"
    path.write_text(json.dumps({"partitions": [{"topic": "orders", "partition": p} for p in (0, 1, 2)]}))
    code, out, err = run_here("kafka", "elect-leaders", kraft.url, "--path-to-json-file", str(path))
    # the dry run says which elections the controller will refuse: orders-1's preferred replica 2 is not in its ISR
    assert out == (
        "Dry run: 3 partition(s), 2 not led by their preferred replica (orders-1,orders-2); orders-1 would fail: "
        "the preferred replica is not alive and in the ISR (PREFERRED_LEADER_NOT_AVAILABLE). Nothing was "
        "changed; add --execute to elect.\n"
    )
    code, out, err = run_here("kafka", "elect-leaders", kraft.url, "--path-to-json-file", str(path), "--execute")
    assert (code, err) == (2, "error: 1 replica(s) could not be elected\n")
    assert out == (
        "Successfully completed leader election (PREFERRED) for partitions orders-2\n"
        "Valid replica already elected for partitions orders-0\n"
        "Error completing leader election (PREFERRED) for partition: orders-1: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was "
        "not available.\n"
    )
    assert kraft.partition("orders", 2).leader == 3
    # payments-0's preferred replica 2 fenced (in the ISR, not alive), orders-9 not in the cluster
    kraft.partition("payments", 0).leader = 1
    kraft.brokers[2].fenced = True
    path.write_text(
        json.dumps({"partitions": [{"topic": "payments", "partition": 0}, {"topic": "orders", "partition": 9}]})
    )
    code, out, err = run_here("kafka", "elect-leaders", kraft.url, "--path-to-json-file", str(path))
    assert (code, err) == (0, "")
    assert out == (
        "Dry run: 2 partition(s), 1 not led by their preferred replica (payments-0); payments-0 would fail: "
        "the preferred replica is not alive and in the ISR (PREFERRED_LEADER_NOT_AVAILABLE); orders-9 would "
        "fail: no such partition (UNKNOWN_TOPIC_OR_PARTITION). Nothing was changed; add --execute to elect.\n"
    )


def test_export_writes_sizes(kraft, tmp_path):
    out_file = tmp_path / "live.yaml"
    code, out, err = run_here("kafka", "export", kraft.url, "-o", str(out_file))
    assert (code, out, err) == (0, "", f"wrote {out_file}: 3 brokers, 2 topics, 4 partitions\n")
    code, out, err = run_here("describe", str(out_file), "--topic", "payments")
    assert out.startswith("Topic: payments\tTopicId: AAAAAAAAAAAAAAAAAAAiIg\tPartitionCount: 1")
    text = out_file.read_text()
    assert "sizes" in text and "3000" in text
    # DescribeLogDirs v4+: broker 1 holds 4,500 B (orders-0, orders-2, payments-0) of its 1 TiB
    assert (
        "  - {id: 1, rack: a, host: 127.0.0.1, port: %d, usable_bytes: 1099511623276, total_bytes: 1099511627776}\n"
        % (kraft.brokers[1].port)
        in text
    )


def _start(args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_PLANNER_KAFKA_")}
    return subprocess.Popen(
        [sys.executable, "-m", "planner", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


@contextlib.contextmanager
def _catching_up(kraft, step: int) -> Iterator[None]:
    """While the block runs, the fake's replicas catch up by `step` bytes each time the command looks
    (DescribeLogDirs, key 35)."""
    finished = threading.Event()

    def drive() -> None:
        seen = 0
        while not finished.wait(0.02):
            polls = sum(1 for key, _ in list(kraft.requests) if key == 35)
            if polls > seen:
                seen = polls
                kraft.step(step)

    driver = threading.Thread(target=drive)
    driver.start()
    try:
        yield
    finally:
        finished.set()
        driver.join()


def test_batches_wait_with_progress_then_verify(kraft, tmp_path):
    plan = _plan(tmp_path)
    # the replicas catch up by 250 bytes each time the command looks, so every poll sees progress however slowly the
    # machine runs
    with _catching_up(kraft, 250):
        code, out, err = run_here(
            "kafka",
            "submit",
            kraft.url,
            "--reassignment-json-file",
            plan,
            "--execute",
            "--batch-size",
            "1",
            "--throttle",
            "100",
            "--poll",
            "0.1",
            "--wait",
        )
    assert code == 0, err
    assert out.count("Successfully started partition reassignment for ") == 2
    assert out.startswith("Batch 1/2: 1 partition\n")
    assert "\nBatch 2/2: 1 partition\n" in out
    assert out.endswith(
        "Status of partition reassignment:\nReassignment of partition orders-0 is completed.\n"
        "Reassignment of partition orders-1 is completed.\n\n"
        "Clearing broker-level throttles on brokers 1,2,3\n"
        "Clearing topic-level throttles on topic orders\n"
    )
    progress = [line for line in err.splitlines() if "copied" in line]
    assert progress and progress[0].startswith("batch 1/2: [") and " 1 partition moving, " in progress[0]
    assert any(" of 2.0 KiB copied (" in line and "ETA" in line for line in progress), progress
    assert [(p.replicas, p.adding) for p in kraft.topics["orders"].partitions[:2]] == [([3, 2], []), ([1, 3], [])]


def test_a_replication_factor_change_in_batches_runs_through(kraft, tmp_path):
    # orders RF 2 -> 3 one partition per batch: between batches the topic's partitions differ in replication factor
    # (legal in Kafka), and each batch's read of the cluster must take that
    out_dir = tmp_path / "rf"
    code, out, err = run_here(
        "reassign", "set-replication-factor", kraft.url, "--topic", "orders", "--replication-factor", "3",
        "--output-dir", str(out_dir), "--batch-size", "1",
    )  # fmt: skip
    assert code == 0, err
    files = [str(out_dir / f"proposed-00{i}.json") for i in (1, 2, 3)]
    argv = [a for f in files for a in ("--reassignment-json-file", f)]
    with _catching_up(kraft, 5000):
        code, out, err = run_here("kafka", "submit", kraft.url, *argv, "--poll", "0.05", "--execute", "--quiet")
    assert (code, err) == (0, f"wrote the rollback JSON to {files[0]}.rollback.json\n")
    assert out.count("Successfully started partition reassignment for ") == 3
    assert [len(p.replicas) for p in kraft.topics["orders"].partitions] == [3, 3, 3]
    kraft.partition("orders", 2).replicas = [3, 1]  # partition 2 back at RF 2: a topic of mixed factors reads
    kraft.partition("orders", 2).isr = [3, 1]
    code, out, err = run_here("describe", kraft.url, "--topic", "orders")
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("Topic: orders\tTopicId: AAAAAAAAAAAAAAAAAAAREQ\tPartitionCount: 3\t")
    assert "\tPartition: 2\tLeader: 3\tReplicas: 3,1\tIsr: 3,1\t" in out


def test_ctrl_c_while_waiting_leaves_a_state_cancel_finishes(kraft, tmp_path):
    plan = _plan(tmp_path)
    proc = _start(
        [
            "kafka",
            "submit",
            kraft.url,
            "--reassignment-json-file",
            plan,
            "--execute",
            "--batch-size",
            "1",
            "--poll",
            "0.1",
        ]
    )
    deadline = time.monotonic() + 30
    while not kraft.partition("orders", 0).adding and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert (
        "\ninterrupted: "
        + _where(kraft, plan, "batch 1/2 was submitted and is running on the cluster; batch 2/2 was not started")
        + "error: interrupted\n"
    ) in err
    assert "Traceback" not in err
    assert kraft.partition("orders", 0).adding == [3] and kraft.partition("orders", 1).adding == []
    code, out, err = run_here("kafka", "cancel", kraft.url, "--reassignment-json-file", plan, "--execute")
    assert out.startswith("Successfully cancelled partition reassignment for: orders-0\n")
    assert kraft.partition("orders", 0).replicas == [2, 1]


def test_status_and_cancel_take_a_plans_batch_files_as_submit_does(kraft, tmp_path):
    # the interrupted-submit message names every batch file for status and cancel: each must read them all (before,
    # the last one given won, and cancel left batch 1 moving while it said none was active)
    b1 = _plan(tmp_path, {"version": 1, "partitions": PLAN["partitions"][:1]}, "proposed-001.json")
    b2 = _plan(tmp_path, {"version": 1, "partitions": PLAN["partitions"][1:]}, "proposed-002.json")
    code, out, err = run_here("kafka", "submit", kraft.url, "--reassignment-json-file", b1, "--execute", "--quiet")
    assert code == 0, err
    both = ("--reassignment-json-file", b1, "--reassignment-json-file", b2)
    code, out, err = run_here("kafka", "status", kraft.url, *both)
    assert (code, err) == (0, "")
    assert out == (
        "Status of partition reassignment:\nReassignment of partition orders-0 is still in progress.\n"
        "There is no active reassignment of partition orders-1, but replica set is 2,3 rather than 1,3.\n\n"
    )
    code, out, err = run_here("kafka", "cancel", kraft.url, *both, "--execute")
    assert (code, err) == (0, "")
    assert out == (
        "Successfully cancelled partition reassignment for: orders-0\n"
        "None of the specified partition moves are active.Clearing broker-level throttles on brokers 1,2,3\n"
        "Clearing topic-level throttles on topic orders\n"
    )
    assert (kraft.partition("orders", 0).replicas, kraft.partition("orders", 0).adding) == ([2, 1], [])


def test_jbod_log_dirs_moved_with_alter_replica_log_dirs(tmp_path):
    from fake_cluster import FakeBroker, FakeCluster

    with FakeCluster([FakeBroker(1, "a", log_dirs=("/d1", "/d2")), FakeBroker(2, "b")]) as cluster:
        cluster.add_topic("t", [[1, 2]], sizes=[100])
        plan = _plan(
            tmp_path,
            {
                "version": 1,
                "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d2", "any"]}],
            },
        )
        code, out, err = run_here("kafka", "submit", cluster.url, "--reassignment-json-file", plan, "--execute")
        assert code == 0, err
        assert out.endswith(
            "Successfully started partition reassignment for t-0\n"
            "Successfully started moving log directory to /d2 for replica t-0 with broker 1 \n"
        )
        code, out, err = run_here("kafka", "status", cluster.url, "--reassignment-json-file", plan)
        assert out == (
            "Status of partition reassignment:\nReassignment of partition t-0 is completed.\n"
            "Reassignment of replica t-0-1 is still in progress.\n"
        )
        cluster.step(100)
        code, out, err = run_here("kafka", "status", cluster.url, "--reassignment-json-file", plan)
        assert out == (
            "Status of partition reassignment:\nReassignment of partition t-0 is completed.\n"
            "Reassignment of replica t-0-1 completed successfully.\n"
            "Clearing broker-level throttles on brokers 1,2\nClearing topic-level throttles on topic t\n"
        )
        assert cluster.partition("t", 0).dirs[1] == "/d2"


def test_plans_from_a_live_cluster_use_its_sizes_and_note_tiered_storage():
    from fake_cluster import FakeBroker, FakeCluster

    brokers = [FakeBroker(1, "a"), FakeBroker(2, "b"), FakeBroker(3, "c"), FakeBroker(4, "d")]
    with FakeCluster(brokers) as cluster:
        cluster.add_topic(
            "orders",
            [[1, 2], [2, 3], [3, 1], [1, 2], [2, 3], [3, 1]],
            sizes=[1 << 30] * 6,
            configs={"remote.storage.enable": "true"},
        )
        code, out, err = run_here("reassign", "rebalance", cluster.url)
    assert code == 0, err
    assert (
        "note: remote.storage.enable=true on orders: only local log segments move (the sizes are local bytes); "
        "tiered segments stay in remote storage" in out
    )
    assert "GiB" in out  # byte figures from DescribeLogDirs, without a --sizes file


def test_progress_bar_of_bytes_copied_with_eta():
    from planner.adapters.kafka.steps import Progress
    from planner.cli.kafkacmd import progress_line

    assert progress_line(2, 2, Progress(1, 75 * 10**7, 2 * 10**9, 75 * 10**7, 1.5)) == (
        "batch 2/2: [███████▌            ] 1 partition moving, 715.3 MiB of 1.9 GiB copied (38%), 476.8 MiB/s, ETA 2 s"
    )
    assert progress_line(1, 3, Progress(2, 0, 0, 0, 0.0)) == (
        "batch 1/3: [████████████████████] 2 partitions moving, 0 B of 0 B copied (100%)"
    )


def test_split_batches_cuts_one_file_in_partition_order():
    from planner.adapters.kafka.steps import split_batches
    from planner.model import TopicPartition as TP

    moves = {TP("b", 0): (1, 2), TP("a", 10): (2, 3), TP("a", 2): (3, 1)}
    log_dirs = {(TP("a", 10), 2): "/d1", (TP("b", 0), 1): "/d2"}
    assert split_batches([(moves, log_dirs)], 2) == [
        ({TP("a", 2): (3, 1), TP("a", 10): (2, 3)}, {(TP("a", 10), 2): "/d1"}),
        ({TP("b", 0): (1, 2)}, {(TP("b", 0), 1): "/d2"}),
    ]
    assert split_batches([(moves, log_dirs)], None) == [(moves, log_dirs)]
    two = [(moves, {}), ({TP("c", 0): (1,)}, {})]
    assert split_batches(two, 1) == two  # a plan's batch files are submitted as they are


def _where(kraft, plan, running: str) -> str:
    """The end of the message of a batched submission that stopped once something changed."""
    return (
        f"{running}; 'kafka-planner kafka status {kraft.url} --reassignment-json-file {plan}' shows where it stands "
        f"(and clears the throttles once nothing moves), 'kafka-planner kafka cancel {kraft.url} "
        f"--reassignment-json-file {plan} --execute' reverts what is still moving; the rollback JSON of the whole "
        f"plan is in {plan}.rollback.json\n"
    )


def _submit_one_a_batch(kraft, tmp_path, before_alter):
    """`kafka submit --execute` of `_plan` one partition a batch, throttled, the fake's replicas catching up, with
    `before_alter` called before each AlterPartitionReassignments: (the plan's path, (exit code, stdout, stderr))."""
    kraft.before_alter = before_alter
    plan = _plan(tmp_path)
    with _catching_up(kraft, 5000):
        return plan, run_here(
            "kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--batch-size", "1", "--throttle", "1000",
            "--poll", "0.05", "--execute", "--quiet",
        )  # fmt: skip


def test_a_batch_refused_after_an_earlier_one_completed_says_what_changed(kraft, tmp_path):
    # batch 2 (orders-1 [2,3] -> [1,3]) refused by the controller, broker 1 cordoned once batch 1 (orders-0 [1,2] ->
    # [3,2]) completed. Before, the message ended "Nothing was changed." with orders-0 moved and batch 1's throttles
    # still on the cluster, and named no command to clear them
    calls = []

    def cordon_broker_1_at_batch_2():
        calls.append(1)
        if len(calls) == 2:
            kraft.brokers[1].cordoned = ("*",)

    plan, (code, out, err) = _submit_one_a_batch(kraft, tmp_path, cordon_broker_1_at_batch_2)
    assert code == 1  # the controller refused (issue 32)
    assert err == f"wrote the rollback JSON to {plan}.rollback.json\n" + (
        "error: Error reassigning partition(s): orders-1: The manual partition assignment includes broker 1, but all "
        "its log directories are cordoned. Nothing of batch 2/2 started: "
        + _where(kraft, plan, "batch 1/2 completed; batch 2/2 was not started")
    )
    assert [p.replicas for p in kraft.topics["orders"].partitions] == [[3, 2], [2, 3], [3, 1]]
    rates = {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "1000"}
    assert _throttles(kraft) == (  # batch 1's, as batch 2 found them (put back after its refusal)
        {"1": rates, "2": rates, "3": rates},
        {
            "orders": {
                "leader.replication.throttled.replicas": "0:1,0:2",
                "follower.replication.throttled.replicas": "0:3",
            },
            "payments": {},
        },
    )
    with open(plan + ".rollback.json", encoding="utf-8") as fh:
        assert fh.read() == ROLLBACK + "\n"  # the whole plan's, kept
    code, out, err = run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan)
    assert (code, err) == (0, "")
    assert out == (
        "Status of partition reassignment:\nReassignment of partition orders-0 is completed.\n"
        "There is no active reassignment of partition orders-1, but replica set is 2,3 rather than 1,3.\n\n"
        "Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic orders\n"
    )
    assert _throttles(kraft) == ({}, {"orders": {}, "payments": {}})


def test_a_fault_while_a_batch_runs_says_where_the_plan_stands(kraft, tmp_path):
    # the cluster stops answering ListPartitionReassignments once batch 1 started (a lost ACL; a broker gone is
    # the same path): before, the one line named the fault only, not the running batch nor status/cancel
    def refuse_reads_from_now_on():
        kraft.fail[46] = 31  # CLUSTER_AUTHORIZATION_FAILED

    kraft.before_alter = refuse_reads_from_now_on
    plan = _plan(tmp_path)
    code, out, err = run_here(
        "kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--batch-size", "1", "--poll", "0.05",
        "--execute", "--quiet",
    )  # fmt: skip
    assert code == 2
    assert out.endswith("Successfully started partition reassignment for orders-0\n")
    assert err == f"wrote the rollback JSON to {plan}.rollback.json\n" + (
        f"error: {kraft.url}: not authorised to list partition reassignments (ClusterAuthorizationFailedError): "
        "grant the client's principal the ACL (Describe/DescribeConfigs on the cluster and topics; Alter/AlterConfigs "
        "to act); "
        + _where(kraft, plan, "batch 1/2 was submitted and is running on the cluster; batch 2/2 was not started")
    )
    assert (kraft.partition("orders", 0).adding, kraft.partition("orders", 1).adding) == ([3], [])


def test_a_later_batch_refused_before_it_is_sent_does_not_say_nothing_changed(kraft, tmp_path):
    # broker 1 cordoned while batch 1 (orders-0 [1,2] -> [3,2]) runs: batch 2 (orders-1 [2,3] -> [1,3]) is refused
    # by the check on the cluster as batch 1 left it, before anything is sent. Before, the check's text ended
    # "Nothing was changed." with orders-0 moved and its throttles set
    calls = []

    def cordon_broker_1_once_batch_1_is_sent():
        calls.append(1)
        kraft.brokers[1].cordoned = ("*",)

    plan, (code, out, err) = _submit_one_a_batch(kraft, tmp_path, cordon_broker_1_once_batch_1_is_sent)
    assert code == 2
    assert out.endswith("Batch 2/2: 1 partition\n")
    assert err == f"wrote the rollback JSON to {plan}.rollback.json\n" + (
        "error: the plan adds replicas of orders-1 to broker(s) 1, whose log dirs are all cordoned (cordoned.log.dirs, "
        "KIP-1066): Kafka's controller refuses that (INVALID_REPLICA_ASSIGNMENT). Plan again from the live cluster "
        "(plans leave cordoned brokers out) or uncordon the broker(s). Batch 2/2 was not submitted: "
        + _where(kraft, plan, "batch 1/2 completed; batch 2/2 was not started")
    )
    assert len(calls) == 1  # batch 2 never reached the controller
    assert [p.replicas for p in kraft.topics["orders"].partitions] == [[3, 2], [2, 3], [3, 1]]


def test_submit_dry_run_prints_the_runbook_of_a_plan_folder(kraft, tmp_path):
    # a plan folder as --output-dir writes it: two batch files, the rollback and the election beside them
    folder = tmp_path / "plan"
    folder.mkdir()
    first = _plan(folder, {"version": 1, "partitions": PLAN["partitions"][:1]}, "proposed-001.json")
    second = _plan(folder, {"version": 1, "partitions": PLAN["partitions"][1:]}, "proposed-002.json")
    (folder / "current.json").write_text(ROLLBACK + "\n")
    (folder / "leader-election.json").write_text('{"partitions":[{"topic":"orders","partition":0}]}\n')
    args = ("kafka", "submit", kraft.url, "--reassignment-json-file", first, "--reassignment-json-file", second)
    code, out, err = run_here(*args, "--throttle", "1.5MB/s", "--dry-run")
    assert (code, err) == (0, "")
    server = kraft.url.removeprefix("kafka://")
    tail = out.split("Nothing was changed; add --execute to start it.\n")[1]
    assert tail == (
        "Dry run: in 2 batches of at most 1 partitions.\n"
        "\n"
        "# 2 partitions in 2 batches, 2.9 KiB; throttle 1500000 B/s, under 1s in all\n"
        "# 1. Batch 1 of 2: 1 partition, 1000 B, under 1s at the throttle\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {first} --execute "
        "--throttle 1500000\n"
        "# 2. Verify batch 1 (Repeat until every partition says `Reassignment of partition … is completed.` "
        "(`is complete.` before 3.3); the last run also clears the throttles.)\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {first} --verify\n"
        "# 3. Batch 2 of 2: 1 partition, 2.0 KiB, under 1s at the throttle\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {second} --execute "
        "--throttle 1500000\n"
        "# 4. Verify batch 2 (Repeat until every partition says `Reassignment of partition … is completed.` "
        "(`is complete.` before 3.3); the last run also clears the throttles.)\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {second} --verify\n"
        "# 5. Elect the preferred leaders (Every partition listed says it was elected or `Valid replica already "
        "elected`.)\n"
        f"kafka-leader-election.sh --bootstrap-server {server} --election-type PREFERRED --path-to-json-file "
        f"{folder / 'leader-election.json'}\n"
        "# rollback: Cancel the batch in progress (here the first; give the file of the batch you executed last)\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {first} --cancel\n"
        "# rollback: Restore the replicas as they were before the first batch\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {folder / 'current.json'} "
        "--execute --throttle 1500000\n"
        "# rollback: Verify the rollback\n"
        f"kafka-reassign-partitions.sh --bootstrap-server {server} --reassignment-json-file {folder / 'current.json'} "
        "--verify\n"
    )
    assert kraft.partition("orders", 0).replicas == [1, 2]  # nothing changed


def test_submit_takes_the_throttle_units_of_the_plans(kraft, tmp_path):
    plan = _plan(tmp_path)
    code, out, err = run_here(
        "kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--throttle", "50mb",
        "--replica-alter-log-dirs-throttle", "50MiB",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out.endswith("with a throttle of 50000000 B/s. Nothing was changed; add --execute to start it.\n")
    assert run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--throttle", "50 furlongs") == (
        2,
        "",
        "error: --throttle '50 furlongs' is not a rate in bytes per second (e.g. 50000000, 50MB, 48MiB, 1.5GB, "
        "100MiB/s; KB, MB, GB, TB: 10^3, 10^6, ...; KiB, MiB, GiB, TiB: 2^10, 2^20, ...)\n",
    )


def test_status_reads_again_while_a_broker_shows_a_completed_reassignment_with_its_old_replicas(
    kraft, tmp_path, monkeypatch
):
    # Kafka's --verify reads the reassignments from the controller and the replica sets from a broker's metadata,
    # which follows a moment later: on a real cluster in CI it printed "There is no active reassignment of partition
    # ..., but replica set is 2,1,4 rather than 2,1." for a reassignment that had just completed, and cleared the
    # throttles. Before: `kafka status` printed that too, and --exit-code ended the README's loop on it
    from planner.adapters.kafka import steps

    monkeypatch.setattr(steps, "SETTLE_SECONDS", 0.0)
    plan = _plan(tmp_path)
    assert run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--execute")[0] == 0
    kraft.step(2000)  # both complete: orders-1 from 2,3 (1,3,2 while moving) to 1,3
    completed = (
        "Status of partition reassignment:\nReassignment of partition orders-0 is completed.\n"
        "Reassignment of partition orders-1 is completed.\n\n"
        "Clearing broker-level throttles on brokers 1,2,3\n"
        "Clearing topic-level throttles on topic orders\n"
    )
    kraft.stale[("orders", 1)] = [[1, 3, 2], 1]  # the next answer shows the replicas it had while moving
    assert run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan, "--exit-code") == (
        0,
        completed,
        "",
    )
    assert kraft.stale[("orders", 1)][1] == 0  # the stale answer was read, then a current one
    # a replica set that stays other than the target (changed by someone else): shown as Kafka shows it, after
    # SETTLE_READS more reads
    kraft.stale[("orders", 1)] = [[1, 3, 2], 100]
    code, out, err = run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan, "--exit-code")
    assert (code, out, err) == (
        0,
        completed.replace(
            "Reassignment of partition orders-1 is completed.",
            "There is no active reassignment of partition orders-1, but replica set is 1,3,2 rather than 1,3.",
        ),
        "",
    )
    assert 100 - kraft.stale[("orders", 1)][1] == 1 + steps.SETTLE_READS  # read once, then again SETTLE_READS times


def test_status_exit_code_waits_on_the_moves(kraft, tmp_path):
    # --exit-code: 3 while partitions are moving, 0 once nothing moves (a script loops while it is 3)
    plan = _plan(tmp_path)
    status = ("kafka", "status", kraft.url, "--reassignment-json-file", plan, "--exit-code")
    assert run_here("kafka", "submit", kraft.url, "--reassignment-json-file", plan, "--execute")[0] == 0
    code, out, _ = run_here(*status)
    assert code == 3
    assert out.startswith(
        "Status of partition reassignment:\nReassignment of partition orders-0 is still in progress.\n"
    )
    assert run_here("kafka", "status", kraft.url, "--reassignment-json-file", plan)[0] == 0  # without the flag
