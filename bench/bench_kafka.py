"""Reading a live KRaft cluster through the Admin API: 9 brokers on 3 racks, 5,000 partitions (RF 3) with sizes.

The cluster is the tests' fake (`tests/adapters/kafka/fake_cluster.py`: real sockets, Kafka's wire protocol encoded
by kafka-python's classes), started in this process on free loopback ports and stopped here; no Apache Kafka broker
runs on these machines.

Figure: `kafka-planner kafka export kafka://...` as users run it (a fresh interpreter): DescribeCluster,
DescribeTopicPartitions (paged), ListPartitionReassignments, DescribeConfigs (topics, then each broker),
DescribeLogDirs on every broker, then the topology YAML written. Yardstick, same run, same cluster: Debian's `kcat -L
-J` (librdkafka, C), which asks Metadata alone (brokers, topics, partitions, leader, replicas, ISR) and prints JSON.
The ratio is kcat's time over ours: what the extra calls, Python and the YAML cost. A second line times the read
alone in this process (`read_snapshot`, no interpreter start-up, no YAML). Wall time is the figure; the CPU time
(user + sys) of each client process is printed beside it, with the load (the machine is shared) and the fake's own
time answering each client (it runs in this process: Python encoding every response).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import line, timer

ROOT = Path(__file__).resolve().parent.parent
N_BROKERS = 9
N_TOPICS = 100
PARTITIONS_PER_TOPIC = 50  # 5,000 partitions
RF = 3
RUNS = 3


def _cluster():
    sys.path.insert(0, str(ROOT / "tests" / "adapters" / "kafka"))
    from fake_cluster import FakeBroker, FakeCluster

    cluster = FakeCluster([FakeBroker(b, "abc"[b % 3]) for b in range(1, N_BROKERS + 1)])
    for t in range(N_TOPICS):
        assignment = [[1 + (t + p + i * 4) % N_BROKERS for i in range(RF)] for p in range(PARTITIONS_PER_TOPIC)]
        sizes = [1_000_000 * (1 + (t * 7 + p) % 13) for p in range(PARTITIONS_PER_TOPIC)]
        cluster.add_topic(f"topic-{t:03d}", assignment, sizes=sizes, configs={"retention.ms": "86400000"})
    return cluster


SERVED = [0.0]  # seconds the fake spent decoding, answering and encoding requests


def _time_the_fake() -> None:
    """Add up the fake's own time per request, to tell the clients' time from the server's."""
    import fake_protocol

    answer = fake_protocol._answer

    def timed(*args):
        start = time.perf_counter()
        try:
            return answer(*args)
        finally:
            SERVED[0] += time.perf_counter() - start

    fake_protocol._answer = timed


def _child(args: list[str]) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the child, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, timeout=300, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _best(runs: list[tuple[float, float, bytes]]) -> tuple[float, float]:
    wall, cpu, _ = min(runs, key=lambda r: r[0])
    return wall, cpu


def run() -> None:
    kcat = shutil.which("kcat")
    if kcat is None:
        print("   skipped: kcat missing (run `make kcat`)")
        return
    from planner.adapters.kafka.connection import KafkaOptions
    from planner.adapters.kafka.snapshot import read_snapshot

    cluster = _cluster().start()
    _time_the_fake()
    workdir = tempfile.mkdtemp(prefix="kp-bench-kafka-")
    try:
        out = os.path.join(workdir, "live.yaml")
        SERVED[0] = 0.0
        ours = [
            _child([sys.executable, "-m", "planner", "kafka", "export", cluster.url, "-o", out, "--quiet"])
            for _ in range(RUNS)
        ]
        served_ours, SERVED[0] = SERVED[0] / RUNS, 0.0
        yard = [_child([kcat, "-L", "-J", "-b", cluster.bootstrap, "-m", "30"]) for _ in range(RUNS)]
        served_kcat = SERVED[0] / RUNS
        assert yard[0][2].count(b'"partition":') == N_TOPICS * PARTITIONS_PER_TOPIC
        text = Path(out).read_text()
        assert text.count("\n  - name: ") == N_TOPICS and "sizes:" in text
        reads = []
        for _ in range(RUNS):
            with timer() as t_read:
                snap = read_snapshot(cluster.url, KafkaOptions(timeout=60))
            reads.append(t_read["s"])
        assert sum(t.partition_count for t in snap.cluster.topics) == N_TOPICS * PARTITIONS_PER_TOPIC
        wall, cpu = _best(ours)
        kwall, kcpu = _best(yard)
        load = os.getloadavg()[0]
        parts = f"{N_BROKERS} brokers / {N_TOPICS * PARTITIONS_PER_TOPIC:,} partitions"
        print(
            f"   (load {load:.1f}; best of {RUNS}; client CPU user+sys: export {cpu:.2f} s, kcat {kcpu:.2f} s; "
            f"the fake's own time per run, mean: {served_ours:.2f} s answering export, {served_kcat:.2f} s kcat)"
        )
        line(
            f"`kafka export kafka://` {parts} (process, all calls, YAML)",
            wall,
            "s",
            kwall,
            "kcat -L -J",
            "< 5 s",
            False,
        )
        line(f"read_snapshot {parts} (in process, no YAML)", min(reads), "s", kwall, "kcat -L -J", "", False)
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
