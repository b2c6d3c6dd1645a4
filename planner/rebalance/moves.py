"""Plans and their arithmetic: replica moves, leader changes, lower bounds, before/after statistics. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Collection, Iterable, Mapping, Sequence

from planner.model import Cluster, Partition, PlannerError, TopicPartition
from planner.rebalance.flow import Network

if TYPE_CHECKING:
    from planner.rebalance.metrics import PlanMetrics, Tally

Assignment = dict[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True)
class Plan:
    """A reassignment: the cluster before, the new replica lists of the partitions that change, and what was asked."""

    before: Cluster
    proposed: Mapping[TopicPartition, tuple[int, ...]]  # only partitions whose replica list changes
    goal: str  # "rebalance", "decommission", ...
    lower_bound: int | None = None  # fewest replica moves any plan reaching the goal needs
    brokers: tuple[int, ...] = ()  # the brokers the goal balances over
    notes: tuple = field(default=())  # notes.Note data the renderer words (goal not fully reachable, ...)
    bytes_lower_bound: int | None = None  # fewest bytes any plan reaching the goals copies (sizes known)
    unmet: tuple[str, ...] = ()  # goals the move cap left unmet
    # lower bounds of the preferred-leader spread and the largest topic leader spread (elect-leaders), else None
    leader_bounds: tuple[int, int] | None = None
    strategy: str | None = None  # the search's strategy that made the plan (`goals.search`), else None

    # derived once per plan (a frozen dataclass: its fields never change), as a plan of a million partitions is
    # summarised, rendered and written by several readers
    @cached_property
    def after(self) -> Cluster:
        return self.before.with_assignment(self.proposed)

    @cached_property
    def current(self) -> Assignment:
        """The current replicas of the partitions the plan touches (the rollback)."""
        before = self.before
        return {tp: before.topic(tp.topic).partitions[tp.partition].replicas for tp in self.proposed}

    @cached_property
    def replica_moves(self) -> int:
        return replica_moves(self.current, self.proposed)

    @cached_property
    def leader_changes(self) -> int:
        cur = self.current
        return sum(1 for tp, r in self.proposed.items() if r[0] != cur[tp][0])

    @cached_property
    def scored(self) -> tuple[PlanMetrics, Tally, Tally]:
        """The plan's figures over its brokers (every broker when it names none), with the tallies before and after
        (`metrics.plan_score`): computed once, as the summary, plan.txt and the JSON all show them."""
        from planner.rebalance.metrics import plan_score

        return plan_score(self)

    def moved_bytes(self) -> int | None:
        """Bytes copied: size × new replicas per partition; None when no size is known."""
        return self._moved_bytes

    @cached_property
    def _moved_bytes(self) -> int | None:
        if not any(p.size is not None for p in self.before.partitions()):
            return None
        cur, before = self.current, self.before
        return sum(
            (before.topic(tp.topic).partitions[tp.partition].size or 0) * len(set(r) - set(cur[tp]))
            for tp, r in self.proposed.items()
        )


def after_reassignment(cluster: Cluster, proposed: Mapping[TopicPartition, Sequence[int]]) -> Cluster:
    """The cluster once `proposed` completes, for `reassign apply`.

    Kafka accepts a reassignment that changes the replication factor of only some partitions of a topic
    (ReassignPartitionsCommand.scala checks no replication factor; KIP-860 makes refusing it opt-in), and a topology
    file without `replication_factor` takes such a topic, so the result is written as it is.
    """
    return cluster.with_assignment(proposed)


def replica_moves(
    current: Mapping[TopicPartition, Sequence[int]], proposed: Mapping[TopicPartition, Sequence[int]]
) -> int:
    """Replicas that must be copied: brokers in the new list that are not in the old one."""
    return sum(len(set(r) - set(current.get(tp, ()))) for tp, r in proposed.items())


def changed_only(
    current: Mapping[TopicPartition, Sequence[int]], proposed: Mapping[TopicPartition, Sequence[int]]
) -> Assignment:
    return {tp: tuple(r) for tp, r in proposed.items() if tuple(r) != tuple(current[tp])}


def count_targets(
    counts: Mapping[int, int], brokers: Sequence[int], total: int, closed: frozenset[int] = frozenset()
) -> dict[int, int]:
    """Per-broker targets within 1 of each other summing to `total`, the +1 going to the brokers holding most now.

    That choice of the +1 brokers is the one that needs fewest moves, so `excess(counts, targets)` is a lower bound.
    A `closed` broker (every log dir cordoned, KIP-1066) takes no replica: where its share is above what it holds,
    its target is what it holds and the others share the rest.
    """
    if not brokers:
        raise PlannerError("no brokers to place replicas on")
    fixed: dict[int, int] = {}
    while True:
        members = [b for b in brokers if b not in fixed]
        if not members:
            return fixed
        q, r = divmod(total - sum(fixed.values()), len(members))
        order = sorted(members, key=lambda b: (-counts.get(b, 0), b))
        target = {b: q + (1 if i < r else 0) for i, b in enumerate(order)}
        low = [b for b in members if b in closed and counts.get(b, 0) < target[b]]
        if not low:
            return {**fixed, **target}
        fixed.update((b, counts.get(b, 0)) for b in low)


def names_offline(replicas: Iterable[int], online: Collection[int]) -> bool:
    """Whether a replica list names a broker that is not online: Kafka's `--execute` refuses a reassignment naming one
    (`verifyBrokerIds`: `describeCluster` lists only live, unfenced brokers; "Unknown broker id N")."""
    return any(b not in online for b in replicas)


def movable_counts(counts: Mapping[int, int], pinned: Iterable[Sequence[int]], keep: Iterable[int]) -> dict[int, int]:
    """Replicas per broker, less the pinned replicas (partitions mid-reassignment, which no plan moves) on brokers
    outside `keep`: a broker being emptied cannot shed those, so a lower bound must not count them."""
    out = dict(counts)
    keep = set(keep)
    for replicas in pinned:
        for b in replicas:
            if b not in keep:
                out[b] -= 1
    return out


def excess(counts: Mapping[int, int], targets: Mapping[int, int]) -> int:
    """Replicas above target (brokers outside `targets` have target 0): each move removes at most one."""
    return sum(max(0, c - targets.get(b, 0)) for b, c in counts.items())


def lower_bound(
    counts: Mapping[int, int],
    groups: Sequence[tuple[Sequence[int], int]],
    repairs: Sequence[tuple[int, Iterable[int]]] = (),
) -> int:
    """Fewest replica moves of any plan that brings each group's brokers within 1 and repairs every partition given.

    `counts`: replicas per broker now; a broker in no group must be emptied. `groups`: (brokers, replicas they hold
    at the end); each of them ends at the floor or, for exactly total mod len of them, the ceiling of the mean.
    `repairs`: per rack-unsafe partition, (racks it lacks: min(RF, racks) − distinct racks, the brokers whose replica
    of it shares a rack with another replica of it).

    Counted on the replicas that leave (every move takes one off a broker): broker b must lose at least
    d_b = count − floor target (all of it off a group), one less if it is a ceiling broker; an unsafe partition must
    lose at least `lacks` replicas from the racks where it has two or more (taking a replica off a rack where it is
    alone loses that rack, so only those removals add racks). One removal can count for both: the bound is
    Σ d_b + Σ lacks − (the most removals that count twice, plus ceilings granted), a max flow:
    source → broker (d_b) → partition (1 per replica it may give) → sink (lacks), and broker → its group's ceilings
    (1) → sink (total mod len). Without repairs this is `excess` with `count_targets`' choice of ceilings.
    """
    return _removals(counts, groups, repairs)[0]


def repair_removals(
    counts: Mapping[int, int],
    groups: Sequence[tuple[Sequence[int], int]],
    repairs: Sequence[tuple[int, Iterable[int]]],
) -> list[list[int]]:
    """Per repair (in order), the brokers whose replica of it the removals `lower_bound` counts twice take: taking
    those replicas off (and the rest of the `lacks` from anywhere) is how a repair meets the bound."""
    return _removals(counts, groups, repairs)[1]


def _removals(
    counts: Mapping[int, int],
    groups: Sequence[tuple[Sequence[int], int]],
    repairs: Sequence[tuple[int, Iterable[int]]],
) -> tuple[int, list[list[int]]]:
    demand: dict[int, int] = {b: c for b, c in counts.items() if c > 0}
    ceilings: list[tuple[list[int], int]] = []
    for brokers, total in groups:
        if not brokers:
            raise PlannerError("no brokers to place replicas on")
        q, r = divmod(total, len(brokers))
        for b in brokers:
            demand[b] = max(0, counts.get(b, 0) - q)
        ceilings.append(([b for b in brokers if demand[b] > 0], r))
    need = [
        (lacks, [b for b in dict.fromkeys(brokers) if demand.get(b, 0) > 0] if lacks > 0 else [])
        for lacks, brokers in repairs
    ]
    net = Network()
    src, sink = net.node(), net.node()
    node = {b: net.node() for b, d in demand.items() if d > 0}
    for b, v in node.items():
        net.arc(src, v, demand[b])
    for members, r in ceilings:
        if r and members:
            g = net.node()
            net.arc(g, sink, r)
            for b in members:
                net.arc(node[b], g, 1)
    taken: list[list[tuple[int, int]]] = []
    for lacks, brokers in need:
        edges: list[tuple[int, int]] = []
        if brokers:
            p = net.node()
            net.arc(p, sink, lacks)
            edges = [(b, net.arc(node[b], p, 1)) for b in brokers]
        taken.append(edges)
    bound = sum(demand.values()) + sum(lacks for lacks, _ in need if lacks > 0) - net.max_flow(src, sink)
    return bound, [[b for b, e in edges if net.flow(e)] for edges in taken]


def rack_safe(replicas: Sequence[int], rack_of: Mapping[int, str | None], n_racks: int) -> bool:
    """One replica per rack as far as racks allow: distinct racks == min(RF, racks). True without rack data."""
    if n_racks == 0:
        return True
    return len({rack_of.get(b) for b in replicas}) >= min(len(replicas), n_racks)


def rack_count(cluster: Cluster, brokers: Iterable[int] | None = None) -> int:
    """Racks among `brokers` (default all); 0 when any of them has no rack (rack-unaware cluster)."""
    rack_of = cluster.rack_of()
    ids = list(brokers) if brokers is not None else list(cluster.broker_ids)
    racks = [rack_of.get(b) for b in ids]
    if not racks or any(r is None for r in racks):
        return 0
    return len(set(racks))


def rackless(cluster: Cluster, brokers: Iterable[int]) -> tuple[int, ...]:
    """The brokers among `brokers` without a rack when others of them have one: `rack_count` is then 0, so the plan
    ignores racks altogether (Kafka's --generate refuses such brokers unless --disable-rack-aware: "Not all brokers
    have rack information", the tools' `getBrokerMetadatas`, `placement.adminutils.broker_metadatas`)."""
    rack_of = cluster.rack_of()
    ids = sorted(brokers)
    none = tuple(b for b in ids if rack_of.get(b) is None)
    return none if len(none) < len(ids) else ()


def unsafe_partitions(cluster: Cluster, n_racks: int | None = None) -> int:
    rack_of = cluster.rack_of()
    n = rack_count(cluster) if n_racks is None else n_racks
    return sum(1 for p in cluster.partitions() if not rack_safe(p.replicas, rack_of, n))


def with_sizes(cluster: Cluster, sizes: Mapping[TopicPartition, int]) -> Cluster:
    """The cluster with partition sizes from a `kafka-log-dirs` file (unknown partitions keep their size)."""
    if not sizes:
        return cluster
    topics = []
    for t in cluster.topics:
        parts = tuple(replace(p, size=sizes[p.tp]) if p.tp in sizes else p for p in t.partitions)
        topics.append(replace(t, partitions=parts))
    return replace(cluster, topics=tuple(topics))


def select_partitions(cluster: Cluster, topics: Sequence[str] | None = None) -> list[Partition]:
    if not topics:
        return list(cluster.partitions())
    out: list[Partition] = []
    for name in dict.fromkeys(topics):
        if not cluster.has_topic(name):
            raise PlannerError(
                f"Topic {name} not found. The topology has topics: "
                f"{', '.join(t.name for t in cluster.topics) or '(none)'}"
            )
        out.extend(cluster.topic(name).partitions)
    return out
