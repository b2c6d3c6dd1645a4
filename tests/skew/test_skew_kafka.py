"""`skew kafka://bootstrap/topic` against a real Apache Kafka KRaft cluster (tests/realkafka/cluster.py): keys written
by Kafka's own console producer (its DefaultPartitioner: murmur2 of the key) and by the same producer with
RoundRobinPartitioner (a custom partitioner). The per-partition counts equal the end offsets Kafka's GetOffsetShell
prints; the predicted partition of every key equals `kafka-planner partition`; local[2] and the standalone master
give the same document; --plot writes a valid image of the expected size."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from realkafka.real_cluster import KafkaCluster

CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"  # kafka-console-producer.sh
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"  # kafka-get-offsets.sh
HOT = "customer-0042"
JVM_NOTE = "WARNING: Using incubator modules: jdk.incubator.vector"


def _lines() -> str:
    """505 records of the hot key, 2 to 4 of 200 others (UTF-8 among them), and 7 null keys."""
    out = [f"{HOT}\tv{i}" for i in range(505)]
    for i in range(200):
        out += [f"customer-{i:04d}-é\tvalue-{j}" for j in range(2 + i % 3)]
    out += [f"NULL\tkeyless-{i}" for i in range(7)]
    return "\n".join(out) + "\n"


def _produce(kafka: KafkaCluster, topic: str, *extra: str) -> None:
    code, out, err = kafka.run_tool(
        CONSOLE_PRODUCER, "--bootstrap-server", kafka.bootstrap, "--topic", topic,
        "--property", "parse.key=true", "--property", "key.separator=\t", "--property", "null.marker=NULL",
        "--producer-property", "linger.ms=0", *extra, input=_lines(),
    )  # fmt: skip
    assert code == 0, err


def _end_offsets(kafka: KafkaCluster, topic: str) -> dict[int, int]:
    code, out, err = kafka.run_tool(GET_OFFSETS, "--bootstrap-server", kafka.bootstrap, "--topic", topic)
    assert code == 0, err
    return {int(p): int(o) for _, p, o in (line.rsplit(":", 2) for line in out.split())}


@pytest.fixture(scope="module")
def kafka(real_kafka):
    """The session's real cluster with two topics of this module's (deleted after)."""
    try:
        real_kafka.create_topic("orders", [[1, 2], [2, 3], [3, 4], [4, 1], [1, 3], [2, 4]])
        _produce(real_kafka, "orders")
        real_kafka.create_topic("orders-rr", [[1], [2], [3]])
        _produce(
            real_kafka, "orders-rr", "--producer-property",
            "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
        )  # fmt: skip
        yield real_kafka
    finally:
        real_kafka.delete_topics("orders", "orders-rr")


def _skew(env, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "planner", "skew", *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stderr.splitlines() if line != JVM_NOTE] == []
    return done


def _partition_cli(keys: list[str], n: int) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-m", "planner", "partition", "--partitions", str(n), "--format", "json", "--", *keys],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return {row["key"]: row["partition"] for row in json.loads(done.stdout)["keys"]}


def test_topic_counts_are_the_end_offsets_and_predictions_are_partition(kafka, spark_subprocess_env, tmp_path):
    done = _skew(
        spark_subprocess_env, f"{kafka.url}/orders", "--top", "1000", "--exact-top", "--format", "json",
        "--master", "local[2]", "--plot", str(tmp_path / "orders.png"),
    )  # fmt: skip
    doc = json.loads(done.stdout)
    real = doc["topic_records"]
    ends = _end_offsets(kafka, "orders")
    assert [p["records"] for p in real["per_partition"]] == [ends[p] for p in range(6)]
    assert [(p["first_offset"], p["last_offset"]) for p in real["per_partition"]] == [
        (0, ends[p] - 1) if ends[p] else (None, None) for p in range(6)
    ]
    assert sum(p["null_keys"] for p in real["per_partition"]) == 7
    assert real["misplaced_records"] == 0
    # the what-if under the topic's own count: the same keyed records per partition
    keyed = [p["records"] - p["null_keys"] for p in real["per_partition"]]
    assert [p["records"] for p in doc["per_partition"]] == keyed
    assert (doc["keyed_records"], doc["null_key_records"]) == (505 + sum(2 + i % 3 for i in range(200)), 7)
    tops = {k["key"]: (k["records"], k["partition"]) for k in doc["top_keys"]}
    assert len(tops) == 201 and tops[HOT][0] == 505
    assert {k: p for k, (_, p) in tops.items()} == _partition_cli(sorted(tops), 6)
    hot_partition = tops[HOT][1]
    assert real["per_partition"][hot_partition]["hot_keys"][0] == {"key": HOT, "records": 505}
    from matplotlib.image import imread

    assert imread(tmp_path / "orders.png").shape == (500, 1000, 4)  # rows, columns, RGBA


def test_what_if_partition_count_and_custom_partitioner(kafka, spark_subprocess_env, tmp_path):
    done = _skew(
        spark_subprocess_env, f"{kafka.url}/orders-rr", "--partitions", "12", "--top", "1000", "--exact-top",
        "--format", "json", "--master", "local[2]", "--plot", str(tmp_path / "rr.svg"),
    )  # fmt: skip
    doc = json.loads(done.stdout)
    real = doc["topic_records"]
    ends = _end_offsets(kafka, "orders-rr")
    assert [p["records"] for p in real["per_partition"]] == [ends[p] for p in range(3)]
    # RoundRobinPartitioner ignores the key: every keyed record not where murmur2 % 3 puts it is counted
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
    parts = [TopicPartition("orders-rr", p) for p in range(3)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    records = [(r.key, r.partition) for r in consumer]
    consumer.close()
    assert len(records) == sum(ends.values())
    keyed = [(k.decode(), p) for k, p in records if k is not None]
    predicted3 = _partition_cli(sorted({k for k, _ in keyed}), 3)
    assert real["misplaced_records"] == sum(1 for k, p in keyed if predicted3[k] != p) > 0
    predicted12 = _partition_cli(sorted({k for k, _ in keyed}), 12)
    per12 = [0] * 12
    for k, _ in keyed:
        per12[predicted12[k]] += 1
    assert doc["partitions"] == 12 and [p["records"] for p in doc["per_partition"]] == per12
    svg = ET.parse(tmp_path / "rr.svg").getroot()
    assert (svg.tag, svg.get("width"), svg.get("height")) == ("{http://www.w3.org/2000/svg}svg", "720pt", "360pt")


def test_standalone_master_gives_the_same_document(kafka, spark_subprocess_env, standalone):
    args = [f"{kafka.url}/orders", "--top", "5", "--format", "json"]
    local = json.loads(_skew(spark_subprocess_env, *args, "--master", "local[2]").stdout)
    remote = json.loads(
        _skew(spark_subprocess_env, *args, "--master", standalone, "--spark-conf", "spark.executor.memory=512m").stdout
    )
    assert remote == local
    assert [p["records"] for p in remote["topic_records"]["per_partition"]] == list(
        _end_offsets(kafka, "orders").values()
    )


def test_sasl_ssl_through_command_config_and_a_range(kafka, spark_subprocess_env):
    done = _skew(
        spark_subprocess_env, f"{kafka.sasl_url}/orders", "--command-config", str(kafka.command_config),
        "--from", "10", "--to", "20", "--top", "0", "--format", "json", "--master", "local[2]",
    )  # fmt: skip
    real = json.loads(done.stdout)["topic_records"]
    ends = _end_offsets(kafka, "orders")
    assert [p["records"] for p in real["per_partition"]] == [max(0, min(ends[p], 20) - 10) for p in range(6)]


def test_missing_jars_and_bad_urls_are_one_line(tmp_path, spark_subprocess_env):
    from planner.model import PlannerError
    from planner.skew.kafkasource import parse_topic_url, source_jars

    with pytest.raises(PlannerError) as exc:
        source_jars(tmp_path)
    assert str(exc.value) == (
        f"Spark's Kafka source for Spark 4.2.0 (spark-sql-kafka-0-10_2.13-4.2.0.jar) is missing in {tmp_path}: "
        "run `make skew-jars` (it fetches planner/skew/pom.xml's jars from Maven Central)"
    )
    assert parse_topic_url("kafka://a:1,b/orders").bootstrap == "a:1,b:9092"
    with pytest.raises(PlannerError) as exc:
        parse_topic_url("kafka://a:1")
    assert str(exc.value) == "kafka://a:1: expected kafka://host:port[,host:port...]/TOPIC"


ONE_PASS = """
import json, sys
from planner.skew import job, kafkasource as ks
from planner.skew.jvmhash import compile_jar, register
from planner.skew.spark import session

url, n = ks.parse_topic_url(sys.argv[1]), int(sys.argv[2])
jar = compile_jar().jar
out = []
with session("local[2]", jars=ks.source_jars() + [jar]) as spark:
    assert register(spark, jar)
    for top, exact in ((5, False), (1000, True)):
        spec = job.JobSpec(keys=url.url, input_format="kafka", key_column="key", value_bytes_column="_value_bytes",
                           counts=(n, 12), primary=n, top=top, exact_top=exact, reader="spark", udf_jar=jar)
        rows = ks.read_topic(spark, url, n, ks.Range(), {}, "string")
        real, counts = ks.real_pass(rows, url, n, "string", True), job.run(spark, spec, df=rows)
        rows.unpersist()
        heavy_k = spec.heavy_k if top and not exact else 0
        spilled = ks.topic_pass(spark, url, n, ks.Range(), {}, "string", spec.counts, heavy_k, key_budget=0)[0]
        out.append({
            "one pass": ks.count_topic(spark, url, n, ks.Range(), {}, spec, True, lambda s: None) == (real, counts),
            "spilled": spilled == real,
            "hot keys": sum(len(p.hot_keys) for p in real),
            "misplaced": sum(p.misplaced for p in real),
        })
print(json.dumps(out))
"""


def test_the_one_pass_equals_the_persisted_two_pass_path(kafka, spark_subprocess_env):
    """`count_topic`'s one pass in the JVM gives what the persisted real pass and job give (hot keys exact, with the
    summaries' top and --exact-top's group-by); with no heap for exact counts, Spark's group-by gives the same."""
    for topic, n, custom in (("orders", 6, False), ("orders-rr", 3, True)):
        done = subprocess.run(
            [sys.executable, "-c", ONE_PASS, f"{kafka.url}/{topic}", str(n)],
            capture_output=True, text=True, env=spark_subprocess_env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        got = json.loads(done.stdout.splitlines()[-1])
        assert [g["one pass"] and g["spilled"] for g in got] == [True, True]
        assert [g["misplaced"] > 0 for g in got] == [custom, custom]  # RoundRobinPartitioner's keys: misplaced
        assert all(g["hot keys"] > 0 for g in got)
