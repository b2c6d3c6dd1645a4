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
import struct
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


def reader_options(
    url: TopicUrl, partitions: int, rng: Range, client: dict[str, str], pinned: dict[int, tuple[int, int]] | None = None
) -> dict[str, str]:
    """The options of `spark.read.format("kafka")` for the topic, the range and the client settings; `pinned`: read
    exactly these partitions, each from its first offset to its last (both included) instead of the range."""
    opts = {f"kafka.{k}": v for k, v in client.items()}
    opts.update({"kafka.bootstrap.servers": url.bootstrap, "subscribe": url.topic, "failOnDataLoss": "false"})
    if pinned is not None:
        del opts["subscribe"]
        parts = sorted(pinned)
        opts["assign"] = json.dumps({url.topic: parts})
        opts["startingOffsets"] = json.dumps({url.topic: {str(p): pinned[p][0] for p in parts}})
        opts["endingOffsets"] = json.dumps({url.topic: {str(p): pinned[p][1] + 1 for p in parts}})
        return opts
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


def read_topic(
    spark,
    url: TopicUrl,
    partitions: int,
    rng: Range,
    client: dict[str, str],
    key_type: str,
    pinned: dict[int, tuple[int, int]] | None = None,
    persist: bool = True,
):
    """The topic's records as `key` (the key type: string or binary, or `raw`: the bytes as they are),
    `_value_bytes`, `partition`, `offset`; persisted unless told not (the two-pass path without the murmur2 jar
    reads it twice); `pinned`: see `reader_options`."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    reader = spark.read.format(SOURCE)
    for k, v in reader_options(url, partitions, rng, client, pinned).items():
        reader = reader.option(k, v)
    try:
        df = reader.load()
        key = F.col("key").cast("string") if key_type == "string" else F.col("key")
        rows = df.select(
            key.alias("key"),
            F.coalesce(F.octet_length("value"), F.lit(0)).cast("bigint").alias("_value_bytes"),
            F.col("partition"),
            F.col("offset"),
        )
        if persist:
            rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    except Exception as exc:
        from planner.skew.spark import _first_line

        raise PlannerError(f"cannot read {url.url} with Spark's Kafka source: {_first_line(exc)}") from None
    return rows


HOT = 3  # the keys shown for every partition above the mean
KEY_BUDGET = 64 << 20  # heap a task of the one pass gives the exact per-key counts of the hot keys (then Spark counts)


def topic_pass(
    spark, url: TopicUrl, partitions: int, rng: Range, client: dict[str, str], key_type: str, counts, heavy_k: int,
    slack: int | None = None, hot: int = HOT, key_budget: int = KEY_BUDGET,
):  # fmt: skip
    """The real pass and the what-if counting in one Spark job over the Kafka source's rows, all in the JVM
    (`KafkaMurmur2.summarizeTopic`): (the real partitions as `real_pass` gives them, the counting tuple
    `planner.skew.job.run` takes as `counted`, the topic's records pinned to the offsets read, for any later pass:
    the hot keys of the summaries cannot prove, --exact-top). Each partition's hot keys are counted exactly in the
    task that read it; where Spark split a partition over tasks or a task's distinct keys outgrew `key_budget` bytes,
    Spark's group-by counts that partition's, over the same offsets."""
    from planner.skew.jvmcount import SLACK, decode_summary
    from planner.skew.jvmhash import summarizer

    reader = spark.read.format(SOURCE)
    for k, v in reader_options(url, partitions, rng, client).items():
        reader = reader.option(k, v)
    try:
        source = reader.load()  # the source's own rows: the JVM reads key and value sizes where they lie
        columns = ",".join(str(source.columns.index(c)) for c in ("key", "value", "partition", "offset"))
    except Exception as exc:
        from planner.skew.spark import _first_line

        raise PlannerError(f"cannot read {url.url} with Spark's Kafka source: {_first_line(exc)}") from None
    raw = bytes(
        summarizer(spark).summarizeTopic(
            source._jdf,
            ",".join(str(int(n)) for n in counts),
            int(heavy_k),
            int(max(slack or SLACK, heavy_k)),
            int(partitions),
            int(hot),
            int(key_budget),
            columns,
        )
    )
    (size,) = struct.unpack_from(">i", raw, 0)
    counted, _ = decode_summary(raw, 4)
    pos = 4 + size
    (n,) = struct.unpack_from(">i", raw, pos)
    pos += 4
    entry = struct.Struct(">qqqqqqi?i")
    figures, tops, inexact = [], {}, []
    for p in range(n):
        records, nbytes, null_keys, first, last, moved, _tasks, exact, listed = entry.unpack_from(raw, pos)
        pos += entry.size
        keys = []
        for _ in range(listed):
            count, length = struct.unpack_from(">qi", raw, pos)
            pos += 12
            keys.append((_shown(raw[pos : pos + length], key_type), count))
            pos += length
        figures.append((records, nbytes, null_keys, first, last, moved))
        tops[p] = keys
        if not exact:
            inexact.append(p)
    pinned = {p: (f[3], f[4]) for p, f in enumerate(figures) if f[0]}
    later = read_topic(spark, url, partitions, rng, client, key_type, pinned=pinned or None, persist=False)
    if not pinned:  # nothing was read: nor will a later pass
        later = later.limit(0)
    total = sum(f[0] for f in figures)
    mean = total / partitions if partitions else 0
    hot_parts = [p for p, f in enumerate(figures) if f[0] > mean] if total and hot > 0 else []
    redo = [p for p in hot_parts if p in inexact]
    if redo:
        tops.update(_exact_hot_keys(later, redo, hot))
    real = [
        RealPartition(
            partition=p,
            records=records,
            bytes=nbytes,
            null_keys=null_keys,
            first_offset=first if records else None,
            last_offset=last if records else None,
            misplaced=moved,
            hot_keys=tuple(tops.get(p, ())) if p in hot_parts else (),
        )
        for p, (records, nbytes, null_keys, first, last, moved) in enumerate(figures)
    ]
    return real, counted, later


def count_topic(spark, url: TopicUrl, partitions: int, rng: Range, client: dict[str, str], spec, jvm: bool, progress):
    """The real partitions and the job's `Counts` (`planner.skew.job.JobSpec` `spec`, its key type the topic's):
    with the murmur2 jar (`jvm`), `topic_pass`'s one pass; else the topic persisted, `real_pass` and the job over it."""
    from planner.skew import job

    rows = None
    try:
        if jvm:
            heavy_k = spec.heavy_k if spec.top > 0 and not spec.exact_top else 0
            real, counted, later = topic_pass(spark, url, partitions, rng, client, spec.key_type, spec.counts, heavy_k)
            return real, job.run(spark, spec, progress, df=later, counted=counted)
        rows = read_topic(spark, url, partitions, rng, client, spec.key_type)
        real = real_pass(rows, url, partitions, spec.key_type, jvm)
        return real, job.run(spark, spec, progress, df=rows)
    except PlannerError:
        raise
    except Exception as exc:
        from planner.skew.spark import _first_line

        raise PlannerError(f"reading {url.url} failed: {_first_line(exc)}") from None
    finally:
        if rows is not None:
            rows.unpersist()


def _shown(raw: bytes, key_type: str) -> str:
    """A key as the real pass shows it: the text Spark makes of its bytes (invalid UTF-8 replaced), or hex."""
    return raw.hex() if key_type != "string" else raw.decode("utf-8", errors="replace")


def _exact_hot_keys(rows, hot_parts: list[int], hot: int) -> dict[int, list[tuple[str, int]]]:
    """The `hot` most frequent keys of each of `hot_parts` (ties: ascending key), by Spark's group-by over `rows`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

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
    hot_keys: dict[int, list[tuple[str, int]]] = {}
    for r in ranked:
        k = r["key"]
        text = bytes(k).hex() if isinstance(k, (bytes, bytearray)) else str(k)
        hot_keys.setdefault(r["partition"], []).append((text, int(r["n"])))
    return hot_keys


def real_pass(rows, url: TopicUrl, partitions: int, key_type: str, jvm: bool, hot: int = HOT) -> list[RealPartition]:
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
    hot_keys = _exact_hot_keys(rows, hot_parts, hot) if hot_parts and hot > 0 else {}
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
