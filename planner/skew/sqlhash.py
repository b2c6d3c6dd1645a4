"""Kafka's murmur2 as Spark SQL expressions (runs in the JVM, no Python worker): the alternative to the Arrow path.

Measured against the Arrow-batched NumPy path by `bench/bench_skew.py`; the job uses the faster one (see
`planner.skew.job`). int32 arithmetic is emulated in BIGINT so it holds under ANSI mode: a product
`a * m mod 2^32` is split at 16 bits so no intermediate exceeds 2^48. Bytes are read from `hex(key)`.
"""

from __future__ import annotations

M = 0x5BD1E995
SEED = 0x9747B28C
U32 = 0xFFFFFFFF


def _mul(x: str) -> str:
    """x * m mod 2^32 for 0 <= x < 2^32 (x should be a lambda variable or a column: it appears twice)."""
    return f"((({x} & 65535) * {M}L + shiftleft((shiftright({x}, 16) * {M}L) & 65535, 16)) & {U32}L)"


def _byte(hx: str, i: str) -> str:
    return f"cast(conv(substr({hx}, 2 * ({i}) + 1, 2), 16, 10) AS BIGINT)"


def with_murmur2(df, key_bytes_col: str, name: str = "_mm"):
    """`df` plus `name` (BIGINT): murmur2 of a BINARY column as an unsigned 32-bit value (null for a null key)."""
    from pyspark.sql import functions as F

    hx, ln, nb = "_mm_hx", "_mm_len", "_mm_nb"
    df = df.withColumn(hx, F.hex(F.col(key_bytes_col))).withColumn(ln, F.expr(f"octet_length({key_bytes_col})"))
    df = df.withColumn(nb, F.expr(f"shiftright({ln}, 2)"))
    block = (
        "cast(conv(concat(substr({hx}, 8 * j + 7, 2), substr({hx}, 8 * j + 5, 2), substr({hx}, 8 * j + 3, 2), "
        "substr({hx}, 8 * j + 1, 2)), 16, 10) AS BIGINT)"
    ).format(hx=hx)
    blocks = f"transform(filter(sequence(0, {nb}), j -> j < {nb}), j -> {block})"
    mixed = f"transform(transform(transform({blocks}, k -> {_mul('k')}), k -> k ^ shiftright(k, 24)), k -> {_mul('k')})"
    h0 = f"(({SEED}L ^ {ln}) & {U32}L)"
    df = df.withColumn("_mm_h", F.expr(f"aggregate({mixed}, {h0}, (h, k) -> {_mul('h')} ^ k)"))
    base = f"(4 * {nb})"
    tail = (
        f"(CASE WHEN {ln} % 4 = 3 THEN shiftleft({_byte(hx, base + ' + 2')}, 16) ELSE 0L END) ^ "
        f"(CASE WHEN {ln} % 4 >= 2 THEN shiftleft({_byte(hx, base + ' + 1')}, 8) ELSE 0L END) ^ "
        f"(CASE WHEN {ln} % 4 >= 1 THEN {_byte(hx, base)} ELSE 0L END)"
    )
    df = df.withColumn("_mm_t", F.expr(f"_mm_h ^ ({tail})"))
    df = df.withColumn("_mm_t", F.expr(f"CASE WHEN {ln} % 4 > 0 THEN {_mul('_mm_t')} ELSE _mm_t END"))
    df = df.withColumn("_mm_f", F.expr("_mm_t ^ shiftright(_mm_t, 13)"))
    df = df.withColumn("_mm_f", F.expr(_mul("_mm_f")))
    df = df.withColumn(name, F.expr("_mm_f ^ shiftright(_mm_f, 15)"))
    return df.drop(hx, ln, nb, "_mm_h", "_mm_t", "_mm_f")


def with_partition(df, key_bytes_col: str, counts, prefix: str = "_p"):
    """`df` plus one column `{prefix}{n}` per partition count: toPositive(murmur2(key)) % n, from a BINARY column."""
    from pyspark.sql import functions as F

    df = with_murmur2(df, key_bytes_col, "_mm")
    for n in counts:
        df = df.withColumn(f"{prefix}{n}", F.expr(f"CAST((_mm & 2147483647) % {int(n)} AS INT)"))
    return df.drop("_mm")
