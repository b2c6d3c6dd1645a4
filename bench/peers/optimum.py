"""The certifier: the fewest replica moves, then the fewest bytes moved, of any plan that reaches at least the goal
figures a given plan reached, solved exactly as a mixed-integer program (scipy.optimize.milp, HiGHS).

Bench code only: planner/ never imports it (nor scipy). `certify(before, after, sizes, targets)` reads the goals off
`after` (the plan to judge) and solves over binary x[p, b] (partition p has a replica on target broker b):

- hard goals: replicas only on the targets; each partition's replication factor as in `after`; at most
  max(ceil(RF / racks), the plan's own) replicas of a partition in one rack;
- replica count per broker: spread (max - min) at most the plan's, or within 1;
- each topic's replicas per broker: spread at most max(1, the plan's spread of that topic); a topic that racks of
  different sizes force wider (`geometry.forced_in` on the plan) also within max(1, the plan's spread) inside
  each of its classes (each rack that forces it, the other brokers together);
- preferred leaders (y[p, b] <= x[p, b], one per partition): spread per broker at most max(1, the plan's), and per
  topic at most max(1, the plan's spread of that topic). They cost no move, so they are first checked on the
  optimum found without them (a small flow problem); only if that fails are they put in the model;
- stage 1: maximise the replicas kept in place (moves = replicas after - replicas kept);
- stage 2 (with sizes): moves fixed at stage 1's optimum, every broker's bytes at most max((1 + tolerance) x mean,
  the plan's largest), maximise the bytes kept (bytes moved = each new replica's size). Above FULL_COLUMNS columns
  (the 60-broker scenario) the whole model's LP alone takes minutes; there the bound below is the LP optimum of a
  relaxation that counts arrivals per rack instead of per broker (`_keep_master`), and the plans above come from
  the whole model restricted, per partition, to the brokers holding it, those stage 1 put it on and those stage 1
  grew (`_restriction`).

A spread of at most 1 with a fixed total is the range [floor, ceil] of the even share; a wider one gets two integer
variables lo <= count <= hi with hi - lo <= spread. Where HiGHS stops at its time limit, the result is the bracket it
proved: its dual bound (or, where it found no plan yet, the LP optimum) below, its best plan above, or ours when ours
qualifies and is better, or stage 1's plan when its bytes are within the limit; never a guess. The byte stage stops
at a relative gap of BYTE_GAP; a bracket whose two ends agree to it is shown as proven.

What the model leaves out (partitions under reassignment, none in the scenarios) can only lower its optimum: where
our plan meets it, ours is the optimum.

`at_counts` solves a restriction of the byte stage: the plan's own count of each topic on each broker, so only which
replicas leave and arrive is left (what `lighter_leaver` chooses); its LP is small (seconds at 60 brokers) and close to
its optimum, so it says how far the exchanges are from the best at those counts.
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from planner.model import Cluster, TopicPartition

TOLERANCE = 0.10  # the byte goal's default --byte-tolerance
MIB = 1 << 20  # the byte stage counts in MiB
BYTE_GAP = 1e-4  # relative gap at which HiGHS may call the byte stage optimal
FULL_COLUMNS = 200_000  # the byte stage's whole model up to this many x[p, b]; above, a relaxation of it


@dataclass(frozen=True)
class Bracket:
    """A proven range for an optimum: no plan does better than `low`; `high` is reached by a plan (None: none
    found in time); `seconds` is the solver's wall time."""

    low: int
    high: int | None
    seconds: float  # wall time
    cpu: float  # CPU time of this process (HiGHS runs in it)
    infeasible: bool = False  # no plan meets the constraints at all
    optimal: bool = False  # HiGHS proved `high` optimal (bytes: within a relative gap of 1e-4)

    @property
    def proven(self) -> bool:
        return self.high is not None and (self.optimal or self.low >= self.high)


@dataclass(frozen=True)
class Optimum:
    moves: Bracket
    bytes: Bracket | None  # None without sizes
    leaders: str  # "checked": the leader goals hold on the optimum found without them; "modelled": put in the model


@dataclass
class _Spec:
    """What the certified plans must reach, read off the judged plan."""

    parts: list[TopicPartition]
    rf: list[int]
    held: list[frozenset[int]]  # replicas before, on the targets
    topic_of: list[int]
    topics: list[str]
    brokers: list[int]
    racks: dict[int, str] | None
    rack_cap: list[int]
    count_spread: int
    topic_spread: list[int]
    topic_classes: list[tuple[int, list[int], int]]  # rack-forced topics: (topic, broker indexes, spread within)
    leader_spread: int
    topic_leader_spread: list[int]
    sizes: list[int] | None
    byte_cap: float
    ours_kept: int
    ours_kept_bytes: int | None


def _spread(values) -> int:
    values = list(values)
    return max(values) - min(values) if values else 0


def _racks(cluster: Cluster, brokers: Sequence[int]) -> dict[int, str] | None:
    rack = {b.id: b.rack for b in cluster.brokers}
    return {b: rack[b] for b in brokers} if all(rack.get(b) for b in brokers) else None


def _per_broker(values: Mapping[tuple[int, int], int], keys: int, brokers: Sequence[int]) -> list[int]:
    return [_spread(values.get((k, b), 0) for b in brokers) for k in range(keys)]


def _classes(after: Cluster, brokers: list[int], t_index: dict[str, int], counts) -> list:
    """Each rack-forced topic's classes (`geometry.forced_in`: each rack that forces it, the others together)
    with the spread the plan has within each (at least 1): the plan keeps the topic within 1 inside each."""
    from planner.rebalance.goals.geometry import forced_in

    index = {b: j for j, b in enumerate(brokers)}
    out = []
    for name, why in sorted(forced_in(after, brokers).items()):
        t = t_index[name]
        for members in why.classes:
            js = sorted(index[b] for b in members if b in index)
            spread = _spread(counts.get((t, brokers[j]), 0) for j in js)
            out.append((t, js, max(1, spread)))
    return out


def spec(
    before: Cluster,
    after: Cluster,
    sizes: Mapping[TopicPartition, int] | None,
    targets: Sequence[int],
    tolerance: float = TOLERANCE,
) -> _Spec:
    brokers = sorted(targets)
    old = before.assignment()
    new = after.assignment()
    parts = sorted(new)
    topics = sorted({tp.topic for tp in parts})
    t_index = {t: i for i, t in enumerate(topics)}
    topic_of = [t_index[tp.topic] for tp in parts]
    racks = _racks(after, brokers)
    n_racks = len(set(racks.values())) if racks else 0
    rack_cap, counts, leads = [], defaultdict(int), defaultdict(int)
    topic_counts: dict[tuple[int, int], int] = defaultdict(int)
    topic_leads: dict[tuple[int, int], int] = defaultdict(int)
    for i, tp in enumerate(parts):
        reps = new[tp]
        cap = 1
        if racks:
            per = defaultdict(int)
            for b in reps:
                per[racks[b]] += 1
            cap = max(-(-len(reps) // n_racks), max(per.values()))
        rack_cap.append(cap)
        for b in reps:
            counts[b] += 1
            topic_counts[(topic_of[i], b)] += 1
        leads[reps[0]] += 1
        topic_leads[(topic_of[i], reps[0])] += 1
    allowed = set(brokers)
    held = [frozenset(b for b in old[tp] if b in allowed) for tp in parts]
    kept = sum(len(held[i] & set(new[tp])) for i, tp in enumerate(parts))
    rf = [len(new[tp]) for tp in parts]
    size_list = [int(sizes.get(tp, 0)) for tp in parts] if sizes else None
    byte_cap, kept_bytes = 0.0, None
    if size_list is not None:
        load = defaultdict(int)
        for i, tp in enumerate(parts):
            for b in new[tp]:
                load[b] += size_list[i]
        mean = sum(size_list[i] * rf[i] for i in range(len(parts))) / len(brokers)
        byte_cap = max((1 + tolerance) * mean, max(load.get(b, 0) for b in brokers))
        kept_bytes = sum(size_list[i] * len(held[i] & set(new[tp])) for i, tp in enumerate(parts))
    return _Spec(
        parts=parts,
        rf=rf,
        held=held,
        topic_of=topic_of,
        topics=topics,
        brokers=brokers,
        racks=racks,
        rack_cap=rack_cap,
        count_spread=_spread(counts.get(b, 0) for b in brokers),
        topic_spread=_per_broker(topic_counts, len(topics), brokers),
        topic_classes=_classes(after, brokers, t_index, topic_counts),
        leader_spread=_spread(leads.get(b, 0) for b in brokers),
        topic_leader_spread=_per_broker(topic_leads, len(topics), brokers),
        sizes=size_list,
        byte_cap=byte_cap,
        ours_kept=kept,
        ours_kept_bytes=kept_bytes,
    )


class _Model:
    """Columns and rows of one MILP, gathered as coordinates."""

    def __init__(self) -> None:
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def var(self, lb: float, ub: float) -> int:
        self.lb.append(lb)
        self.ub.append(ub)
        return len(self.lb) - 1

    def vars(self, count: int, lb: float, ub: float) -> int:
        first = len(self.lb)
        self.lb.extend([lb] * count)
        self.ub.extend([ub] * count)
        return first

    def row(self, cols: Sequence[int], vals: Sequence[float] | float, lo: float, hi: float) -> None:
        r = len(self.lo)
        self.rows.extend([r] * len(cols))
        self.cols.extend(cols)
        self.vals.extend([vals] * len(cols) if isinstance(vals, (int, float)) else vals)
        self.lo.append(lo)
        self.hi.append(hi)

    def spread(self, groups: Sequence[Sequence[int]], total: int, spread: int) -> None:
        """Each group's sum within `spread` of the others' (their sums add up to `total`)."""
        k = len(groups)
        floor, ceil = total // k, -(-total // k)
        if spread <= 1:
            for cols in groups:
                self.row(cols, 1.0, floor, ceil)
            return
        lo, hi = self.var(max(0, ceil - spread), floor), self.var(ceil, min(total, floor + spread))
        self.row([lo, hi], [-1.0, 1.0], -math.inf, spread)
        for cols in groups:
            self.row([*cols, lo], [1.0] * len(cols) + [-1.0], 0, math.inf)
            self.row([*cols, hi], [1.0] * len(cols) + [-1.0], -math.inf, 0)

    def band(self, groups: Sequence[Sequence[int]], spread: int, most: int) -> None:
        """Each group's sum within `spread` of the others' (their total free, each at most `most`)."""
        lo, hi = self.var(0, most), self.var(0, most)
        self.row([lo, hi], [-1.0, 1.0], -math.inf, spread)
        for cols in groups:
            self.row([*cols, lo], [1.0] * len(cols) + [-1.0], 0, math.inf)
            self.row([*cols, hi], [1.0] * len(cols) + [-1.0], -math.inf, 0)

    def solve(self, cost: Sequence[float], seconds: float, gap: float = 0.0, integral: bool = True):
        """HiGHS's answer and a proven bound on the objective below: its dual bound, or where it stopped before
        reporting one (no plan found yet), the LP relaxation's optimum (None if infeasible)."""
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import csr_matrix

        c = np.zeros(len(self.lb))
        c[: len(cost)] = cost
        a = csr_matrix((self.vals, (self.rows, self.cols)), shape=(len(self.lo), len(self.lb)))
        args = {"constraints": LinearConstraint(a, self.lo, self.hi), "bounds": Bounds(self.lb, self.ub)}
        log = bool(os.environ.get("OPTIMUM_LOG"))
        options = {"time_limit": max(seconds, 1.0), "mip_rel_gap": gap, "disp": log}
        res = milp(c, integrality=np.full(len(self.lb), int(integral)), options=options, **args)
        if not integral:  # the LP relaxation: its optimum bounds the MILP's below
            return res, res.fun if res.status == 0 else None
        dual = getattr(res, "mip_dual_bound", None)
        if res.status != 2 and (dual is None or not math.isfinite(dual)):
            lp = milp(
                c, integrality=np.zeros(len(self.lb)), options={"time_limit": max(seconds, 1.0), "disp": log}, **args
            )
            dual = lp.fun if lp.status == 0 else None
        return res, dual


def _placement(m: _Model, s: _Spec) -> int:
    """x[p, b] at columns first + p * n + j, with the hard, count and topic goals; returns `first`."""
    n = len(s.brokers)
    first = m.vars(len(s.parts) * n, 0, 1)
    for p, rf in enumerate(s.rf):
        m.row(range(first + p * n, first + p * n + n), 1.0, rf, rf)
    if s.racks is not None:
        members = defaultdict(list)
        for j, b in enumerate(s.brokers):
            members[s.racks[b]].append(j)
        for p, cap in enumerate(s.rack_cap):
            if cap < s.rf[p]:
                for js in members.values():
                    if len(js) > cap:
                        m.row([first + p * n + j for j in js], 1.0, 0, cap)
    _goal_spreads(m, s, first, lambda p: s.rf[p], s.count_spread, s.topic_spread, s.topic_classes)
    return first


def _goal_spreads(
    m: _Model, s: _Spec, first: int, weight: Callable[[int], int], spread: int, per_topic, classes=()
) -> None:
    n = len(s.brokers)
    by_topic = defaultdict(list)
    for p, t in enumerate(s.topic_of):
        by_topic[t].append(p)
    total = sum(weight(p) for p in range(len(s.parts)))
    m.spread([[first + p * n + j for p in range(len(s.parts))] for j in range(n)], total, spread)
    for t, ps in sorted(by_topic.items()):
        groups = [[first + p * n + j for p in ps] for j in range(n)]
        m.spread(groups, sum(weight(p) for p in ps), max(1, per_topic[t]))
    for t, js, within in classes:  # rack-forced topics within each of their classes
        m.band([[first + p * n + j for p in by_topic[t]] for j in js], within, len(by_topic[t]))


def _leaders(m: _Model, s: _Spec, x_first: int, fixed: Sequence[Sequence[int]] | None = None) -> None:
    """y[p, b] <= x[p, b] (or only on the replicas `fixed` when x is known), one per partition, leader spreads."""
    n = len(s.brokers)
    first = m.vars(len(s.parts) * n, 0, 1)
    for p in range(len(s.parts)):
        m.row(range(first + p * n, first + p * n + n), 1.0, 1, 1)
        if fixed is not None:
            off = [first + p * n + j for j in range(n) if j not in fixed[p]]
            for c in off:
                m.ub[c] = 0
        else:
            for j in range(n):
                m.row([first + p * n + j, x_first + p * n + j], [1.0, -1.0], -math.inf, 0)
    _goal_spreads(m, s, first, lambda p: 1, max(1, s.leader_spread), s.topic_leader_spread)


def _held_cols(s: _Spec, first: int) -> list[int]:
    n = len(s.brokers)
    index = {b: j for j, b in enumerate(s.brokers)}
    return [first + p * n + index[b] for p, held in enumerate(s.held) for b in sorted(held)]


def _kept_cost(s: _Spec, first: int, by_size: bool) -> list[float]:
    n = len(s.brokers)
    cost = [0.0] * (first + len(s.parts) * n)
    for c in _held_cols(s, first):
        p = (c - first) // n
        cost[c] = -(s.sizes[p] / (1 << 20) if by_size and s.sizes else 1.0)
    return cost


def _chosen(s: _Spec, x, first: int) -> list[list[int]]:
    n = len(s.brokers)
    return [[j for j in range(n) if x[first + p * n + j] > 0.5] for p in range(len(s.parts))]


def leaders_fit(s: _Spec, chosen: Sequence[Sequence[int]], seconds: float = 30.0) -> bool:
    """Whether preferred leaders can be picked among `chosen` replicas within the leader spreads."""
    m = _Model()
    _leaders(m, s, 0, [set(c) for c in chosen])
    res, _ = m.solve([], seconds)
    return res.x is not None


def _stage(s: _Spec, seconds: float, leaders: bool, by_size: bool, kept_moves: int | None, allowed=None):
    """The whole model; `allowed`: the broker indexes each partition may use (a restriction: its plans are plans)."""
    m = _Model()
    first = _placement(m, s)
    if allowed is not None:
        n = len(s.brokers)
        for p, js in enumerate(allowed):
            for j in set(range(n)) - js:
                m.ub[first + p * n + j] = 0
    if leaders:
        _leaders(m, s, first)
    if by_size and s.sizes:
        n = len(s.brokers)
        for j in range(n):
            cols = [first + p * n + j for p in range(len(s.parts))]
            m.row(cols, [z / (1 << 20) for z in s.sizes], 0, s.byte_cap / (1 << 20))
    cost = _kept_cost(s, first, by_size)
    if kept_moves is not None:
        m.row(_held_cols(s, first), 1.0, kept_moves, kept_moves)
    res, dual = m.solve(cost, seconds, BYTE_GAP if by_size else 0.0)
    return res, dual, first


def _moves(s: _Spec, seconds: float) -> tuple[Bracket, str, list[list[int]] | None]:
    """Stage 1: the fewest moves; leaders checked on its optimum, modelled only if they do not fit there. Also the
    plan it found (replicas per partition, as broker indexes)."""
    total = sum(s.rf)
    started, cpu = time.perf_counter(), time.process_time()
    res, dual, first = _stage(s, seconds, False, False, None)
    mode = "checked"
    if res.x is not None and not leaders_fit(s, _chosen(s, res.x, first)):
        mode = "modelled"
        res, dual, first = _stage(s, seconds, True, False, None)
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    if res.status == 2:
        return Bracket(0, None, took, cpu, infeasible=True), mode, None
    low = 0 if dual is None else math.ceil(total + dual - 1e-6)
    high = None if res.x is None else total - round(-res.fun)
    if res.status != 0:  # stopped early: our plan reaches the same goals, so it bounds the optimum above
        high = min(h for h in (high, total - s.ours_kept) if h is not None)
    chosen = None if res.x is None else _chosen(s, res.x, first)
    return Bracket(low, high, took, cpu, optimal=res.status == 0), mode, chosen


def _range(total: int, k: int, spread: int) -> tuple[int, int]:
    """The least and most any of `k` groups summing to `total` can hold with a spread of at most `spread`."""
    floor, ceil = total // k, -(-total // k)
    if spread <= 1:
        return floor, ceil
    return max(0, ceil - spread), min(total, floor + spread)


def _rack_members(s: _Spec) -> dict[str, list[int]]:
    """Broker indexes per rack (one group of all brokers without racks)."""
    members: dict[str, list[int]] = defaultdict(list)
    for j, b in enumerate(s.brokers):
        members[s.racks[b] if s.racks else ""].append(j)
    return dict(sorted(members.items()))


def _keep_master(s: _Spec, kept: int, seconds: float, integral: bool = True):
    """The byte stage with arrivals counted per rack instead of per broker: which held replicas stay (k[p, b],
    `kept` of them) and how many new replicas of each partition each rack takes (a[p, r]); each broker's kept
    replicas within its count, topic and byte limits, each rack's kept and arrived replicas within its brokers'
    limits summed. Every plan of the byte stage gives one of these, so its optimum bounds the bytes moved below."""
    index = {b: j for j, b in enumerate(s.brokers)}
    racks = _rack_members(s)
    rack_of = {j: r for r, js in racks.items() for j in js}
    pairs = [(p, index[b]) for p, held in enumerate(s.held) for b in sorted(held)]
    m = _Model()
    first = m.vars(len(pairs), 0, 1)
    m.row(range(first, first + len(pairs)), 1.0, kept, kept)
    by_p, by_pr = defaultdict(list), defaultdict(list)
    arrive: dict[tuple[int, str], int] = {}
    for c, (p, j) in enumerate(pairs):
        by_p[p].append(c)
        by_pr[(p, rack_of[j])].append(c)
    for p in range(len(s.parts)):
        for r, js in racks.items():
            room = min(len(js) - len(by_pr[(p, r)]), s.rack_cap[p] if s.racks else s.rf[p])
            if room > 0:
                arrive[(p, r)] = m.var(0, room)
        m.row(by_p[p] + [arrive[(p, r)] for r in racks if (p, r) in arrive], 1.0, s.rf[p], s.rf[p])
        if s.racks:
            for r in racks:
                cols = by_pr[(p, r)] + ([arrive[(p, r)]] if (p, r) in arrive else [])
                if len(cols) > 1 or (cols and s.rack_cap[p] < len(racks[r])):
                    m.row(cols, 1.0, 0, s.rack_cap[p])
    _master_limits(m, s, pairs, arrive, racks)
    cost = [-(s.sizes or [])[p] / MIB for p, _ in pairs]
    res, dual = m.solve(cost, seconds, BYTE_GAP, integral)
    return res, dual, pairs


def _master_limits(m: _Model, s: _Spec, pairs, arrive: dict[tuple[int, str], int], racks) -> None:
    """Per broker: kept replicas, their bytes, each topic's kept replicas at most the broker's limit; per rack:
    kept and arrived replicas, bytes and each topic's within the rack's brokers' limits summed."""
    n = len(s.brokers)
    sizes = s.sizes or []
    rack_of = {j: r for r, js in racks.items() for j in js}
    lo, hi = _range(sum(s.rf), n, s.count_spread)
    topic_total: dict[int, int] = defaultdict(int)
    for p, t in enumerate(s.topic_of):
        topic_total[t] += s.rf[p]
    by_b, by_tb, by_r, by_tr = defaultdict(list), defaultdict(list), defaultdict(list), defaultdict(list)
    for c, (p, j) in enumerate(pairs):
        by_b[j].append(c)
        by_tb[(s.topic_of[p], j)].append(c)
        by_r[rack_of[j]].append((c, p))
        by_tr[(s.topic_of[p], rack_of[j])].append(c)
    for (p, r), c in arrive.items():
        by_r[r].append((c, p))
        by_tr[(s.topic_of[p], r)].append(c)
    for cols in by_b.values():
        m.row(cols, 1.0, 0, hi)
        m.row(cols, [sizes[pairs[c][0]] / MIB for c in cols], 0, s.byte_cap / MIB)
    for (t, _j), cols in by_tb.items():
        m.row(cols, 1.0, 0, _range(topic_total[t], n, s.topic_spread[t])[1])
    for r, js in racks.items():
        cols = [c for c, _ in by_r[r]]
        m.row(cols, 1.0, lo * len(js), hi * len(js))
        m.row(cols, [sizes[p] / MIB for _, p in by_r[r]], 0, s.byte_cap * len(js) / MIB)
    for (t, r), cols in by_tr.items():
        t_lo, t_hi = _range(topic_total[t], n, s.topic_spread[t])
        m.row(cols, 1.0, t_lo * len(racks[r]), t_hi * len(racks[r]))


def _within_limit(s: _Spec, chosen: Sequence[Sequence[int]] | None) -> bool:
    if chosen is None or s.sizes is None:
        return False
    load = [0] * len(s.brokers)
    for p, js in enumerate(chosen):
        for j in js:
            load[j] += s.sizes[p]
    return max(load) <= s.byte_cap


def _bytes(s: _Spec, moves: Bracket, seconds: float, mode: str, found: list[list[int]] | None) -> Bracket:
    """Stage 2: the fewest bytes moved by a plan of `moves.high` moves, bytes per broker within the limit. The whole
    model up to FULL_COLUMNS columns; above, the relaxation without destinations (`_keep_master`) bounds it below and
    its plan, if it has destinations, above."""
    sizes = s.sizes or []
    total_bytes = sum(z * r for z, r in zip(sizes, s.rf))
    kept = sum(s.rf) - (moves.high or 0)
    started, cpu = time.perf_counter(), time.process_time()
    restricted = len(s.parts) * len(s.brokers) > FULL_COLUMNS
    if restricted:  # below: the relaxation's LP; above: the whole model on fewer brokers per partition
        master, dual, _ = _keep_master(s, kept, seconds, integral=False)
        if master.status == 2:
            return Bracket(0, None, time.perf_counter() - started, time.process_time() - cpu, infeasible=True)
    allowed = _restriction(s, found) if restricted else None
    res, whole_dual, first = _stage(s, seconds, mode == "modelled", True, kept, allowed)
    if res.x is not None and mode == "checked" and not leaders_fit(s, _chosen(s, res.x, first)):
        res, whole_dual, first = _stage(s, seconds, True, True, kept, allowed)
    keep = None if res.x is None else _kept_pairs(s, _chosen(s, res.x, first))
    if not restricted:
        dual = whole_dual
        if res.status == 2:
            return Bracket(0, None, time.perf_counter() - started, time.process_time() - cpu, infeasible=True)
    low = 0 if dual is None else math.floor(total_bytes + dual * MIB)
    high = None if keep is None else total_bytes - sum(sizes[p] for p, _ in keep)
    optimal = keep is not None and res.status == 0 and not restricted
    if not optimal and moves.proven and _within_limit(s, found):  # stage 1's plan, if its bytes are within the limit
        bytes_found = total_bytes - sum(sizes[p] for p, _ in _kept_pairs(s, found or []))
        high = bytes_found if high is None else min(high, bytes_found)
    ours = total_bytes - s.ours_kept_bytes if s.ours_kept == kept and s.ours_kept_bytes is not None else None
    if ours is not None and (high is None or ours < high):
        high, optimal = ours, False
    return Bracket(max(low, 0), high, time.perf_counter() - started, time.process_time() - cpu, optimal=optimal)


def _restriction(s: _Spec, found: Sequence[Sequence[int]] | None) -> list[set[int]]:
    """Per partition: the brokers holding it, those stage 1's plan put it on, and every broker that plan grew."""
    n = len(s.brokers)
    index = {b: j for j, b in enumerate(s.brokers)}
    held = [{index[b] for b in h} for h in s.held]
    grew: set[int] = set()
    if found is not None:
        before, after = [0] * n, [0] * n
        for p, js in enumerate(found):
            for j in js:
                after[j] += 1
            for j in held[p]:
                before[j] += 1
        grew = {j for j in range(n) if after[j] > before[j]}
    return [held[p] | grew | set(found[p] if found else ()) for p in range(len(s.parts))]


def _kept_pairs(s: _Spec, chosen: Sequence[Sequence[int]]) -> set[tuple[int, int]]:
    return {(p, j) for p, js in enumerate(chosen) for j in js if s.brokers[j] in s.held[p]}


def certify(
    before: Cluster,
    after: Cluster,
    sizes: Mapping[TopicPartition, int] | None,
    targets: Sequence[int],
    tolerance: float = TOLERANCE,
    seconds: float = 60.0,
    byte_seconds: float | None = None,
) -> Optimum:
    """The fewest moves, then bytes, of any plan reaching the goal figures `after` reached (see the module);
    HiGHS's time limit per solve: `seconds`, in the byte stage `byte_seconds` (default the same)."""
    s = spec(before, after, sizes, targets, tolerance)
    moves, mode, found = _moves(s, seconds)
    byte_bracket = None
    if s.sizes is not None and moves.high is not None:
        byte_bracket = _bytes(s, moves, byte_seconds or seconds, mode, found)
    return Optimum(moves, byte_bracket, mode)


def at_counts(
    before: Cluster,
    after: Cluster,
    sizes: Mapping[TopicPartition, int],
    targets: Sequence[int],
    tolerance: float = TOLERANCE,
    seconds: float = 60.0,
    integral: bool = True,
) -> Bracket:
    """The fewest bytes moved by any plan with `after`'s own count of each topic on each target broker, keeping as
    many replicas in place as `after` (each broker keeps min(held, count) of each topic: its moves then are
    `after`'s), every broker within the byte limit (as in `certify`), and each partition rack-safe as `after` has it.
    A restriction of `certify`'s byte stage that leaves only which replicas leave each broker and which arrive
    (`lighter_leaver`'s choices); its optimum bounds what exchanges at those counts can reach. Without `integral` the LP
    alone (a bound below, `after`'s bytes above). Where `after` keeps fewer replicas in place than its counts allow,
    no bracket: 0 below, `after`'s bytes above. Leaders are checked on the plan found (`leaders_fit`); where they do
    not fit it is not taken (the high end is then `after`'s)."""
    s = spec(before, after, sizes, targets, tolerance)
    index = {b: j for j, b in enumerate(s.brokers)}
    new = after.assignment()
    chosen = [[index[b] for b in new[tp]] for tp in s.parts]
    held: dict[tuple[int, int], int] = defaultdict(int)
    now: dict[tuple[int, int], int] = defaultdict(int)
    for p, t in enumerate(s.topic_of):
        for b in s.held[p]:
            held[(t, index[b])] += 1
        for j in chosen[p]:
            now[(t, j)] += 1
    ours = sum(z * r for z, r in zip(s.sizes or [], s.rf)) - (s.ours_kept_bytes or 0)
    started, cpu = time.perf_counter(), time.process_time()
    if s.ours_kept < sum(min(held[k], now[k]) for k in held):
        return Bracket(0, ours, time.perf_counter() - started, time.process_time() - cpu)
    m, leave, come = _counts_model(s, held, now)
    res, dual = _counts_solve(m, s, come, seconds, integral)
    low = 0 if dual is None else max(0, math.floor(dual * MIB))
    high, optimal = ours, False
    if integral and res.x is not None:
        found = round(res.fun * MIB)
        kept = [{index[b] for b in home} for home in s.held]
        for (p, j), c in leave.items():
            if res.x[c] > 0.5:
                kept[p].discard(j)
        for (p, j), c in come.items():
            if res.x[c] > 0.5:
                kept[p].add(j)
        if found < ours and leaders_fit(s, [sorted(js) for js in kept]):
            high, optimal = found, res.status == 0
    return Bracket(low, high, time.perf_counter() - started, time.process_time() - cpu, optimal=optimal)


def _counts_model(s: _Spec, held: Mapping[tuple[int, int], int], now: Mapping[tuple[int, int], int]):
    """`at_counts`' model: leave[p, j] (p's replica on broker j leaves), come[p, j] (p gets one on j); per topic and
    broker, as many leave or come as the counts differ; per partition, as many come as it needs beyond those it
    keeps; rack caps where arrivals could break them; each broker's bytes within the limit."""
    n = len(s.brokers)
    index = {b: j for j, b in enumerate(s.brokers)}
    m = _Model()
    leave: dict[tuple[int, int], int] = {}
    come: dict[tuple[int, int], int] = {}
    by_tj: dict[tuple[int, int], list[int]] = defaultdict(list)
    by_p: dict[int, list[tuple[int, int, float]]] = defaultdict(list)  # p -> (column, broker index, +1 or -1)
    for p, t in enumerate(s.topic_of):
        home = {index[b] for b in s.held[p]}
        for j in range(n):
            if j in home and held.get((t, j), 0) > now.get((t, j), 0):
                leave[(p, j)] = c = m.var(0, 1)
                by_p[p].append((c, j, -1.0))
            elif j not in home and now.get((t, j), 0) > held.get((t, j), 0):
                come[(p, j)] = c = m.var(0, 1)
                by_p[p].append((c, j, 1.0))
            else:
                continue
            by_tj[(t, j)].append(c)
    for key in set(held) | set(now):
        change = abs(held.get(key, 0) - now.get(key, 0))
        if change:
            m.row(by_tj[key], 1.0, change, change)
    for p, home in enumerate(s.held):
        cols = by_p.get(p, [])
        need = s.rf[p] - len(home)  # replicas it needs beyond those it keeps on the targets
        if cols or need:
            m.row([c for c, _, _ in cols], [v for _, _, v in cols], need, need)
        if s.racks is not None and cols:
            _rack_rows(m, s, p, cols)
    base = [0.0] * n
    by_j: dict[int, list[tuple[int, float]]] = defaultdict(list)
    sizes = s.sizes or []
    for p, home in enumerate(s.held):
        for b in home:
            base[index[b]] += sizes[p]
    for (p, j), c in leave.items():
        by_j[j].append((c, -sizes[p] / MIB))
    for (p, j), c in come.items():
        by_j[j].append((c, sizes[p] / MIB))
    for j, cols in sorted(by_j.items()):
        m.row([c for c, _ in cols], [v for _, v in cols], -math.inf, (s.byte_cap - base[j]) / MIB)
    return m, leave, come


def _rack_rows(m: _Model, s: _Spec, p: int, cols: Sequence[tuple[int, int, float]]) -> None:
    """Partition p's replicas per rack within its cap, where the arrivals it may get there could exceed it."""
    racks = s.racks or {}
    rack_of = [racks[b] for b in s.brokers]
    in_rack: dict[str, int] = defaultdict(int)
    for b in s.held[p]:
        in_rack[racks[b]] += 1
    for r in sorted({rack_of[j] for _, j, v in cols if v > 0}):
        mine = [(c, v) for c, j, v in cols if rack_of[j] == r]
        if in_rack[r] + sum(v > 0 for _, v in mine) > s.rack_cap[p]:
            m.row([c for c, _ in mine], [v for _, v in mine], -math.inf, s.rack_cap[p] - in_rack[r])


def _counts_solve(m: _Model, s: _Spec, come: Mapping[tuple[int, int], int], seconds: float, integral: bool):
    """Solve `_counts_model` for the fewest bytes moved (each arrival's size)."""
    cost = [0.0] * len(m.lb)
    for (p, _), c in come.items():
        cost[c] = (s.sizes or [])[p] / MIB
    return m.solve(cost, seconds, 1e-7 if integral else 0.0, integral)
