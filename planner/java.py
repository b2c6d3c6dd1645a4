"""Java semantics Kafka's algorithms depend on: int32 wrap, Utils.toPositive / Utils.abs, String.hashCode,
java.util.Random, Collections.shuffle and java.util.HashMap iteration order (the JDK's classes, and
`clients/src/main/java/org/apache/kafka/common/utils/Utils.java` `toPositive`, `abs`)."""

from __future__ import annotations

from typing import Hashable, Iterable, Sequence, TypeVar

T = TypeVar("T")

INT_MIN = -(1 << 31)
_MASK32 = 0xFFFFFFFF
_MASK48 = (1 << 48) - 1
_MASK64 = (1 << 64) - 1


def int32(x: int) -> int:
    """Wrap to a signed 32-bit Java int."""
    x &= _MASK32
    return x - (1 << 32) if x & 0x80000000 else x


def to_positive(x: int) -> int:
    """Utils.toPositive: clears the sign bit (not abs)."""
    return x & 0x7FFFFFFF


def java_abs(x: int) -> int:
    """Utils.abs: 0 for Integer.MIN_VALUE, else Math.abs."""
    x = int32(x)
    return 0 if x == INT_MIN else abs(x)


def string_hash_code(s: str) -> int:
    """String.hashCode over UTF-16 code units (surrogate pairs for characters outside the BMP)."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return int32(h)


def string_sort_key(s: str) -> bytes:
    """String.compareTo order (UTF-16 code units), for sorting names exactly as Java does."""
    return s.encode("utf-16-be", "surrogatepass")


class JavaRandom:
    """java.util.Random: the 48-bit LCG, next(bits), nextInt(bound)."""

    def __init__(self, seed: int = 0):
        self._seed = (seed ^ 0x5DEECE66D) & _MASK48

    def next(self, bits: int) -> int:
        self._seed = (self._seed * 0x5DEECE66D + 0xB) & _MASK48
        return int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        if bound is None:
            return self.next(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:  # power of two
            return int32((bound * r) >> 31)
        u = r
        while True:
            r = u % bound
            if u - r + m >= (1 << 31):  # int32 overflow in Java: draw again
                u = self.next(31)
                continue
            return r


class MockRandom(JavaRandom):
    """Kafka's test MockRandom (server-common/src/test/.../MockRandom.java): a 64-bit LCG from state 17."""

    def __init__(self, state: int = 17):
        self._state = state & _MASK64

    def next(self, bits: int) -> int:
        self._state = (self._state * 2862933555777941757 + 3037000493) & _MASK64
        return int32(self._state >> (64 - bits))


def java_shuffle(items: list[T], rnd: JavaRandom) -> None:
    """Collections.shuffle(list, rnd) for a RandomAccess list, in place."""
    for i in range(len(items), 1, -1):
        j = rnd.next_int(i)
        items[i - 1], items[j] = items[j], items[i - 1]


def hashmap_order(keys: Iterable[Hashable], hash_of=None, initial_capacity: int | None = None) -> list:
    """Iteration order of a java.util.HashMap after inserting `keys` in this order.

    `hash_of(key)` gives the key's Java hashCode (default: String.hashCode for str, the value for int).
    `initial_capacity`: None for `new HashMap<>()` (16), n for `new HashMap<>(n)`. Buckets ascend; within a bucket,
    insertion order. (Treeified buckets need 8+ colliding keys per bucket and are not modelled.)
    """
    keys = list(dict.fromkeys(keys))
    if hash_of is None:
        hash_of = lambda k: string_hash_code(k) if isinstance(k, str) else int32(k)  # noqa: E731
    capacity = 16
    if initial_capacity is not None:
        capacity = 1
        while capacity < initial_capacity:
            capacity <<= 1
    while len(keys) > capacity * 0.75:
        capacity <<= 1

    def bucket(k) -> int:
        h = hash_of(k) & _MASK32
        return (h ^ (h >> 16)) & (capacity - 1)

    order = {k: i for i, k in enumerate(keys)}
    return sorted(keys, key=lambda k: (bucket(k), order[k]))


def timeline_hashmap_order(keys: Iterable[Hashable], hash_of=None) -> list:
    """Iteration order of Kafka's `org.apache.kafka.timeline.TimelineHashMap` (server-common) after putting `keys`
    in this order into `new TimelineHashMap<>(registry, 0)`, none removed.

    `BaseHashTable`: 2 slots to start, doubled before a put that would pass a load of 0.75 (`rehash` moves each slot's
    elements in order); an element's slot is the top log2(slots) bits of `hashCode * -7046029254386353131L` (Knuth's
    multiplicative hashing, `findSlot`); a slot holding several elements keeps them in put order.
    `SnapshottableHashTable.CurrentIterator` walks the slots in ascending order and each slot's elements from the
    last put to the first (`ready.remove(ready.size() - 1)`). `hash_of` as for `hashmap_order`.
    """
    keys = list(dict.fromkeys(keys))
    if hash_of is None:
        hash_of = lambda k: string_hash_code(k) if isinstance(k, str) else int32(k)  # noqa: E731

    def slot(k, n: int) -> int:
        # 32 - Integer.numberOfLeadingZeros(n) is n.bit_length(); the product wraps as a Java long, `>>>` is unsigned
        return ((hash_of(k) * -7046029254386353131) & _MASK64) >> (65 - n.bit_length())

    slots: list[list] = [[], []]
    for size, k in enumerate(keys):
        if (size + 1) * 0.75 > len(slots):
            grown: list[list] = [[] for _ in range(2 * len(slots))]
            for old in slots:
                for e in old:
                    grown[slot(e, len(grown))].append(e)
            slots = grown
        slots[slot(k, len(slots))].append(k)
    return [k for s in slots for k in reversed(s)]


def sorted_java(names: Sequence[str]) -> list[str]:
    return sorted(names, key=string_sort_key)


def duplicates(items: list, hash_of=None) -> list:
    """`ToolsUtils.duplicates`: the elements seen more than once, in Java HashSet iteration order."""
    seen: set = set()
    dups: list = []
    for x in items:
        if x in seen:
            if x not in dups:
                dups.append(x)
        else:
            seen.add(x)
    return hashmap_order(dups, hash_of=hash_of)
