"""Kafka's placement, with the start index and shift chosen to balance the whole cluster instead of drawn at random.

A Kafka broker (or `kafka-topics --create`) draws `startIndex` and `nextReplicaShift` independently with
`Random.nextInt(n)`, so every pair (start, shift) in [0, n)² is a placement Kafka itself could have produced. We score
each candidate pair against the load already on the cluster (replicas and preferred leaders of every existing topic,
per broker) and keep the best, by this rule, in order:

1. smallest spread (max − min) of replicas per broker after placement,
2. smallest spread of preferred leaders per broker after placement,
3. smallest sum of squares of replicas, then of preferred leaders (the more even distribution),
4. the smallest (start, shift) — so the choice is deterministic.

Brokers outside the placement list (offline ones) are not scored. Small problems are scored in pure Python over every
pair; large ones (n² × partitions × RF above a budget) use the vectorised placer (NumPy), every start with its own
shift first, then, for the best few starts, every shift up to a bounded number of evenly spaced values.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.model import Cluster
from planner.placement import adminutils

_PURE_BUDGET = 200_000  # candidate pairs × partitions × RF scored in pure Python
_BEST_STARTS = 3
_MAX_SHIFTS = 64


def existing_load(cluster: Cluster, broker_ids: Sequence[int]) -> tuple[dict[int, int], dict[int, int]]:
    replicas = {b: 0 for b in broker_ids}
    leaders = {b: 0 for b in broker_ids}
    for topic in cluster.topics:
        for p in topic.partitions:
            for i, b in enumerate(p.replicas):
                if b in replicas:
                    replicas[b] += 1
                    if i == 0:
                        leaders[b] += 1
    return replicas, leaders


def _score(replicas: list[int], leaders: list[int]) -> tuple[int, int, int, int]:
    return (
        max(replicas) - min(replicas),
        max(leaders) - min(leaders),
        sum(r * r for r in replicas),
        sum(x * x for x in leaders),
    )


def choose_start(
    cluster: Cluster,
    metadatas: Sequence[tuple[int, str | None]],
    n_partitions: int,
    replication_factor: int,
    start_partition_id: int = -1,
) -> tuple[Mapping[int, list[int]], int, int]:
    """Best (assignment, start, shift) for a new topic (or new partitions) on `metadatas` (id-sorted (id, rack))."""
    ids = [b for b, _ in metadatas]
    n = len(ids)
    rack_aware = any(r is not None for _, r in metadatas)
    racks = {b: r for b, r in metadatas if r is not None}
    base_r, base_l = existing_load(cluster, ids)
    position = {b: i for i, b in enumerate(ids)}

    def place(start: int, shift: int) -> dict[int, list[int]]:
        if rack_aware:
            return adminutils.place_aware(racks, n_partitions, replication_factor, start, shift, start_partition_id)
        return adminutils.place_unaware(ids, n_partitions, replication_factor, start, shift, start_partition_id)

    if n * n * n_partitions * replication_factor <= _PURE_BUDGET:
        best: tuple[tuple, dict[int, list[int]]] | None = None
        for start in range(n):
            for shift in range(n):
                assignment = place(start, shift)
                reps = [base_r[b] for b in ids]
                leads = [base_l[b] for b in ids]
                for replicas in assignment.values():
                    leads[position[replicas[0]]] += 1
                    for b in replicas:
                        reps[position[b]] += 1
                key = (_score(reps, leads), start, shift)
                if best is None or key < best[0]:
                    best = (key, assignment)
        assert best is not None  # n >= 1: the loops ran
        (_, start, shift), assignment = best
        return assignment, start, shift
    return _choose_vectorised(
        ids, racks, rack_aware, base_r, base_l, n_partitions, replication_factor, start_partition_id
    )


def _choose_vectorised(ids, racks, rack_aware, base_r, base_l, n_partitions, rf, start_partition_id):
    import numpy as np

    from planner.placement import bulk

    placer = bulk.RoundRobin(rf, racks=racks) if rack_aware else bulk.RoundRobin(rf, brokers=ids)
    counts = _CandidateCounts(np, placer, ids, n_partitions, start_partition_id)
    base_rep = np.asarray([base_r[b] for b in ids], dtype=np.int64)
    base_lead = np.asarray([base_l[b] for b in ids], dtype=np.int64)

    def score(start: int, shift: int) -> tuple[int, int, int, int]:
        new_reps, new_leads = counts(start, shift)
        reps, leads = base_rep + new_reps, base_lead + new_leads
        return (
            int(reps.max() - reps.min()),
            int(leads.max() - leads.min()),
            int((reps * reps).sum()),
            int((leads * leads).sum()),
        )

    n = len(ids)
    scored = sorted((score(s, s), s, s) for s in range(n))
    best = scored[0]
    step = max(1, n // _MAX_SHIFTS)
    for _, start, _ in scored[:_BEST_STARTS]:
        for shift in range(0, n, step):
            key = (score(start, shift), start, shift)
            if key < best:
                best = key
    _, start, shift = best
    matrix = placer.matrix(n_partitions, start, shift, start_partition_id)
    return bulk.Rows(matrix, start_partition_id), start, shift


class _CandidateCounts:
    """Replicas and preferred leaders per broker (in `ids` order) that a candidate (start, shift) places, without
    placing every partition.

    The partition range splits into whole rounds of n partitions (first positions 0..n-1, one shift each) and at most
    two partial rounds. A whole round's counts depend on its shift modulo n - 1 only, so they are computed once per
    residue (`per_residue`); the whole rounds of a candidate are a cyclic window of residues (prefix sums), and the
    partial rounds are placed row by row. Exactly the counts of the candidate's full matrix (a test compares them).
    """

    def __init__(self, np, placer, ids, n_partitions: int, start_partition_id: int) -> None:
        self.np, self.placer, self.n = np, placer, placer.n
        position = np.full(int(max(ids)) + 1, -1, dtype=np.int64)
        position[np.asarray(ids, dtype=np.int64)] = np.arange(len(ids))
        self.position = position
        n = self.n
        pid0 = max(0, start_partition_id)
        end = pid0 + n_partitions
        self.base = 0 if start_partition_id <= 0 else (start_partition_id - 1) // n
        self.partial: list[tuple[int, int]] = []  # [a, b) pid ranges inside one round
        p = pid0
        if p % n:
            e = min(end, (p // n + 1) * n)
            self.partial.append((p, e))
            p = e
        self.full_rounds = (end - p) // n
        self.first_full_round = p // n
        p += self.full_rounds * n
        if p < end:
            self.partial.append((p, end))
        self._prefix = None

    def _window_prefix(self):
        """Prefix sums over the residues, twice round (for cyclic windows), of a whole round's replica counts."""
        if self._prefix is None:
            np, placer = self.np, self.placer
            residues = placer.residues
            per_residue = np.zeros((residues, self.n), dtype=np.int64)
            chunk = max(1, (1 << 20) // max(1, self.n * placer.rf))
            for lo in range(0, residues, chunk):
                d = np.arange(lo, min(residues, lo + chunk))
                rows = placer.round_rows(d)
                for i in range(len(d)):
                    per_residue[lo + i] = np.bincount(self.position[rows[i].ravel()], minlength=self.n)
            doubled = np.concatenate([per_residue, per_residue])
            self._prefix = np.concatenate([np.zeros((1, self.n), dtype=np.int64), np.cumsum(doubled, axis=0)])
        return self._prefix

    def __call__(self, start: int, shift: int):
        np, n, residues = self.np, self.n, self.placer.residues
        reps = np.zeros(n, dtype=np.int64)
        leads = np.zeros(n, dtype=np.int64)
        k = self.full_rounds
        if k:
            prefix = self._window_prefix()
            whole, rest = divmod(k, residues)
            a = (shift - self.base + self.first_full_round) % residues
            reps += whole * prefix[residues] + (prefix[a + rest] - prefix[a])
            leads += k  # every position leads once per round
        for lo, hi in self.partial:
            pids = np.arange(lo, hi, dtype=np.int64)
            rows = self.placer.rows((pids + start) % n, np.full(hi - lo, shift + lo // n - self.base, dtype=np.int64))
            reps += np.bincount(self.position[rows.ravel()], minlength=n)
            leads += np.bincount(self.position[rows[:, 0]], minlength=n)
        return reps, leads
