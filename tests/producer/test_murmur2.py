"""murmur2, keyed partitions and serializers: every vector of `clients/src/test/java/org/apache/kafka/common/utils/
UtilsTest.java` (`testMurmur2`, `testAbs`) and kafka-python's `test/test_partitioner.py`, scalar ≡ vectorised."""

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.java import java_abs
from planner.model import PlannerError
from planner.producer.murmur2 import murmur2, murmur2_batch, pack_keys, partition_batch
from planner.producer.serializers import partition_for_key, serialize

# Kafka UtilsTest.testMurmur2
KAFKA_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (bytes([ord("a"), ord("b"), ord("c")]), 479470107),
]
# kafka-python test_murmur2_java_compatibility: partition of 1000, and the derived raw hashes
KAFKA_PYTHON_VECTORS = [
    (b"", 681, 275646681),
    (b"a", 524, -1563381124),
    (b"ab", 434, 316155434),
    (b"abc", 107, 479470107),
    (b"123456789", 566, -1822237082),
    (b"\x00 ", 742, 1121897742),
]


@pytest.mark.parametrize("data,expected", KAFKA_VECTORS)
def test_kafka_utils_murmur2(data, expected):
    assert murmur2(data) == expected
    d, o = pack_keys([data])
    assert murmur2_batch(d, o).tolist() == [expected]


@pytest.mark.parametrize("data,partition,raw", KAFKA_PYTHON_VECTORS)
def test_kafka_python_partitions(data, partition, raw):
    assert murmur2(data) == raw
    assert partition_for_key(data, 1000) == partition
    d, o = pack_keys([data])
    assert partition_batch(d, o, 1000).tolist() == [partition]


def test_batch_mixed_lengths_all_vectors_together():
    keys = [k for k, _ in KAFKA_VECTORS] + [k for k, _, _ in KAFKA_PYTHON_VECTORS]
    want = [v for _, v in KAFKA_VECTORS] + [r for _, _, r in KAFKA_PYTHON_VECTORS]
    d, o = pack_keys(keys)
    got = murmur2_batch(d, o)
    assert got.dtype == np.int32
    assert got.tolist() == want
    assert partition_batch(d, o, 1000).tolist()[6:] == [p for _, p, _ in KAFKA_PYTHON_VECTORS]


def test_utils_abs_vectors():
    # UtilsTest.testAbs
    assert [java_abs(x) for x in (-(2**31), -10, 10, 0, -1)] == [0, 10, 10, 0, 1]


def test_null_key_is_not_hashed_empty_key_is():
    assert partition_for_key(None, 10) is None
    assert partition_for_key(b"", 1000) == 681


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=60))
def test_vectorised_equals_scalar_mixed_lengths(keys):
    d, o = pack_keys(keys)
    assert murmur2_batch(d, o).tolist() == [murmur2(k) for k in keys]
    assert partition_batch(d, o, 7).tolist() == [(murmur2(k) & 0x7FFFFFFF) % 7 for k in keys]


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 20), st.integers(1, 200), st.integers(0, 2**32 - 1), st.integers(0, 5))
def test_vectorised_equals_scalar_fixed_length_with_offset(length, n, seed, lead):
    # fixed-width keys that start at an offset inside a larger buffer (Arrow slices)
    rng = np.random.default_rng(seed)
    buf = rng.integers(0, 256, lead + n * length + 3, dtype=np.uint8)
    offsets = lead + np.arange(n + 1, dtype=np.int32) * length
    keys = [bytes(buf[offsets[i] : offsets[i + 1]]) for i in range(n)]
    assert murmur2_batch(buf, offsets).tolist() == [murmur2(k) for k in keys]


def test_vectorised_crosses_chunk_boundary():
    rng = np.random.default_rng(5)
    lens = rng.integers(0, 30, 70_000)
    offsets = np.concatenate([[0], np.cumsum(lens)])
    data = rng.integers(0, 256, int(offsets[-1]), dtype=np.uint8)
    got = murmur2_batch(data, offsets)
    sample = range(0, 70_000, 997)
    assert [int(got[i]) for i in sample] == [murmur2(bytes(data[offsets[i] : offsets[i + 1]])) for i in sample]


def test_empty_batch():
    assert murmur2_batch(np.zeros(0, np.uint8), np.zeros(1, np.int64)).tolist() == []


# -- serializers (clients/src/main/java/org/apache/kafka/common/serialization/) --------------------------------


def test_string_serializer_encodings():
    assert serialize("héllo", "string") == "héllo".encode("utf-8")
    assert serialize("héllo", "string", "utf-16") == b"\xfe\xff" + "héllo".encode(
        "utf-16-be"
    )  # Java UTF-16 writes a BOM
    assert serialize("héllo", "string", "ISO-8859-1") == b"h\xe9llo"
    assert serialize("", "string") == b""
    assert serialize("ab", "string", "utf-32") == b"\x00\x00\x00a\x00\x00\x00b"
    assert serialize("a€", "string", "us-ascii") == b"a?"  # unmappable → '?' as String.getBytes does


def test_integer_serializers_big_endian():
    assert serialize("1", "int") == b"\x00\x00\x00\x01"
    assert serialize("-1", "int") == b"\xff\xff\xff\xff"
    assert serialize("-2147483648", "int") == b"\x80\x00\x00\x00"
    assert serialize("+258", "short") == b"\x01\x02"
    assert serialize("-32768", "short") == b"\x80\x00"
    assert serialize("9223372036854775807", "long") == b"\x7f" + b"\xff" * 7
    assert serialize("-2", "long") == b"\xff" * 7 + b"\xfe"


@pytest.mark.parametrize(
    "value,key_type",
    [
        ("2147483648", "int"),
        ("32768", "short"),
        ("9223372036854775808", "long"),
        ("1.5", "int"),
        ("1_000", "int"),
        (" 1", "int"),
        ("", "long"),
        ("0x10", "int"),
        ("abc", "double"),
        ("inf", "double"),
        ("maybe", "boolean"),
        ("123e4567e89b12d3a456426614174000", "uuid"),
        ("abc", "bytes-hex"),
    ],
)
def test_bad_values_name_value_and_type(value, key_type):
    with pytest.raises(PlannerError) as err:
        serialize(value, key_type)
    assert repr(value) in str(err.value) and key_type in str(err.value)


def test_double_float_boolean_uuid_bytes():
    assert serialize("1.5", "double") == struct.pack(">d", 1.5)
    assert serialize("-0.0", "double") == b"\x80" + b"\x00" * 7
    assert serialize("NaN", "double") == bytes.fromhex("7ff8000000000000")
    assert serialize("-Infinity", "double") == bytes.fromhex("fff0000000000000")
    assert serialize("1e3", "double") == struct.pack(">d", 1000.0)
    assert serialize("2.5f", "float") == struct.pack(">f", 2.5)
    assert serialize("NaN", "float") == bytes.fromhex("7fc00000")
    assert serialize("true", "boolean") == b"\x01" and serialize("false", "boolean") == b"\x00"
    assert serialize("123E4567-E89B-12D3-A456-426614174000", "uuid") == b"123e4567-e89b-12d3-a456-426614174000"
    assert serialize("00ff10", "bytes-hex") == b"\x00\xff\x10"
    assert serialize("", "bytes-hex") == b""


def test_unknown_type_and_encoding():
    with pytest.raises(PlannerError, match="unknown key type"):
        serialize("1", "int128")
    with pytest.raises(PlannerError, match="unknown --encoding"):
        serialize("1", "string", "klingon")


def test_serialized_key_partitions():
    # key "21" as a string hashes the two ASCII bytes of the Kafka vector
    assert partition_for_key(serialize("21", "string"), 2**31 - 1) == (-973932308 & 0x7FFFFFFF) % (2**31 - 1)
    assert partition_for_key(serialize("abc", "string"), 1000) == 107


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=30), max_size=40), st.binary(min_size=1, max_size=3))
def test_spans_with_separators_equal_scalar(keys, sep):
    from planner.producer.murmur2 import murmur2_spans

    blob = sep.join(keys)
    starts, pos = [], 0
    for k in keys:
        starts.append(pos)
        pos += len(k) + len(sep)
    got = murmur2_spans(np.frombuffer(blob, dtype=np.uint8), starts, [len(k) for k in keys])
    assert got.tolist() == [murmur2(k) for k in keys]


@pytest.mark.parametrize(
    "value,key_type,message",
    [
        ("2147483648", "int", "key '2147483648' is not a valid int key: out of range -2147483648..2147483647"),
        ("1.5", "short", "key '1.5' is not a valid short key: expected an integer (optional sign, digits only)"),
        ("abc", "double", "key 'abc' is not a valid double key: expected a decimal number, NaN, Infinity or -Infinity"),
        ("x", "float", "key 'x' is not a valid float key: expected a decimal number, NaN, Infinity or -Infinity"),
        ("maybe", "boolean", "key 'maybe' is not a valid boolean key: expected true or false"),
        (
            "123e4567e89b12d3a456426614174000",
            "uuid",
            "key '123e4567e89b12d3a456426614174000' is not a valid uuid key: expected 8-4-4-4-12 hexadecimal digits, "
            "e.g. 123e4567-e89b-12d3-a456-426614174000",
        ),
        (
            "0xabc",
            "bytes-hex",
            "key '0xabc' is not a valid bytes-hex key: expected an even number of hexadecimal digits",
        ),
        (
            "1",
            "int128",
            "unknown key type 'int128': use one of string, int, long, short, double, float, boolean, uuid, bytes-hex",
        ),
    ],
)
def test_bad_values_exact_texts(value, key_type, message):
    with pytest.raises(PlannerError) as err:
        serialize(value, key_type)
    assert str(err.value) == message


def test_float_overflow_hex_prefix_and_uuid_encoding():
    assert serialize("3.5e38", "float") == bytes.fromhex("7f800000")  # beyond Float.MAX_VALUE: Infinity
    assert serialize("0XAB10", "bytes-hex") == b"\xab\x10"
    assert serialize("123E4567-E89B-12D3-A456-426614174000", "uuid", "utf-16") == b"\xfe\xff" + (
        "123e4567-e89b-12d3-a456-426614174000".encode("utf-16-be")
    )
