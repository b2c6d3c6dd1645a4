"""Counting per partition as a plain Spark SQL aggregate: murmur2 runs in the JVM (`planner.skew.jvmhash`'s Java
UDFs), so no row crosses to Python.

The normalised keys (`_k`, optional `_v`, optional `_bad`; see `planner.skew.job.normalise`) are grouped by one bucket
per record: `toPositive(murmur2(_k)) % L` with L the least common multiple of the partition counts, so every count n
(a divisor of L) is read off the same buckets as `bucket % n`: one hash and one aggregate for a whole `--sweep`.
Null keys and unreadable rows get the buckets -1 and -2. When L would exceed `MAX_BUCKETS` (counts without a small
common multiple, e.g. 997 and 1009), each record is expanded to one row per count instead.

With `--top` (hot keys), `summary_in_jvm` instead runs `KafkaMurmur2.summarize`: one Spark job over the same rows
that counts per partition and keeps each task's Misra-Gries summary, with the counters that prove exact counts.
"""

from __future__ import annotations

import math
import struct

from planner.skew.arrowhash import NULL_KEYS, UNREADABLE

MAX_BUCKETS = 1 << 16


def hash_sql(dtype) -> tuple[str, str]:
    """(murmur2 of `_k` as Kafka's serializer writes it, its serialized length) as SQL, for `_k`'s Spark type."""
    from pyspark.sql import types as T

    if isinstance(dtype, T.StringType):  # Spark strings are UTF-8: the cast copies the bytes, no re-encoding
        return "kafka_murmur2_bytes(CAST(_k AS BINARY))", "octet_length(_k)"
    if isinstance(dtype, T.BinaryType):
        return "kafka_murmur2_bytes(_k)", "octet_length(_k)"
    if isinstance(dtype, T.IntegerType):
        return "kafka_murmur2_int(_k)", "4"
    if isinstance(dtype, T.LongType):
        return "kafka_murmur2_long(_k)", "8"
    raise TypeError(f"key column of Spark type {dtype.simpleString()}")


def buckets_for(counts) -> int | None:
    lcm = math.lcm(*counts)
    return lcm if lcm <= MAX_BUCKETS else None


def count_in_jvm(keys, counts):
    """(records, bytes per count, null_records, null_bytes, unreadable, ({}, 0)): the tuple of the Arrow paths, with
    no hot-key summary."""
    from pyspark.sql import functions as F

    h, length = hash_sql(keys.schema["_k"].dataType)
    value = "coalesce(_v, 0)" if "_v" in keys.columns else "0"
    special = f"CASE WHEN {'_bad' if '_bad' in keys.columns else 'false'} THEN {UNREADABLE} ELSE {NULL_KEYS} END"
    lcm = buckets_for(counts)
    weight = F.expr(f"CASE WHEN _k IS NULL THEN 0 ELSE {length} END + {value}").cast("bigint").alias("w")
    if lcm is not None:
        rows_of = keys.select(
            F.expr(f"CASE WHEN _k IS NULL THEN {special} ELSE ({h} & 2147483647) % {lcm} END"), weight
        )
        grouped = rows_of.toDF("b", "w").groupBy("b")
    else:
        per_count = ", ".join(f"named_struct('n', {n}, 'p', (_h & 2147483647) % {n})" for n in counts)
        rows_of = keys.select(
            F.expr(f"CASE WHEN _k IS NULL THEN {special} END").alias("_s"), F.expr(h).alias("_h"), weight
        ).select(
            F.explode(
                F.expr(
                    f"CASE WHEN _s IS NOT NULL THEN array(named_struct('n', 0, 'p', _s)) ELSE array({per_count}) END"
                )
            ).alias("np"),
            "w",
        )
        grouped = rows_of.select(F.col("np.n").alias("n"), F.col("np.p").alias("b"), "w").groupBy("n", "b")
    rows = grouped.agg(F.count(F.lit(1)).alias("records"), F.sum("w").alias("bytes")).collect()
    records = {n: [0] * n for n in counts}
    nbytes = {n: [0] * n for n in counts}
    null_records = null_bytes = unreadable = 0
    for r in rows:
        b, rec, byt = int(r["b"]), int(r["records"]), int(r["bytes"])
        if b == NULL_KEYS:
            null_records, null_bytes = rec, byt
        elif b == UNREADABLE:
            unreadable = rec
        elif lcm is not None:
            for n in counts:
                records[n][b % n] += rec
                nbytes[n][b % n] += byt
        else:
            records[int(r["n"])][b] += rec
            nbytes[int(r["n"])][b] += byt
    return records, nbytes, null_records, null_bytes, unreadable, ({}, 0)


def candidates_in_jvm(keys, candidates, key_type: str) -> list[dict]:
    """The second hot-key pass in the JVM: the records and value bytes of every key whose murmur2 (uint32) is a
    candidate, as [{key: Kafka's serialized key, records, value_bytes}]."""
    from pyspark.sql import functions as F

    from planner.skew.heavy import serialized

    h, _ = hash_sql(keys.schema["_k"].dataType)
    wanted = sorted({c - (1 << 32) if c & 0x80000000 else c for c in candidates})  # the UDF's int32
    value = F.sum("_v") if "_v" in keys.columns else F.lit(0).cast("bigint")
    rows = (
        keys.where(F.col("_k").isNotNull() & F.expr(h).isin(wanted))
        .groupBy("_k")
        .agg(F.count(F.lit(1)).alias("records"), value.alias("value_bytes"))
        .collect()
    )
    return [
        {"key": serialized(r["_k"], key_type), "records": int(r["records"]), "value_bytes": int(r["value_bytes"] or 0)}
        for r in rows
    ]


KINDS = {"string": 0, "binary": 1, "int": 2, "bigint": 3}  # KafkaMurmur2.STRING, BINARY, INT, LONG
SLACK = 1 << 14  # counters a task keeps between compactions (KafkaMurmur2.Summary): a table that stays in cache


def summary_in_jvm(spark, keys, counts, heavy_k: int, slack: int | None = None):
    """The whole counting pass in the JVM (`KafkaMurmur2.summarize`: one Spark job over the rows of `keys`, no
    Python): the tuple of the Arrow paths, with the hot-key summary as (estimates by uint32 hash, err, counters),
    counters being (serialized key, n, u, record bytes, collided) — see `planner.skew.heavy.proven_top`."""
    import numpy as np

    from planner.skew.jvmhash import summarizer

    kind = KINDS[keys.schema["_k"].dataType.simpleString()]
    cols = keys.columns
    raw = bytes(
        summarizer(spark).summarize(
            keys.select("_k", *[c for c in ("_v", "_bad") if c in cols])._jdf,
            ",".join(str(int(n)) for n in counts),
            int(heavy_k),
            int(max(slack or SLACK, heavy_k)),
            kind,
            1 if "_v" in cols else -1,
            (2 if "_v" in cols else 1) if "_bad" in cols else -1,
        )
    )
    pos = 0

    def take(dtype: str, n: int):
        nonlocal pos
        arr = np.frombuffer(raw, dtype=dtype, count=n, offset=pos)
        pos += arr.nbytes
        return arr

    records, nbytes = {}, {}
    for _ in range(int(take(">i4", 1)[0])):
        n = int(take(">i4", 1)[0])
        records[n] = take(">i8", n).tolist()
        nbytes[n] = take(">i8", n).tolist()
    null_records, null_bytes, unreadable, err, _total = (int(x) for x in take(">i8", 5))
    estimates, counters = {}, []
    entry = struct.Struct(">iqqqq?i")  # hash, mg, n, u, w, collided, key length; then the key
    for _ in range(int(take(">i4", 1)[0])):
        h, mg, n, u, w, collided, size = entry.unpack_from(raw, pos)
        pos += entry.size
        estimates[h & 0xFFFFFFFF] = mg
        counters.append((raw[pos : pos + size], n, u, w, collided))
        pos += size
    return records, nbytes, null_records, null_bytes, unreadable, (estimates, err, counters)
