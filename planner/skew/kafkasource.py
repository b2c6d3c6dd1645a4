"""`skew kafka://bootstrap/topic`: the records of a live topic, read by Spark's own Kafka source.

* the source is `spark-sql-kafka-0-10` of exactly the Spark release PySpark brings, pinned in `planner/skew/pom.xml`
  and fetched by `make skew-jars` into `planner/skew/jars/`; the jars go on `spark.jars` (nothing is downloaded at
  run time; without them the command fails in one line naming the target);
* the `--command-config` file (Kafka's client properties, as the tools take them) is handed to Spark's Kafka
  consumer as it is, each key prefixed `kafka.` (the source's convention for consumer settings);
* `--from` / `--to`: `earliest` / `latest`, an offset (the same for every partition; `--to` is exclusive, as Spark's
  `endingOffsets`), or a UTC time (`2026-12-05T10:00:00Z`, or epoch milliseconds with `ms`: `1733392800000ms`);
* the real pass counts, per partition, the records the topic holds in that range, their first and last offsets, null
  keys, bytes (key + value), and the keyed records whose partition is not `toPositive(murmur2(key)) % partitions`
  (Kafka's `BuiltInPartitioner.partitionForKey`, clients/src/main/java/org/apache/kafka/clients/producer/internals/
  BuiltInPartitioner.java): those were written with a custom partitioner (or an explicit partition).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from planner.model import PlannerError

JARS_DIR = Path(__file__).resolve().parent / "jars"
SOURCE = "kafka"


@dataclass(frozen=True)
class TopicUrl:
    url: str  # kafka://host:port[,host:port]/topic as given
    bootstrap_url: str  # kafka://host:port[,host:port]
    bootstrap: str  # host:port[,host:port]
    topic: str


def is_topic_url(text: str | None) -> bool:
    return bool(text) and str(text).startswith("kafka://")


def parse_topic_url(url: str) -> TopicUrl:
    from planner.adapters.kafka.connection import parse_url

    base, sep, topic = url.rstrip("/").rpartition("/")
    if not sep or base in ("kafka:", "kafka:/") or not topic:
        raise PlannerError(f"{url}: expected kafka://host:port[,host:port...]/TOPIC")
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,249}", topic):
        raise PlannerError(f"{url}: {topic!r} is not a legal topic name (Kafka allows [a-zA-Z0-9._-], 1-249 chars)")
    kurl = parse_url(base)
    return TopicUrl(url=url, bootstrap_url=base, bootstrap=kurl.bootstrap, topic=topic)


def source_jars(jars_dir: Path = JARS_DIR) -> list[str]:
    """The Kafka source's jars for the running PySpark, or a one-line error naming `make skew-jars`."""
    import pyspark

    version = pyspark.__version__
    found = sorted(jars_dir.glob("*.jar")) if jars_dir.is_dir() else []
    names = [j.name for j in found]
    if f"spark-sql-kafka-0-10_2.13-{version}.jar" not in names:
        have = [n for n in names if n.startswith("spark-sql-kafka-0-10")]
        why = f"has {have[0]}" if have else "is missing"
        raise PlannerError(
            f"Spark's Kafka source for Spark {version} (spark-sql-kafka-0-10_2.13-{version}.jar) {why} in "
            f"{jars_dir}: run `make skew-jars` (it fetches planner/skew/pom.xml's jars from Maven Central)"
        )
    return [str(j) for j in found]


def _bound(text: str, option: str) -> tuple[str, int | None]:
    """('earliest'|'latest'|'offset'|'timestamp', value) of a --from / --to."""
    value = text.strip()
    if value in ("earliest", "latest"):
        return value, None
    if re.fullmatch(r"[0-9]+", value):
        return "offset", int(value)
    if re.fullmatch(r"[0-9]+ms", value):
        return "timestamp", int(value[:-2])
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise PlannerError(
            f"{option} {text!r}: use earliest, latest, an offset (e.g. 1000), a UTC time "
            "(2026-12-05T10:00:00Z) or epoch milliseconds (1733392800000ms)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return "timestamp", int(moment.timestamp() * 1000)


@dataclass(frozen=True)
class Range:
    start: tuple[str, int | None] = ("earliest", None)
    end: tuple[str, int | None] = ("latest", None)

    def describe(self) -> str:
        def one(b):
            kind, v = b
            return kind if v is None else (f"offset {v}" if kind == "offset" else f"{v} ms")

        return f"from {one(self.start)} to {one(self.end)}"


def parse_range(start: str | None, end: str | None) -> Range:
    r = Range(
        _bound(start, "--from") if start else ("earliest", None), _bound(end, "--to") if end else ("latest", None)
    )
    if r.start[0] == "latest":
        raise PlannerError("--from latest: nothing would be read; use earliest, an offset or a time")
    if r.end[0] == "earliest":
        raise PlannerError("--to earliest: nothing would be read; use latest, an offset or a time")
    if r.start[0] == r.end[0] and r.start[0] in ("offset", "timestamp") and (r.start[1] or 0) > (r.end[1] or 0):
        raise PlannerError(f"--from {start} is after --to {end}")
    return r


def _offsets_json(topic: str, partitions: int, offset: int) -> str:
    return json.dumps({topic: {str(p): offset for p in range(partitions)}})


def reader_options(url: TopicUrl, partitions: int, rng: Range, client: dict[str, str]) -> dict[str, str]:
    """The options of `spark.read.format("kafka")` for the topic, the range and the client settings."""
    opts = {f"kafka.{k}": v for k, v in client.items()}
    opts.update({"kafka.bootstrap.servers": url.bootstrap, "subscribe": url.topic, "failOnDataLoss": "false"})
    for bound, (kind, value) in (("starting", rng.start), ("ending", rng.end)):
        if kind in ("earliest", "latest"):
            opts[f"{bound}Offsets"] = kind
        elif kind == "offset":
            opts[f"{bound}Offsets"] = _offsets_json(url.topic, partitions, int(value or 0))
        else:
            opts[f"{bound}Timestamp"] = str(value)
    if rng.start[0] == "timestamp" or rng.end[0] == "timestamp":
        opts["startingOffsetsByTimestampStrategy"] = "latest"  # a partition without a later record: read nothing
    return opts


def client_properties(command_config: str | None) -> dict[str, str]:
    """The `--command-config` file's properties (checked as the `kafka` commands check them), for the consumer."""
    import os

    from planner.adapters.files import read_text
    from planner.adapters.kafka.connection import COMMAND_CONFIG_ENV, options_from_properties, parse_properties

    path, source = command_config, f"--command-config {command_config}"
    if not path:
        path = os.environ.get(COMMAND_CONFIG_ENV, "").strip() or None
        source = f"${COMMAND_CONFIG_ENV} {path}"
    if not path:
        return {}
    props = parse_properties(read_text(path, source))
    options_from_properties(props, source)  # the same checks and one-line errors as the kafka commands
    return props


def partition_count(url: TopicUrl, command_config: str | None) -> int:
    """The topic's partition count, from the cluster's metadata (Admin API)."""
    from planner.adapters.kafka.connection import KafkaSession, load_options

    with KafkaSession(url.bootstrap_url, load_options(command_config)) as session:
        described = session.call("describe topics", session.admin.describe_topics, [url.topic])
    for t in described:
        if t.get("name") == url.topic:
            if t.get("error_code"):
                raise PlannerError(f"{url.url}: topic {url.topic!r} does not exist (or is not visible to this client)")
            return len(t["partitions"])
    raise PlannerError(f"{url.url}: topic {url.topic!r} does not exist")


@dataclass(frozen=True)
class RealPartition:
    partition: int
    records: int
    bytes: int
    null_keys: int
    first_offset: int | None
    last_offset: int | None
    misplaced: int | None  # keyed records not where murmur2 puts them (None: not checked)
    hot_keys: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class TopicCounts:
    url: str
    topic: str
    partitions: int
    range: str
    per_partition: tuple[RealPartition, ...]
    extra: dict = field(default_factory=dict)

    @property
    def misplaced(self) -> int | None:
        vals = [p.misplaced for p in self.per_partition]
        return None if any(v is None for v in vals) else sum(v or 0 for v in vals)


def read_topic(spark, url: TopicUrl, partitions: int, rng: Range, client: dict[str, str], key_type: str):
    """The topic's records as `key` (the key type: string or binary), `_value_bytes`, `partition`, `offset`;
    persisted, as the real pass and the what-if pass both read it."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    reader = spark.read.format(SOURCE)
    for k, v in reader_options(url, partitions, rng, client).items():
        reader = reader.option(k, v)
    try:
        df = reader.load()
        key = F.col("key").cast("string") if key_type == "string" else F.col("key")
        rows = df.select(
            key.alias("key"),
            F.coalesce(F.octet_length("value"), F.lit(0)).cast("bigint").alias("_value_bytes"),
            F.col("partition"),
            F.col("offset"),
        ).persist(StorageLevel.MEMORY_AND_DISK)
    except Exception as exc:
        from planner.skew.spark import _first_line

        raise PlannerError(f"cannot read {url.url} with Spark's Kafka source: {_first_line(exc)}") from None
    return rows


def real_pass(rows, url: TopicUrl, partitions: int, key_type: str, jvm: bool, hot: int = 3) -> list[RealPartition]:
    """Per partition: records, bytes, null keys, offsets, records not where murmur2 puts them; and the `hot` keys of
    every partition above the mean."""
    from pyspark.sql import functions as F

    key_bytes = "CAST(key AS BINARY)" if key_type == "string" else "key"
    aggs = [
        F.count(F.lit(1)).alias("records"),
        F.sum(F.col("_value_bytes") + F.coalesce(F.expr(f"octet_length({key_bytes})"), F.lit(0))).alias("bytes"),
        F.sum(F.when(F.col("key").isNull(), 1).otherwise(0)).alias("null_keys"),
        F.min("offset").alias("first"),
        F.max("offset").alias("last"),
    ]
    if jvm:
        predicted = F.expr(f"pmod(kafka_murmur2_bytes({key_bytes}) & 2147483647, {partitions})")
        aggs.append(
            F.sum(F.when(F.col("key").isNotNull() & (predicted != F.col("partition")), 1).otherwise(0)).alias("moved")
        )
    got = {r["partition"]: r for r in rows.groupBy("partition").agg(*aggs).collect()}
    total = sum(int(r["records"]) for r in got.values())
    mean = total / partitions if partitions else 0
    hot_parts = [p for p, r in got.items() if int(r["records"]) > mean] if total else []
    hot_keys: dict[int, list[tuple[str, int]]] = {}
    if hot_parts and hot > 0:
        from pyspark.sql import Window

        w = Window.partitionBy("partition").orderBy(F.col("n").desc(), F.col("key").asc())
        ranked = (
            rows.where(F.col("partition").isin(hot_parts) & F.col("key").isNotNull())
            .groupBy("partition", "key")
            .agg(F.count(F.lit(1)).alias("n"))
            .withColumn("rank", F.row_number().over(w))
            .where(F.col("rank") <= hot)
            .orderBy("partition", "rank")
            .collect()
        )
        for r in ranked:
            k = r["key"]
            text = bytes(k).hex() if isinstance(k, (bytes, bytearray)) else str(k)
            hot_keys.setdefault(r["partition"], []).append((text, int(r["n"])))
    out = []
    for p in range(partitions):
        r = got.get(p)
        out.append(
            RealPartition(
                partition=p,
                records=int(r["records"]) if r else 0,
                bytes=int(r["bytes"] or 0) if r else 0,
                null_keys=int(r["null_keys"]) if r else 0,
                first_offset=int(r["first"]) if r else None,
                last_offset=int(r["last"]) if r else None,
                misplaced=(int(r["moved"]) if r else 0) if jvm else None,
                hot_keys=tuple(hot_keys.get(p, ())),
            )
        )
    return out


def topic_summary(t: TopicCounts) -> dict:
    """The real side as JSON (`--format json`'s `topic_records`)."""
    return {
        "url": t.url,
        "topic": t.topic,
        "partitions": t.partitions,
        "range": t.range,
        "misplaced_records": t.misplaced,
        "per_partition": [
            {
                "partition": p.partition,
                "records": p.records,
                "bytes": p.bytes,
                "null_keys": p.null_keys,
                "first_offset": p.first_offset,
                "last_offset": p.last_offset,
                "misplaced": p.misplaced,
                "hot_keys": [{"key": k, "records": c} for k, c in p.hot_keys],
            }
            for p in t.per_partition
        ],
    }
