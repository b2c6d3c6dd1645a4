"""murmur2 keys per second on 15-byte keys: the planner's vectorised NumPy batch (10 million keys) and scalar Python,
beside kafka-python's own pure-Python `murmur2` measured in the same run. Target: vectorised ≥ 15 M keys/s and ≥ 20×
kafka-python. The pure-Python implementations (ours and kafka-python's) run on the first 1,000,000 of the same keys:
their rate is per key and does not depend on the count, and 10 million would take minutes."""

from __future__ import annotations

from bench.report import line, timer

N_KEYS = 10_000_000
KEY_LEN = 15
SAMPLE = 1_000_000


def run() -> None:
    import numpy as np
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    from planner.producer.murmur2 import murmur2, murmur2_batch

    rng = np.random.default_rng(42)
    data = rng.integers(0, 256, N_KEYS * KEY_LEN, dtype=np.uint8)
    offsets = np.arange(N_KEYS + 1, dtype=np.int64) * KEY_LEN
    sample = [data[i * KEY_LEN : (i + 1) * KEY_LEN].tobytes() for i in range(SAMPLE)]

    with timer() as t_kp:
        kp = [kafka_python_murmur2(k) for k in sample]
    kp_rate = SAMPLE / t_kp["s"]

    with timer() as t_scalar:
        ours = [murmur2(k) for k in sample]
    scalar_rate = SAMPLE / t_scalar["s"]

    murmur2_batch(data[: 1000 * KEY_LEN], offsets[:1001])  # warm-up
    best = float("inf")
    for _ in range(3):
        with timer() as t_vec:
            hashes = murmur2_batch(data, offsets)
        best = min(best, t_vec["s"])
    vec_rate = N_KEYS / best

    # mixed-length keys (5..25 bytes), the general gather path
    lens = rng.integers(5, 26, 2_000_000)
    moff = np.concatenate([[0], np.cumsum(lens)])
    mdata = rng.integers(0, 256, int(moff[-1]), dtype=np.uint8)
    with timer() as t_mixed:
        mixed = murmur2_batch(mdata, moff)
    mixed_rate = lens.size / t_mixed["s"]

    # bit-for-bit agreement, checked in the run itself
    assert [(h & 0xFFFFFFFF) for h in ours] == kp
    assert hashes[:SAMPLE].tolist() == ours
    probe = range(0, lens.size, 9973)
    assert [int(mixed[i]) for i in probe] == [murmur2(mdata[moff[i] : moff[i + 1]].tobytes()) for i in probe]

    line(f"kafka-python murmur2 (pure Python), {SAMPLE:,} keys", kp_rate / 1e6, "M keys/s")
    line(
        f"scalar murmur2 (planner, pure Python), {SAMPLE:,} keys",
        scalar_rate / 1e6,
        "M keys/s",
        kp_rate / 1e6,
        "kafka-python",
    )
    line(
        f"vectorised murmur2_batch, {N_KEYS:,} x {KEY_LEN}-byte keys",
        vec_rate / 1e6,
        "M keys/s",
        kp_rate / 1e6,
        "kafka-python",
        target=">= 15 M keys/s and >= 20x",
    )
    line(
        "vectorised murmur2_batch, 2,000,000 mixed 5-25-byte keys",
        mixed_rate / 1e6,
        "M keys/s",
        kp_rate / 1e6,
        "kafka-python",
    )
