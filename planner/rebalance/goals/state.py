"""The working copy the goals optimize: replica lists of the partitions in scope, with per-broker and per-topic
indexes, the replicas copied so far and the --max-moves budget."""

from __future__ import annotations

from typing import Iterable, Sequence

from planner.model import Cluster, Partition
from planner.rebalance.moves import rack_count


class State:
    def __init__(
        self,
        cluster: Cluster,
        parts: list[Partition],
        targets: Sequence[int],
        fixed: Iterable[int],
        max_moves: int | None = None,
        closed: Iterable[int] = (),
    ):
        self.cluster = cluster
        self.parts = parts
        self.reps = [list(p.replicas) for p in parts]
        self.home = [frozenset(p.replicas) for p in parts]
        self.size: list[int | None] = [p.size for p in parts]
        self.has_sizes = any(s is not None for s in self.size)
        self.targets = list(targets)
        self.target_set = set(targets)
        # target brokers whose log dirs are all cordoned (KIP-1066): they keep or give up replicas, never take one
        self.closed = frozenset(closed) & self.target_set
        self.rack_of = cluster.rack_of()
        self.n_racks = rack_count(cluster, targets)
        self.fixed = frozenset(fixed)
        names: dict[str, int] = {}
        self.topic_of = [names.setdefault(p.topic, len(names)) for p in parts]
        self.topic_names = list(names)
        self.count: dict[int, int] = {b: 0 for b in cluster.broker_ids}
        self.bytes: dict[int, int] = {b: 0 for b in cluster.broker_ids}
        self.where: dict[int, set[int]] = {b: set() for b in cluster.broker_ids}
        self.tcount: dict[int, dict[int, int]] = {b: {} for b in cluster.broker_ids}
        for i, r in enumerate(self.reps):
            for b in r:
                self._add(i, b)
        self.copies = 0  # replicas the plan copies so far: brokers in a new list that are not in the old one
        # bytes a broker may receive (its log dirs' usable bytes, DescribeLogDirs), the bytes the plan copies there
        # so far, and the brokers that turned a move down for lack of space
        self.usable = {b.id: b.usable_bytes for b in cluster.brokers if b.usable_bytes is not None}
        self.incoming: dict[int, int] = {b: 0 for b in cluster.broker_ids}
        self.full: set[int] = set()
        self.max_moves = max_moves
        self.optional_from = 0  # copies made by required moves (outside targets, rack repairs): not capped
        self.capped: list[str] = []  # goals --max-moves cut short
        # brokers balanced together: per rack when every partition keeps one replica in each rack
        self.groups: dict[str | None, list[int]] = {None: self.targets}
        self.moves = 0  # moves made (a replica may move twice; `copies` is what the plan costs)
        self.recount_leads()

    def recount_leads(self) -> None:
        """Preferred leaders per target broker and per (broker, topic); call after reordering replica lists. A closed
        broker holding no replica can lead nothing: it is left out."""
        self.lead_targets = [b for b in self.targets if b not in self.closed or self.count[b]]
        self.lead = {b: 0 for b in self.lead_targets}
        self.tlead: dict[tuple[int, int], int] = {}
        for i, r in enumerate(self.reps):
            self._lead(r[0], self.topic_of[i], 1)

    def _lead(self, b: int, t: int, d: int) -> None:
        if b in self.lead:
            self.lead[b] += d
            self.tlead[(b, t)] = self.tlead.get((b, t), 0) + d

    def lead_swap(self, i: int, old: int, new: int) -> None:
        """Broker `new` became the preferred leader of partition i instead of `old` (lists reordered in place)."""
        self._lead(old, self.topic_of[i], -1)
        self._lead(new, self.topic_of[i], 1)

    def topic_lead_range(self, t: int) -> tuple[int, int]:
        values = [self.tlead.get((b, t), 0) for b in self.lead_targets]
        return min(values), max(values)

    def _add(self, i: int, b: int) -> None:
        self.count[b] += 1
        self.bytes[b] += self.size[i] or 0
        self.where[b].add(i)
        t = self.topic_of[i]
        self.tcount[b][t] = self.tcount[b].get(t, 0) + 1

    def _remove(self, i: int, b: int) -> None:
        self.count[b] -= 1
        self.bytes[b] -= self.size[i] or 0
        self.where[b].discard(i)
        self.tcount[b][self.topic_of[i]] -= 1

    def known(self, i: int) -> bool:
        return self.size[i] is not None

    def sz(self, i: int) -> int:
        return self.size[i] or 0

    def low(self, values: dict[int, int]) -> int:
        """The smallest of per-broker `values` that can still rise: a closed broker's cannot, so it sets no floor
        (unless every broker is closed)."""
        open_values = [v for b, v in values.items() if b not in self.closed]
        return min(open_values or values.values())

    def group_of(self, b: int) -> str | None:
        return None if None in self.groups else self.rack_of.get(b)

    # -- moves ---------------------------------------------------------------------------------------------------
    def cost(self, i: int, src: int, dst: int) -> int:
        """Change in replicas the plan copies if replica src of partition i goes to dst (-1, 0 or 1)."""
        return (dst not in self.home[i]) - (src not in self.home[i])

    def fits(self, i: int, dst: int) -> bool:
        """Copying partition i to dst keeps the bytes the plan copies there within its usable bytes (a hard limit
        on destinations; a broker that reports none has no limit)."""
        if dst not in self.usable or dst in self.home[i] or self.incoming[dst] + self.sz(i) <= self.usable[dst]:
            return True
        self.full.add(dst)
        return False

    def move(self, i: int, src: int, dst: int) -> None:
        self.incoming[dst] += self.sz(i) if dst not in self.home[i] else 0
        self.incoming[src] -= self.sz(i) if src not in self.home[i] else 0
        r = self.reps[i]
        if r[0] == src:
            self.lead_swap(i, src, dst)
        r[r.index(src)] = dst
        self._remove(i, src)
        self._add(i, dst)
        self.copies += self.cost(i, src, dst)
        self.moves += 1

    def allowed(self, n: int = 1) -> bool:
        """n more copies fit in --max-moves (required moves are never capped)."""
        return self.max_moves is None or self.copies - self.optional_from + n <= self.max_moves

    def distinct_racks(self, replicas: Iterable[int]) -> int:
        return len({self.rack_of.get(b) for b in replicas})

    def rack_delta(self, i: int, src: int, dst: int) -> int | None:
        """None if moving replica src→dst of partition i would lower its rack safety; else the gain in racks."""
        if self.n_racks == 0:
            return 0
        r = self.reps[i]
        before = self.distinct_racks(r)
        after = self.distinct_racks([dst if b == src else b for b in r])
        if after < min(before, min(len(r), self.n_racks)):
            return None
        return after - before

    def can_move(self, i: int, src: int, dst: int) -> bool:
        """The hard goal: only to target brokers that take replicas (not closed) and have room for it, never fixed
        partitions, never two replicas on one broker, never lowering rack safety."""
        return (
            i not in self.fixed
            and dst in self.target_set
            and dst not in self.closed
            and dst not in self.reps[i]
            and src in self.reps[i]
            and self.rack_delta(i, src, dst) is not None
            and self.fits(i, dst)
        )
