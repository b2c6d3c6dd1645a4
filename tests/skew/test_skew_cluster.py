"""The skew command on a real standalone Spark cluster (master + one worker on 127.0.0.1) equals local mode."""

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from planner.producer.serializers import partition_for_key

ROOT = Path(__file__).resolve().parents[2]


def test_standalone_cluster_gives_the_local_results(
    spark, standalone, spark_subprocess_env, tmp_path, tmp_path_factory, planner_cli, planner_cli_here, monkeypatch
):
    """On the cluster murmur2 runs in the JVM (the UDF jar shipped with spark.jars: an executor without it would fail
    with ClassNotFoundException); locally, without javac, in Python: the same results."""
    keys = [f"order-{i * 7919 % 1009}" for i in range(4000)] + ["", "é", None] * 5
    folder = tmp_path / "keys"
    folder.mkdir()
    for i in range(4):  # several files: several tasks on the executor
        chunk = keys[i::4]
        pq.write_table(
            pa.table({"key": pa.array(chunk, pa.string()), "size": [len(chunk)] * len(chunk)}),
            folder / f"part-{i}.parquet",
        )
    args = [
        "skew",
        "--keys",
        str(folder),
        "--topology",
        "topologies/six-brokers.yaml",
        "--topic",
        "orders",
        "--offline-brokers",
        "3",
        "--value-bytes-column",
        "size",
        "--sweep",
        "3,6,12",
        "--top",
        "5",
        "--format",
        "json",
    ]
    code, out, err = planner_cli(
        *args,
        "--master",
        standalone,
        "--spark-conf",
        "spark.executor.memory=512m",
        "--spark-conf",
        "spark.cores.max=1",
        "--reader",
        "spark",
        "--output",
        str(tmp_path / "out"),
        "--verbose",
        env=spark_subprocess_env,
        timeout=600,
    )
    assert code == 0, err[-3000:]
    on_cluster = json.loads(out)
    said = [line for line in err.splitlines() if line.startswith("skew: hashing keys")]
    assert said == [
        f"skew: hashing keys of {folder} for 3 partition count(s) in one pass (murmur2 in the JVM, one Spark job "
        "keeping hot-key summaries)"
    ]
    # the executor fetched the jar (spark.jars) into its work directory on the worker
    fetched = list(tmp_path_factory.getbasetemp().glob("spark-standalone*/work/app-*/*/kafka-planner-udf.jar"))
    assert len(fetched) >= 1 and all(f.read_bytes()[:2] == b"PK" for f in fetched)

    monkeypatch.setenv("KAFKA_PLANNER_JAVAC", "")  # locally: the Arrow/NumPy path
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        # local mode (the session-wide local SparkSession), no UDF: pyarrow in Spark tasks
        code, out, local_err = planner_cli_here(*args, "--engine", "spark")
        assert code == 0 and local_err.startswith("skew: note: no JDK compiler (javac) found")
        # and without Spark: a small local input is counted in this process (--engine auto, the default)
        code, in_process, in_process_err = planner_cli_here(*args)
        assert code == 0 and in_process_err == (
            f"skew: note: {folder} (4,015 rows) counted in this process: faster than starting Spark "
            "(--engine spark to run it on Spark)\n"
        )
    finally:
        os.chdir(cwd)
    local = json.loads(out)
    assert json.loads(in_process) == local
    local["distinct_keys"] = on_cluster["distinct_keys"]  # only --output counts distinct keys
    assert on_cluster == local
    assert on_cluster["rows"] == len(keys) and on_cluster["null_key_records"] == 5
    expected = [0] * 6
    for k in keys:
        if k is not None:
            expected[partition_for_key(k.encode(), 6)] += 1
    assert [p["records"] for p in on_cluster["per_partition"]] == expected
    assert on_cluster["distinct_keys"] == len({k for k in keys if k is not None})
    assert (tmp_path / "out" / "summary.json").exists()
