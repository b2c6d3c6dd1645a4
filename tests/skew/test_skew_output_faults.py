"""skew --output under faults (issue 33): a SIGTERM while the files are moved in leaves one whole set, never the new
keys.parquet beside the earlier summary.json; a write that fails is one line naming the folder, the earlier set kept,
no temp folder left. In this process, on the session's Spark."""

import json
import os
import signal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import planner.skew.command as command
from planner.skew import job


def _keys(tmp_path):
    path = tmp_path / "k.parquet"
    pq.write_table(pa.table({"key": [f"user-{i % 11}" for i in range(300)]}), path)
    return str(path)


def _skew(planner_cli_here, keys, out, partitions):
    return planner_cli_here("skew", "--keys", keys, "--partitions", str(partitions), "--output", str(out))


def _set(out):
    """What the folder holds: its entries, summary.json's partition count, partitions.parquet's rows, the keys."""
    return (
        sorted(os.listdir(out)),
        json.loads((out / "summary.json").read_text())["partitions"],
        pq.read_table(out / "partitions.parquet").num_rows,
        pq.read_table(out / "keys.parquet").num_rows,
    )


@pytest.mark.parametrize("n", range(1, 4))  # three entries move in: keys.parquet, partitions.parquet, summary.json
def test_sigterm_while_the_files_move_in_leaves_one_whole_set(spark, tmp_path, planner_cli_here, monkeypatch, n):
    # before: the signal raised between two moves, leaving the new files beside the earlier ones (or the earlier
    # keys.parquet deleted and no new one); now it is held until the set is in place, then reported as Ctrl-C
    keys, out = _keys(tmp_path), tmp_path / "out"
    assert _skew(planner_cli_here, keys, out, 8)[0] == 0
    files = ["keys.parquet", "partitions.parquet", "summary.json"]
    assert _set(out) == (files, 8, 8, 11)
    real, calls = os.replace, []

    def replace(src, dst, *a, **k):
        if os.path.dirname(dst) == str(out):  # one of the set moving in (Spark and Python replace other files too)
            calls.append(dst)
        if len(calls) == n and os.path.dirname(dst) == str(out):
            os.kill(os.getpid(), signal.SIGTERM)
        return real(src, dst, *a, **k)

    monkeypatch.setattr(command.os, "replace", replace)
    assert _skew(planner_cli_here, keys, out, 4) == (130, "", "error: interrupted\n")
    assert _set(out) == (files, 4, 4, 11)  # the new set, whole
    assert len(calls) == 3
    assert sorted(os.listdir(tmp_path)) == ["k.parquet", "out"]  # no lock file, no temp folder


def test_a_full_disk_while_writing_is_one_line_and_keeps_the_earlier_set(
    spark, tmp_path, planner_cli_here, monkeypatch
):
    keys, out = _keys(tmp_path), tmp_path / "out"
    assert _skew(planner_cli_here, keys, out, 8)[0] == 0

    def full(report, path):  # pyarrow words the errno in its message, without an errno attribute
        raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(command, "_write_partitions_parquet", full)
    assert _skew(planner_cli_here, keys, out, 4) == (
        2,
        "",
        f"error: --output {out}: No space left on device; nothing was written there (free space, or choose another "
        "folder)\n",
    )
    assert _set(out) == (["keys.parquet", "partitions.parquet", "summary.json"], 8, 8, 11)
    assert sorted(os.listdir(tmp_path)) == ["k.parquet", "out"]


def test_spark_failing_to_write_keys_parquet_names_the_folder_and_the_cause(
    spark, tmp_path, planner_cli_here, monkeypatch
):
    # measured on a 12 KiB tmpfs: "error: counting records per key of --keys K failed: [TASK_WRITE_FAILED] Task failed
    # while writing rows to file:/…/out/.skew-43cqa9oa/keys.parquet. SQLSTATE: 58030" (a temp folder, no cause)
    text = (
        "[TASK_WRITE_FAILED] Task failed while writing rows to file:/o/.skew-1/keys.parquet. SQLSTATE: 58030\n"
        "JVM stacktrace:\norg.apache.spark.SparkException: ...\nCaused by: java.io.IOException: No space left on device"
    )
    assert job.write_failure(text) == "No space left on device"
    assert job.write_failure("Job aborted ... java.io.IOException: File too large") == "File too large"
    assert job.write_failure("[TASK_WRITE_FAILED] Task failed while writing rows") is None
    keys, out = _keys(tmp_path), tmp_path / "new" / "out"

    def fail(*args, **kwargs):
        raise job.KeysWriteFailed("No space left on device")

    monkeypatch.setattr(job, "run", fail)
    assert _skew(planner_cli_here, keys, out, 4) == (
        2,
        "",
        f"error: --output {out}: No space left on device; nothing was written there (free space, or choose another "
        "folder)\n",
    )
    assert sorted(os.listdir(tmp_path)) == ["k.parquet"]  # the folders this run made are gone again


def test_a_spark_write_refused_by_the_file_size_limit_names_the_limit(monkeypatch):
    # measured under ulimit -f 64: "counting records per key of --keys K failed: Job aborted due to stage failure: ...
    # java.io.IOException: File too large" (Spark's shuffle files in its local dir), not naming the limit
    import resource

    failure = RuntimeError("Job aborted due to stage failure: Lost task 0.0: java.io.IOException: File too large")
    monkeypatch.setattr(resource, "getrlimit", lambda which: (65536, resource.RLIM_INFINITY))
    assert job._first_line(failure) == (
        "Job aborted due to stage failure: Lost task 0.0: java.io.IOException: File too large (the file size limit, "
        "ulimit -f, is 65536 bytes: Spark's shuffle and spill files need more)"
    )
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert job._first_line(failure).endswith("java.io.IOException: File too large")
