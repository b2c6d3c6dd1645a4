"""The Arrow-batched partitioner equals the scalar one (serializers + murmur2) for every key; no Spark here."""

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.producer.serializers import partition_for_key, serialize
from planner.skew.arrowhash import PartitionCounter, count_batches, hash_keys, key_layout, partition_batches

# kafka-python's test/test_partitioner.py test_murmur2_java_compatibility, partition for 1000 partitions
KAFKA_PYTHON_VECTORS = [(b"", 681), (b"a", 524), (b"ab", 434), (b"abc", 107), (b"123456789", 566), (b"\x00 ", 742)]


def scalar_counts(raw_keys, counts, values=None):
    values = values or [0] * len(raw_keys)
    rec = {c: [0] * c for c in counts}
    byt = {c: [0] * c for c in counts}
    for k, v in zip(raw_keys, values):
        if k is None:
            continue
        for c in counts:
            p = partition_for_key(k, c)
            rec[c][p] += 1
            byt[c][p] += len(k) + v
    return rec, byt


def counted(batches, counts):
    counter = PartitionCounter(counts)
    for b in batches:
        counter.add(b)
    return counter


def test_kafka_python_partition_vectors_through_the_arrow_path():
    arr = pa.array([k for k, _ in KAFKA_PYTHON_VECTORS], pa.binary())
    h, _, _ = hash_keys(arr)
    assert ((h & 0x7FFFFFFF) % 1000).tolist() == [p for _, p in KAFKA_PYTHON_VECTORS]
    batch = pa.RecordBatch.from_arrays([arr], names=["_k"])
    c = counted([batch], (1000,))
    expected = [0] * 1000
    for _, p in KAFKA_PYTHON_VECTORS:
        expected[p] += 1
    assert c.records[1000].tolist() == expected


def test_sliced_and_large_arrays_and_nulls():
    base = pa.array(["skip", "héllo", None, "", "😀 emoji", "x" * 33, "tail"])
    for arr in (
        base.slice(1, 5),
        pa.array(base.to_pylist(), pa.large_string()).slice(1, 5),
        pa.array([None if s is None else s.encode() for s in base.to_pylist()], pa.binary()).slice(1, 5),
    ):
        data, offsets, valid = key_layout(arr)
        keys = [None if not ok else bytes(data[offsets[i] : offsets[i + 1]]) for i, ok in enumerate(valid)]
        assert keys == [b"h\xc3\xa9llo", None, b"", "😀 emoji".encode(), b"x" * 33]
    c = counted([pa.RecordBatch.from_arrays([base.slice(1, 5)], names=["_k"])], (7,))
    assert c.null_records == 1
    assert (
        c.records[7].tolist()
        == scalar_counts([None if s is None else s.encode() for s in base.to_pylist()[1:6]], (7,))[0][7]
    )


def test_int_and_long_keys_are_big_endian_like_kafka():
    ints = [0, 1, -1, 2**31 - 1, -(2**31), 42, None]
    arr = pa.array(ints, pa.int32())
    data, offsets, valid = key_layout(arr)
    assert bytes(data[4:8]) == b"\x00\x00\x00\x01" and bytes(data[8:12]) == b"\xff\xff\xff\xff"
    raw = [None if v is None else serialize(str(v), "int") for v in ints]
    c = counted([pa.RecordBatch.from_arrays([arr], names=["_k"])], (5, 12))
    rec, byt = scalar_counts(raw, (5, 12))
    assert {n: c.records[n].tolist() for n in (5, 12)} == rec
    assert {n: c.bytes[n].tolist() for n in (5, 12)} == byt
    longs = [0, -1, 2**63 - 1, -(2**63), 123456789012]
    c = counted([pa.RecordBatch.from_arrays([pa.array(longs, pa.int64()).slice(1)], names=["_k"])], (9,))
    assert c.records[9].tolist() == scalar_counts([serialize(str(v), "long") for v in longs[1:]], (9,))[0][9]


def test_bad_rows_and_value_bytes():
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(["a", None, None, "bb"]),
            pa.array([10, 20, 30, 40], pa.int64()),
            pa.array([False, False, True, False]),
        ],
        names=["_k", "_v", "_bad"],
    )
    c = counted([batch], (4,))
    assert (c.null_records, c.null_bytes, c.unreadable, c.unreadable_bytes) == (1, 20, 1, 30)
    rec, byt = scalar_counts([b"a", b"bb"], (4,), [10, 40])
    assert c.records[4].tolist() == rec[4] and c.bytes[4].tolist() == byt[4]
    out = next(count_batches([batch, batch], (4,))).to_pydict()
    assert out["p"][-2:] == [-1, -2] and out["records"][-2:] == [2, 2] and out["bytes"][-2:] == [40, 60]


def test_partition_batches_per_key_rows():
    batch = pa.RecordBatch.from_arrays(
        [pa.array(["a", "bb", ""]), pa.array([3, 1, 2], pa.int64()), pa.array([5, None, 0], pa.int64())],
        names=["_k", "records", "value_bytes"],
    )
    out = next(partition_batches([batch], 10)).to_pydict()
    assert out == {
        "_k": ["a", "bb", ""],
        "records": [3, 1, 2],
        "bytes": [8, 2, 0],
        "partition": [partition_for_key(b"a", 10), partition_for_key(b"bb", 10), partition_for_key(b"", 10)],
    }


keys = st.lists(
    st.one_of(st.none(), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)), max_size=300
)


@settings(max_examples=60, deadline=None)
@given(
    keys,
    st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=4, unique=True),
    st.integers(min_value=1, max_value=97),
)
def test_any_text_keys_in_any_batching_equal_the_scalar_partitioner(texts, counts, chunk):
    arr = pa.array(texts, pa.string())
    batches = [pa.RecordBatch.from_arrays([arr.slice(i, chunk)], names=["_k"]) for i in range(0, len(texts), chunk)]
    c = counted(batches, tuple(counts))
    rec, byt = scalar_counts([None if t is None else serialize(t, "string") for t in texts], counts)
    assert {n: c.records[n].tolist() for n in counts} == rec
    assert {n: c.bytes[n].tolist() for n in counts} == byt
    assert c.null_records == sum(t is None for t in texts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)), max_size=200))
def test_any_long_keys_equal_the_scalar_partitioner(values):
    c = counted([pa.RecordBatch.from_arrays([pa.array(values, pa.int64())], names=["_k"])], (31,))
    assert (
        c.records[31].tolist()
        == scalar_counts([None if v is None else serialize(str(v), "long") for v in values], (31,))[0][31]
    )


def test_unsupported_arrow_type_is_refused():
    with pytest.raises(TypeError, match="double"):
        key_layout(pa.array([1.5]))
