"""The skew job in Spark local mode against the scalar partitioner; readers, key types, report, CLI and bad input."""

import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from planner.adapters.source import load_cluster
from planner.leadership import topic_states
from planner.model import NO_LEADER, PlannerError
from planner.producer.serializers import partition_for_key, serialize
from planner.skew import job
from planner.skew.report import build_report

ROOT = Path(__file__).resolve().parents[2]
ALPHABET = "abcxyz019-_ é ñ 中文 😀 \u0000\u007f\u00ff\u07ff\u0800\uffff\U00010000"


def scalar(raw_keys, counts, values=None):
    values = values if values is not None else [0] * len(raw_keys)
    rec = {n: [0] * n for n in counts}
    byt = {n: [0] * n for n in counts}
    for k, v in zip(raw_keys, values):
        if k is None:
            continue
        for n in counts:
            p = partition_for_key(k, n)
            rec[n][p] += 1
            byt[n][p] += len(k) + v
    return {n: tuple(v) for n, v in rec.items()}, {n: tuple(v) for n, v in byt.items()}


def top_scalar(keys, serialized, n, top, order=None):
    """Top keys by records, ties by Spark's ascending order of the key (UTF-8 bytes for strings, numeric for ints)."""
    counts = Counter(k for k in keys if k is not None)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], order(kv[0]) if order else serialized(kv[0])))[:top]
    return [(str(k), c, partition_for_key(serialized(k), n)) for k, c in ranked]


def generated_keys(seed=7, n=3000):
    rnd = random.Random(seed)
    keys = []
    for _ in range(n):
        r = rnd.random()
        if r < 0.05:
            keys.append(None)
        elif r < 0.10:
            keys.append("")
        elif r < 0.35:
            keys.append(f"hot-{rnd.randrange(5)}")  # repeated keys for the top list
        else:
            keys.append("".join(rnd.choice(ALPHABET) for _ in range(rnd.randrange(1, 41))))
    return keys


def test_generated_string_keys_equal_the_scalar_partitioner(spark, tmp_path):
    keys = generated_keys()
    folder = tmp_path / "keys"
    folder.mkdir()
    for i, lo in enumerate(range(0, len(keys), 1000)):  # a directory of part files
        pq.write_table(pa.table({"key": pa.array(keys[lo : lo + 1000], pa.string())}), folder / f"part-{i}.parquet")
    raw = [None if k is None else serialize(k, "string") for k in keys]
    rec, byt = scalar(raw, (1, 7, 12, 100))
    for reader in ("pyarrow", "spark"):  # pyarrow reads the row groups in Spark tasks / Spark reads, mapInArrow
        spec = job.JobSpec(keys=str(folder), counts=(1, 7, 12, 100), primary=12, top=6, reader=reader)
        counts = job.run(spark, spec)
        assert counts.records == rec and counts.bytes == byt
    assert (counts.null_records, counts.unreadable, counts.rows) == (keys.count(None), 0, len(keys))
    expected_top = top_scalar(keys, lambda k: k.encode(), 12, 6)
    assert [(t.key, t.records, t.partition) for t in counts.top] == expected_top
    assert all(t.bytes == t.records * len(t.key.encode()) for t in counts.top)


def test_int_and_long_keys_from_integer_and_text_columns(spark, tmp_path):
    ints = [0, 1, -1, 2**31 - 1, -(2**31), 7, 7, 7, None] + list(range(-50, 400, 3))
    pq.write_table(pa.table({"key": pa.array(ints, pa.int32())}), tmp_path / "i.parquet")
    rec, byt = scalar([None if v is None else serialize(str(v), "int") for v in ints], (6, 10))
    for reader in ("spark", "pyarrow"):
        counts = job.run(
            spark,
            job.JobSpec(
                keys=str(tmp_path / "i.parquet"), key_type="int", counts=(6, 10), primary=6, top=2, reader=reader
            ),
        )
        assert counts.records == rec and counts.bytes == byt and counts.null_records == 1
    assert (
        [(t.key, t.records, t.partition) for t in counts.top]
        == top_scalar(ints, lambda v: serialize(str(v), "int"), 6, 2, order=int)
        == [("7", 4, 3), ("1", 2, 0)]
    )

    # 64-bit column as int: values outside int32 are unreadable; as long: every value is a key
    longs = [5, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63), None, 123456789012]
    pq.write_table(pa.table({"key": pa.array(longs, pa.int64())}), tmp_path / "l.parquet")
    as_int = job.run(
        spark, job.JobSpec(keys=str(tmp_path / "l.parquet"), key_type="int", counts=(4,), primary=4, top=0)
    )
    assert as_int.unreadable == 5 and as_int.records == scalar([serialize("5", "int")], (4,))[0]
    as_long = job.run(
        spark, job.JobSpec(keys=str(tmp_path / "l.parquet"), key_type="long", counts=(4,), primary=4, top=0)
    )
    assert as_long.records == scalar([None if v is None else serialize(str(v), "long") for v in longs], (4,))[0]
    fast = job.run(
        spark,
        job.JobSpec(keys=str(tmp_path / "l.parquet"), key_type="long", counts=(4,), primary=4, top=0, reader="pyarrow"),
    )
    assert (fast.records, fast.bytes, fast.null_records) == (as_long.records, as_long.bytes, 1)
    with pytest.raises(PlannerError, match="--reader pyarrow needs Parquet files"):  # int64 column as int keys
        job.run(
            spark,
            job.JobSpec(
                keys=str(tmp_path / "l.parquet"), key_type="int", counts=(4,), primary=4, top=0, reader="pyarrow"
            ),
        )

    # text of integers (CSV-style): Java Integer.parseInt rules; "007" and "7" are the same Integer key
    texts = ["7", "007", "+7", "-2147483648", "2147483647", "2147483648", "abc", "1.5", " 7", "", None]
    pq.write_table(pa.table({"key": pa.array(texts, pa.string())}), tmp_path / "t.parquet")
    parsed = job.run(
        spark, job.JobSpec(keys=str(tmp_path / "t.parquet"), key_type="int", counts=(9,), primary=9, top=1)
    )
    good = ["7", "7", "7", "-2147483648", "2147483647"]
    assert parsed.records == scalar([serialize(v, "int") for v in good], (9,))[0]
    assert (parsed.unreadable, parsed.null_records) == (5, 1)
    assert [(t.key, t.records, t.partition) for t in parsed.top] == [
        ("7", 3, partition_for_key(serialize("7", "int"), 9))
    ]


def test_bytes_hex_keys_from_text_and_binary(spark, tmp_path):
    texts = ["00ff", "0x00FF", "", "abc", "zz", "0a0b0c0d0e", None]
    binary = [b"\x00\xff", b"", b"\x00 ", None, b"123456789"]
    pq.write_table(pa.table({"key": pa.array(texts)}), tmp_path / "h.parquet")
    pq.write_table(pa.table({"key": pa.array(binary, pa.binary())}), tmp_path / "b.parquet")
    h = job.run(
        spark, job.JobSpec(keys=str(tmp_path / "h.parquet"), key_type="bytes-hex", counts=(1000,), primary=1000, top=1)
    )
    assert h.records == scalar([serialize(t, "bytes-hex") for t in ["00ff", "0x00FF", "", "0a0b0c0d0e"]], (1000,))[0]
    assert (h.unreadable, h.null_records) == (2, 1)
    assert [(t.key, t.records) for t in h.top] == [("00ff", 2)]
    b = job.run(
        spark,
        job.JobSpec(
            keys=str(tmp_path / "b.parquet"),
            key_type="bytes-hex",
            counts=(1000,),
            primary=1000,
            top=0,
            reader="pyarrow",
        ),
    )
    # kafka-python's test_partitioner.py test_murmur2_java_compatibility: b'' → 681, b'\x00 ' → 742, b'123456789' → 566
    # for 1000 partitions
    nonzero = {p: c for p, c in enumerate(b.records[1000]) if c}
    assert nonzero == {681: 1, 742: 1, 566: 1, partition_for_key(b"\x00\xff", 1000): 1}


def test_csv_json_text_readers_count_null_and_unreadable_rows(spark, tmp_path):
    (tmp_path / "k.csv").write_text(
        'key,size\nuser-1,100\nuser-2,20\nuser-1,5\n,7\nshort-row\nuser-4,1,2\n"é",3\nuser-5,x\n'
    )
    c = job.run(
        spark,
        job.JobSpec(
            keys=str(tmp_path / "k.csv"), input_format="csv", value_bytes_column="size", counts=(6,), primary=6, top=2
        ),
    )
    assert (c.records, c.bytes) == scalar([b"user-1", b"user-2", b"user-1", "é".encode()], (6,), [100, 20, 5, 3])
    assert (c.null_records, c.null_bytes, c.unreadable) == (1, 7, 3)  # short row, long row, size "x"
    assert [(t.key, t.records, t.bytes) for t in c.top] == [("user-1", 2, 117), ("user-2", 1, 26)]

    (tmp_path / "k.json").write_text('{"id": "a", "v": 3}\n{"id": "b"}\nnot json\n{"id": null}\n{"id": "a", "v": 1}\n')
    j = job.run(
        spark,
        job.JobSpec(
            keys=str(tmp_path / "k.json"),
            input_format="json",
            key_column="id",
            value_bytes_column="v",
            counts=(3,),
            primary=3,
            top=1,
        ),
    )
    assert (j.records, j.bytes) == scalar([b"a", b"b", b"a"], (3,), [3, 0, 1])
    assert (j.null_records, j.unreadable) == (1, 1)

    (tmp_path / "k.txt").write_text("alpha\n\nbeta\nalpha\n")
    t = job.run(spark, job.JobSpec(keys=str(tmp_path / "k.txt"), input_format="text", counts=(5,), primary=5, top=0))
    assert t.records == scalar([b"alpha", b"", b"beta", b"alpha"], (5,))[0]


def test_csv_empty_key_is_a_key_and_blank_lines_are_counted(spark, tmp_path):
    # as in JSON (and as kafka-console-producer with parse.key=true sends ",v": an empty key, not null), a quoted ""
    # is the empty key, hashed; an unquoted empty field is the CSV's null; blank lines are not rows, but counted
    (tmp_path / "k.csv").write_text('key,size\n"",1\n,2\na,3\n\n   \nb,4\n')
    c = job.run(
        spark,
        job.JobSpec(
            keys=str(tmp_path / "k.csv"), input_format="csv", value_bytes_column="size", counts=(7,), primary=7, top=0
        ),
    )
    assert (c.records, c.bytes) == scalar([b"", b"a", b"b"], (7,), [1, 3, 4])
    assert (c.null_records, c.null_bytes, c.unreadable, c.blank_lines) == (1, 2, 0, 2)


def test_report_per_broker_with_offline_brokers(spark, tmp_path):
    keys = [f"k{i}" for i in range(600)] + ["hot"] * 200
    pq.write_table(pa.table({"key": keys}), tmp_path / "k.parquet")
    cluster = load_cluster(str(ROOT / "topologies/six-brokers.yaml"), "1,2")
    topic = cluster.topic("orders")
    n = topic.partition_count
    counts = job.run(spark, job.JobSpec(keys=str(tmp_path / "k.parquet"), counts=(n, 3), primary=n, top=1))
    report = build_report(
        counts,
        source="k",
        key_column="key",
        key_type="string",
        partitions=n,
        sweep_counts=(3,),
        cluster=cluster,
        topic="orders",
    )
    states = topic_states(cluster, topic)
    per_partition = scalar([k.encode() for k in keys], (n,))[0][n]
    assert [(p.partition, p.records, p.leader) for p in report.per_partition] == [
        (i, per_partition[i], states[i].leader) for i in range(n)
    ]
    expect_leaders = Counter()
    expect_replicas = Counter()
    for p in topic.partitions:
        expect_leaders[states[p.id].leader] += per_partition[p.id]
        for b in p.replicas:
            expect_replicas[b] += per_partition[p.id]
    assert {b.broker: b.records for b in report.leaders if b.records or b.partitions} == {
        b: r for b, r in expect_leaders.items()
    }
    assert {b.broker: b.records for b in report.replicas} == {b.id: expect_replicas[b.id] for b in cluster.brokers}
    assert all(b.broker not in (1, 2) for b in report.leaders if b.partitions)
    hot = report.top[0]
    assert (hot.key, hot.records, hot.share_of_keyed) == ("hot", 200, 0.25)
    assert hot.share_of_partition == 200 / per_partition[hot.partition]
    assert report.sweep.rows[0].partitions == 3 and report.sweep.recommended in (None, 3)
    assert NO_LEADER not in [b.broker for b in report.leaders] or any(s.leader == NO_LEADER for s in states)


def test_cli_json_and_output_files(spark, tmp_path, planner_cli_here):
    keys = [f"user-{i % 37}" for i in range(500)] + [None] * 3
    pq.write_table(pa.table({"key": pa.array(keys, pa.string()), "size": list(range(503))}), tmp_path / "k.parquet")
    out_dir = tmp_path / "out"
    code, out, err = planner_cli_here(
        "skew",
        "--keys",
        str(tmp_path / "k.parquet"),
        "--partitions",
        "8",
        "--sweep",
        "4,8,16",
        "--top",
        "3",
        "--value-bytes-column",
        "size",
        "--format",
        "json",
        "--output",
        str(out_dir),
    )
    assert (code, err) == (0, "")
    data = json.loads(out)
    rec, byt = scalar([None if k is None else k.encode() for k in keys], (8,), list(range(503)))
    assert [p["records"] for p in data["per_partition"]] == list(rec[8])
    assert [p["bytes"] for p in data["per_partition"]] == list(byt[8])
    assert (data["rows"], data["null_key_records"], data["unreadable_rows"], data["distinct_keys"]) == (503, 3, 0, 37)
    assert [c["partitions"] for c in data["sweep"]["counts"]] == [4, 8, 16]
    assert json.loads((out_dir / "summary.json").read_text()) == data
    assert sorted(p.name for p in out_dir.iterdir()) == ["keys.parquet", "partitions.parquet", "summary.json"]
    parts = pq.read_table(out_dir / "partitions.parquet").to_pydict()
    assert parts["records"] == list(rec[8]) and parts["partition"] == list(range(8))
    per_key = pq.read_table(out_dir / "keys.parquet").to_pydict()
    assert len(per_key["key"]) == 37 and sum(per_key["records"]) == 500
    assert all(p == partition_for_key(k.encode(), 8) for k, p in zip(per_key["key"], per_key["partition"]))

    code, out, err = planner_cli_here("skew", "--keys", str(tmp_path / "k.parquet"), "--partitions", "8", "--top", "2")
    assert code == 0 and err == ""
    assert "records / partition" in out and "user-" in out and "█" in out


def bad(planner_cli_here, *args):
    code, out, err = planner_cli_here("skew", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    return err.strip()


def test_bad_input_is_one_line_exit_2(spark, tmp_path, planner_cli_here):
    pq.write_table(pa.table({"key": ["a", "b"], "f": [1.5, 2.5]}), tmp_path / "k.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"this is not parquet")
    (tmp_path / "words.csv").write_text("key\nalpha\nbeta\n")
    missing = tmp_path / "nope"
    assert (
        bad(planner_cli_here, "--keys", str(missing), "--partitions", "3")
        == f"error: --keys {missing}: no such file or directory"
    )
    assert bad(planner_cli_here, "--keys", str(tmp_path / "k.parquet"), "--partitions", "3", "--key-column", "id") == (
        f"error: --key-column 'id' not found in {tmp_path / 'k.parquet'}; its columns are: key, f"
    )
    assert bad(planner_cli_here, "--keys", str(tmp_path / "junk.parquet"), "--partitions", "3") == (
        f"error: --keys {tmp_path / 'junk.parquet'}: not a Parquet file (no PAR1 magic); "
        "give --input-format csv, json or text if it is one of those"
    )
    assert bad(
        planner_cli_here,
        "--keys",
        str(tmp_path / "k.parquet"),
        "--partitions",
        "3",
        "--key-column",
        "f",
        "--key-type",
        "int",
    ) == ("error: key column 'f' is double, which cannot be a int key: use an integer column or text of integers")
    assert bad(
        planner_cli_here,
        "--keys",
        str(tmp_path / "words.csv"),
        "--input-format",
        "csv",
        "--partitions",
        "3",
        "--key-type",
        "long",
    ) == (
        f"error: none of the 2 keys in column 'key' of {tmp_path / 'words.csv'} can be read as --key-type long; "
        "check --key-type and --key-column"
    )
    assert (
        bad(planner_cli_here, "--keys", str(tmp_path / "k.parquet"))
        == "error: give --partitions N, or --topology TOPOLOGY --topic T"
    )
    assert bad(planner_cli_here, "--keys", str(tmp_path / "k.parquet"), "--partitions", "3", "--sweep", "4,x") == (
        "error: --sweep '4,x': 'x' is not a partition count (use e.g. --sweep 6,12,24,48)"
    )
    # a run failing inside Spark leaves no partial output behind: a directory it made is gone again, an existing
    # one keeps exactly what it held
    out_dir = tmp_path / "out" / "run1"
    failing = ("--keys", str(tmp_path / "k.parquet"), "--partitions", "3", "--key-column", "f", "--key-type", "int")
    assert bad(planner_cli_here, *failing, "--output", str(out_dir)).startswith("error: key column 'f' is double")
    assert not (tmp_path / "out").exists()
    out_dir.mkdir(parents=True)
    (out_dir / "summary.json").write_text("{}\n")
    assert bad(planner_cli_here, *failing, "--output", str(out_dir)).startswith("error: key column 'f' is double")
    assert [p.name for p in out_dir.iterdir()] == ["summary.json"] and (out_dir / "summary.json").read_text() == "{}\n"


def test_murmur2_as_spark_sql_expressions_equals_kafka(spark):
    """The JVM-only alternative the benchmark measures: murmur2 vectors (`UtilsTest.testMurmur2`, kafka-python) and
    mixed keys, bit for bit."""
    from planner.producer.murmur2 import murmur2
    from planner.skew.sqlhash import with_murmur2, with_partition

    vectors = {
        b"21": -973932308,
        b"foobar": -790332482,
        b"a-little-bit-long-string": -985981536,
        b"a-little-bit-longer-string": -1486304829,
        b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
        b"abc": 479470107,
        b"": 275646681,
        b"a": -1563381124,
        b"ab": 316155434,
        b"123456789": -1822237082,
        b"\x00 ": 1121897742,
    }
    rnd = random.Random(3)
    extra = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 30))) for _ in range(200)]
    keys = list(vectors) + extra + [None]
    df = spark.createDataFrame([(k,) for k in keys], "k binary")
    got = {None if r["k"] is None else bytes(r["k"]): r["h"] for r in with_murmur2(df, "k", "h").collect()}
    assert got[None] is None
    for k in keys[:-1]:
        assert got[k] == murmur2(k) & 0xFFFFFFFF
    for k, h in vectors.items():
        assert got[k] == h & 0xFFFFFFFF
    parts = {bytes(r["k"]): r["_p1000"] for r in with_partition(df, "k", (1000,)).collect() if r["k"] is not None}
    assert [parts[k] for k in (b"", b"a", b"ab", b"abc", b"123456789", b"\x00 ")] == [681, 524, 434, 107, 566, 742]


def test_bad_master_and_malformed_input_are_one_line(spark, tmp_path, planner_cli_here):
    import socket

    pq.write_table(pa.table({"key": ["a"]}), tmp_path / "k.parquet")
    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        assert bad(
            planner_cli_here,
            "--keys",
            str(tmp_path / "k.parquet"),
            "--partitions",
            "3",
            "--master",
            f"spark://127.0.0.1:{port}",
        ) == (
            f"error: --master spark://127.0.0.1:{port}: no Spark master answers at 127.0.0.1:{port} (Connection "
            "refused)"
        )
    assert bad(
        planner_cli_here, "--keys", str(tmp_path / "k.parquet"), "--partitions", "3", "--master", "spark://nohost"
    ) == ("error: --master spark://nohost: use spark://HOST:PORT (e.g. spark://127.0.0.1:7077)")
    (tmp_path / "junk.json").write_text("not json\n{broken\n")
    assert bad(
        planner_cli_here, "--keys", str(tmp_path / "junk.json"), "--input-format", "json", "--partitions", "3"
    ) == (f"error: --keys {tmp_path / 'junk.json'}: no json record can be read (every row is malformed)")


def test_a_failing_per_key_step_is_one_planner_error(spark, tmp_path, monkeypatch):
    pq.write_table(pa.table({"key": ["a", "b"]}), tmp_path / "k.parquet")

    def fail(*args, **kwargs):
        raise RuntimeError(
            "An error occurred while calling o9.collect.\n: java.lang.OutOfMemoryError: Java heap space\n\tat x"
        )

    monkeypatch.setattr(job, "_per_key", fail)
    with pytest.raises(PlannerError) as exc:
        job.run(spark, job.JobSpec(keys=str(tmp_path / "k.parquet"), counts=(3,), primary=3, top=1, exact_top=True))
    assert str(exc.value) == f"counting records per key of --keys {tmp_path / 'k.parquet'} failed: Java heap space"
    assert (
        job.run(spark, job.JobSpec(keys=str(tmp_path / "k.parquet"), counts=(3,), primary=3, top=0)).keyed_records == 2
    )


def test_local_driver_memory_is_half_the_machine_between_1g_and_8g():
    from planner.skew.spark import local_driver_memory

    gib = 1 << 30
    assert [local_driver_memory(n * gib) for n in (0, 1, 3, 6, 24, 64)] == ["1g", "1g", "1g", "3g", "8g", "8g"]


def test_normalise_columns_rows_and_type_errors(spark):
    """`normalise` sends only `_k`, `_v` when asked, `_bad` when a non-null input can fail; each type's rejection."""
    df = spark.createDataFrame(
        [
            ("a", 1, 2147483648, bytearray(b"\x01"), "0x0aff", " 12 ", 7, 1.5),
            ("17", None, -3, None, "zz", "x", None, 2.5),
            (None, -2, 5, bytearray(b""), "ab", None, 3, None),
        ],
        "s string, i int, l bigint, b binary, h string, sz string, n int, d double",
    )

    def run(column, key_type, value=None):
        out = job.normalise(df, job.JobSpec(keys="k", key_column=column, key_type=key_type, value_bytes_column=value))
        return out.columns, [tuple(bytes(x) if isinstance(x, bytearray) else x for x in r) for r in out.collect()]

    assert run("s", "string") == (["_k"], [("a",), ("17",), (None,)])
    assert run("i", "string") == (["_k"], [("1",), (None,), ("-2",)])
    assert run("s", "int") == (["_k", "_bad"], [(None, True), (17, False), (None, False)])
    assert run("i", "int") == (["_k"], [(1,), (None,), (-2,)])
    assert run("l", "int") == (["_k", "_bad"], [(None, True), (-3, False), (5, False)])
    assert run("l", "long") == (["_k"], [(2147483648,), (-3,), (5,)])
    assert run("h", "bytes-hex") == (["_k", "_bad"], [(b"\n\xff", False), (None, True), (b"\xab", False)])
    assert run("b", "bytes-hex") == (["_k"], [(b"\x01",), (None,), (b"",)])
    assert run("s", "string", "n") == (["_k", "_v"], [("a", 7), ("17", 0), (None, 3)])
    assert run("s", "string", "sz") == (
        ["_k", "_v", "_bad"],
        [("a", 12, False), (None, 0, True), (None, 0, False)],
    )
    assert run("i", "long", "b") == (["_k", "_v"], [(1, 1), (None, 0), (-2, 0)])
    assert run("l", "int", "sz") == (
        ["_k", "_v", "_bad"],
        [(None, 12, True), (None, 0, True), (5, 0, False)],
    )

    def error(column, key_type, value=None):
        with pytest.raises(PlannerError) as exc:
            job.normalise(df, job.JobSpec(keys="k", key_column=column, key_type=key_type, value_bytes_column=value))
        return str(exc.value)

    assert error("d", "string") == (
        "key column 'd' is double, which cannot be a string key: "
        "use a string or integer column, or --key-type bytes-hex for binary"
    )
    assert error("b", "long") == (
        "key column 'b' is binary, which cannot be a long key: use an integer column or text of integers"
    )
    assert error("i", "bytes-hex") == (
        "key column 'i' is int, which cannot be a bytes-hex key: use a binary column or text of hexadecimal digits"
    )
    assert error("s", "float") == "--key-type 'float': use one of string, int, long, bytes-hex"
    assert error("s", "string", "size") == (
        "--value-bytes-column 'size' not found in k; its columns are: s, i, l, b, h, sz, n, d"
    )
    assert error("s", "string", "d") == (
        "--value-bytes-column 'd' is double: use an integer column "
        "(the value's size in bytes) or a binary column (the value itself)"
    )
