"""Kafka's keyed partitioner over Arrow record batches, vectorised with NumPy: no per-key Python loop.

The key column's Arrow buffers are read directly: for string / binary columns the validity bitmap, the offsets
(int32, or int64 for the large types) and the data buffer are already Kafka's StringSerializer (UTF-8) /
ByteArraySerializer bytes in the binary layout `murmur2_batch` takes; the array's own offset (a sliced array) is
honoured. int32 / int64 columns become IntegerSerializer / LongSerializer bytes (big-endian two's complement) with one
`astype('>i4' | '>i8')`. The murmur2 itself is `planner.producer.murmur2.murmur2_batch`.

`PartitionCounter` aggregates a stream of batches (one Spark task, or one Parquet file in the single-process path)
into records and bytes per partition for several partition counts at once: each key is hashed once and
`toPositive(h) % n` is taken for every n.

Batch columns: `_k` the key (string, binary, int32 or int64; null = no key), `_v` value bytes (int64, optional),
`_bad` (bool, optional) rows that could not be read or parsed as the key type.
"""

from __future__ import annotations

from planner.producer.murmur2 import murmur2_batch

NULL_KEYS = -1  # partition id of the summary row for null keys
UNREADABLE = -2  # partition id of the summary row for unreadable rows
HEAVY = -3  # `n` of the Misra-Gries counter rows: p = the murmur2 (as int32), records = its count
HEAVY_ERR = -4  # `n` of the Misra-Gries error row: records = err, bytes = records summarised
RESULT_SCHEMA = "n int, p int, records long, bytes long"


def _validity(arr, n, np):
    if arr.null_count == 0:
        return np.ones(n, dtype=bool)
    bitmap = arr.buffers()[0]
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[arr.offset : arr.offset + n].astype(bool)


def key_layout(arr):
    """(data uint8, offsets int64[n+1], valid bool[n]) of a pyarrow array of keys, in Kafka's serialized form."""
    import numpy as np
    import pyarrow as pa

    n = len(arr)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
        width = 8 if large else 4
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32, count=n + 1, offset=arr.offset * width)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(0, np.uint8)
        return data, offsets.astype(np.int64), _validity(arr, n, np)
    if pa.types.is_int32(t) or pa.types.is_int64(t):
        width = 4 if pa.types.is_int32(t) else 8
        values = np.frombuffer(arr.buffers()[1], dtype=f"<i{width}", count=n, offset=arr.offset * width)
        data = values.astype(f">i{width}").view(np.uint8)
        offsets = np.arange(0, (n + 1) * width, width, dtype=np.int64)
        return data, offsets, _validity(arr, n, np)
    raise TypeError(f"key column of Arrow type {t} (expected string, binary, int32 or int64)")


def hash_keys(arr):
    """(murmur2 as uint32 of the valid keys, serialized lengths of the valid keys, valid mask)."""
    import numpy as np

    data, offsets, valid = key_layout(arr)
    h = murmur2_batch(data, offsets).view(np.uint32)
    lens = np.diff(offsets)
    if valid.all():
        return h, lens, valid
    return h[valid], lens[valid], valid


class PartitionCounter:
    """Records and bytes per partition for each partition count in `counts`, plus null-key and unreadable rows."""

    def __init__(self, counts, heavy_k: int = 0):
        import numpy as np

        from planner.skew.heavy import MisraGries

        self.heavy = MisraGries(heavy_k) if heavy_k > 0 else None  # hot-key summary of the same hashes
        self.counts = tuple(int(c) for c in counts)
        self.records = {c: np.zeros(c, dtype=np.int64) for c in self.counts}
        self.bytes = {c: np.zeros(c, dtype=np.int64) for c in self.counts}
        self.null_records = self.null_bytes = self.unreadable = self.unreadable_bytes = 0

    def add(self, batch) -> None:
        import numpy as np

        names = batch.schema.names
        n = batch.num_rows
        if n == 0:
            return
        keys = batch.column(names.index("_k"))
        values = (
            np.asarray(batch.column(names.index("_v")).to_numpy(zero_copy_only=False), dtype=np.int64)
            if "_v" in names
            else np.zeros(n, dtype=np.int64)
        )
        bad = (
            np.asarray(batch.column(names.index("_bad")).to_numpy(zero_copy_only=False), dtype=bool)
            if "_bad" in names
            else np.zeros(n, dtype=bool)
        )
        h, lens, valid = hash_keys(keys)
        if bad.any():
            self.unreadable += int(bad.sum())
            self.unreadable_bytes += int(values[bad].sum())
        nulls = ~valid & ~bad
        if nulls.any():
            self.null_records += int(nulls.sum())
            self.null_bytes += int(values[nulls].sum())
        if not valid.all():
            values = values[valid]
        if h.size == 0:
            return
        if self.heavy is not None:
            self.heavy.add(h)
        positive = h & np.uint32(0x7FFFFFFF)
        weights = (lens + values).astype(np.float64)  # exact: a batch's byte total stays far below 2**53
        for c in self.counts:
            p = (positive % np.uint32(c)).astype(np.intp)
            self.records[c] += np.bincount(p, minlength=c)
            self.bytes[c] += np.bincount(p, weights=weights, minlength=c).astype(np.int64)

    def merge(self, other: "PartitionCounter") -> None:
        for c in self.counts:
            self.records[c] += other.records[c]
            self.bytes[c] += other.bytes[c]
        self.null_records += other.null_records
        self.null_bytes += other.null_bytes
        self.unreadable += other.unreadable
        self.unreadable_bytes += other.unreadable_bytes

    def to_batch(self):
        """One small Arrow batch (RESULT_SCHEMA): a row per (n, partition) with records, plus the two summary rows."""
        import numpy as np
        import pyarrow as pa

        ns, ps, rs, bs = [], [], [], []
        for c in self.counts:
            ns.append(np.full(c, c, dtype=np.int32))
            ps.append(np.arange(c, dtype=np.int32))
            rs.append(self.records[c])
            bs.append(self.bytes[c])
        ns.append(np.zeros(2, dtype=np.int32))
        ps.append(np.array([NULL_KEYS, UNREADABLE], dtype=np.int32))
        rs.append(np.array([self.null_records, self.unreadable], dtype=np.int64))
        bs.append(np.array([self.null_bytes, self.unreadable_bytes], dtype=np.int64))
        if self.heavy is not None:
            m = len(self.heavy.keys)
            ns.append(np.full(m + 1, HEAVY, dtype=np.int32))
            ns[-1][-1] = HEAVY_ERR
            ps.append(np.concatenate([self.heavy.keys.view(np.int32), np.zeros(1, dtype=np.int32)]))
            rs.append(np.concatenate([self.heavy.counts, np.array([self.heavy.err], dtype=np.int64)]))
            bs.append(np.concatenate([np.zeros(m, dtype=np.int64), np.array([self.heavy.total], dtype=np.int64)]))
        return pa.RecordBatch.from_arrays(
            [
                pa.array(np.concatenate(ns)),
                pa.array(np.concatenate(ps)),
                pa.array(np.concatenate(rs)),
                pa.array(np.concatenate(bs)),
            ],
            names=["n", "p", "records", "bytes"],
        )


def count_batches(batches, counts, heavy_k: int = 0):
    """mapInArrow body: aggregate all the task's batches, emit one small batch."""
    counter = PartitionCounter(counts, heavy_k)
    for batch in batches:
        counter.add(batch)
    yield counter.to_batch()


def partition_batches(batches, n):
    """mapInArrow body for the per-key output: (`_k`, `records`, `value_bytes`) → (`_k`, `records`, `bytes`,
    `partition`),
    bytes = records × serialized key length + value bytes, partition = toPositive(murmur2(key)) % n (keys not null)."""
    import numpy as np
    import pyarrow as pa

    for batch in batches:
        names = batch.schema.names
        keys = batch.column(names.index("_k"))
        records = np.asarray(batch.column(names.index("records")).to_numpy(zero_copy_only=False), dtype=np.int64)
        value = np.asarray(
            batch.column(names.index("value_bytes")).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64
        )
        data, offsets, valid = key_layout(keys)
        h = murmur2_batch(data, offsets).view(np.uint32)
        part = ((h & np.uint32(0x7FFFFFFF)) % np.uint32(n)).astype(np.int32)
        nbytes = records * np.diff(offsets) + value
        yield pa.RecordBatch.from_arrays(
            [keys, pa.array(records), pa.array(nbytes), pa.array(part, mask=~valid)],
            names=["_k", "records", "bytes", "partition"],
        )
