"""The skew command's fixed start-up and its read of a live topic, each beside its yardstick in the same run:

* start-up: `kafka-planner skew` on a 3-row CSV on Spark, the whole command (Python imports, the JVM, the
  SparkSession with the command's settings, the murmur2 UDF, the first jobs), and on the same keys as Parquet, which
  `--engine auto` counts in-process, each against a bare `SparkSession` start and one job in a fresh Python
  (`local[*]`, defaults); the phases of our Spark start are timed in-process too; the load average is printed;
* the topic: 1M keyed records written by Kafka's console producer to a real KRaft cluster the bench starts and stops
  (tests/realkafka/real_cluster.py, `make kafka`), read by `skew kafka://…/topic` (the Kafka source, the real
  per-partition pass and murmur2's placement) against Spark's own Kafka source reading the same topic and counting
  per partition, no hashing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import line, timer

ROOT = Path(__file__).resolve().parents[1]
RECORDS = 1_000_000
BARE = (
    "from pyspark.sql import SparkSession\n"
    "s = SparkSession.builder.master('local[*]').getOrCreate()\n"
    "s.range(1).count()\n"
    "s.stop()\n"
)


def _env() -> dict[str, str]:
    return dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")


def _wall(cmd: list[str]) -> float:
    with timer() as t:
        done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return t["s"]


def _phases() -> dict[str, float]:
    """Our start, phase by phase, in a fresh process (imports, JVM + SparkSession, UDF, first job)."""
    code = (
        "import time, json\n"
        "t0 = time.perf_counter()\n"
        "from planner.skew.spark import session\n"
        "from planner.skew.jvmhash import compile_jar, register\n"
        "jar = compile_jar().jar\n"
        "t1 = time.perf_counter()\n"
        "with session('local[*]', jars=[jar]) as spark:\n"
        "    t2 = time.perf_counter()\n"
        "    register(spark, jar)\n"
        "    t3 = time.perf_counter()\n"
        "    spark.range(1).count()\n"
        "    t4 = time.perf_counter()\n"
        "print(json.dumps({'imports, UDF jar (cached)': t1 - t0, 'JVM + SparkSession': t2 - t1,"
        " 'UDF registration': t3 - t2, 'first job': t4 - t3}))\n"
    )
    import json

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _startup() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as work:
        keys = Path(work) / "k.csv"
        keys.write_text("key\na\nb\nc\n")
        small = Path(work) / "k.parquet"  # the same keys as Parquet: counted in-process by --engine auto
        pq.write_table(pa.table({"key": ["a", "b", "c"]}), small)
        cmd = [sys.executable, "-m", "planner", "skew", "--keys", str(keys), "--partitions", "6", "--top", "0"]
        local = [sys.executable, "-m", "planner", "skew", "--keys", str(small), "--partitions", "6", "--top", "0"]
        _wall(cmd)  # the UDF jar compiled and cached
        rounds = [(_wall(cmd), _wall(local), _wall([sys.executable, "-c", BARE])) for _ in range(3)]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    worst = max(rounds, key=lambda r: r[0] / r[2])
    line(
        "skew start-up on Spark (3-row CSV, whole command), worst of 3",
        worst[0],
        "s",
        worst[2],
        "bare SparkSession + 1 job",
        higher_is_better=False,
    )
    worst_local = max(rounds, key=lambda r: r[1] / r[2])
    line(
        "skew start-up in-process (--engine auto, 3-row Parquet, whole command), worst of 3",
        worst_local[1],
        "s",
        worst_local[2],
        "bare SparkSession + 1 job",
        higher_is_better=False,
    )
    print("   our Spark start by phase: " + ", ".join(f"{k} {v:.1f} s" for k, v in _phases().items()), flush=True)
    print(f"   load average (1, 5, 15 min) after the start-up rounds: {load} on {os.cpu_count()} cores", flush=True)


def _kafka() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from realkafka.real_cluster import KafkaCluster

    from planner.skew.jvmhash import compile_jar
    from planner.skew.kafkasource import Range, count_topic, parse_topic_url, source_jars
    from planner.skew.spark import session

    cluster = KafkaCluster()
    try:
        cluster.start()
        # issue 29's figures of the tests' cluster: its start (certificates, storage formatted, five JVMs, until
        # every broker is unfenced) and each JVM's resident memory once started (heap -Xmx256m each, SERVER_JVM)
        rss = ", ".join(f"{i} {b / 2**20:.0f} MiB" for i, b in sorted(cluster.rss_bytes().items()))
        print(
            f"   real Kafka {cluster.version} cluster (controller 100, brokers 1-4): started in "
            f"{cluster.started_seconds:.1f} s; resident memory by node: {rss}; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        cluster.create_topic("bench-keys", [[1], [2], [3], [4], [1], [2]])
        lines = "".join(f"user-{(i * 7919) % 250_000}\tv\n" for i in range(RECORDS))
        code, _, err = cluster.run_tool(
            "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", cluster.bootstrap, "--topic",
            "bench-keys", "--property", "parse.key=true", "--property", "key.separator=\t",
            "--producer-property", "linger.ms=20", "--producer-property", "batch.size=262144",
            input=lines, timeout=900,
        )  # fmt: skip
        assert code == 0, err
        url = parse_topic_url(f"{cluster.url}/bench-keys")
        jar = compile_jar().jar
        with session("local[*]", jars=source_jars() + [jar]) as spark:
            from planner.skew.job import JobSpec
            from planner.skew.jvmhash import register

            jvm = register(spark, jar)
            spec = JobSpec(keys=url.url, input_format="kafka", key_column="key",
                           value_bytes_column="_value_bytes", counts=(6,), primary=6, top=20, reader="spark",
                           udf_jar=jar)  # fmt: skip

            def ours():  # what the command does: the one pass in the JVM, the job's hot keys from its summary
                return count_topic(spark, url, 6, Range(), {}, spec, jvm, lambda s: None)

            def theirs():
                df = (
                    spark.read.format("kafka")
                    .option("kafka.bootstrap.servers", url.bootstrap)
                    .option("subscribe", url.topic)
                    .option("startingOffsets", "earliest")
                    .option("endingOffsets", "latest")
                    .load()
                )
                return {r["partition"]: r["count"] for r in df.groupBy("partition").count().collect()}

            ours(), theirs()  # warm-up
            rounds = []
            for _ in range(3):
                with timer() as t_ours:
                    real, counts = ours()
                with timer() as t_theirs:
                    plain = theirs()
                rounds.append((t_ours["s"], t_theirs["s"]))
            assert [p.records for p in real] == [plain[p] for p in range(6)] and sum(plain.values()) == RECORDS
            assert real and sum(p.misplaced or 0 for p in real) == 0 and counts.keyed_records == RECORDS
        worst = max(rounds, key=lambda r: r[0] / r[1])
        print(f"   load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
        line(
            f"skew kafka:// read (real pass + murmur2 placement + hot keys), {RECORDS // 1_000_000}M records, "
            "worst of 3",
            RECORDS / worst[0] / 1e6,
            "M records/s",
            RECORDS / worst[1] / 1e6,
            "Spark's Kafka source, count per partition",
            ">= 0.5x",
        )
    finally:
        cluster.cleanup()


def run() -> None:
    started = time.perf_counter()
    _startup()
    _kafka()
    print(f"   (skew_kafka: {time.perf_counter() - started:.0f} s)", flush=True)
