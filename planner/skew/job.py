"""The skew job on Spark: read the keys, normalise them to the key type in the JVM, hash and count in Arrow batches.

Plan (one pass over the data for every partition count of the sweep):
1. read PATH (`parquet`, `csv` with a header row, `json` lines, `text` one key per line); malformed CSV / JSON rows
   are kept by Spark's PERMISSIVE mode in a corrupt-record column and counted as unreadable;
2. in Spark SQL: the key column becomes `_k` of the type whose Arrow bytes are Kafka's serializer output (string →
   UTF-8 string, int → int32, long → int64, bytes-hex → binary); a value that cannot be the key type (e.g. "abc" for
   int, odd-length hex) is `_bad`; `_v` = the record's value bytes from --value-bytes-column; only columns that can
   carry information are sent on;
3. with the murmur2 jar (`planner.skew.jvmhash`, the default where `javac` exists): one Spark job over Spark SQL's
   rows in the JVM (`planner.skew.jvmcount`), no Python in the loop; else `mapInArrow(count_batches)`: murmur2 of
   every key once per Arrow batch in NumPy, records and bytes per partition for each count; one small batch per
   task, summed by Spark;
   (Python fast path, `planner.skew.inputs`, without the UDF or with `--reader pyarrow`: Parquet whose key column
   Arrow reads as the key type is read by pyarrow inside Spark tasks, skipping Spark's row → Arrow conversion);
4. top keys (`planner.skew.heavy`): in the same pass each task keeps a Misra-Gries summary of its keys' murmur2
   values; the union holds every hash above 1/(k+1) of the records. In the JVM (`KafkaMurmur2.summarize`, one Spark
   job over the normalised rows) the counters also prove exact counts where they can (`heavy.proven_top`); otherwise
   a second narrow pass counts exactly the keys with a candidate hash; the top N come from those, with a proven bound
   for every other key. `exact_top` (and --output's
   keys.parquet) use Spark's own aggregation by `_k` over every key instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable
from urllib.parse import urlparse

from planner.model import PlannerError
from planner.skew.arrowhash import (
    HEAVY,
    HEAVY_ERR,
    NULL_KEYS,
    RESULT_SCHEMA,
    UNREADABLE,
    count_batches,
    partition_batches,
)
from planner.skew.heavy import DEFAULT_COUNTERS, candidates_from_sums, key_text, order_key, proven_top, serialized
from planner.skew.inputs import count_candidates_in_units, plan_units, run_units

INPUT_FORMATS = ("parquet", "csv", "json", "text")
CSV_NULL_SENTINEL = "\u0000"  # Spark's CSV nullValue: a field of one NUL character (never a real key)
KEY_TYPES = ("string", "int", "long", "bytes-hex")
CORRUPT = "_corrupt_record"
ARROW_BATCH = 65536


@dataclass(frozen=True)
class JobSpec:
    keys: str
    input_format: str = "parquet"
    key_column: str | None = None  # None: "key", or "value" for text
    value_bytes_column: str | None = None
    key_type: str = "string"
    counts: tuple[int, ...] = ()  # every partition count to evaluate (the topic's and the sweep's)
    primary: int = 0  # the partition count the top keys are placed for
    top: int = 20
    reader: str = "auto"  # auto | pyarrow (files read by pyarrow in Spark tasks) | spark (Spark reads, mapInArrow)
    exact_top: bool = False  # top N from a group-by over every key instead of the hot-key summary
    heavy_k: int = DEFAULT_COUNTERS  # Misra-Gries counters per task
    udf_jar: str | None = None  # the murmur2 UDF jar (planner.skew.jvmhash): hash in the JVM where that wins
    hasher: str = "auto"  # auto: the JVM where it wins (with udf_jar) | numpy: always the Arrow/NumPy paths


@dataclass(frozen=True)
class TopKey:
    key: str  # as text: the string, the integer, or hex bytes
    records: int
    bytes: int
    partition: int


@dataclass(frozen=True)
class Counts:
    """What the job measured; everything else is computed from it by `planner.skew.report` (pure)."""

    records: dict[int, tuple[int, ...]]
    bytes: dict[int, tuple[int, ...]]
    null_records: int
    null_bytes: int
    unreadable: int
    top: tuple[TopKey, ...] = ()
    distinct_keys: int | None = None
    extra: dict = field(default_factory=dict)
    top_bound: int | None = None  # every key not in `top` has at most this many records (proven; None: not computed)
    heavy_counters: int = 0  # the Misra-Gries counters per task behind `top_bound` (0: exact group-by)
    blank_lines: int = 0  # CSV lines holding only whitespace: not rows (Spark skips them), counted

    @property
    def keyed_records(self) -> int:
        first = next(iter(self.records.values()), ())
        return sum(first)

    @property
    def rows(self) -> int:
        return self.keyed_records + self.null_records + self.unreadable


class KeysWriteFailed(PlannerError):
    """Spark could not write keys.parquet: the file system's reason (`args[0]`), for the caller to name its folder."""


# the file system's refusals as the JVM words them (java.io.IOException and Hadoop's FileSystem: strerror texts)
_WRITE_FAILURES = re.compile(
    r"No space left on device|File too large|Read-only file system|Disk quota exceeded|Permission denied"
)


def write_failure(text: str) -> str | None:
    """The file system's reason in a Spark write's error (its stack trace names it in a "Caused by" line; the first
    line says only TASK_WRITE_FAILED), or None when it is not one of those."""
    found = _WRITE_FAILURES.search(text)
    return found.group(0) if found else None


def _first_line(exc: BaseException) -> str:
    """A Spark failure as one line; a write refused under `ulimit -f` says so (Spark's shuffle and spill files, in
    its local dir, outgrow a small limit: measured "java.io.IOException: File too large" under ulimit -f 64)."""
    import resource

    from planner.skew.spark import _first_line as first

    line = first(exc)
    if write_failure(str(exc)) == "File too large":
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY:
            line += f" (the file size limit, ulimit -f, is {soft} bytes: Spark's shuffle and spill files need more)"
    return line


def key_column_of(spec: JobSpec) -> str:
    if spec.key_column:
        return spec.key_column
    return "value" if spec.input_format == "text" else "key"


def check_local_path(path: str) -> None:
    """A clear error for a local path that does not exist (remote paths are left to Spark)."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        local = parsed.path if parsed.scheme == "file" else path
        if not any(ch in local for ch in "*?[{") and not Path(local).exists():
            raise PlannerError(f"--keys {path}: no such file or directory")


def read_input(spark, spec: JobSpec):
    """The DataFrame of PATH in `spec.input_format` (schema read eagerly, so a bad file fails here)."""
    if spec.input_format not in INPUT_FORMATS:
        raise PlannerError(f"--input-format {spec.input_format!r}: use one of {', '.join(INPUT_FORMATS)}")
    check_local_path(spec.keys)
    try:
        reader = spark.read
        if spec.input_format == "parquet":
            df = reader.parquet(spec.keys)
        elif spec.input_format == "text":
            df = reader.text(spec.keys)
        elif spec.input_format == "json":
            df = reader.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT).json(spec.keys)
        else:  # csv: column names from the header, every column read as text, malformed rows kept
            header = reader.option("header", "true").option("inferSchema", "false").csv(spec.keys)
            from pyspark.sql.types import StringType, StructField, StructType

            schema = StructType(
                [StructField(c, StringType(), True) for c in header.columns]
                + [StructField(CORRUPT, StringType(), True)]
            )
            # nullValue: a sentinel no key holds, so a quoted "" is an empty key, as in JSON (Spark's default ""
            # made it null); an unquoted empty field stays null: a CSV's only null
            df = (
                reader.option("header", "true")
                .option("nullValue", CSV_NULL_SENTINEL)
                .option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", CORRUPT)
                .schema(schema)
                .csv(spec.keys)
            )
        df.schema  # noqa: B018  forces the schema now
    except PlannerError:
        raise
    except Exception as exc:
        raise PlannerError(f"cannot read --keys {spec.keys} as {spec.input_format}: {_first_line(exc)}") from None
    return df


_LOCAL_SCAN_BYTES = 64 << 20  # local CSV up to this size: its blank lines counted here, not by a second Spark job
_COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".xz", ".br")


def plain_files(path: Path) -> list[Path] | None:
    """The files Spark reads at a local `path` when that is simple: the file, or a folder's visible plain files
    (hidden and `_` files skipped as Spark skips them); None for sub-folders (partition columns stay with Spark) or
    a path that is neither."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        return None
    files = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        if not entry.is_file():
            return None
        files.append(entry)
    return files


def _local_blank_lines(keys: str) -> int | None:
    """`_blank_lines` without a Spark job, for local plain files (a file, or a folder's visible files): the lines as
    Hadoop's LineRecordReader splits them (LF, CR LF or CR; no line after a final terminator), blank when only spaces
    (0x20: Spark's `trim`). None where Spark must count: compressed files, a byte-order mark (Hadoop skips it),
    sub-folders, more than `_LOCAL_SCAN_BYTES`."""
    import re

    from planner.skew.detect import local_path

    path = local_path(keys)
    if path is None:
        return None
    files = plain_files(path)
    if files is None:
        return None
    try:
        if any(f.suffix.lower() in _COMPRESSED for f in files) or sum(f.stat().st_size for f in files) > (
            _LOCAL_SCAN_BYTES
        ):
            return None
        blank = 0
        for f in files:
            data = f.read_bytes()
            if data.startswith(b"\xef\xbb\xbf"):
                return None
            lines = re.split(rb"\r\n|\r|\n", data)
            if lines and lines[-1] == b"":
                lines.pop()
            blank += sum(1 for line in lines if not line.strip(b" "))
    except OSError:
        return None
    return blank


def _blank_lines(spark, spec) -> int:
    """The CSV lines holding only whitespace, which Spark's CSV reader skips: counted, so no line goes unsaid (here
    for a small local file, else by a Spark job over the lines)."""
    local = _local_blank_lines(spec.keys)
    if local is not None:
        return local
    from pyspark.sql import functions as F

    try:
        return spark.read.text(spec.keys).filter(F.trim(F.col("value")) == "").count()
    except Exception as exc:
        raise PlannerError(f"counting the blank lines of --keys {spec.keys} failed: {_first_line(exc)}") from None


def _type_error(column: str, dtype, key_type: str, hint: str) -> PlannerError:
    return PlannerError(f"key column {column!r} is {dtype.simpleString()}, which cannot be a {key_type} key: {hint}")


def _missing_column_error(option: str, column: str, spec: JobSpec, visible: list[str]) -> PlannerError:
    return PlannerError(f"{option} {column!r} not found in {spec.keys}; its columns are: {', '.join(visible)}")


def _string_key(c, dtype, column: str, integral: bool, is_text: bool):
    """The `string` key: text as it is, an integer column as its decimal text."""
    if is_text:
        return c
    if integral:
        return c.cast("string")
    raise _type_error(column, dtype, "string", "use a string or integer column, or --key-type bytes-hex for binary")


def _integer_key(c, dtype, column: str, key_type: str, integral: bool, is_text: bool):
    """The `int` / `long` key and whether it can fail: out of range, or text that is not an integer, is null."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    lo, hi = (-(1 << 31), (1 << 31) - 1) if key_type == "int" else (-(1 << 63), (1 << 63) - 1)
    target = "int" if key_type == "int" else "bigint"
    can_fail = is_text  # text parsed as int / long
    if integral:
        wide = c.cast("bigint")
        can_fail = key_type == "int" and isinstance(dtype, T.LongType)
    elif is_text:
        wide = F.when(c.rlike(r"^[+-]?[0-9]+$"), F.expr(f"try_cast(`{column}` AS BIGINT)"))
    else:
        raise _type_error(column, dtype, key_type, "use an integer column or text of integers")
    return F.when(wide.between(F.lit(lo), F.lit(hi)), wide.cast(target)), can_fail


def _hex_key(c, dtype, column: str, is_text: bool):
    """The `bytes-hex` key: a binary column as it is, text of hexadecimal digits (optional 0x) unhexed."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, T.BinaryType):
        return c
    if is_text:
        return F.when(c.rlike(r"^(0[xX])?([0-9a-fA-F]{2})*$"), F.unhex(F.regexp_replace(c, r"^0[xX]", "")))
    raise _type_error(column, dtype, "bytes-hex", "use a binary column or text of hexadecimal digits")


def _key(df, spec: JobSpec, column: str):
    """`_k` of the key type from the key column, and whether a non-null input can fail to be one."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dtype = df.schema[column].dataType
    c = F.col(f"`{column}`")
    integral = isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType))
    is_text = isinstance(dtype, T.StringType)
    if spec.key_type == "string":
        return _string_key(c, dtype, column, integral, is_text), False
    if spec.key_type in ("int", "long"):
        return _integer_key(c, dtype, column, spec.key_type, integral, is_text)
    if spec.key_type == "bytes-hex":
        return _hex_key(c, dtype, column, is_text), is_text
    raise PlannerError(f"--key-type {spec.key_type!r}: use one of {', '.join(KEY_TYPES)}")


def _value_bytes(df, spec: JobSpec, vcol: str, visible: list[str]):
    """`_v` from --value-bytes-column (never null), and the unreadable test for text sizes (None: cannot fail)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if vcol not in df.columns:
        raise _missing_column_error("--value-bytes-column", vcol, spec, visible)
    vtype = df.schema[vcol].dataType
    vc = F.col(f"`{vcol}`")
    bad = None
    if isinstance(vtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        v = vc.cast("bigint")
    elif isinstance(vtype, T.StringType):  # CSV / text: the size written as an integer
        v = F.when(vc.rlike(r"^\s*[+]?[0-9]+\s*$"), F.expr(f"try_cast(trim(`{vcol}`) AS BIGINT)"))
        bad = vc.isNotNull() & v.isNull()
    elif isinstance(vtype, T.BinaryType):  # the value itself
        v = F.octet_length(vc).cast("bigint")
    else:
        raise PlannerError(
            f"--value-bytes-column {vcol!r} is {vtype.simpleString()}: use an integer column "
            "(the value's size in bytes) or a binary column (the value itself)"
        )
    return F.coalesce(v, F.lit(0).cast("bigint")), bad


def normalise(df, spec: JobSpec):
    """`_k` (Kafka-serializable key), `_v` (value bytes), `_bad` (unreadable) from the input columns."""
    from pyspark.sql import functions as F

    column = key_column_of(spec)
    visible = [c for c in df.columns if c != CORRUPT]
    if not visible:
        raise PlannerError(f"--keys {spec.keys}: no {spec.input_format} record can be read (every row is malformed)")
    if column not in df.columns:
        raise _missing_column_error("--key-column", column, spec, visible)
    k, can_fail = _key(df, spec, column)
    bad = F.col(f"`{column}`").isNotNull() & k.isNull()
    if CORRUPT in df.columns:
        can_fail = True
        corrupt = F.col(CORRUPT).isNotNull()
        bad = corrupt | bad
        k = F.when(~corrupt, k)
    v = None
    if spec.value_bytes_column:
        v, value_bad = _value_bytes(df, spec, spec.value_bytes_column, visible)
        if value_bad is not None:
            bad = bad | value_bad
            can_fail = True
    # only the columns that can carry information cross to Python: the Arrow transfer is the job's main cost
    cols = [F.when(~bad, k).alias("_k") if can_fail else k.alias("_k")]
    if v is not None:
        cols.append(v.alias("_v"))
    if can_fail:
        cols.append(bad.alias("_bad"))
    return df.select(*cols)


def _key_text(value, key_type: str) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return str(value)


def _count_with_spark(keys, counts, heavy_k: int = 0):
    """The general path: Spark reads and normalises, mapInArrow hashes and counts per task, Spark sums."""
    from pyspark.sql import functions as F

    rows = (
        keys.mapInArrow(partial(count_batches, counts=counts, heavy_k=heavy_k), RESULT_SCHEMA)
        .groupBy("n", "p")
        .agg(F.sum("records").alias("records"), F.sum("bytes").alias("bytes"))
        .collect()
    )
    records = {n: [0] * n for n in counts}
    nbytes = {n: [0] * n for n in counts}
    null_records = null_bytes = unreadable = err = 0
    estimates: dict[int, int] = {}
    for r in rows:
        if r["n"] == HEAVY:
            estimates[r["p"] & 0xFFFFFFFF] = int(r["records"])
        elif r["n"] == HEAVY_ERR:
            err = int(r["records"])
        elif r["p"] == NULL_KEYS:
            null_records, null_bytes = int(r["records"]), int(r["bytes"])
        elif r["p"] == UNREADABLE:
            unreadable = int(r["records"])
        else:
            records[r["n"]][r["p"]] = int(r["records"])
            nbytes[r["n"]][r["p"]] = int(r["bytes"])
    return records, nbytes, null_records, null_bytes, unreadable, (estimates, err)


def _top_key(raw: bytes, records: int, nbytes: int, spec: JobSpec) -> TopKey:
    from planner.producer.murmur2 import keyed_partition

    return TopKey(
        key=key_text(raw, spec.key_type), records=records, bytes=nbytes, partition=keyed_partition(raw, spec.primary)
    )


def _hot_keys(spark, keys, units, spec: JobSpec, heavy, progress, jvm: bool, keyed: int) -> tuple[list[TopKey], int]:
    """The exact top N among the candidate keys of the merged summaries, and the proven bound for every other key:
    from the JVM's summaries alone when they prove it (`proven_top`), else by a second pass over the candidates."""
    estimates, err, *counters = heavy
    if counters:  # the JVM's summaries: exact where they can prove it
        proven = proven_top(counters[0], err, keyed, spec.heavy_k, spec.top, spec.key_type)
        if proven is not None:
            progress("the hot keys' counts are proven exact by the summaries (no second pass)")
            return [_top_key(raw, rec, nbytes, spec) for raw, rec, nbytes in proven[0]], proven[1]
    candidates = candidates_from_sums(estimates)
    progress(f"counting the {len(candidates)} candidate hot keys exactly")
    if not candidates:
        return [], err
    if jvm:
        from planner.skew.jvmcount import candidates_in_jvm

        rows = candidates_in_jvm(keys, candidates, spec.key_type)
    elif units is not None:
        rows = count_candidates_in_units(
            spark, units, key_column_of(spec), spec.value_bytes_column, candidates, spec.key_type
        )
    else:
        from planner.skew.heavy import count_candidates

        rows = [
            r.asDict()
            for r in keys.mapInArrow(
                partial(count_candidates, candidates=candidates, key_type=spec.key_type),
                "key binary, records long, value_bytes long",
            ).collect()
        ]
    totals: dict[bytes, list[int]] = {}
    for r in rows:
        slot = totals.setdefault(bytes(r["key"]), [0, 0])
        slot[0] += int(r["records"])
        slot[1] += int(r["value_bytes"])
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][0], order_key(kv[0], spec.key_type)))
    top = [_top_key(raw, rec, vb + rec * len(raw), spec) for raw, (rec, vb) in ranked[: spec.top]]
    rest = ranked[spec.top][1][0] if len(ranked) > spec.top else 0
    return top, max(err, rest)


def _per_key(spark, keys, spec: JobSpec, progress, output_keys: str | None):
    """The top keys (Spark's own aggregation by key, exact) and, with `output_keys`, every key written there."""
    from pyspark.sql import functions as F

    from planner.producer.murmur2 import keyed_partition

    top: list[TopKey] = []
    distinct = None
    progress("counting records per key")
    per_key = (
        keys.where(F.col("_k").isNotNull())
        .groupBy("_k")
        .agg(
            F.count(F.lit(1)).alias("records"),
            (F.sum("_v") if "_v" in keys.columns else F.lit(0).cast("bigint")).alias("value_bytes"),
        )
    )
    if output_keys:
        per_key = per_key.persist()
    if spec.top > 0:
        best = per_key.orderBy(F.col("records").desc(), F.col("_k").asc()).limit(spec.top).collect()
        for r in best:
            raw = serialized(r["_k"], spec.key_type)
            top.append(
                TopKey(
                    key=_key_text(r["_k"], spec.key_type),
                    records=int(r["records"]),
                    bytes=int(r["value_bytes"]) + int(r["records"]) * len(raw),
                    partition=keyed_partition(raw, spec.primary),
                )
            )
    if output_keys:
        progress(f"writing per-key results to {output_keys}")
        schema = f"_k {per_key.schema['_k'].dataType.simpleString()}, records bigint, bytes bigint, partition int"
        try:
            (
                per_key.mapInArrow(partial(partition_batches, n=spec.primary), schema)
                .withColumnRenamed("_k", "key")
                .orderBy(F.col("records").desc(), F.col("key").asc())
                .write.mode("overwrite")
                .parquet(output_keys)
            )
        except Exception as exc:
            cause = write_failure(str(exc))
            if cause is None:
                raise
            raise KeysWriteFailed(cause) from None
        distinct = spark.read.parquet(output_keys).count()
        per_key.unpersist()
    return top, distinct


def _count(spark, keys, units, spec: JobSpec, heavy_k: int, jvm: bool):
    """The counting pass: in the JVM (one Spark job over Spark SQL's rows), on the Python fast path (`units`), or
    mapInArrow."""
    if jvm:
        from planner.skew.jvmcount import summary_in_jvm

        return summary_in_jvm(spark, keys, spec.counts, heavy_k)
    if units is not None:
        return run_units(spark, units, key_column_of(spec), spec.value_bytes_column, spec.counts, heavy_k)
    return _count_with_spark(keys, spec.counts, heavy_k)


def _jvm_ready(spark, spec: JobSpec) -> bool:
    """True when murmur2 can run in the JVM: the UDF jar is given, wanted, and registered in `spark`."""
    if spec.hasher == "numpy" or not spec.udf_jar:
        return False
    from planner.skew.jvmhash import register

    return register(spark, spec.udf_jar)


def run(
    spark,
    spec: JobSpec,
    progress: Callable[[str], None] = lambda s: None,
    output_keys: str | None = None,
    df=None,
    counted=None,
) -> Counts:
    """Run the job on `spark`; `output_keys`: also write every distinct key with its records, bytes and partition
    (Parquet, a Spark output directory) there; `df`: the rows to count, already read (a topic's records), instead of
    reading `spec.keys`; `counted`: the counting pass's result, already made over `df` in the JVM (a topic's one pass,
    `planner.skew.kafkasource.topic_pass`), so only the hot keys' second pass, if any, reads `df`."""
    if not spec.counts:
        raise PlannerError("no partition count to evaluate: give --partitions N or --topology with --topic")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH))
    if df is None:
        df = read_input(spark, spec)
    keys = normalise(df, spec)
    jvm = spec.reader != "pyarrow" and _jvm_ready(spark, spec)
    units = None
    if not jvm and spec.reader in ("auto", "pyarrow") and spec.input_format == "parquet":
        units = plan_units(df, key_column_of(spec), spec.key_type, spec.value_bytes_column)
    if units is None and spec.reader == "pyarrow":
        raise PlannerError(
            "--reader pyarrow needs Parquet files on a file system the executors see, with the key "
            "column stored as the key type (string, binary, int32 for int, int64 for long); "
            "use --reader spark"
        )
    heavy_k = spec.heavy_k if spec.top > 0 and not spec.exact_top else 0
    how = "pyarrow reads the row groups" if units is not None else "Spark reads, mapInArrow"
    if jvm:
        how = "murmur2 in the JVM, one Spark job" + (" keeping hot-key summaries" if heavy_k else "")
    try:
        if counted is not None:
            records, nbytes, null_records, null_bytes, unreadable, heavy = counted
        else:
            progress(f"hashing keys of {spec.keys} for {len(spec.counts)} partition count(s) in one pass ({how})")
            records, nbytes, null_records, null_bytes, unreadable, heavy = _count(
                spark, keys, units, spec, heavy_k, jvm
            )
    except PlannerError:
        raise
    except Exception as exc:
        raise PlannerError(f"reading --keys {spec.keys} failed: {_first_line(exc)}") from None
    keyed = sum(next(iter(records.values())))
    if keyed == 0 and unreadable > 0:
        raise PlannerError(
            f"none of the {unreadable} keys in column {key_column_of(spec)!r} of {spec.keys} can be read as "
            f"--key-type {spec.key_type}; check --key-type and --key-column"
        )
    top: list[TopKey] = []
    distinct = bound = None
    if heavy_k:
        try:
            top, bound = _hot_keys(spark, keys, units, spec, heavy, progress, jvm, keyed)
        except Exception as exc:
            raise PlannerError(f"counting the hot keys of --keys {spec.keys} failed: {_first_line(exc)}") from None
    if (spec.top > 0 and not heavy_k) or output_keys:
        try:
            exact_top, distinct = _per_key(spark, keys, spec, progress, output_keys)
            top = top or exact_top
        except PlannerError:
            raise
        except Exception as exc:
            raise PlannerError(f"counting records per key of --keys {spec.keys} failed: {_first_line(exc)}") from None
    blank = _blank_lines(spark, spec) if spec.input_format == "csv" else 0
    return Counts(
        blank_lines=blank,
        records={n: tuple(v) for n, v in records.items()},
        bytes={n: tuple(v) for n, v in nbytes.items()},
        null_records=null_records,
        null_bytes=null_bytes,
        unreadable=unreadable,
        top=tuple(top),
        distinct_keys=distinct,
        top_bound=bound,
        heavy_counters=heavy_k,
    )
