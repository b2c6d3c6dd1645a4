"""Java semantics (the JDK's `String`, `Random`, `Collections`, `HashMap`; Kafka's `Utils.java`, `UtilsTest.java`)."""

from planner.java import (
    JavaRandom,
    MockRandom,
    hashmap_order,
    int32,
    java_abs,
    java_shuffle,
    sorted_java,
    string_hash_code,
    timeline_hashmap_order,
    to_positive,
)


def test_int32_wraps():
    assert int32(2**31) == -(2**31)
    assert int32(2**32 + 5) == 5
    assert int32(-1) == -1


def test_to_positive_clears_sign_bit_and_abs_handles_min_value():
    assert to_positive(-1) == 2**31 - 1
    assert to_positive(-(2**31)) == 0
    assert java_abs(-(2**31)) == 0
    assert java_abs(-48) == 48


def test_string_hash_code():
    assert string_hash_code("") == 0
    assert string_hash_code("foo") == 101574
    assert string_hash_code("polygenelubricants") == -(2**31)  # the classic MIN_VALUE hash
    assert string_hash_code("\U0001f600") == 31 * 0xD83D + 0xDE00  # surrogate pair, two code units


def test_coordinator_style_abs_of_min_value_hash():
    assert java_abs(string_hash_code("polygenelubricants")) % 50 == 0


def test_java_random_matches_the_jdk():
    assert JavaRandom(42).next_int() == -1170105035
    assert JavaRandom(0).next_int() == -1155484576
    assert JavaRandom(42).next_int(10) == 0


def test_mock_random_state_17():
    r = MockRandom()
    # next(31) of Kafka's MockRandom: state = 17 * 2862933555777941757 + 3037000493 (mod 2^64), top 31 bits
    state = (17 * 2862933555777941757 + 3037000493) % 2**64
    assert r.next(31) == state >> 33


def test_shuffle_is_collections_shuffle():
    items = [1, 2, 3, 4, 5]
    rnd = JavaRandom(7)
    expected = list(items)
    check = JavaRandom(7)
    for i in range(len(expected), 1, -1):
        j = check.next_int(i)
        expected[i - 1], expected[j] = expected[j], expected[i - 1]
    java_shuffle(items, rnd)
    assert items == expected
    assert sorted(items) == [1, 2, 3, 4, 5]


def test_hashmap_order_vectors():
    assert hashmap_order(["consumer1", "consumer2", "consumer3"]) == ["consumer3", "consumer2", "consumer1"]
    assert hashmap_order(["topic3", "topic2", "topic1"]) == ["topic1", "topic2", "topic3"]
    assert hashmap_order(["4", "3", "2", "1"]) == ["1", "2", "3", "4"]
    # "topic" and "consumer4" share bucket 9: insertion order inside the bucket
    assert hashmap_order(["topic", "consumer4"]) == ["topic", "consumer4"]
    assert hashmap_order(["consumer4", "topic"]) == ["consumer4", "topic"]


def test_timeline_hashmap_order_vectors():
    # printed by Kafka 4.4.0's own org.apache.kafka.timeline.TimelineHashMap (server-common) after these puts:
    # slots ascend, a slot's elements are walked from the last put, the table doubles before a put past 0.75
    assert timeline_hashmap_order(range(6)) == [5, 0, 2, 4, 1, 3]
    assert timeline_hashmap_order([f"c{i}" for i in range(9)]) == ["c6", "c1", "c8", "c3", "c0", "c5", "c7", "c2", "c4"]
    # two KIP-848 member ids of a CI run (tests/realkafka/test_messages.py), in the same bucket of a 16-bucket HashMap:
    # in the 2-slot table h28… takes slot 0 and I00… slot 1, whichever joined first
    h28, i00 = "h28nqPb4TrmcqdizmoAMvg", "I00wsQ3XRSO3XrjyEbODpQ"
    assert timeline_hashmap_order([h28, i00]) == timeline_hashmap_order([i00, h28]) == [h28, i00]


def test_sorted_java_uses_utf16_code_units():
    assert sorted_java(["\uffff", "\U0001f600"]) == ["\U0001f600", "\uffff"]
