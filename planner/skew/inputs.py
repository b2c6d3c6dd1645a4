"""The fast path for Parquet on a file system every executor sees (local disk in local mode, NFS, a mounted lake).

Spark's `mapInArrow` turns Spark's rows back into Arrow batches in the JVM and streams them to Python; measured, that
transfer alone costs about twice Spark's whole built-in `hash()` aggregation (bench/bench_skew.py). When the input is
Parquet whose key column Arrow already reads as the key type's serialized form (string → UTF-8, binary → bytes,
int32 → int, int64 → long), Spark only schedules the work: the row groups of the files Spark lists
(`DataFrame.inputFiles()`, so the same files Spark would read) are spread over the executors as tasks, each task reads
its row groups with pyarrow and runs the same `PartitionCounter` as the mapInArrow path. Anything else (CSV / JSON /
text, conversions such as int from text, remote file systems, partition columns) takes the general path.
"""
from __future__ import annotations

from urllib.parse import unquote, urlparse

BATCH = 1 << 16


def _type_ok(t, key_type: str) -> bool:
    import pyarrow as pa

    if key_type == "string":
        return pa.types.is_string(t) or pa.types.is_large_string(t)
    if key_type == "bytes-hex":
        return pa.types.is_binary(t) or pa.types.is_large_binary(t)
    if key_type == "int":
        return pa.types.is_int32(t)
    if key_type == "long":
        return pa.types.is_int64(t)
    return False


def plan_units(df, key_column: str, key_type: str, value_column: str | None) -> list[tuple[str, int]] | None:
    """(file, row group) work units, or None when the fast path does not apply."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    units = []
    for uri in df.inputFiles():
        parsed = urlparse(uri)
        if parsed.scheme not in ("", "file"):
            return None
        path = unquote(parsed.path)
        try:
            meta = pq.ParquetFile(path)
        except Exception:  # unreadable here: let Spark read it and report
            return None
        schema = meta.schema_arrow
        if key_column not in schema.names or not _type_ok(schema.field(key_column).type, key_type):
            return None
        if value_column and (value_column not in schema.names
                             or not pa.types.is_integer(schema.field(value_column).type)):
            return None
        units.extend((path, rg) for rg in range(meta.num_row_groups))
    return units


def count_units(units, key_column: str, value_column: str | None, counts):
    """Spark task body: read the row groups with pyarrow, count; yields one plain-Python summary."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from planner.skew.arrowhash import PartitionCounter

    counter = PartitionCounter(counts)
    columns = [key_column] + ([value_column] if value_column else [])
    for path, rg in units:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH, row_groups=[rg], columns=columns):
            arrays, names = [batch.column(0)], ["_k"]
            if value_column:
                arrays.append(pc.fill_null(batch.column(1).cast(pa.int64()), 0))
                names.append("_v")
            counter.add(pa.RecordBatch.from_arrays(arrays, names=names))
    yield ({c: counter.records[c].tolist() for c in counter.counts}, {c: counter.bytes[c].tolist() for c in counter.counts},
           counter.null_records, counter.null_bytes, counter.unreadable)


def run_units(spark, units, key_column: str, value_column: str | None, counts):
    """Summed (records, bytes, null_records, null_bytes, unreadable) over all units."""
    from functools import partial

    sc = spark.sparkContext
    slices = max(1, min(len(units), sc.defaultParallelism * 3))
    parts = (sc.parallelize(units, slices)
             .mapPartitions(partial(count_units, key_column=key_column, value_column=value_column, counts=counts))
             .collect())
    records = {c: [0] * c for c in counts}
    nbytes = {c: [0] * c for c in counts}
    nulls = null_bytes = unreadable = 0
    for rec, byt, nr, nb, un in parts:
        for c in counts:
            records[c] = [a + b for a, b in zip(records[c], rec[c])]
            nbytes[c] = [a + b for a, b in zip(nbytes[c], byt[c])]
        nulls += nr
        null_bytes += nb
        unreadable += un
    return records, nbytes, nulls, null_bytes, unreadable
