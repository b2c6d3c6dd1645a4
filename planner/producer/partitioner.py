"""The producer's partitioner, by Kafka version (`clients/src/main/java/org/apache/kafka/clients/producer/internals/`
`DefaultPartitioner.java`, `StickyPartitionCache.java`, `BuiltInPartitioner.java`; before 2.0 the Scala
`core/src/main/scala/kafka/producer/DefaultPartitioner.scala`).

* keyed records: `toPositive(murmur2(serialized key)) % numPartitions` — identical from 0.8.2 to trunk (all partitions
  count, available or not); `partition_keys_batch` is the vectorised form over many keys.
* `legacy-scala`: the pre-2.0 Scala producer's `kafka.producer.DefaultPartitioner` (0.8.0–1.1, removed in 2.0):
  `Utils.abs(key.hashCode) % numPartitions` on the key *object* — Java's hashCode of the String / Integer / Long / …,
  not murmur2 of bytes. A byte-array key has an identity hashCode there (different in every JVM), so it cannot be
  reproduced.
* keyless records (`simulate_null_keys`): ≤2.3 round robin over the available partitions from a random counter;
  2.4–3.2 KIP-480 sticky (one random available partition per batch, a *different* one for each new batch);
  3.3+ KIP-794 built-in uniform sticky (switch after `batch.size` bytes to a random available partition, which may be
  the same one). Kafka draws from an unseeded `ThreadLocalRandom`; the simulation draws from `java.util.Random(seed)`,
  so a seed reproduces one possible run, not a particular producer's.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Sequence

from planner.java import JavaRandom, int32, java_abs, string_hash_code, to_positive
from planner.model import NO_LEADER, Cluster, PlannerError
from planner.producer.murmur2 import keyed_partition
from planner.producer.serializers import _INT_RE, _UUID_RE, _bad, _java_double

ERAS = ("round-robin", "sticky", "uniform-sticky")
ERA_VERSIONS = {"round-robin": "0.9 – 2.3", "sticky": "2.4 – 3.2", "uniform-sticky": "3.3+"}


@dataclass(frozen=True)
class Target:
    """Where keys are partitioned: a partition count, and with a topology the topic, its leaders and replicas."""

    partitions: int
    topic: str | None = None
    leaders: tuple[int, ...] | None = None  # per partition, NO_LEADER when none
    replicas: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True)
class KeySummary:
    """The per-partition key histogram's skew figures (`partition --summary`)."""

    keys: int
    partitions: int
    mean: float
    max: int
    min: int
    max_partition: int  # the first partition holding `max` keys
    skew: float  # max / mean (0 with no keys)
    empty_partitions: int


def summarize(counts: Sequence[int]) -> KeySummary:
    total = sum(counts)
    mean = total / len(counts)
    top = max(counts)
    return KeySummary(
        keys=total,
        partitions=len(counts),
        mean=mean,
        max=top,
        min=min(counts),
        max_partition=list(counts).index(top),
        skew=top / mean if mean else 0.0,
        empty_partitions=sum(1 for c in counts if c == 0),
    )


# -- legacy Scala producer ------------------------------------------------------------------------------------------


def java_hash_code(value: str, key_type: str) -> int:
    """hashCode() of the Java object the key text denotes (String, Integer, Long, Short, Double, Float, Boolean,
    UUID)."""
    if key_type == "string":
        return string_hash_code(value)
    if key_type in ("int", "short", "long"):
        if not _INT_RE.match(value):
            raise _bad(value, key_type, "expected an integer (optional sign, digits only)")
        bits = {"short": 15, "int": 31, "long": 63}[key_type]
        if len(value) > 40:  # no long has that many digits, and int() would stop at 4300 with a traceback
            raise _bad(value, key_type, f"out of range {-(1 << bits)}..{(1 << bits) - 1}")
        number = int(value)
        bits = {"short": 15, "int": 31, "long": 63}[key_type]
        if not -(1 << bits) <= number < (1 << bits):
            raise _bad(value, key_type, f"out of range {-(1 << bits)}..{(1 << bits) - 1}")
        if key_type == "long":  # Long.hashCode: (int)(value ^ (value >>> 32))
            u = number & 0xFFFFFFFFFFFFFFFF
            return int32(u ^ (u >> 32))
        return number
    if key_type == "double":  # Double.hashCode: bits ^ (bits >>> 32) of doubleToLongBits
        real = _java_double(value, key_type)
        u = 0x7FF8000000000000 if real != real else struct.unpack(">Q", struct.pack(">d", real))[0]
        return int32(u ^ (u >> 32))
    if key_type == "float":
        real = _java_double(value, key_type)
        return int32(0x7FC00000 if real != real else struct.unpack(">I", struct.pack(">f", real))[0])
    if key_type == "boolean":
        if value not in ("true", "false"):
            raise _bad(value, key_type, "expected true or false")
        return 1231 if value == "true" else 1237
    if key_type == "uuid":  # UUID.hashCode: hilo = msb ^ lsb; (int)(hilo >> 32) ^ (int) hilo
        if not _UUID_RE.match(value):
            raise _bad(value, key_type, "expected 8-4-4-4-12 hexadecimal digits")
        raw = int(value.replace("-", ""), 16)
        hilo = (raw >> 64) ^ (raw & 0xFFFFFFFFFFFFFFFF)
        return int32((hilo >> 32) ^ hilo)
    if key_type == "bytes-hex":
        raise PlannerError(
            "--partitioner legacy-scala cannot place a bytes-hex key: the Scala producer hashed a byte[] key by its "
            "identity hashCode, which differs in every JVM; use --key-type "
            "string|int|long|short|double|float|boolean|uuid"
        )
    raise PlannerError(f"unknown key type {key_type!r}")


def legacy_scala_partition(value: str, key_type: str, n: int) -> int:
    """Scala `kafka.producer.DefaultPartitioner` (0.8.0–1.1): Utils.abs(key.hashCode) % numPartitions."""
    return java_abs(java_hash_code(value, key_type)) % n


# -- keyless records ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NullKeySimulation:
    era: str
    records: int
    batch_size: int
    counts: tuple[int, ...]  # records per partition
    switches: int  # how often the producer moved to another partition (or, 3.3+, drew a new one)

    @property
    def skew(self) -> float:
        """max / mean records per partition."""
        mean = self.records / len(self.counts) if self.counts else 0
        return max(self.counts) / mean if mean else 0.0


def _next_int(rnd: JavaRandom) -> int:
    return to_positive(rnd.next_int())


def _check_simulation(era: str, n_partitions: int, records: int, batch_size: int) -> None:
    if era not in ERAS:
        raise PlannerError(f"unknown era {era!r}: use one of {', '.join(ERAS)}")
    if n_partitions <= 0:
        raise PlannerError(f"number of partitions must be positive, got {n_partitions}")
    if records < 0:
        raise PlannerError(f"--records must be at least 0, got {records}")
    if batch_size <= 0:
        raise PlannerError(f"--batch-size must be positive, got {batch_size}")


def _round_robin(rnd: JavaRandom, avail: list[int], counts: list[int], records: int) -> int:
    """DefaultPartitioner 1.0–2.3: per-topic counter seeded with a random int, post-incremented per record."""
    n_partitions = len(counts)
    counter = rnd.next_int()
    for _ in range(records):
        c = to_positive(counter)
        p = avail[c % len(avail)] if avail else c % n_partitions
        counter = int32(counter + 1)
        counts[p] += 1
    return max(0, records - 1)


def _sticky(random_partition: Callable[[], int], avail: list[int], counts: list[int], records: int, batch: int) -> int:
    """StickyPartitionCache: a random available partition; each new batch moves to a different one."""
    switches = 0
    current = avail[0] if len(avail) == 1 else random_partition()
    in_batch = 0
    for _ in range(records):
        if in_batch == batch:
            old = current
            if len(avail) == 1:
                current = avail[0]
            elif not avail:
                current = random_partition()
            else:
                current = old
                while current == old:
                    current = random_partition()
            in_batch = 0
            switches += 1
        counts[current] += 1
        in_batch += 1
    return switches


def _built_in(random_partition: Callable[[], int], counts: list[int], records: int, batch_size: int) -> int:
    """BuiltInPartitioner without load statistics: after batch.size bytes, a uniformly random available partition."""
    switches = 0
    current = random_partition()
    produced = 0
    for _ in range(records):
        if produced >= batch_size:
            current = random_partition()
            produced = 0
            switches += 1
        counts[current] += 1
        produced += 1
    return switches


def simulate_null_keys(
    era: str, n_partitions: int, records: int, batch_size: int, seed: int = 0, available: Sequence[int] | None = None
) -> NullKeySimulation:
    """Where `records` keyless records go under the partitioner of `era`, each record 1 byte / 1 batch slot, so a
    batch holds `batch_size` records (batch.size in bytes for 3.3+). `available`: partitions with a leader (default
    all)."""
    _check_simulation(era, n_partitions, records, batch_size)
    avail = list(range(n_partitions)) if available is None else sorted(available)
    rnd = JavaRandom(seed)
    counts = [0] * n_partitions

    def random_partition() -> int:
        r = _next_int(rnd)
        return avail[r % len(avail)] if avail else r % n_partitions

    if era == "round-robin":
        switches = _round_robin(rnd, avail, counts, records)
    elif era == "sticky":
        switches = _sticky(random_partition, avail, counts, records, batch_size)
    else:
        switches = _built_in(random_partition, counts, records, batch_size)
    return NullKeySimulation(era=era, records=records, batch_size=batch_size, counts=tuple(counts), switches=switches)


# -- 3.3+ adaptive partitioning -------------------------------------------------------------------------------------


def adaptive_frequency_table(queue_sizes: Sequence[int]) -> list[int]:
    """BuiltInPartitioner.updatePartitionLoadStats: weights (max+1) - size, cumulative (CFT)."""
    if not queue_sizes:
        return []
    top = max(queue_sizes) + 1
    table, total = [], 0
    for size in queue_sizes:
        total += top - size
        table.append(total)
    return table


def adaptive_pick(queue_sizes: Sequence[int], random_value: int) -> int:
    """The partition index the built-in partitioner picks for one draw (random_value = toPositive(nextInt()))."""
    table = adaptive_frequency_table(queue_sizes)
    x = random_value % table[-1]
    for i, value in enumerate(table):  # first index whose cumulative weight is strictly greater than x
        if value > x:
            return i
    raise AssertionError("unreachable")  # pragma: no cover


def target_for(partitions: int, cluster: Cluster | None = None, topic: str | None = None) -> Target:
    """The partition count alone, or with a cluster the topic's leaders (NO_LEADER when none) and replicas."""
    if cluster is None or topic is None:
        return Target(partitions)
    from planner.leadership import topic_states

    t = cluster.topic(topic)
    states = topic_states(cluster, t)
    return Target(partitions, topic, tuple(s.leader for s in states), tuple(p.replicas for p in t.partitions))


def partition_keys(
    keys: Sequence[str], key_type: str, encoding: str, n: int, partitioner: str = "default"
) -> list[int]:
    """The partition of each key: murmur2 over Kafka's serialized key, or the pre-2.0 Scala producer's rule."""
    from planner.producer.serializers import serialize

    if partitioner == "legacy-scala":
        return [legacy_scala_partition(k, key_type, n) for k in keys]
    return [keyed_partition(serialize(k, key_type, encoding), n) for k in keys]


def partition_lines(
    data, starts, lengths, texts: Sequence[str], key_type: str, encoding: str, n: int, partitioner: str
):
    """The partitions (an int32 array) of one chunk of key lines: `data` the chunk's bytes, `starts`/`lengths` each
    line's span, `texts` the lines decoded (not needed for UTF-8 strings under the default partitioner, hashed straight
    from the bytes, vectorised)."""
    import numpy as np

    from planner.producer.murmur2 import murmur2_spans, pack_keys, partition_batch
    from planner.producer.serializers import check_encoding, serialize

    if partitioner == "legacy-scala":
        return np.array([legacy_scala_partition(t, key_type, n) for t in texts], dtype=np.int32)
    if key_type == "string" and check_encoding(encoding) == "utf-8":
        hashes = murmur2_spans(data, starts, lengths).view(np.uint32)
        return ((hashes & np.uint32(0x7FFFFFFF)) % np.uint32(n)).astype(np.int32)
    kd, ko = pack_keys([serialize(t, key_type, encoding) for t in texts])
    return partition_batch(kd, ko, n)


def simulate_every_era(target: Target, records: int, batch_size: int, seed: int):
    """Keyless records under every era's partitioner; with leaders known, only partitions with a leader are
    available (as the producer's cluster metadata has them). Returns (one simulation per era, available or None)."""
    available = None
    if target.leaders is not None:
        available = [p for p, leader in enumerate(target.leaders) if leader != NO_LEADER]
    sims = [simulate_null_keys(era, target.partitions, records, batch_size, seed, available) for era in ERAS]
    return sims, available
