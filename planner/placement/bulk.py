"""Vectorised AdminUtils placement (NumPy) for very large partition counts and for scoring many candidate starts.

Same results as `adminutils.place_unaware` / `adminutils.place_aware`, element for element (a property test checks
it), as a (partitions × RF) int64 matrix of broker ids. NumPy is imported inside the functions.

* The replicas of partition p depend only on its first position `(p + start) mod n` and on its shift modulo n − 1
  (Kafka takes `(shift + j) mod (n − 1)`, rack-aware `(shift × racks + k) mod (n − 1)`): a partition is one of at
  most n × (n − 1) distinct rows. When the partitions outnumber those rows, each row is placed once and gathered.
* Rack-unaware is closed form: the shift of partition p is `shift + #{multiples of n in [max(1, start_pid), p]}`.
* Rack-aware runs Kafka's follower loop for all rows at once: each step tries candidate k for every row that still
  needs a follower; most rows accept within RF + a few steps because the list alternates racks.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, Sequence, ValuesView
from typing import Any

from planner.placement.adminutils import rack_alternated_brokers


def _shifts(np, pids, n: int, shift: int, start_pid: int):
    base = 0 if start_pid <= 0 else (start_pid - 1) // n
    return shift + pids // n - base


class RoundRobin:
    """Kafka's round robin over one broker list: `rows(firsts, shifts)` places any partitions given their first
    position and shift; `matrix(...)` places a partition range as `assignReplicasToBrokers` does."""

    def __init__(self, rf: int, brokers: Sequence[int] | None = None, racks: Mapping[int, str] | None = None) -> None:
        import numpy as np

        self.rf = rf
        self.rack_aware = racks is not None
        if racks is not None:
            self.brokers = np.asarray(rack_alternated_brokers(racks), dtype=np.int64)
            rack_code = {r: i for i, r in enumerate(sorted(set(racks.values())))}
            self.num_racks = len(rack_code)
            self.broker_rack = np.asarray([rack_code[racks[int(b)]] for b in self.brokers], dtype=np.int64)
        else:
            self.brokers = np.asarray(list(brokers or ()), dtype=np.int64)
        self.n = len(self.brokers)
        self.residues = max(1, self.n - 1)  # the shift matters modulo n - 1

    def rows(self, firsts, shifts):
        """(len(firsts) × RF) broker ids of partitions with these first positions and shifts."""
        if self.rack_aware:
            return self._aware_rows(firsts, shifts)
        import numpy as np

        n, brokers = self.n, self.brokers
        out = np.empty((len(firsts), self.rf), dtype=np.int64)
        out[:, 0] = brokers[firsts]
        for j in range(self.rf - 1):
            out[:, j + 1] = brokers[(firsts + 1 + (shifts + j) % (n - 1)) % n]
        return out

    def _aware_rows(self, first, shifts):
        import numpy as np

        n, rf, num_racks, arranged, arranged_rack = self.n, self.rf, self.num_racks, self.brokers, self.broker_rack
        count = len(first)
        out = np.empty((count, rf), dtype=np.int64)
        out[:, 0] = arranged[first]
        if rf == 1:
            return out
        s = shifts * num_racks
        used_rack = np.full((count, rf), -1, dtype=np.int64)
        used_rack[:, 0] = arranged_rack[first]
        racks_used = np.ones(count, dtype=np.int64)  # distinct racks holding a replica
        filled = np.ones(count, dtype=np.int64)
        k = np.zeros(count, dtype=np.int64)
        active = np.arange(count)
        cols = np.arange(rf)
        while active.size:
            idx = (first[active] + 1 + (s[active] + k[active]) % (n - 1)) % n
            k[active] += 1
            cand = arranged[idx]
            cand_rack = arranged_rack[idx]
            f = filled[active]
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

    def round_rows(self, residues):
        """Rows of whole rounds: for each shift residue d, the n partitions with first positions 0..n-1 (a
        (len(residues) × n × RF) array)."""
        import numpy as np

        residues = np.asarray(residues, dtype=np.int64)
        firsts = np.tile(np.arange(self.n, dtype=np.int64), len(residues))
        shifts = np.repeat(residues, self.n)
        return self.rows(firsts, shifts).reshape(len(residues), self.n, self.rf)

    def matrix(self, n_partitions: int, start: int, shift: int, start_partition_id: int = -1):
        import numpy as np

        n = self.n
        pid0 = max(0, start_partition_id)
        pids = np.arange(pid0, pid0 + n_partitions, dtype=np.int64)
        first = (pids + start) % n
        if self.rf == 1:
            return self.brokers[first].reshape(n_partitions, 1)
        s = _shifts(np, pids, n, shift, start_partition_id)
        if 2 * n * self.residues <= n_partitions:  # few distinct rows: place each once, then gather
            pattern = self.round_rows(np.arange(self.residues)).reshape(-1, self.rf)
            return pattern[(s % self.residues) * n + first]
        return self.rows(first, s)


def unaware_matrix(
    brokers: Sequence[int], n_partitions: int, rf: int, start: int, shift: int, start_partition_id: int = -1
):
    return RoundRobin(rf, brokers=brokers).matrix(n_partitions, start, shift, start_partition_id)


def aware_matrix(
    racks: Mapping[int, str], n_partitions: int, rf: int, start: int, shift: int, start_partition_id: int = -1
):
    return RoundRobin(rf, racks=racks).matrix(n_partitions, start, shift, start_partition_id)


def matrix_to_assignment(matrix, start_partition_id: int = -1) -> dict[int, list[int]]:
    pid0 = max(0, start_partition_id)
    return {pid0 + i: row for i, row in enumerate(matrix.tolist())}


class Rows(Mapping[int, list[int]]):
    """A partition id → replica list map backed by a (partitions × RF) matrix: a placement of a million partitions
    is rendered and counted from the matrix (`.matrix`, first id `.first_pid`) without a Python list per partition;
    reading it as a mapping gives the same lists as `matrix_to_assignment`."""

    def __init__(self, matrix: Any, start_partition_id: int = -1) -> None:
        self.matrix = matrix
        self.first_pid = max(0, start_partition_id)

    def __getitem__(self, pid: int) -> list[int]:
        i = pid - self.first_pid if isinstance(pid, int) else -1
        if not 0 <= i < len(self.matrix):
            raise KeyError(pid)
        return [int(b) for b in self.matrix[i]]

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.first_pid, self.first_pid + len(self.matrix)))

    def __len__(self) -> int:
        return len(self.matrix)

    def items(self) -> ItemsView[int, list[int]]:
        return _RowItems(self)

    def values(self) -> ValuesView[list[int]]:
        return _RowValues(self)

    def __repr__(self) -> str:
        return f"Rows({len(self)} partitions from {self.first_pid})"


class _RowItems(ItemsView[int, list[int]]):
    _mapping: Rows

    def __iter__(self) -> Iterator[tuple[int, list[int]]]:
        rows = self._mapping
        return zip(iter(rows), rows.matrix.tolist())


class _RowValues(ValuesView[list[int]]):
    _mapping: Rows

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._mapping.matrix.tolist())
