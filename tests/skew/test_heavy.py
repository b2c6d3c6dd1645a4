"""The Misra-Gries hot-key summary: its bound as a property over random streams, batches and merges, and the hot keys
of the job against exact counts (both readers)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.producer.murmur2 import murmur2
from planner.skew import job
from planner.skew.heavy import MisraGries, count_candidates


def _summary(batches, k):
    mg = MisraGries(k)
    for b in batches:
        mg.add(np.asarray(b, dtype=np.uint32))
    return mg


def _check(mg: MisraGries, truth: Counter, total: int, k: int) -> None:
    est = mg.estimates()
    assert len(est) <= k and mg.total == total
    assert mg.err * (k + 1) <= total  # err <= N / (k+1)
    for x, n in truth.items():
        assert n - mg.err <= est.get(x, 0) <= n
        if n * (k + 1) > total:  # above 1/(k+1) of the records: always a candidate
            assert x in est
    assert set(est) <= set(truth)


streams = st.lists(
    st.lists(st.integers(0, 40) | st.integers(0, 3) | st.integers(0, 2**32 - 1), max_size=60), min_size=1, max_size=8
)


@settings(max_examples=150, deadline=None)
@given(tasks=st.lists(streams, min_size=1, max_size=4), k=st.integers(1, 12))
def test_summary_bound_holds_over_batches_and_merges(tasks, k):
    truth = Counter(x for task in tasks for batch in task for x in batch)
    total = sum(truth.values())
    merged = MisraGries(k)
    for task in tasks:
        mg = _summary(task, k)
        _check(mg, Counter(x for batch in task for x in batch), sum(len(b) for b in task), k)
        merged.merge(mg)
    _check(merged, truth, total, k)


def test_summary_exact_values():
    mg = _summary([[1, 1, 1, 2, 3], [1, 2, 4]], 2)
    # batch 1: {1:3, 2:1, 3:1} -> 3rd largest 1 subtracted: {1:2}, err 1; batch 2: {1:3, 2:1, 4:1} -> {1:2}, err 2
    assert (mg.estimates(), mg.err, mg.total) == ({1: 2}, 2, 8)


def test_count_candidates_counts_exactly_the_keys_with_a_candidate_hash():
    keys = ["a", "b", "a", None, "c", "a", "b"]
    values = [1, 2, 3, 4, 5, 6, 7]
    batch = pa.RecordBatch.from_arrays([pa.array(keys), pa.array(values, pa.int64())], names=["_k", "_v"])
    wanted = [murmur2(b"a") & 0xFFFFFFFF, murmur2(b"c") & 0xFFFFFFFF]
    out = next(count_candidates([batch.slice(0, 4), batch.slice(4)], wanted, "string")).to_pylist()
    assert out == [{"key": b"a", "records": 3, "value_bytes": 10}, {"key": b"c", "records": 1, "value_bytes": 5}]
    ints = pa.RecordBatch.from_arrays([pa.array([7, -1, 7], pa.int32())], names=["_k"])
    got = next(count_candidates([ints], [murmur2((-1).to_bytes(4, "big", signed=True)) & 0xFFFFFFFF], "int"))
    assert got.to_pylist() == [{"key": b"\xff\xff\xff\xff", "records": 1, "value_bytes": 0}]


def test_job_hot_keys_are_exact_with_a_proven_bound(spark, tmp_path):
    rnd = random.Random(11)
    keys = [
        f"hot-{rnd.randrange(4)}"
        if rnd.random() < 0.2
        else f"warm-{rnd.randrange(40)}"
        if rnd.random() < 0.3
        else f"cold-{rnd.randrange(5000)}"
        for _ in range(20000)
    ]
    pq.write_table(pa.table({"key": keys}), tmp_path / "k.parquet", row_group_size=2500)
    truth = Counter(keys)
    ranked = sorted(truth.items(), key=lambda kv: (-kv[1], kv[0].encode()))
    for reader in ("pyarrow", "spark"):
        spec = job.JobSpec(
            keys=str(tmp_path / "k.parquet"), counts=(12,), primary=12, top=10, reader=reader, heavy_k=100
        )
        c = job.run(spark, spec)
        assert c.heavy_counters == 100
        listed = [(t.key, t.records) for t in c.top]
        above = [kv for kv in ranked if kv[1] > c.top_bound]
        assert len(above) >= 10 and listed == ranked[:10]  # 4 hot keys and warm ones, all above the bound
        assert all(t.partition == (murmur2(t.key.encode()) & 0x7FFFFFFF) % 12 for t in c.top)
        assert all(t.bytes == t.records * len(t.key.encode()) for t in c.top)
        assert c.top_bound >= ranked[10][1]  # the next key's exact count, or the summary's larger error
        assert all(n <= c.top_bound for key, n in ranked[10:])  # the proof: no unlisted key above the bound
