"""Kafka's key serializers (`clients/src/main/java/org/apache/kafka/common/serialization/`), from a key given as text.

The bytes are what the producer hashes: `partition_for_key(serialize(text, type), n)`.

* string: `String.getBytes(encoding)` (UTF-8 unless `key.serializer.encoding` says otherwise)
* int / long / short: 4 / 8 / 2 bytes big-endian two's complement (IntegerSerializer, LongSerializer, ShortSerializer);
  the text is parsed like Java's `Integer.parseInt` (optional sign, ASCII digits, nothing else) and must fit the type
* float / double: `Float.floatToRawIntBits` 4 bytes / `Double.doubleToLongBits` 8 bytes big-endian (a NaN is the
  canonical 0x7ff8000000000000 for double); text as Java's `parseDouble` reads decimals, plus NaN / Infinity / -Infinity
* boolean: one byte, 0x01 for "true", 0x00 for "false"
* uuid: `UUID.toString()` (lower case, 36 characters) in the encoding; the text must be the 8-4-4-4-12 hex form
* bytes-hex: the bytes the hex text spells (ByteArraySerializer passes them through)
"""

from __future__ import annotations

import codecs
import math
import re
import struct

from planner.model import PlannerError
from planner.producer.murmur2 import keyed_partition

KEY_TYPES = ("string", "int", "long", "short", "double", "float", "boolean", "uuid", "bytes-hex")

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?\Z")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_RANGES = {"short": (2, 15), "int": (4, 31), "long": (8, 63)}


def _bad(value: str, key_type: str, why: str) -> PlannerError:
    shown = repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value)} characters)"
    return PlannerError(f"key {shown} is not a valid {key_type} key: {why}")


def check_encoding(encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise PlannerError(
            f"unknown --encoding {encoding!r}: use a charset name such as utf-8, utf-16 or iso-8859-1"
        ) from None


def _java_double(value: str, key_type: str) -> float:
    text = value.strip()  # Double.parseDouble trims leading/trailing whitespace
    sign = -1.0 if text.startswith("-") else 1.0
    body = text[1:] if text[:1] in "+-" else text
    if body == "NaN":
        return math.nan
    if body == "Infinity":
        return sign * math.inf
    if not _FLOAT_RE.match(text):
        raise _bad(value, key_type, "expected a decimal number, NaN, Infinity or -Infinity")
    if text[-1] in "fFdD":
        text = text[:-1]
    return float(text)


def _encode(value: str, encoding: str) -> bytes:
    """String.getBytes(charset): Java's "UTF-16" is big-endian with a FE FF byte-order mark, "UTF-32" big-endian
    without one (Python's codecs use the machine's byte order); unmappable characters become the replacement byte."""
    enc = check_encoding(encoding)
    if not value:  # String.getBytes of "" is an empty array in every charset: no byte-order mark (JDK StringCoding)
        return b""
    if enc == "utf-16":
        return b"\xfe\xff" + value.encode("utf-16-be", errors="replace")
    if enc == "utf-32":
        return value.encode("utf-32-be", errors="replace")
    return value.encode(enc, errors="replace")


def _integer(value: str, key_type: str) -> bytes:
    """Short/Integer/LongSerializer: the number big-endian in 2, 4 or 8 bytes."""
    size, bits = _RANGES[key_type]
    if not _INT_RE.match(value):
        raise _bad(value, key_type, "expected an integer (optional sign, digits only)")
    lo, hi = -(1 << bits), (1 << bits) - 1
    if len(value) > 40 or not lo <= (number := int(value)) <= hi:  # int() of 4301 digits would be a traceback
        raise _bad(value, key_type, f"out of range {lo}..{hi}")
    return number.to_bytes(size, "big", signed=True)


def _double(value: str, key_type: str) -> bytes:
    """DoubleSerializer: doubleToLongBits, big-endian (every NaN is the canonical one)."""
    real = _java_double(value, key_type)
    if math.isnan(real):
        return bytes.fromhex("7ff8000000000000")
    return struct.pack(">d", real)


def _float(value: str, key_type: str) -> bytes:
    """FloatSerializer: floatToRawIntBits of Float.parseFloat, big-endian."""
    real = _java_double(value, key_type)
    if math.isnan(real):
        return bytes.fromhex("7fc00000")  # Float.NaN's raw bits
    try:
        return struct.pack(">f", real)
    except OverflowError:  # Float.parseFloat rounds values beyond the float range to infinity
        return struct.pack(">f", math.copysign(math.inf, real))


def _boolean(value: str, key_type: str) -> bytes:
    """BooleanSerializer: one byte, 1 or 0."""
    if value == "true":
        return b"\x01"
    if value == "false":
        return b"\x00"
    raise _bad(value, key_type, "expected true or false")


def _uuid(value: str, key_type: str, encoding: str) -> bytes:
    """UUIDSerializer: the UUID's lower-case text in the encoding."""
    if not _UUID_RE.match(value):
        raise _bad(value, key_type, "expected 8-4-4-4-12 hexadecimal digits, e.g. 123e4567-e89b-12d3-a456-426614174000")
    return _encode(value.lower(), encoding)


def _bytes_hex(value: str, key_type: str) -> bytes:
    """ByteArraySerializer of the bytes written in hexadecimal (optional 0x)."""
    text = value[2:] if value[:2] in ("0x", "0X") else value
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise _bad(value, key_type, "expected an even number of hexadecimal digits") from None


_BY_TYPE = {"double": _double, "float": _float, "boolean": _boolean, "bytes-hex": _bytes_hex}


def serialize(value: str, key_type: str, encoding: str = "utf-8") -> bytes:
    """The bytes Kafka's serializer for `key_type` produces for the key written as `value`."""
    if key_type == "string":
        return _encode(value, encoding)
    if key_type in _RANGES:
        return _integer(value, key_type)
    if key_type == "uuid":
        return _uuid(value, key_type, encoding)
    if key_type in _BY_TYPE:
        return _BY_TYPE[key_type](value, key_type)
    raise PlannerError(f"unknown key type {key_type!r}: use one of {', '.join(KEY_TYPES)}")


def partition_for_key(key_bytes: bytes | None, n: int) -> int | None:
    """Kafka's keyed partition, toPositive(murmur2(key)) % n; None for an absent (null) key.

    An empty key (b"") is a key and is hashed. `n` = all partitions of the topic, available or not.
    """
    if key_bytes is None:
        return None
    if n <= 0:
        raise PlannerError(f"number of partitions must be positive, got {n}")
    return keyed_partition(key_bytes, n)
