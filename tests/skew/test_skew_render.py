"""The skew report rendered without Spark: the sweep's recommendation lines, exact text and JSON."""

from planner.skew.job import Counts, TopKey
from planner.skew.render import render_table, summary
from planner.skew.report import build_report


def report(records, top, max_skew=1.2):
    counts = Counts(
        records={n: tuple(v) for n, v in records.items()},
        bytes={n: tuple(10 * x for x in v) for n, v in records.items()},
        null_records=2,
        null_bytes=20,
        unreadable=1,
        top=tuple(top),
    )
    return build_report(
        counts,
        source="k.parquet",
        key_column="key",
        key_type="string",
        partitions=3,
        sweep_counts=tuple(records),
        max_skew=max_skew,
    )


def tail(r, n):
    return render_table(r).splitlines()[-n:]


def test_no_count_qualifies_names_the_lowest_and_the_hot_key_limit():
    r = report({3: [60, 20, 20], 6: [60, 10, 10, 10, 5, 5], 12: [60] + [4] * 10 + [0]}, [TopKey("hot", 50, 500, 0)])
    assert tail(r, 3) == [
        "Recommended: none of the counts keeps records max/mean at most 1.2 (the lowest is 1.800, at 3 partitions)",
        "The top key alone holds 50.00% of the keyed records: above 2 partitions its partition exceeds max/mean 1.2",
        "whatever the other keys do; more partitions cannot fix that skew",
    ]
    data = summary(r)["sweep"]
    assert (data["recommended"], data["lowest_max_over_mean"], data["hot_key_limit"]) == (None, 3, 2)


def test_a_key_of_most_records_allows_one_partition_only():
    r = report({3: [90, 5, 5], 6: [90, 2, 2, 2, 2, 2]}, [TopKey("hot", 90, 900, 0)])
    assert tail(r, 2)[0] == (
        "The top key alone holds 90.00% of the keyed records: above 1 partition its partition exceeds max/mean 1.2"
    )
    assert summary(r)["sweep"]["hot_key_limit"] == 1


def test_no_hot_key_line_when_the_key_allows_every_swept_count():
    r = report({3: [41, 30, 29], 6: [17, 17, 17, 17, 16, 16]}, [TopKey("a", 5, 50, 0)])
    assert tail(r, 1) == ["Recommended: 6 partitions (the smallest count whose records max/mean is at most 1.2)"]
    assert summary(r)["sweep"]["hot_key_limit"] == 24  # 5 * 24 / 100 = 1.2
    no_top = report({3: [60, 20, 20], 6: [60, 10, 10, 10, 5, 5]}, [])
    assert tail(no_top, 1) == [
        "Recommended: none of the counts keeps records max/mean at most 1.2 (the lowest is 1.800, at 3 partitions)"
    ]


def test_header_lines():
    r = report({3: [60, 20, 20]}, [])
    assert render_table(r).splitlines()[:3] == [
        "Keys: k.parquet, column 'key' as string, hashed as Kafka's producer does for 3 partitions",
        "Rows: 103  keyed: 100  null keys: 2  unreadable: 1",
        "Null keys are not hashed: the producer's keyless partitioner spreads them, so they are not counted per "
        "partition",
    ]


def test_spark_errors_become_their_first_meaningful_line():
    from planner.skew.spark import _first_line

    py4j = (
        "An error occurred while calling o41.parquet.\n: org.apache.spark.SparkException: [FAILED_READ_FILE."
        "CANNOT_READ_FILE_FOOTER] Encountered error while reading file file:/tmp/junk.parquet.\n\tat org.apache"
    )
    assert _first_line(Exception(py4j)) == (
        "[FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered error while reading file file:/tmp/junk.parquet."
    )
    assert _first_line(Exception("java.io.FileNotFoundException: File file:/x does not exist")) == (
        "File file:/x does not exist"
    )
    assert _first_line(Exception("[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for Parquet.")) == (
        "[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for Parquet."
    )
    assert _first_line(ValueError("")) == "ValueError"
