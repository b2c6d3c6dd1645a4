"""Vectorised AdminUtils placement (NumPy) for very large partition counts and for scoring many candidate starts.

Same results as `kafka.place_unaware` / `kafka.place_aware`, element for element (a property test checks it), as a
(partitions × RF) int64 matrix of broker ids. NumPy is imported inside the functions.

* Rack-unaware is closed form: the shift of partition p is `shift + #{multiples of n in [max(1, start_pid), p]}`.
* Rack-aware runs Kafka's follower loop for all partitions at once: each step tries candidate k for every partition
  that still needs a follower; most partitions accept within RF + a few steps because the list alternates racks.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planner.placement.adminutils import rack_alternated_brokers


def _shifts(np, pids, n: int, shift: int, start_pid: int):
    base = 0 if start_pid <= 0 else (start_pid - 1) // n
    return shift + pids // n - base


def unaware_matrix(
    brokers: Sequence[int], n_partitions: int, rf: int, start: int, shift: int, start_partition_id: int = -1
):
    import numpy as np

    ids = np.asarray(brokers, dtype=np.int64)
    n = len(ids)
    pid0 = max(0, start_partition_id)
    pids = np.arange(pid0, pid0 + n_partitions, dtype=np.int64)
    first = (pids + start) % n
    out = np.empty((n_partitions, rf), dtype=np.int64)
    out[:, 0] = ids[first]
    if rf > 1:
        s = _shifts(np, pids, n, shift, start_partition_id)
        for j in range(rf - 1):
            out[:, j + 1] = ids[(first + 1 + (s + j) % (n - 1)) % n]
    return out


def aware_matrix(
    racks: Mapping[int, str], n_partitions: int, rf: int, start: int, shift: int, start_partition_id: int = -1
):
    import numpy as np

    arranged = np.asarray(rack_alternated_brokers(racks), dtype=np.int64)
    n = len(arranged)
    rack_names = sorted(set(racks.values()))
    rack_code = {r: i for i, r in enumerate(rack_names)}
    num_racks = len(rack_names)
    arranged_rack = np.asarray([rack_code[racks[int(b)]] for b in arranged], dtype=np.int64)
    pid0 = max(0, start_partition_id)
    pids = np.arange(pid0, pid0 + n_partitions, dtype=np.int64)
    first = (pids + start) % n
    out = np.empty((n_partitions, rf), dtype=np.int64)
    out[:, 0] = arranged[first]
    if rf == 1:
        return out
    s = _shifts(np, pids, n, shift, start_partition_id) * num_racks
    used_rack = np.full((n_partitions, rf), -1, dtype=np.int64)
    used_rack[:, 0] = arranged_rack[first]
    racks_used = np.ones(n_partitions, dtype=np.int64)  # distinct racks holding a replica
    filled = np.ones(n_partitions, dtype=np.int64)
    k = np.zeros(n_partitions, dtype=np.int64)
    active = np.arange(n_partitions)
    while active.size:
        idx = (first[active] + 1 + (s[active] + k[active]) % (n - 1)) % n
        k[active] += 1
        cand = arranged[idx]
        cand_rack = arranged_rack[idx]
        f = filled[active]
        cols = np.arange(rf)
        valid = cols[None, :] < f[:, None]
        rack_seen = ((used_rack[active] == cand_rack[:, None]) & valid).any(axis=1)
        broker_seen = ((out[active] == cand[:, None]) & valid).any(axis=1)
        rack_ok = ~rack_seen | (racks_used[active] == num_racks)
        broker_ok = ~broker_seen | (f == n)
        accept = rack_ok & broker_ok
        rows = active[accept]
        fa = f[accept]
        out[rows, fa] = cand[accept]
        used_rack[rows, fa] = cand_rack[accept]
        racks_used[rows] += ~rack_seen[accept]
        filled[rows] += 1
        active = active[filled[active] < rf]
    return out


def matrix_to_assignment(matrix, start_partition_id: int = -1) -> dict[int, list[int]]:
    pid0 = max(0, start_partition_id)
    return {pid0 + i: row for i, row in enumerate(matrix.tolist())}
