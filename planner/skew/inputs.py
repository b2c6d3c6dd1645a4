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

    units: list = []
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
        if value_column and (
            value_column not in schema.names or not pa.types.is_integer(schema.field(value_column).type)
        ):
            return None
        units.extend((path, rg) for rg in range(meta.num_row_groups))
    return units


def unit_batches(units, key_column: str, value_column: str | None):
    """The row groups' batches as (`_k`, optional `_v` int64) Arrow batches."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    columns = [key_column] + ([value_column] if value_column else [])
    for path, rg in units:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH, row_groups=[rg], columns=columns):
            arrays, names = [batch.column(0)], ["_k"]
            if value_column:
                arrays.append(pc.fill_null(batch.column(1).cast(pa.int64()), 0))
                names.append("_v")
            yield pa.RecordBatch.from_arrays(arrays, names=names)


def count_units(units, key_column: str, value_column: str | None, counts, heavy_k: int = 0):
    """Spark task body: read the row groups with pyarrow, count; yields one plain-Python summary."""
    from planner.skew.arrowhash import PartitionCounter

    counter = PartitionCounter(counts, heavy_k)
    for batch in unit_batches(units, key_column, value_column):
        counter.add(batch)
    heavy = counter.heavy
    yield (
        {c: counter.records[c].tolist() for c in counter.counts},
        {c: counter.bytes[c].tolist() for c in counter.counts},
        counter.null_records,
        counter.null_bytes,
        counter.unreadable,
        (heavy.keys.tolist(), heavy.counts.tolist(), heavy.err) if heavy is not None else None,
    )


def _slices(spark, units) -> int:
    return max(1, min(len(units), spark.sparkContext.defaultParallelism * 3))


def run_units(spark, units, key_column: str, value_column: str | None, counts, heavy_k: int = 0):
    """Summed (records, bytes, null_records, null_bytes, unreadable, (hot-key estimates, err)) over all units."""
    from functools import partial

    parts = (
        spark.sparkContext.parallelize(units, _slices(spark, units))
        .mapPartitions(
            partial(count_units, key_column=key_column, value_column=value_column, counts=counts, heavy_k=heavy_k)
        )
        .collect()
    )
    records = {c: [0] * c for c in counts}
    nbytes = {c: [0] * c for c in counts}
    nulls = null_bytes = unreadable = err = 0
    estimates: dict[int, int] = {}
    for rec, byt, nr, nb, un, heavy in parts:
        for c in counts:
            records[c] = [a + b for a, b in zip(records[c], rec[c])]
            nbytes[c] = [a + b for a, b in zip(nbytes[c], byt[c])]
        nulls += nr
        null_bytes += nb
        unreadable += un
        if heavy is not None:
            for h, n in zip(heavy[0], heavy[1]):
                estimates[h] = estimates.get(h, 0) + n
            err += heavy[2]
    return records, nbytes, nulls, null_bytes, unreadable, (estimates, err)


def _candidates_in_units(units, key_column: str, value_column: str | None, candidates, key_type: str):
    from planner.skew.heavy import count_candidates

    for batch in count_candidates(unit_batches(units, key_column, value_column), candidates, key_type):
        yield batch.to_pylist()


def count_candidates_in_units(spark, units, key_column: str, value_column: str | None, candidates, key_type: str):
    """The second pass over the row groups: [{key, records, value_bytes}] per task, for the candidate hashes."""
    from functools import partial

    rows = (
        spark.sparkContext.parallelize(units, _slices(spark, units))
        .mapPartitions(
            partial(
                _candidates_in_units,
                key_column=key_column,
                value_column=value_column,
                candidates=candidates,
                key_type=key_type,
            )
        )
        .collect()
    )
    return [row for part in rows for row in part]
