"""The in-process engine: a small local input is counted in this Python process, without starting Spark.

Starting Spark costs far more than counting a small file (measured on the loaded 2-core machine: about 20 s of JVM,
SparkSession, UDF registration and first job for a 4-row file, against well under a second here; docs/skew.md), so
`skew --engine auto` counts such an input here and keeps Spark for everything else. The counting is the one Spark's
tasks run (`arrowhash.PartitionCounter` over Arrow batches, `heavy.count_candidates` for the hot keys), so the report
is the same, byte for byte, as long as it does not depend on how Spark splits the work. It takes this path only
where that holds:

* a local Parquet file, or a folder of them, of at most `LOCAL_MAX_ROWS` rows, whose key column Arrow reads as the
  key type (as `inputs.plan_units`), with an integer --value-bytes-column if any; or one local text file (at most
  `LOCAL_MAX_BYTES`) of UTF-8 lines without CR, --key-type string; a `local[...]` master; no --output (keys.parquet
  is Spark's writer);
* the hot keys: `--top 0`, `--exact-top` (an exact ranking either way), or at most `heavy_k` distinct keys. Then no
  task's Misra-Gries summary ever drops a counter, every key is a candidate and counted exactly, and the bound on the
  unlisted keys is the next key's exact count, whatever the split. With more distinct keys Spark's bound is the sum
  of its tasks' errors, which depends on the split: `count` returns None and the caller runs Spark.
"""

from __future__ import annotations

import os
from pathlib import Path

from planner.skew.job import Counts, JobSpec, TopKey, key_column_of, plain_files

# The largest input `--engine auto` counts in-process: Parquet by its rows (the footers say, nothing is read), text
# by its size. Measured on the loaded 2-core machine (docs/skew.md): the whole command on 1M / 10M keys took 2.1 /
# 16.0 s in-process against 55.5 / 94.6 s on Spark; the limit is the memory of the batches the hot-key pass keeps (a
# few hundred MB at 10M short keys), not speed.
LOCAL_MAX_ROWS = 10_000_000
LOCAL_MAX_BYTES = 64 << 20


def _parquet_files(path: Path) -> list[Path] | None:
    """The Parquet files Spark reads at `path` when that is simple (`job.plain_files`), None for an empty folder."""
    return plain_files(path) or None


def _local_path(keys: str) -> Path | None:
    from planner.skew.detect import local_path

    path = local_path(keys)
    if path is None or any(ch in str(path) for ch in "*?[{"):
        return None
    return Path(path)


def eligible(spec: JobSpec, master: str, output: str | None) -> list[Path] | None:
    """The files to count in-process, or None when the input is for Spark (remote, large, a cluster, --output)."""
    from planner.skew.spark import is_local

    if output or not is_local(master) or spec.input_format not in ("parquet", "text"):
        return None
    path = _local_path(spec.keys)
    if path is None:
        return None
    files = _parquet_files(path) if spec.input_format == "parquet" else ([path] if path.is_file() else None)
    if not files:
        return None
    if spec.input_format == "text":
        if spec.key_type != "string" or spec.value_bytes_column or key_column_of(spec) != "value":
            return None
        try:
            return files if os.path.getsize(files[0]) <= LOCAL_MAX_BYTES else None
        except OSError:
            return None
    return files if _parquet_ok(files, spec) else None


def _parquet_ok(files: list[Path], spec: JobSpec) -> bool:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from planner.skew.inputs import _type_ok

    column, value = key_column_of(spec), spec.value_bytes_column
    rows = 0
    for f in files:
        try:
            meta = pq.ParquetFile(f)
        except Exception:  # not Parquet as pyarrow reads it: Spark reads it and reports
            return False
        schema = meta.schema_arrow
        rows += meta.metadata.num_rows
        if rows > LOCAL_MAX_ROWS:
            return False
        if column not in schema.names or not _type_ok(schema.field(column).type, spec.key_type):
            return False
        if value and (value not in schema.names or not pa.types.is_integer(schema.field(value).type)):
            return False
    return True


def _text_batches(path: Path):
    """The lines of a UTF-8 text file without CR as one `_k` batch (Spark's text source: one row per line, the last
    line's newline optional); None when Spark's reading could differ (CR, a byte-order mark, bytes that are not
    UTF-8)."""
    import pyarrow as pa

    data = path.read_bytes()
    if b"\r" in data or data.startswith(b"\xef\xbb\xbf"):  # CR line ends, a byte-order mark: Hadoop's reader decides
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [pa.RecordBatch.from_arrays([pa.array(lines, pa.string())], names=["_k"])]


def _batches(files: list[Path], spec: JobSpec):
    if spec.input_format == "text":
        return _text_batches(files[0])
    import pyarrow.parquet as pq

    from planner.skew.inputs import unit_batches

    units: list[tuple[str, int]] = []
    for f in files:
        units.extend((str(f), rg) for rg in range(pq.ParquetFile(f).num_row_groups))
    return list(unit_batches(units, key_column_of(spec), spec.value_bytes_column))


def _ranked(totals: dict[bytes, list[int]], spec: JobSpec) -> tuple[list[TopKey], int]:
    from planner.producer.murmur2 import keyed_partition
    from planner.skew.heavy import key_text, order_key

    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][0], order_key(kv[0], spec.key_type)))
    top = [
        TopKey(
            key=key_text(raw, spec.key_type),
            records=rec,
            bytes=vb + rec * len(raw),
            partition=keyed_partition(raw, spec.primary),
        )
        for raw, (rec, vb) in ranked[: spec.top]
    ]
    rest = ranked[spec.top][1][0] if len(ranked) > spec.top else 0
    return top, rest


def count(files: list[Path], spec: JobSpec) -> Counts | None:
    """The job's `Counts` for `files`, counted here; None when Spark must count (see the module's docstring)."""
    from planner.skew.arrowhash import PartitionCounter
    from planner.skew.heavy import count_candidates

    batches = _batches(files, spec)
    if batches is None:
        return None
    exact = spec.top > 0 and spec.exact_top
    heavy_k = spec.heavy_k if spec.top > 0 and not spec.exact_top else 0
    counter = PartitionCounter(spec.counts, heavy_k)
    for batch in batches:
        counter.add(batch)
        if counter.heavy is not None and counter.heavy.err > 0:
            return None  # more distinct keys than counters: Spark's bound depends on its split
    top: list[TopKey] = []
    bound = None
    if spec.top > 0:
        totals: dict[bytes, list[int]] = {}
        candidates = sorted(int(h) for h in counter.heavy.keys) if counter.heavy is not None else None
        if exact or candidates:
            import numpy as np

            everything = candidates
            if exact:  # every key: the candidates are every hash there is
                from planner.skew.arrowhash import hash_keys

                seen = [hash_keys(b.column(b.schema.names.index("_k")))[0] for b in batches if b.num_rows]
                everything = sorted(int(h) for h in np.unique(np.concatenate(seen))) if seen else []
            for out in count_candidates(iter(batches), everything, spec.key_type):
                for raw, rec, vb in zip(
                    out.column(0).to_pylist(), out.column(1).to_pylist(), out.column(2).to_pylist()
                ):
                    totals[bytes(raw)] = [int(rec), int(vb)]
        top, rest = _ranked(totals, spec)
        bound = None if exact else rest
    return Counts(
        records={c: tuple(int(x) for x in counter.records[c]) for c in counter.counts},
        bytes={c: tuple(int(x) for x in counter.bytes[c]) for c in counter.counts},
        null_records=counter.null_records,
        null_bytes=counter.null_bytes,
        unreadable=counter.unreadable,
        top=tuple(top),
        distinct_keys=None,
        top_bound=bound,
        heavy_counters=heavy_k,
    )
