"""`skew --engine auto`: a small local input is counted in this process, with the report Spark gives, byte for byte.

Every case runs the command twice on the same input: `--engine auto` (in-process, one note line on stderr) and
`--engine spark` (the session's local Spark), and compares stdout byte for byte; the per-partition counts are also
checked against Kafka's partitioner (murmur2) key by key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from planner.producer.murmur2 import keyed_partition
from planner.skew import local

NOTE = "counted in this process: faster than starting Spark (--engine spark to run it on Spark)\n"


def _both(planner_cli_here, *args):
    """(stdout of --engine auto, its stderr, stdout of --engine spark), both exit 0."""
    code, ours, err = planner_cli_here("skew", *args)
    assert code == 0, err
    code, theirs, spark_err = planner_cli_here("skew", "--engine", "spark", *args)
    assert code == 0, spark_err
    assert "counted in this process" not in spark_err
    return ours, err, theirs


def _expected(keys: list[str], n: int) -> list[int]:
    out = [0] * n
    for k in keys:
        out[keyed_partition(k.encode(), n)] += 1
    return out


def test_parquet_with_values_sweep_nulls_and_hot_keys_is_spark_byte_for_byte(spark, tmp_path, planner_cli_here):
    keys = [f"user-{(i * 37) % 113}" for i in range(3000)] + [None] * 7
    values = [i % 50 for i in range(3007)]
    path = tmp_path / "k.parquet"
    pq.write_table(pa.table({"key": keys, "v": values}), path, row_group_size=700)
    args = ("--keys", str(path), "--partitions", "6", "--value-bytes-column", "v", "--sweep", "4,12", "--top", "5")
    ours, err, theirs = _both(planner_cli_here, *args)
    assert ours == theirs
    assert err == f"skew: note: {path} (3,007 rows) {NOTE}"
    code, doc, _ = planner_cli_here("skew", *args, "--format", "json")
    summary = json.loads(doc)
    assert summary["null_key_records"] == 7
    assert [p["records"] for p in summary["per_partition"]] == _expected([k for k in keys if k], 6)
    assert "Rows: 3,007  keyed: 3,000  null keys: 7  unreadable: 0" in ours


def test_exact_top_json_int_and_binary_keys_match_spark(spark, tmp_path, planner_cli_here):
    ints = tmp_path / "i.parquet"
    pq.write_table(pa.table({"key": pa.array([(i * 7) % 41 - 20 for i in range(900)], pa.int32())}), ints)
    ours, err, theirs = _both(
        planner_cli_here, "--keys", str(ints), "--partitions", "5", "--key-type", "int", "--exact-top", "--top", "7",
        "--format", "json",
    )  # fmt: skip
    assert ours == theirs and err.endswith(NOTE)
    assert len(json.loads(ours)["top_keys"]) == 7
    folder = tmp_path / "bin"
    folder.mkdir()
    for part in range(2):  # a folder of Parquet files, as Spark lists them
        raw = [bytes([part, i % 9]) for i in range(400)]
        pq.write_table(pa.table({"key": pa.array(raw, pa.binary())}), folder / f"part-{part}.parquet")
    ours, err, theirs = _both(planner_cli_here, "--keys", str(folder), "--partitions", "3", "--key-type", "bytes-hex")
    assert ours == theirs and err == f"skew: note: {folder} (800 rows) {NOTE}"


def test_text_file_matches_spark_and_the_partitioner(spark, tmp_path, planner_cli_here):
    lines = ["a", "b", "", "c", "a", "ä", "a"]
    path = tmp_path / "k.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ours, err, theirs = _both(planner_cli_here, "--keys", str(path), "--partitions", "3", "--top", "3")
    assert ours == theirs and err == f"skew: note: {path} (7 rows) {NOTE}"
    expected = _expected(lines, 3)
    rows = [line.split() for line in ours.splitlines()[5:8]]
    assert [int(r[1]) for r in rows] == expected
    assert "  1  a                  3" in ours


def test_more_distinct_keys_than_counters_and_other_inputs_run_on_spark(spark, tmp_path, planner_cli_here):
    many = tmp_path / "many.parquet"
    pq.write_table(pa.table({"key": [f"k{i}" for i in range(2500)]}), many)
    code, out, err = planner_cli_here("skew", "--keys", str(many), "--partitions", "4", "--top", "2")
    assert code == 0 and err == ""  # Spark's bound depends on its split: Spark counts it
    code, spark_out, _ = planner_cli_here("skew", "--engine", "spark", "--keys", str(many), "--partitions", "4")
    assert out.splitlines()[:12] == spark_out.splitlines()[:12]
    code, out, err = planner_cli_here("skew", "--keys", str(many), "--partitions", "4", "--top", "0")
    assert code == 0 and err.endswith(NOTE)  # no hot keys: nothing depends on the split
    csv = tmp_path / "k.csv"
    csv.write_text("key\na\nb\n")
    code, out, err = planner_cli_here("skew", "--keys", str(csv), "--partitions", "4")
    assert code == 0 and err == ""  # CSV: Spark's parser decides what a row is


def test_eligibility(tmp_path, monkeypatch):
    from planner.skew.job import JobSpec

    path = tmp_path / "k.parquet"
    pq.write_table(pa.table({"key": ["a"], "n": pa.array([1], pa.int64())}), path)
    spec = JobSpec(keys=str(path), counts=(3,), primary=3)
    assert local.eligible(spec, "local[*]", None) == [path]
    assert local.eligible(spec, "spark://127.0.0.1:7077", None) is None
    assert local.eligible(spec, "local[*]", str(tmp_path / "out")) is None
    assert local.eligible(JobSpec(keys=str(path), key_type="long", counts=(3,)), "local[2]", None) is None
    assert local.eligible(JobSpec(keys=str(path), key_column="n", key_type="long", counts=(3,)), "local", None) == [
        path
    ]
    monkeypatch.setattr(local, "LOCAL_MAX_ROWS", 0)  # the footers' row count decides, before anything is read
    assert local.eligible(spec, "local[*]", None) is None
    monkeypatch.setattr(local, "LOCAL_MAX_BYTES", 3)
    text = tmp_path / "k.txt"
    text.write_bytes(b"a\nb\n")
    assert local.eligible(JobSpec(keys=str(text), input_format="text", counts=(3,)), "local[*]", None) is None
    text.write_bytes(b"a\r\nb\r\n")
    assert local.count([text], JobSpec(keys=str(text), input_format="text", counts=(3,), primary=3)) is None


def test_csv_blank_lines_counted_here_as_spark_counts_them(spark, tmp_path):
    """A local CSV's blank lines are counted without a second Spark job, as that job counted them."""
    from pyspark.sql import functions as F

    from planner.skew.job import _local_blank_lines

    one = tmp_path / "one.csv"
    one.write_bytes(b"key\na\n \n\t\n\r\n  \r\nb\rc\n\n\r\r   ")
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "p1.csv").write_bytes(b"key\n\n\nx\n")
    (folder / "p2.csv").write_bytes(b"")
    (folder / "_SUCCESS").write_bytes(b"\n\n")
    for path, expected in ((one, 7), (folder, 2)):
        spark_count = spark.read.text(str(path)).filter(F.trim(F.col("value")) == "").count()
        assert (_local_blank_lines(str(path)), spark_count) == (expected, expected)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfkey\n\n")
    assert _local_blank_lines(str(bom)) is None  # Hadoop's reader decides


def test_spark_under_too_low_an_open_files_limit_is_one_line_before_any_jvm(tmp_path):
    # measured: Spark's driver JVM fails at `ulimit -n 256` with Java's stack lines; refused before it starts
    path = tmp_path / "keys.txt"
    path.write_text("a\nb\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [
            "bash",
            "-c",
            f'ulimit -n 256 && exec "$0" -m planner skew --keys {path} --partitions 3 --engine spark',
            sys.executable,
        ],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PATH": os.environ.get("PATH", "")},
        timeout=120,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        "error: cannot start Spark: the open-files limit (ulimit -n) is 256, Spark needs at least 512; raise it "
        "(e.g. ulimit -n 4096)\n",
    )
