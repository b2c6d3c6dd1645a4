"""murmur2 in the JVM: the Java UDFs compiled from the package's source equal the scalar partitioner, the job's
counting in the JVM equals the Arrow/NumPy path on every input, the hot-key summaries bound every key and prove exact
counts, and without javac the command says so in one line and gives the same output."""

import json
import os
import random
import stat
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from planner.cli.app import run as cli_run
from planner.producer.murmur2 import murmur2
from planner.producer.serializers import partition_for_key, serialize
from planner.skew import job, jvmcount, jvmhash
from planner.skew.heavy import proven_top
from tests.skew.test_skew_job import generated_keys, scalar, top_scalar

ROOT = Path(__file__).resolve().parents[2]
ONE_PASS = "the hot keys' counts are proven exact by the summaries (no second pass)"
NOTE = "skew: note: no JDK compiler (javac) found; murmur2 runs in Python (Arrow/NumPy) instead of the JVM"


@pytest.fixture(scope="module")
def udf_jar() -> str:
    compiled = jvmhash.compile_jar()
    assert compiled.note == "" and compiled.jar is not None
    return compiled.jar


def test_the_jar_is_cached_by_source_and_spark_version(udf_jar):
    jar = Path(udf_jar)
    key = jvmhash.cache_key(jvmhash.SOURCE.read_bytes(), jvmhash.spark_version())
    assert jar == Path(os.environ["XDG_CACHE_HOME"]) / "kafka-planner" / "udf" / key / "kafka-planner-udf.jar"
    assert [p.name for p in jar.parent.parent.iterdir()] == [key]  # no build directory left behind
    before = jar.stat().st_mtime_ns
    assert jvmhash.compile_jar(compiler="/nonexistent/javac").jar == udf_jar  # a cache hit needs no compiler
    assert jar.stat().st_mtime_ns == before


def test_without_or_with_a_failing_javac_no_jar_and_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_PLANNER_JAVAC", "")
    assert jvmhash.compile_jar(root=tmp_path) == jvmhash.Compiled(None, "no JDK compiler (javac) found")
    fake = tmp_path / "javac"
    fake.write_text("#!/bin/sh\necho 'error: invalid source release: 17' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    got = jvmhash.compile_jar(compiler=str(fake), root=tmp_path / "cache")
    assert got == jvmhash.Compiled(None, "javac failed (error: invalid source release: 17)")
    assert list((tmp_path / "cache").iterdir()) == []  # the temporary build directory is gone


def test_udfs_equal_the_scalar_partitioner(spark, udf_jar):
    assert jvmhash.register(spark, udf_jar)
    rnd = random.Random(11)
    texts = [k for k in generated_keys(seed=5, n=400) if k is not None] + ["", "é", "中文😀", "\u0000", "a" * 33]
    blobs = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 30))) for _ in range(200)] + [b"", b"\x00 "]
    df = spark.createDataFrame([(t,) for t in texts] + [(None,)], "k string")
    rows = df.selectExpr("k", "kafka_murmur2_bytes(CAST(k AS BINARY)) AS h").collect()
    assert [r["h"] for r in rows] == [murmur2(t.encode()) for t in texts] + [None]
    bf = spark.createDataFrame([(b,) for b in blobs] + [(None,)], "k binary")
    rows = bf.selectExpr("k", "kafka_partition_bytes(k, 1000) AS p", "kafka_murmur2_bytes(k) AS h").collect()
    assert [r["p"] for r in rows] == [partition_for_key(b, 1000) for b in blobs] + [None]
    assert [r["h"] for r in rows][-3:] == [275646681, 1121897742, None]  # Kafka's vectors for b"" and b"\x00 "
    assert [r["p"] for r in rows][-3:-1] == [681, 742]
    ints = [0, 1, -1, 7, 2**31 - 1, -(2**31)] + [rnd.randrange(-(2**31), 2**31) for _ in range(200)]
    longs = [0, 1, -1, 2**63 - 1, -(2**63), 123456789012] + [rnd.randrange(-(2**63), 2**63) for _ in range(200)]
    idf = spark.createDataFrame([(i, j) for i, j in zip(ints, longs)] + [(None, None)], "i int, l bigint")
    rows = idf.selectExpr("kafka_murmur2_int(i) AS hi", "kafka_murmur2_long(l) AS hl").collect()
    assert [r["hi"] for r in rows] == [murmur2(serialize(str(i), "int")) for i in ints] + [None]
    assert [r["hl"] for r in rows] == [murmur2(serialize(str(v), "long")) for v in longs] + [None]


def _both(spark, udf_jar, **kw):
    """The job with murmur2 in the JVM and on the Arrow/NumPy path; the first also says which path it took."""
    said: list[str] = []
    jvm = job.run(spark, job.JobSpec(udf_jar=udf_jar, **kw), progress=said.append)
    numpy = job.run(spark, job.JobSpec(udf_jar=udf_jar, hasher="numpy", **kw))
    return jvm, numpy, said


def _jvm(spark, udf_jar, **kw):
    said: list[str] = []
    counts = job.run(spark, job.JobSpec(udf_jar=udf_jar, **kw), progress=said.append)
    assert "murmur2 in the JVM, one Spark job" in said[0]
    return counts


def test_the_jvm_aggregate_equals_the_numpy_path_on_every_input(spark, udf_jar, tmp_path):
    keys = generated_keys()
    folder = tmp_path / "keys"
    folder.mkdir()
    for i, lo in enumerate(range(0, len(keys), 1000)):
        chunk = keys[lo : lo + 1000]
        pq.write_table(
            pa.table({"key": pa.array(chunk, pa.string()), "v": list(range(len(chunk)))}), folder / f"{i}.pq"
        )
    values = [v for lo in range(0, len(keys), 1000) for v in range(len(keys[lo : lo + 1000]))]
    rec, byt = scalar([None if k is None else k.encode() for k in keys], (1, 7, 12, 100), values)
    jvm, numpy, said = _both(
        spark, udf_jar, keys=str(folder), value_bytes_column="v", counts=(1, 7, 12, 100), primary=12, top=0
    )
    assert (jvm.records, jvm.bytes) == (rec, byt) and jvm == numpy  # numpy: the Parquet fast path
    assert "murmur2 in the JVM, one Spark job" in said[0]
    assert (jvm.null_records, jvm.null_bytes) == (keys.count(None), sum(v for k, v in zip(keys, values) if k is None))

    # counts without a small common multiple (one hash, % n per count)
    wide = (997, 1009, 12)
    jvm, numpy, _ = _both(spark, udf_jar, keys=str(folder), counts=wide, primary=12, top=0, reader="spark")
    assert jvm.records == scalar([None if k is None else k.encode() for k in keys], wide)[0] and jvm == numpy

    # int / long / bytes-hex, from typed columns and from text, with unreadable rows
    pq.write_table(pa.table({"key": pa.array([0, 1, -1, 2**31 - 1, 7, 7, None], pa.int32())}), tmp_path / "i.pq")
    pq.write_table(pa.table({"key": pa.array([5, 2**31, -(2**63), None, 5], pa.int64())}), tmp_path / "l.pq")
    pq.write_table(pa.table({"key": ["00ff", "0x00FF", "", "abc", "zz", None]}), tmp_path / "h.pq")
    pq.write_table(pa.table({"key": pa.array([b"\x00\xff", b"", None, b"123456789"], pa.binary())}), tmp_path / "b.pq")
    pq.write_table(pa.table({"key": ["7", "007", "x", "-2147483648", None]}), tmp_path / "t.pq")
    cases = [
        ("i.pq", "int", [serialize(str(v), "int") for v in (0, 1, -1, 2**31 - 1, 7, 7)], 0),
        ("l.pq", "long", [serialize(str(v), "long") for v in (5, 2**31, -(2**63), 5)], 0),
        ("l.pq", "int", [serialize("5", "int")] * 2, 2),
        ("h.pq", "bytes-hex", [serialize(t, "bytes-hex") for t in ("00ff", "0x00FF", "")], 2),
        ("b.pq", "bytes-hex", [b"\x00\xff", b"", b"123456789"], 0),
        ("t.pq", "int", [serialize(t, "int") for t in ("7", "007", "-2147483648")], 1),
    ]
    for name, key_type, raw, unreadable in cases:  # the JVM against the scalar partitioner alone
        said = []
        jvm = job.run(
            spark,
            job.JobSpec(
                keys=str(tmp_path / name), key_type=key_type, counts=(5, 1000), primary=5, top=0, udf_jar=udf_jar
            ),
            progress=said.append,
        )
        assert (jvm.records, jvm.bytes) == scalar(raw, (5, 1000)), (name, key_type)
        assert (jvm.unreadable, jvm.null_records) == (unreadable, 1) and "murmur2 in the JVM" in said[0]

    # CSV / JSON / text: Spark reads, the JVM hashes; malformed rows and bad sizes are unreadable
    (tmp_path / "k.csv").write_text(
        'key,size\nuser-1,100\nuser-2,20\nuser-1,5\n,7\nshort-row\nuser-4,1,2\n"é",3\nuser-5,x\n'
    )
    (tmp_path / "k.json").write_text('{"id": "a", "v": 3}\n{"id": "b"}\nnot json\n{"id": null}\n{"id": "中", "v": 1}\n')
    (tmp_path / "k.txt").write_text("alpha\n\nbeta\nalpha\n")
    csv, numpy, _ = _both(
        spark,
        udf_jar,
        keys=str(tmp_path / "k.csv"),
        input_format="csv",
        value_bytes_column="size",
        counts=(6,),
        primary=6,
        top=0,
    )
    assert (csv.records, csv.bytes) == scalar([b"user-1", b"user-2", b"user-1", "é".encode()], (6,), [100, 20, 5, 3])
    assert (csv.null_records, csv.null_bytes, csv.unreadable) == (1, 7, 3) and csv == numpy
    js = _jvm(
        spark,
        udf_jar,
        keys=str(tmp_path / "k.json"),
        input_format="json",
        key_column="id",
        value_bytes_column="v",
        counts=(3,),
        primary=3,
        top=0,
    )
    assert (js.records, js.bytes) == scalar([b"a", b"b", "中".encode()], (3,), [3, 0, 1])
    assert (js.null_records, js.unreadable) == (1, 1)
    tx = _jvm(spark, udf_jar, keys=str(tmp_path / "k.txt"), input_format="text", counts=(5,), primary=5, top=0)
    assert tx.records == scalar([b"alpha", b"", b"beta", b"alpha"], (5,))[0]


def test_hot_keys_counted_in_the_jvm_equal_the_numpy_pass(spark, udf_jar, tmp_path):
    keys = generated_keys(seed=9)
    pq.write_table(pa.table({"key": pa.array(keys, pa.string())}), tmp_path / "k.pq")
    jvm, numpy, said = _both(
        spark, udf_jar, keys=str(tmp_path / "k.pq"), counts=(12,), primary=12, top=6, reader="spark"
    )
    assert [(t.key, t.records, t.partition) for t in jvm.top] == top_scalar(keys, lambda k: k.encode(), 12, 6)
    ranked = sorted(Counter(k for k in keys if k is not None).values(), reverse=True)
    assert jvm.top_bound == ranked[6] and jvm == numpy  # 3,000 keys: no summary had to drop a counter
    assert "murmur2 in the JVM" in said[0] and said[1] == ONE_PASS
    ints = [7] * 5 + [-1] * 3 + list(range(100))
    pq.write_table(pa.table({"key": pa.array(ints, pa.int64())}), tmp_path / "l.pq")
    jvm, numpy, _ = _both(spark, udf_jar, keys=str(tmp_path / "l.pq"), key_type="long", counts=(4,), primary=4, top=2)
    assert [(t.key, t.records, t.partition) for t in jvm.top] == [
        ("7", 6, partition_for_key(serialize("7", "long"), 4)),
        ("-1", 3, partition_for_key(serialize("-1", "long"), 4)),
    ]
    assert jvm == numpy


def test_without_javac_the_command_says_so_and_gives_the_same_output(spark, udf_jar, tmp_path, capsys, monkeypatch):
    args = ["skew", "--keys", "examples/skew/orders-keys.csv", "--input-format", "csv", "--value-bytes-column",
            "value_bytes", "--partitions", "6", "--sweep", "3,12", "--top", "0", "--format", "json"]  # fmt: skip

    def run():
        monkeypatch.chdir(ROOT)
        with pytest.raises(SystemExit) as exc:
            cli_run(args)
        out, err = capsys.readouterr()
        return exc.value.code, json.loads(out), err

    code, with_udf, err = run()
    assert (code, err) == (0, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("KAFKA_PLANNER_JAVAC", "")
    code, fallback, err = run()
    assert (code, err) == (0, NOTE + "\n")
    assert fallback == with_udf
    assert [p["records"] for p in with_udf["per_partition"]] == [374, 994, 389, 402, 398, 398]


def _zipf_files(folder: Path, late: str | None = None) -> list[str]:
    """Four files (four tasks) of 3,000 keys: hot-0..hot-3 (10 %, 5 %, 2 %, 1 % of each file) from the first row,
    a tail of 6,000 keys; `late`: a key that comes only in the last 400 rows of every file, 300 times each."""
    folder.mkdir()
    rnd = random.Random(3)
    everything = []
    for f in range(4):
        rows = []
        for _ in range(3000):
            r = rnd.random()
            hot = next((i for i, q in enumerate((0.10, 0.15, 0.17, 0.18)) if r < q), None)
            rows.append(f"hot-{hot}" if hot is not None else f"tail-{rnd.randrange(6000)}")
        if late:
            for i in range(2600, 3000, 4):
                rows[i] = rows[i + 1] = rows[i + 2] = late
        pq.write_table(pa.table({"key": pa.array(rows, pa.string()), "v": [len(r) % 7 for r in rows]}),
                       folder / f"{f}.parquet")  # fmt: skip
        everything += rows
    return everything


def _check_summary(spark, keys, rows, slack: int):
    """KafkaMurmur2.Summary with 5 counters: every hash's records are within [n, n + u] of its counter and within
    err above its estimate, every hash without one has at most err, and a counter with u = 0 and one key holds that
    key's exact count (records and bytes). Returns (the exactly counted keys, err, counters)."""
    records, nbytes, _, _, _, (estimates, err, counters) = jvmcount.summary_in_jvm(spark, keys, (6, 12), 5, slack)
    raw = [r.encode() for r in rows]
    expected = scalar(raw, (6, 12), [len(r) % 7 for r in rows])
    assert (records, nbytes) == tuple({n: list(v) for n, v in d.items()} for d in expected)
    truth = Counter(raw)
    by_hash: Counter = Counter()
    for key, c in truth.items():
        by_hash[murmur2(key) & 0xFFFFFFFF] += c
    assert 0 < err <= len(rows) // 6
    exact = []
    for (key, n, u, w, collided), h in zip(counters, estimates):
        assert n <= by_hash[h] <= n + u and estimates[h] <= by_hash[h] <= estimates[h] + err
        if u == 0 and not collided:
            exact.append(key)
            assert (n, w) == (truth[key], n * (len(key) + len(key) % 7))
    assert all(c <= err for h, c in by_hash.items() if h not in estimates)
    return exact, err, counters


def test_summaries_bound_every_key_and_prove_the_exact_counts(spark, udf_jar, tmp_path):
    assert jvmhash.register(spark, udf_jar)
    rows = _zipf_files(tmp_path / "keys")
    truth = Counter(rows)
    spec = job.JobSpec(keys=str(tmp_path / "keys"), value_bytes_column="v", counts=(6, 12), primary=12)
    keys = job.normalise(job.read_input(spark, spec), spec)
    # 40 slots per task: compactions from the first rows; only hot-0 keeps its counter throughout, and hot-1's
    # counter (n > err, u > 0) is a hot key without proof: the second pass is needed
    exact, err, counters = _check_summary(spark, keys, rows, 40)
    assert exact == [b"hot-0"] and proven_top(counters, err, len(rows), 5, 3, "string") is None
    # 4,000 slots: no task compacts, the merge does; every counter left is exact, the top 3 are proven
    exact, err, counters = _check_summary(spark, keys, rows, 4000)
    assert {b"hot-0", b"hot-1", b"hot-2", b"hot-3"} <= set(exact)
    top, bound = proven_top(counters, err, len(rows), 5, 3, "string")
    assert [(k, n) for k, n, _ in top] == [(f"hot-{i}".encode(), truth[f"hot-{i}"]) for i in range(3)]
    assert bound == max(err, truth["hot-3"])


def test_the_second_pass_runs_when_the_summaries_cannot_prove(spark, udf_jar, tmp_path, monkeypatch):
    """A key that gets hot only after compactions (its counter's n exceeds err, but u > 0), and two keys with the
    same murmur2: the summaries prove nothing about them, and the second pass counts the candidates exactly."""
    monkeypatch.setattr(jvmcount, "SLACK", 40)
    rows = _zipf_files(tmp_path / "keys", late="late-key")
    said: list[str] = []
    got = job.run(spark, job.JobSpec(keys=str(tmp_path / "keys"), counts=(12,), primary=12, top=3, heavy_k=5,
                                     udf_jar=udf_jar), progress=said.append)  # fmt: skip
    assert [(t.key, t.records, t.partition) for t in got.top] == top_scalar(rows, lambda k: k.encode(), 12, 3)
    assert got.top[0].key == "late-key" and said[1].startswith("counting the ") and said[1].endswith(" exactly")
    monkeypatch.undo()

    # b"key-5144" and b"key-225276" have the same murmur2 (-1700788594): one counter, two keys, no proof
    assert murmur2(b"key-5144") == murmur2(b"key-225276") == -1700788594
    pair = ["key-5144"] * 7 + ["key-225276"] * 5 + ["other"] * 3
    pq.write_table(pa.table({"key": pair}), tmp_path / "pair.parquet")
    said.clear()
    got = job.run(spark, job.JobSpec(keys=str(tmp_path / "pair.parquet"), counts=(3,), primary=3, top=3,
                                     udf_jar=udf_jar), progress=said.append)  # fmt: skip
    assert [(t.key, t.records) for t in got.top] == [("key-5144", 7), ("key-225276", 5), ("other", 3)]
    assert said[1] == "counting the 2 candidate hot keys exactly"
