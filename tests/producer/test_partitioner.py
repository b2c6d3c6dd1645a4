"""Legacy Scala partitioner, keyless-record simulation per era, 3.3+ adaptive choice (`BuiltInPartitionerTest.java`),
coordinator partitions (`GroupCoordinatorServiceTest.java`, `TransactionStateManagerTest.scala`)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.coordinator import partition_for
from planner.model import PlannerError
from planner.producer.partitioner import (
    ERAS,
    adaptive_frequency_table,
    adaptive_pick,
    java_hash_code,
    legacy_scala_partition,
    simulate_null_keys,
)

# -- coordinator (GroupCoordinatorService / TransactionStateManager partitionFor) -----------------------------


def test_group_coordinator_service_partition_for():
    # GroupCoordinatorServiceTest: partitionFor("foo") == Utils.abs("foo".hashCode()) % 10
    assert partition_for("foo", 10) == 4


def test_transaction_state_manager_vectors():
    # TransactionStateManagerTest with 2 partitions
    assert [partition_for(t, 2) for t in ("one", "two", "b", "a")] == [0, 0, 0, 1]


def test_group_metadata_manager_vector():
    assert partition_for("foo", 2) == 0  # GroupMetadataManagerTest: groupPartitionId = 0 of numOffsetsPartitions = 2


def test_min_value_hash_maps_to_zero():
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE: Utils.abs gives 0, never a negative partition
    assert java_hash_code("polygenelubricants", "string") == -(2**31)
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("polygenelubricants", 7) == 0


def test_default_fifty_and_non_bmp_ids():
    assert partition_for("my-group") == abs(java_hash_code("my-group", "string")) % 50
    # a supplementary character hashes as its two UTF-16 code units: 0xD83D, 0xDE00
    assert java_hash_code("😀", "string") == 31 * 0xD83D + 0xDE00
    with pytest.raises(PlannerError, match="positive"):
        partition_for("x", 0)


# -- legacy Scala producer ----------------------------------------------------------------------------------------


def test_java_hash_codes():
    assert java_hash_code("foo", "string") == 101574
    assert java_hash_code("", "string") == 0
    assert java_hash_code("-7", "int") == -7
    assert java_hash_code("-1", "long") == 0  # Long.hashCode(-1) = (int)(-1 ^ (-1 >>> 32)) = 0
    assert java_hash_code("4294967296", "long") == 1
    assert java_hash_code("1.0", "double") == 1072693248  # 0x3ff00000_00000000 → 0x3ff00000
    assert java_hash_code("NaN", "double") == 2146959360  # 0x7ff80000
    assert java_hash_code("1.0", "float") == 1065353216
    assert java_hash_code("true", "boolean") == 1231 and java_hash_code("false", "boolean") == 1237
    # UUID.hashCode of 00000000-0000-0001-0000-000000000002: hilo = 1 ^ 2 = 3
    assert java_hash_code("00000000-0000-0001-0000-000000000002", "uuid") == 3


def test_legacy_scala_partitions():
    assert legacy_scala_partition("foo", "string", 10) == 4
    assert legacy_scala_partition("-7", "int", 5) == 2  # Utils.abs(-7) % 5
    assert legacy_scala_partition("polygenelubricants", "string", 3) == 0
    with pytest.raises(PlannerError) as err:
        legacy_scala_partition("00ff", "bytes-hex", 3)
    assert str(err.value) == (
        "--partitioner legacy-scala cannot place a bytes-hex key: the Scala producer hashed a byte[] key by its "
        "identity "
        "hashCode, which differs in every JVM; use --key-type string|int|long|short|double|float|boolean|uuid"
    )
    # the other types have a Java hashCode: Float 1.5 → 0x3FC00000, Boolean.TRUE → 1231, "x" → 120
    assert [legacy_scala_partition(v, t, 7) for v, t in [("1.5", "float"), ("true", "boolean"), ("x", "string")]] == [
        6,
        6,
        1,
    ]


# -- keyless records ----------------------------------------------------------------------------------------------


def test_round_robin_era_is_even():
    sim = simulate_null_keys("round-robin", 7, 1000, 50, seed=3)
    assert sum(sim.counts) == 1000 and max(sim.counts) - min(sim.counts) <= 1


def test_sticky_era_switches_to_a_different_partition_each_batch():
    sim = simulate_null_keys("sticky", 5, 1000, 100, seed=11)
    assert sim.switches == 9
    assert all(c % 100 == 0 for c in sim.counts) and sum(sim.counts) == 1000


def test_sticky_partitioning_three_records_then_switch():
    # BuiltInPartitionerTest.testStickyPartitioning: sticky batch size 3 → three appends stay, the 4th draws anew
    three = simulate_null_keys("uniform-sticky", 4, 3, 3, seed=5)
    assert three.switches == 0 and sorted(three.counts)[-1] == 3
    four = simulate_null_keys("uniform-sticky", 4, 4, 3, seed=5)
    assert four.switches == 1


def test_unavailable_partitions_never_chosen():
    for era in ERAS:
        sim = simulate_null_keys(era, 6, 5000, 10, seed=2, available=[1, 4])
        assert sim.counts[0] == sim.counts[2] == sim.counts[3] == sim.counts[5] == 0
        assert sim.counts[1] + sim.counts[4] == 5000
    # a topic whose only partition is leaderless still gets partition 0
    for era in ERAS:
        assert simulate_null_keys(era, 1, 10, 3, seed=0, available=[]).counts == (10,)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(ERAS), st.integers(1, 12), st.integers(0, 3000), st.integers(1, 200), st.integers(0, 2**31))
def test_simulation_is_seeded_and_conserves_records(era, n, records, batch, seed):
    a = simulate_null_keys(era, n, records, batch, seed)
    assert a == simulate_null_keys(era, n, records, batch, seed)
    assert sum(a.counts) == records and len(a.counts) == n


@pytest.mark.parametrize(
    "args, counts, switches",
    [
        (("round-robin", 5, 23, 4, 7, None), (5, 5, 5, 4, 4), 22),
        (("round-robin", 6, 40, 3, 1, [0, 2, 5]), (13, 0, 13, 0, 0, 14), 39),
        (("sticky", 5, 37, 4, 9, None), (5, 4, 12, 8, 8), 9),
        (("sticky", 6, 50, 5, 3, [1, 4]), (0, 25, 0, 0, 25, 0), 9),
        (("sticky", 4, 9, 2, 0, [3]), (0, 0, 0, 9), 4),
        (("sticky", 3, 11, 2, 4, []), (2, 3, 6), 5),
        (("uniform-sticky", 5, 41, 6, 12, None), (6, 6, 6, 11, 12), 6),
        (("uniform-sticky", 7, 33, 4, 8, [0, 6]), (24, 0, 0, 0, 0, 0, 9), 8),
        (("uniform-sticky", 3, 10, 3, 2, []), (4, 3, 3), 3),
    ],
)
def test_simulation_exact_counts_and_switches(args, counts, switches):
    """Seeded runs of every era, all, some and no partitions available: the exact counts and switches."""
    era, n, records, batch, seed, available = args
    sim = simulate_null_keys(era, n, records, batch, seed, available)
    assert (sim.counts, sim.switches) == (counts, switches)


def test_simulation_rejects_bad_input():
    with pytest.raises(PlannerError, match="batch-size"):
        simulate_null_keys("sticky", 3, 10, 0)
    with pytest.raises(PlannerError, match="unknown era"):
        simulate_null_keys("bogus", 3, 10, 1)
    with pytest.raises(PlannerError) as exc:
        simulate_null_keys("sticky", 0, 10, 1)
    assert str(exc.value) == "number of partitions must be positive, got 0"
    with pytest.raises(PlannerError) as exc:
        simulate_null_keys("sticky", 3, -1, 1)
    assert str(exc.value) == "--records must be at least 0, got -1"
    with pytest.raises(PlannerError) as exc:
        simulate_null_keys("bogus", 3, 10, 1)
    assert str(exc.value) == "unknown era 'bogus': use one of round-robin, sticky, uniform-sticky"


def test_adaptive_partitions_vector():
    # BuiltInPartitionerTest.adaptivePartitionsTest
    sizes = [5, 0, 3, 0, 1]
    assert adaptive_frequency_table(sizes) == [1, 7, 10, 16, 21]
    freq = [0] * 5
    for r in range(42):  # sequential random 0, 1, 2, …
        freq[adaptive_pick(sizes, r)] += 1
    assert freq == [2, 12, 6, 12, 10]
