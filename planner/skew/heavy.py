"""Hot keys with proof, without a group-by over every distinct key: a mergeable Misra-Gries summary.

Each Spark task keeps a summary of the 32-bit murmur2 values of its keys (the hash the partition count already
needs, so the summary costs no second hash) with at most `k` counters, batch by batch: the batch's exact counts are
added, and when more than `k` counters remain, the (k+1)-th largest count `c` is subtracted from all of them (those
at or below `c` drop out) and `c` is added to `err`. Every step removes at least (k+1)·c of the counted mass, so
`err` <= records / (k+1), and for every hash x: true(x) - err <= estimate(x) <= true(x) (estimate 0 when absent).
Summaries of tasks merge by adding counters and errors (Agarwal et al., "Mergeable summaries", PODS 2012).

So a key absent from the merged summary has at most `err` records (its hash has at least as many as the key). The
second, narrow pass counts exactly every key whose hash is a candidate; the top N come from those exact counts, and
every key not shown holds at most max(err, the next candidate's exact count) records.
"""

from __future__ import annotations

DEFAULT_COUNTERS = 2000  # the proven bound is then at most 1/2001 < 0.05 % of the keyed records


class MisraGries:
    """At most `k` (hash, count) counters over uint32 hashes, and the error bound `err` (records)."""

    def __init__(self, k: int = DEFAULT_COUNTERS):
        import numpy as np

        if k < 1:
            raise ValueError("k must be at least 1")
        self.k = k
        self.keys = np.zeros(0, dtype=np.uint32)
        self.counts = np.zeros(0, dtype=np.int64)
        self.err = 0
        self.total = 0

    def _combine(self, keys, counts) -> None:
        import numpy as np

        allk = np.concatenate([self.keys, keys])
        allc = np.concatenate([self.counts, counts])
        uniq, inverse = np.unique(allk, return_inverse=True)
        summed = np.zeros(len(uniq), dtype=np.int64)
        np.add.at(summed, inverse, allc)
        if len(uniq) > self.k:
            c = int(np.partition(summed, len(summed) - self.k - 1)[len(summed) - self.k - 1])  # (k+1)-th largest
            summed -= c
            keep = summed > 0
            uniq, summed = uniq[keep], summed[keep]
            self.err += c
        self.keys, self.counts = uniq, summed

    def add(self, hashes) -> None:
        """Count a batch of uint32 hashes (one per keyed record)."""
        import numpy as np

        if len(hashes) == 0:
            return
        keys, counts = np.unique(np.asarray(hashes, dtype=np.uint32), return_counts=True)
        self.total += int(len(hashes))
        self._combine(keys, counts.astype(np.int64))

    def merge(self, other: "MisraGries") -> None:
        self.total += other.total
        self.err += other.err
        self._combine(other.keys, other.counts)

    def estimates(self) -> dict[int, int]:
        return {int(h): int(c) for h, c in zip(self.keys, self.counts)}


def candidates_from_sums(estimates: dict[int, int]) -> list[int]:
    """The candidate hashes: every hash with a positive summed estimate, sorted."""
    return sorted(h for h, c in estimates.items() if c > 0)


def proven_top(counters, err: int, keyed: int, k: int, top: int, key_type: str):
    """The top keys straight from the summaries, when they prove them: ([(serialized key, records, record bytes)],
    bound), or None when a second pass must count the candidates.

    `counters` are (key, n, u, bytes, collided) (`KafkaMurmur2.Summary`): the key's hash has between n and n + u
    records; with u = 0 and no other key seen with that hash, n is the key's exact count. The listed keys are the top
    `top` of those exact ones; every other key has at most the larger of `err` (keys without a counter), n + u of the
    inexact counters and the next exact count. That proof is kept only when it is as strong as the summary promises:
    no inexact counter is provably above `err` (n > err: it may be a hot key, counted exactly by the second pass) and
    the bound is at most keyed / (k + 1).
    """
    exact = [(key, n, w) for key, n, u, w, collided in counters if u == 0 and not collided]
    loose = [(n, u) for _, n, u, _, collided in counters if u or collided]
    if any(n > err for n, _ in loose):
        return None
    upper = max((n + u for n, u in loose), default=0)
    if upper > keyed // (k + 1):
        return None
    ranked = sorted(exact, key=lambda e: (-e[1], order_key(e[0], key_type)))
    rest = ranked[top][1] if len(ranked) > top else 0
    return ranked[:top], max(err, upper, rest)


def count_candidates(batches, candidates, key_type: str):
    """mapInArrow / task body of the second pass: for every batch (`_k`, optional `_v`), the records and value bytes
    of each key whose murmur2 is a candidate, aggregated per task; yields one Arrow batch
    (`key` binary = Kafka's serialized key, `records`, `value_bytes`)."""
    import numpy as np
    import pyarrow as pa

    from planner.skew.arrowhash import hash_keys

    wanted = np.asarray(sorted(candidates), dtype=np.uint32)
    totals: dict[bytes, list[int]] = {}
    for batch in batches:
        names = batch.schema.names
        if batch.num_rows == 0:
            continue
        keys = batch.column(names.index("_k"))
        h, _, valid = hash_keys(keys)
        full = np.zeros(batch.num_rows, dtype=bool)
        full[np.flatnonzero(valid)[np.isin(h, wanted)]] = True
        if not full.any():
            continue
        mask = pa.array(full)
        values = (
            batch.column(names.index("_v")).filter(mask).fill_null(0).cast(pa.int64())
            if "_v" in names
            else pa.array(np.zeros(int(full.sum()), dtype=np.int64))
        )
        grouped = (
            pa.table({"k": keys.filter(mask), "v": values}).group_by("k").aggregate([("v", "sum"), ("v", "count")])
        )
        for key, vsum, count in zip(
            grouped.column("k").to_pylist(), grouped.column("v_sum").to_pylist(), grouped.column("v_count").to_pylist()
        ):
            raw = serialized(key, key_type)
            slot = totals.setdefault(raw, [0, 0])
            slot[0] += int(count)
            slot[1] += int(vsum or 0)
    raws = sorted(totals)
    yield pa.RecordBatch.from_arrays(
        [
            pa.array(raws, pa.binary()),
            pa.array([totals[r][0] for r in raws], pa.int64()),
            pa.array([totals[r][1] for r in raws], pa.int64()),
        ],
        names=["key", "records", "value_bytes"],
    )


def serialized(value, key_type: str) -> bytes:
    """Kafka's serializer output for a key as Arrow hands it to Python (str, bytes, int)."""
    if key_type == "int":
        return int(value).to_bytes(4, "big", signed=True)
    if key_type == "long":
        return int(value).to_bytes(8, "big", signed=True)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value).encode("utf-8")


def key_text(raw: bytes, key_type: str) -> str:
    """How a serialized key is shown: the string, the integer, or hex bytes."""
    if key_type == "int" or key_type == "long":
        return str(int.from_bytes(raw, "big", signed=True))
    if key_type == "bytes-hex":
        return raw.hex()
    return raw.decode("utf-8")


def order_key(raw: bytes, key_type: str):
    """Ties between equal counts: ascending key, numerically for int / long, by bytes otherwise (Spark's order)."""
    if key_type == "int" or key_type == "long":
        return int.from_bytes(raw, "big", signed=True)
    return raw
