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

from typing import Sequence

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
) -> tuple[dict[int, list[int]], int, int]:
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

    n = len(ids)
    id_array = np.asarray(ids, dtype=np.int64)
    index_of = np.full(int(id_array.max()) + 1, -1, dtype=np.int64)
    index_of[id_array] = np.arange(n)
    base_rep = np.asarray([base_r[b] for b in ids], dtype=np.int64)
    base_lead = np.asarray([base_l[b] for b in ids], dtype=np.int64)

    def matrix(start: int, shift: int):
        if rack_aware:
            return bulk.aware_matrix(racks, n_partitions, rf, start, shift, start_partition_id)
        return bulk.unaware_matrix(ids, n_partitions, rf, start, shift, start_partition_id)

    def score(m):
        reps = base_rep + np.bincount(index_of[m.ravel()], minlength=n)
        leads = base_lead + np.bincount(index_of[m[:, 0]], minlength=n)
        return (
            int(reps.max() - reps.min()),
            int(leads.max() - leads.min()),
            int((reps * reps).sum()),
            int((leads * leads).sum()),
        )

    scored = sorted((score(matrix(s, s)), s, s) for s in range(n))
    best = scored[0]
    step = max(1, n // _MAX_SHIFTS)
    for _, start, _ in scored[:_BEST_STARTS]:
        for shift in range(0, n, step):
            key = (score(matrix(start, shift)), start, shift)
            if key < best:
                best = key
    _, start, shift = best
    return bulk.matrix_to_assignment(matrix(start, shift), start_partition_id), start, shift
