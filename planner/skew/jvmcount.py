"""Counting in the JVM: murmur2 as Kafka's producer computes it (`planner.skew.jvmhash`'s Java source), over the rows
Spark SQL produces for the normalised keys (`_k`, optional `_v`, optional `_bad`; see `planner.skew.job.normalise`),
with no row crossing to Python.

`summary_in_jvm` runs `KafkaMurmur2.summarize`: one Spark job in which every task reads Spark's rows directly
(strings hashed where Spark holds their bytes, no per-row object), counts records and bytes per partition for every
partition count of a `--sweep` (one hash, `% n` per count), null keys and unreadable rows, and with `--top` keeps the
Misra-Gries summary whose counters also prove exact counts. The tasks' summaries are merged on the driver. It was
measured against a plain Spark SQL aggregate (the UDF, then a group-by of `hash % lcm(counts)`) and is about 10 %
faster (`bench/bench_skew.py`), so the aggregate is not kept. `candidates_in_jvm` is the second, narrow pass.
"""

from __future__ import annotations

import struct


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
    return decode_summary(raw)[0]


def decode_summary(raw: bytes, pos: int = 0):
    """`KafkaMurmur2.Summary.toBytes` at `pos` of `raw`: (the tuple `summary_in_jvm` returns, the position after)."""
    import numpy as np

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
    return (records, nbytes, null_records, null_bytes, unreadable, (estimates, err, counters)), pos
