"""The corpus table (issue 30): every plan command on every family of `bench.corpus`, at sizes from 100 to 100,000
partitions, through the functions the CLI calls with the options the CLI builds (`planner.cli.reassign._goal_options`:
`--time-limit`, `--max-moves`, `--byte-tolerance`), one family per row, the worst case of the row in each column.

Columns (see docs/benchmarks.md, "The corpus table"):
- `cpu/1k`: the worst CPU seconds per 1,000 partitions of any command at any size, and which;
- `exp`: the growth exponent of the slowest command: the least-squares slope of log CPU against log partitions over
  the sizes it ran at (1 = linear);
- `moves-LB`: the worst replica moves above the plan's lower bound (uncapped plans that reached their goals);
- `bytes/LB`: the worst bytes moved over the plan's bytes lower bound;
- `topic>target`: the worst amount by which a topic with at least as many partitions as brokers spreads over its
  target (1, or the rack-forced bound the plan's note names);
- `limit`: the cases that hit `--time-limit` (their note: the plan is the best found so far);
- `cert`: on the smallest size, rebalance, the certifier's fewest moves (`bench.peers.optimum`) beside ours.

`BENCH_CORPUS_SIZES=100,1000` limits the sizes, `BENCH_CORPUS_FAMILIES=uniform-even,issue-a` the rows,
`BENCH_CORPUS_TIME_LIMIT=20` the `--time-limit` (seconds, wall) of the plans that take one (10), `BENCH_CORPUS_ALL=1`
runs the option variants at 10,000 partitions too, `BENCH_CORPUS_SAVE=FILE` pickles the rows.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections import Counter
from dataclasses import dataclass, field, replace

from bench.corpus import FAMILIES, ISSUE_CASES, Family, generate

SIZES = tuple(int(s) for s in os.environ.get("BENCH_CORPUS_SIZES", "100,1000,10000,100000").split(","))
ONLY = tuple(w for w in os.environ.get("BENCH_CORPUS_FAMILIES", "").split(",") if w)
TIME_LIMIT = float(os.environ.get("BENCH_CORPUS_TIME_LIMIT", "10"))
# the budget of `make bench` (about 20 minutes on 2 shared cores): at 10,000 partitions the option variants
# (--max-moves, --byte-tolerance, disk limits: rebalances again, 25-170 s CPU each there) only with
# BENCH_CORPUS_ALL=1; at 100,000 only the commands that read the whole cluster (the others touch one topic or one
# broker, and their cost shows at 10,000)
ALL = os.environ.get("BENCH_CORPUS_ALL", "") not in ("", "0")
VARIANTS = ("max-moves", "byte-tolerance", "disk-limits")
VARIANTS_BELOW = 10_000
BIG_COMMANDS = ("rebalance", "decommission-1")
BIG = 100_000
# the commands that balance each topic (replace-broker and set-replication-factor move one broker's or one topic's
# replicas, elect-leaders none; --max-moves and disk limits stop short on purpose)
BALANCING = ("rebalance", "decommission-1", "decommission-rack", "byte-tolerance")
MIN_CPU = 0.05  # seconds: shorter runs are mostly fixed costs and clock grain, left out of the growth fit
CERTIFY_AT = 100  # partitions: the certifier's size (HiGHS solves it in seconds)

COMMANDS = (
    "rebalance",
    "decommission-1",
    "decommission-rack",
    "replace-broker",
    "rf-up",
    "rf-down",
    "elect-leaders",
    "max-moves",
    "byte-tolerance",
    "disk-limits",
)


@dataclass
class Case:
    """One command on one cluster: its CPU time and its figures beside the plan's bounds."""

    command: str
    partitions: int
    cpu: float
    moves: int
    lower_bound: int | None
    bytes_moved: int | None
    bytes_lower_bound: int | None
    topic_excess: int
    time_limit: bool
    capped: bool = False  # --max-moves or disk limits: not held to the bounds of the uncapped goals


@dataclass
class Row:
    family: str
    shape: str
    cases: list[Case] = field(default_factory=list)
    certified: str = "-"
    refused: list[str] = field(default_factory=list)  # "command@size": the CLI refuses it (its line is printed)


def _options(max_moves=None, byte_tolerance=10.0):
    from planner.cli.reassign import _goal_options

    return _goal_options(max_moves, None, False, byte_tolerance, False, TIME_LIMIT)


def _rack_of_zero(cluster):
    rack = cluster.rack_of().get(0)
    if rack is None:
        return None
    return [b.id for b in cluster.brokers if b.rack == rack]


def _with_spare(cluster):
    """The cluster with one empty broker beside broker 0 (on its rack): the replace-broker target."""
    from planner.model import Broker

    spare = max(cluster.broker_ids) + 1
    rack = cluster.rack_of().get(0)
    return replace(cluster, brokers=(*cluster.brokers, Broker(spare, rack=rack))), spare


def _with_disk_limits(cluster):
    """Every broker reports usable bytes of a tenth of the mean bytes a broker holds (tight: a limit that binds)."""
    held: Counter = Counter()
    for p in cluster.partitions():
        for b in p.replicas:
            held[b] += p.size or 0
    mean = sum(held.values()) // max(1, len(cluster.brokers))
    return replace(cluster, brokers=tuple(replace(b, usable_bytes=mean // 10) for b in cluster.brokers))


def _rf_topic(cluster, up: bool):
    """The largest topic whose replication factor can go up (below the online brokers) or down (above 1)."""
    online = len(cluster.online_ids)
    fits = [t for t in cluster.topics if (t.replication_factor < min(4, online) if up else t.replication_factor > 1)]
    if not fits:
        return None
    t = max(fits, key=lambda t: (t.partition_count, t.name))
    return t.name, t.replication_factor + (1 if up else -1)


def plan_command(cluster, command: str):
    """(the cluster `command` plans on, a function making its plan from that cluster or from the plan applied to it),
    as the CLI makes it; None where the command does not apply (no rack of several brokers, no topic to change)."""
    from planner.rebalance.decommission import decommission, replace_broker
    from planner.rebalance.execution import leader_election
    from planner.rebalance.goals import balance
    from planner.rebalance.replication import set_replication_factor

    if command == "rebalance":
        return cluster, lambda c: balance(c, rack_repair=True, **_options())
    if command == "decommission-1":
        return cluster, lambda c: decommission(c, [0], rack_repair=True, **_options())
    if command == "decommission-rack":
        rack = _rack_of_zero(cluster)
        if rack is None or len(rack) == 1 or len(rack) * 2 > len(cluster.brokers):
            return None
        return cluster, lambda c: decommission(c, rack, rack_repair=True, **_options())
    if command == "replace-broker":
        grown, spare = _with_spare(cluster)
        return grown, lambda c: replace_broker(c, 0, spare)
    if command in ("rf-up", "rf-down"):
        chosen = _rf_topic(cluster, command == "rf-up")
        if chosen is None:
            return None
        return cluster, lambda c: set_replication_factor(c, chosen[0], chosen[1])
    if command == "elect-leaders":
        return cluster, lambda c: leader_election(c, None, _options()["deadline"]).plan
    if command == "max-moves":
        cap = max(1, sum(t.partition_count for t in cluster.topics) // 20)
        return cluster, lambda c: balance(c, rack_repair=True, **_options(max_moves=cap))
    if command == "byte-tolerance":
        return cluster, lambda c: balance(c, rack_repair=True, **_options(byte_tolerance=2.0))
    if command == "disk-limits":
        return _with_disk_limits(cluster), lambda c: balance(c, rack_repair=True, **_options())
    raise ValueError(command)


def topic_excess(plan) -> int:
    """The most any topic with at least as many partitions as brokers spreads above its target after the plan: 1,
    or the rack-forced bound the plan's note gives it (`geometry.forced_topics`, `topic_keep.count_forced`), or,
    where racks force one replica per rack and name no bound, 1 inside each rack (what the note promises)."""
    brokers = list(plan.brokers) or sorted(plan.before.online_ids)
    bound: dict[str, int] = {}
    per_rack: set[str] = set()
    for n in plan.notes:
        if getattr(n, "goal", None) != "topic-spread" or n.kind not in ("rack-forced", "count-forced"):
            continue
        if n.values:
            bound.update({t: int(v) for t, v in zip(n.topics, n.values)})
        else:
            per_rack.update(n.topics)
    rack_of = plan.before.rack_of()
    racks: dict[object, list[int]] = {}
    for b in brokers:
        racks.setdefault(rack_of.get(b), []).append(b)
    worst = 0
    for t in plan.after.topics:
        if t.partition_count < len(brokers):
            continue
        cnt = Counter(b for p in t.partitions for b in p.replicas)
        groups = list(racks.values()) if t.name in per_rack else [brokers]
        for group in groups:
            values = [cnt[b] for b in group]
            worst = max(worst, max(values) - min(values) - max(1, bound.get(t.name, 1)))
    return worst


def measure(cluster, command: str) -> Case | str | None:
    """Plan `command` on `cluster` with the collector as the CLI sets it (`reassign._loaded`), CPU-timed; the line
    the CLI refuses it with where it does (a decommission leaving fewer brokers than a replication factor)."""
    from planner.model import PlannerError

    made = plan_command(cluster, command)
    if made is None:
        return None
    given, make = made
    threshold = gc.get_threshold()
    gc.set_threshold(200_000, 20, 20)
    gc.freeze()
    try:
        cpu = time.process_time()
        plan = make(given)
        cpu = time.process_time() - cpu
    except PlannerError as exc:
        return str(exc)
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
    metrics = plan.scored[0]
    return Case(
        command,
        sum(t.partition_count for t in cluster.topics),
        cpu,
        plan.replica_moves,
        plan.lower_bound,
        metrics.bytes_moved,
        plan.bytes_lower_bound,
        topic_excess(plan),
        any(getattr(n, "goal", None) == "time" for n in plan.notes),
        capped=command in ("max-moves", "disk-limits"),
    )


def growth_exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log CPU against log partitions (None: fewer than two sizes with CPU time)."""
    pts = [(math.log(n), math.log(max(c, 1e-4))) for n, c in points]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def _worst(cases, key):
    best = None
    for c in cases:
        v = key(c)
        if v is not None and (best is None or v > best[0]):
            best = (v, c)
    return best


def _where(c: Case) -> str:
    return f"{c.command}@{c.partitions:,}"


def render_row(row: Row) -> list[str]:
    """The row's cells, in the order of HEADER."""
    cases = row.cases
    cpu = _worst(cases, lambda c: 1000 * c.cpu / c.partitions)
    most = _worst(cases, lambda c: c.cpu)
    by_command: dict[str, list[tuple[int, float]]] = {}
    for c in cases:
        if c.cpu >= MIN_CPU:
            by_command.setdefault(c.command, []).append((c.partitions, c.cpu))
    exps = {k: growth_exponent(v) for k, v in by_command.items()}
    limited_commands = {c.command for c in cases if c.time_limit}

    def exponent(command: str) -> str:
        # a time-limited point stops the clock early: the true growth is at least the fit's
        return f"{'>=' if command in limited_commands else ''}{exps[command]:.2f} ({command})"

    known = [k for k in exps if exps[k] is not None]
    exp_cell = "-"
    if known:
        steepest = max(known, key=lambda k: (exps[k], k))
        exp_cell = exponent(steepest)
        slowest = cpu[1].command if cpu else None
        if slowest in known and slowest != steepest:
            exp_cell += "; " + exponent(slowest)
    judged = [c for c in cases if not c.capped]
    moves = _worst(judged, lambda c: None if c.lower_bound is None else c.moves - c.lower_bound)
    byts = _worst(
        judged,
        lambda c: None if not c.bytes_lower_bound or c.bytes_moved is None else c.bytes_moved / c.bytes_lower_bound,
    )
    topic = _worst([c for c in cases if c.command in BALANCING], lambda c: c.topic_excess)
    limited = [c for c in cases if c.time_limit]
    return [
        row.family,
        row.shape,
        f"{cpu[0]:.2f} ({_where(cpu[1])})" if cpu else "-",
        f"{most[0]:.1f} ({_where(most[1])})" if most else "-",
        exp_cell,
        f"{moves[0]:+,} ({_where(moves[1])})" if moves else "-",
        f"{byts[0]:.3f} ({_where(byts[1])})" if byts else "-",
        f"{topic[0]:+d} ({_where(topic[1])})" if topic else "-",
        ", ".join(_where(c) for c in limited) if limited else "none",
        ", ".join(row.refused) if row.refused else "none",
        row.certified,
    ]


HEADER = "family,shape,cpu s/1k,cpu s,exp,moves-LB,bytes/LB,topic>target,time limit,refused,cert".split(",")


def render_table(rows: list[Row]) -> str:
    """The corpus table as Markdown, one row per family."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(render_row(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def shape(family: Family) -> str:
    rf = "/".join(map(str, family.rf))
    racks = family.racks if family.racks != "even" else f"{family.rack_count} racks"
    return f"{family.sizes}, {family.topics} topics, {racks}, RF {rf}, {family.state}"


def _certify(cluster, case_plan) -> str:
    from bench.peers.optimum import certify

    sizes = {p.tp: p.size for p in cluster.partitions() if p.size is not None}
    targets = list(case_plan.brokers) or sorted(cluster.online_ids)
    o = certify(cluster, case_plan.after, sizes or None, targets, seconds=20.0)
    low, high = o.moves.low, o.moves.high
    opt = f"{low:,}" if o.moves.proven else f"{low:,}..{high if high is not None else '?'}"
    return f"{case_plan.replica_moves:,} vs {opt}"


def commands_at(n: int) -> tuple[str, ...]:
    """The commands the table runs on clusters of n partitions."""
    if n >= BIG:
        return BIG_COMMANDS
    if n >= VARIANTS_BELOW and not ALL:
        return tuple(c for c in COMMANDS if c not in VARIANTS)
    return COMMANDS


def _line(family: str, case: Case) -> str:
    """The case's progress line: every figure of the table (`bytes/LB` and `topic>target` where known)."""
    mark = " (time limit)" if case.time_limit else ""
    ratio = (
        f", bytes/LB {case.bytes_moved / case.bytes_lower_bound:.3f}"
        if case.bytes_lower_bound and case.bytes_moved is not None
        else ""
    )
    return (
        f"   {family} @ {case.partitions:,} {case.command}: {case.cpu:.2f} s CPU, {case.moves:,} moves "
        f"(bound {case.lower_bound}){ratio}, topic>target {case.topic_excess:+d}{mark}  | load {os.getloadavg()[0]:.1f}"
    )


def family_row(family: Family, sizes, say=print) -> Row:
    row = Row(family.name, shape(family))
    for n in sizes:
        cluster = generate(family, n)
        for command in commands_at(n):
            case = measure(cluster, command)
            if case is None:
                continue
            if isinstance(case, str):
                say(f"   {family.name} @ {n:,} {command}: refused: {case}")
                row.refused.append(f"{command}@{n:,}")
                continue
            row.cases.append(case)
            say(_line(family.name, case))
        if n == CERTIFY_AT:
            from planner.rebalance.goals import balance

            row.certified = _certify(cluster, balance(cluster))
    return row


def _save(rows: list[Row]) -> None:
    """The rows so far, pickled to $BENCH_CORPUS_SAVE where set (to render the table again, or join runs)."""
    if os.environ.get("BENCH_CORPUS_SAVE"):
        import pickle

        with open(os.environ["BENCH_CORPUS_SAVE"], "wb") as fh:
            pickle.dump(rows, fh)


def run() -> None:
    rows = []
    say = lambda s: print(s, flush=True)  # noqa: E731
    for family in FAMILIES:
        if not ONLY or family.name in ONLY:
            rows.append(family_row(family, SIZES, say))
            _save(rows)
    for key, (family, n) in ISSUE_CASES.items():
        if ONLY and family.name not in ONLY:
            continue
        # the issue's slow clusters: the rebalance it reports (the other commands run on the families above)
        row = Row(family.name, shape(family) + f"; issue case {key}")
        case = measure(generate(family, n), "rebalance")
        assert isinstance(case, Case), case
        row.cases.append(case)
        say(_line(family.name, case))
        rows.append(row)
        _save(rows)
    say(f"   corpus table (--time-limit {TIME_LIMIT:g} s; the worst case of each family, at sizes {SIZES}):")
    say(render_table(rows))
