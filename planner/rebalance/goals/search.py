"""The search: `balance` plans the goals (`registry.GOALS`) over a portfolio of named strategies and keeps the best
plan by the objective (`objective.Objective`). Pure, deterministic.

`balance` reads as: the lower bounds (each goal's `lower_bound`); the hard goal (`hard.HardGoal`: replicas only on
target brokers, rack-unsafe partitions repaired); then the strategies of `PORTFOLIO` offered for this plan, each that
applies after what those before it found, a run of the goals in order from the same start, set up its own way
(`GoalRun`); the best plan kept (`search_plans`: nearer the goals in goal order, then fewer copies, then fewer bytes;
the first on a tie); then second plans of it as if applied taken over (`SecondPlan`); then the notes (each goal's
`notes`) and, under --max-moves, the plan without the cap where it fits (`Uncapped`). The plan
names what made it (`Plan.strategy`: the strategy, then the re-seed and passes kept, joined by "+").

Within a strategy's run (`GoalRun.run`): the goals in order, each under the constraints those before it hand on
(`base.Frozen`), again while that comes nearer (`_run`); the run again from a re-seed where one applies (`_run_best`:
"topic-shares", the count goal aiming at the topic shares; "rack-flow", racks of different sizes re-seeded by
`rack_flow`), the nearer kept; then the polish passes (`_polish`: "uneven-refit", "byte-exchange"). What a run found
that later strategies ask about comes back in its `Outcome` (the goals record it in the run's `base.Findings`), never
as a flag on a goal read back.
"""

from __future__ import annotations

import functools
import gc
import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable, ParamSpec, Sequence, TypeVar, cast

from planner.model import INTERNAL_TOPICS, Cluster, Partition, PlannerError
from planner.rebalance.goals import registry
from planner.rebalance.goals.base import Findings, Frozen, Goal
from planner.rebalance.goals.budget import Deadline
from planner.rebalance.goals.byte_balance import floors, limits
from planner.rebalance.goals.geometry import spreads, targets_of, unsafe_of
from planner.rebalance.goals.hard import HardGoal
from planner.rebalance.goals.lighter_leaver import fewer_bytes
from planner.rebalance.goals.objective import Objective
from planner.rebalance.goals.registry import Options, Variant, made, measuring
from planner.rebalance.goals.replica_count import BYTE_PARTITIONS, TRIAL_REPLICAS, try_shares
from planner.rebalance.goals.shares import FINE_LEVELS, joint_lower_bound
from planner.rebalance.goals.state import State
from planner.rebalance.goals.state.snapshot import Run, Snapshot, take_over
from planner.rebalance.goals.uneven import as_good, count_range, figures, may_refit, rack_flow, refit, topic_keep
from planner.rebalance.moves import Plan, select_partitions
from planner.rebalance.notes import Note, in_progress_note, rackless_notes

DEFAULT_BYTE_TOLERANCE = 0.10


def check_brokers(cluster: Cluster, ids: Iterable[int], what: str) -> tuple[int, ...]:
    ids = tuple(ids)
    known = set(cluster.broker_ids)
    unknown = [b for b in ids if b not in known]
    if unknown:
        raise PlannerError(
            f"{what}: unknown broker id(s) {','.join(map(str, unknown))}; the cluster has brokers "
            f"{','.join(map(str, cluster.broker_ids))}"
        )
    dups = sorted({b for b in ids if ids.count(b) > 1})
    if dups:
        raise PlannerError(f"{what} contains duplicate entries: {','.join(map(str, dups))}")
    return ids


def _target_brokers(cluster: Cluster, brokers: Sequence[int] | None) -> list[int]:
    targets = sorted(check_brokers(cluster, brokers, "--broker-list") if brokers else cluster.online_ids)
    down = [b for b in targets if b not in cluster.online_ids]
    if down:
        raise PlannerError(
            f"--broker-list: broker(s) {','.join(map(str, down))} are not online and cannot receive replicas; "
            "leave them out"
        )
    if not targets:
        raise PlannerError("no online brokers to place replicas on; pass --broker-list")
    return targets


def excluded(
    parts: Sequence[Partition], exclude_topics: Sequence[str] = (), exclude_internal: bool = False
) -> tuple[frozenset[int], frozenset[int]]:
    """(partitions mid-reassignment, partitions of excluded topics: a pattern matching the whole name, or internal)."""
    patterns = [re.compile(p) for p in exclude_topics]
    moving = frozenset(i for i, p in enumerate(parts) if p.adding or p.removing)
    if not patterns and not exclude_internal:
        return moving, frozenset()
    out = frozenset(
        i
        for i, p in enumerate(parts)
        if (exclude_internal and p.topic in INTERNAL_TOPICS) or any(x.fullmatch(p.topic) for x in patterns)
    )
    return moving, out


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _without_cycle_collector(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """`fn` with Python's cyclic garbage collector paused. The goals allocate millions of small lists, sets, dicts and
    tuples and make no reference cycles that matter, while every pass of the collector over the older generations walks
    all the live objects (a cluster of a million partitions among them): at 1M that was a seventh of the goals' time.
    Reference counting still frees what they drop; the collector runs again afterwards (where it was running)."""

    @functools.wraps(fn)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return paused


@_without_cycle_collector
def balance(
    cluster: Cluster,
    brokers: Sequence[int] | None = None,
    topics: Sequence[str] | None = None,
    max_moves: int | None = None,
    leaders: bool = True,
    balance_bytes: bool = True,
    goal: str = "rebalance",
    progress: Callable[[str], None] | None = None,
    rack_repair: bool = True,
    exclude_topics: Sequence[str] = (),
    exclude_internal: bool = False,
    byte_tolerance: float = DEFAULT_BYTE_TOLERANCE,
    polish: bool = True,
    memo: dict | None = None,
    deadline: Deadline | None = None,
) -> Plan:
    """Plan the goals in order over `brokers` (default: the online brokers; replicas elsewhere must move). A target
    broker whose log dirs are all cordoned (KIP-1066) keeps its replicas or gives some up, and takes none.

    `topics`: only these topics are balanced and moved (default: all). `exclude_topics` (regular expressions matching
    whole names) and `exclude_internal`: never moved, still counted as load. `max_moves` caps the optional moves
    (required ones always happen). `rack_repair`: rack-unsafe partitions get the fewest moves that make them
    rack-safe; without it they stay unsafe unless they move anyway. `byte_tolerance`: the byte goal's 0.10 = 10 %.
    `polish`: then fewer moves and bytes at the goal figures reached (`_polish`). `memo`: results of pure searches
    by what they are made of (`State.memo`), shared with the second plans this one makes. `deadline`: the time
    budget (`budget.Deadline`); where it runs out, the plan is the best found so far, with a note naming the stage.
    """
    targets = _target_brokers(cluster, brokers)
    parts = select_partitions(cluster, topics)
    moving, skipped = excluded(parts, exclude_topics, exclude_internal)
    _check_fits([p for i, p in enumerate(parts) if i not in moving and i not in skipped], targets)
    st = State(cluster, parts, targets, moving | skipped, max_moves, closed=cluster.cordoned_ids)
    st.memo = st.memo if memo is None else memo
    st.deadline = deadline if deadline is not None else st.deadline
    say = progress or (lambda msg: None)
    sized = balance_bytes and st.has_sizes
    options = Options(say, leaders, sized, byte_tolerance)
    measured = measuring(options)  # one goal per entry of the goal list: their terms, bounds and notes
    objective = Objective(measured)
    unsafe = unsafe_of(st)  # of the input: the bounds, the joint bound and the hard goal's repairs read it
    lower, topic_lower, bytes_lower = _bounds(st, measured, rack_repair, unsafe)
    # counts and topics together, where every replica is on a target and no repair changes what a rack holds
    by_rack = targets_of(st)[1]
    joint = None if unsafe else joint_lower_bound(st, list(by_rack.values()) if by_rack else [st.targets])
    # without rack repair, moves off brokers outside the targets can still make every partition rack-safe: the goals
    # then balance per rack (`HardGoal` sets `st.groups`), and the bounds are those of a plan that repairs
    per_rack = None
    if not rack_repair and targets_of(st)[1] is None and targets_of(st, repaired=True)[1] is not None:
        per_rack = _bounds(st, measured, True, unsafe)
    hard = HardGoal(rack_repair, say, unsafe=unsafe)
    hard.optimize(st, Frozen())
    if per_rack is not None and None not in st.groups:
        lower, topic_lower, bytes_lower = per_rack
    replan = functools.partial(
        balance,
        brokers=brokers,
        topics=topics,
        leaders=leaders,
        balance_bytes=balance_bytes,
        rack_repair=rack_repair,
        exclude_topics=exclude_topics,
        exclude_internal=exclude_internal,
        byte_tolerance=byte_tolerance,
        polish=False,
        memo=st.memo,
        deadline=st.deadline,
    )

    def second() -> Plan:
        """A second plan, of this plan as if applied, made as the user would make it."""
        return replan(cluster.with_assignment(_proposed(parts, st)))

    uncapped = functools.partial(replan, cluster, goal=goal, progress=progress, max_moves=None, polish=True)
    search = Search(st, options, objective, polish, byte_tolerance if sized else None, second, uncapped)
    outcome = search_plans(search)
    strategy = outcome.name
    if SECOND_PLAN.applies(search) and SECOND_PLAN.run(search):
        strategy += "+" + SECOND_PLAN.name
    notes = _notes(st, hard, measured, outcome.goals, options, moving, skipped)
    late = st.deadline.note()
    notes += [late] if late is not None else []
    # the topic bound counts spreads within 1 over the brokers balanced together: not for topics left wider
    wide = {"unmet", "rack-forced", "count-forced"} if None in st.groups else {"unmet"}
    topic_bytes = False  # the byte bound with the topic goal's sheds, where the topic goal is reached
    if not any(n.goal == "topic-spread" and n.kind in wide for n in notes):
        counted = not any(n.goal == "replica-count" and n.kind.startswith("unmet") for n in notes)
        lower = max(lower, topic_lower, joint if joint is not None and counted else 0)
        topic_bytes = counted
    forced = _forced_bound(st, notes)
    if forced is not None:
        lower = forced
    free, fits = UNCAPPED.run(search) if UNCAPPED.applies(search) else (None, False)
    if free is not None and fits:
        return replace(free, strategy=UNCAPPED.name)
    proposed = _proposed(parts, st)
    notes += _leaderless(cluster, proposed)
    return Plan(
        before=cluster,
        proposed=proposed,
        goal=goal,
        brokers=tuple(targets),
        notes=tuple(notes),
        unmet=tuple(dict.fromkeys(st.capped)),
        strategy=strategy,
        **_plan_bounds(free, lower, None if bytes_lower is None else bytes_lower[topic_bytes]),
    )


def _plan_bounds(free: Plan | None, lower: int, bytes_lower: int | None) -> dict:
    """The plan's bounds: of the plan without the cap where there is one (`Uncapped`), else its own."""
    if free is None:
        return {"lower_bound": lower, "bytes_lower_bound": bytes_lower}
    return {"lower_bound": free.lower_bound, "bytes_lower_bound": free.bytes_lower_bound}


def _proposed(parts: Sequence[Partition], st: State) -> dict:
    return {p.tp: new for p, r in zip(parts, st.reps) if (new := tuple(r)) != p.replicas}


def _forced_bound(st: State, notes: Sequence[Note]) -> int | None:
    """Where racks keep the replica counts wider than 1: the fewest moves of any plan reaching the count spread this
    plan reached and every topic within 1 where the topic goal balances it (the topics it left unmet within the
    spread over all targets they reached), as `rack_flow` counts it (the count goal's own bound is for counts within
    1, out of reach). None where that does not apply."""
    unmet = next((n for n in notes if n.goal == "replica-count" and n.kind.startswith("unmet")), None)
    if unmet is None:
        return None
    spread = max(st.count[b] for b in st.targets) - min(st.count[b] for b in st.targets)
    if not rack_flow.applies(st):  # too large for its flow: the counts' own (`count_range.lower_bound`), if any
        return count_range.lower_bound(st, spread) if unmet.kind == "unmet" else None
    kinds = ("unmet", "count-forced")
    names = {t for n in notes if n.goal == "topic-spread" and n.kind.startswith(kinds) for t in n.topics}
    reached = spreads(st)
    free = {t: reached[t][1] for t, name in enumerate(st.topic_names) if name in names}
    return rack_flow.lower_bound(st, spread, free)


def _bounds(
    st: State, measured: Sequence[Goal], repaired: bool, unsafe: list[tuple[int, int, list[int]]]
) -> tuple[int, int, tuple[int, int] | None]:
    """The lower bounds of the count, topic and byte goals (each goal's `lower_bound`; bytes: without and with the
    topic goal's sheds), balanced per rack when every partition keeps (or, when `repaired`, gets) one replica per
    rack; `unsafe`: `unsafe_of(st)`."""
    bounds = {g.name: g.lower_bound(st, repaired, unsafe) for g in measured}
    count, topic, size = bounds["replica-count"], bounds["topic-spread"], bounds["bytes"]
    return cast(int, count), cast(int, topic), cast("tuple[int, int] | None", size)


def _check_fits(parts: Sequence[Partition], targets: Sequence[int]) -> None:
    """Each partition the plan may move fits the targets (those mid-reassignment or excluded stay where they are)."""
    for p in parts:
        if len(p.replicas) > len(targets):
            raise PlannerError(
                f"partition {p.tp} has {len(p.replicas)} replicas but only {len(targets)} target broker(s) "
                f"({','.join(map(str, targets))}); add brokers or lower its replication factor first"
            )


@dataclass(frozen=True)
class Search:
    """What every strategy of one plan shares: the state, the options the goals are made from, the objective, whether
    to polish, the byte tolerance (None where bytes are not balanced) and a second plan of the plan as if applied."""

    st: State
    options: Options
    objective: Objective
    polish: bool
    tolerance: float | None
    second: Callable[[], Plan]
    uncapped: Callable[[], Plan]  # the plan without --max-moves (and polished)

    @property
    def weigh(self) -> bool:
        """Plans with the count goal's slots chosen for their bytes and without, up to BYTE_PARTITIONS partitions."""
        return self.options.sized and len(self.st.parts) <= BYTE_PARTITIONS

    @property
    def small(self) -> bool:
        """Plans with the byte goal's free steps first and without, up to TRIAL_REPLICAS replicas."""
        return self.options.sized and sum(map(len, self.st.reps)) <= TRIAL_REPLICAS


@dataclass
class Outcome:
    """What one strategy's run found: the name of what made the plan (the strategy's, then the re-seed and polish
    passes kept, joined by "+"), the goals of the run kept (their notes) and what they recorded (`Findings`)."""

    name: str
    goals: list[Goal]
    found: Findings


@dataclass(frozen=True)
class GoalRun:
    """A strategy: a run of the goals in order, set up as `variant` says (`registry.Variant`). `offered`: whether it
    is in the portfolio for this plan; `applies`: whether it runs after the strategies before it found what they
    found (`done`, in order; the first offered always runs)."""

    name: str
    variant: Variant

    def offered(self, search: Search) -> bool:
        return True

    def applies(self, search: Search, done: Sequence[Outcome]) -> bool:
        return True

    def run(self, search: Search) -> Outcome:
        """The goals (`_run_best`), then `_polish`."""
        st = search.st
        found = Findings()
        start = Run(st) if search.polish and may_refit(st, search.options.sized) else None
        make = functools.partial(_goals, search.options, self.variant, found)
        goals, reseed = _run_best(st, make, search)
        passes: list[str] = []
        if search.polish:
            limit = limits(st, search.options.byte_tolerance) if search.options.sized else None
            floor = floors(st, search.options.byte_tolerance) if search.options.sized else None
            passes = _polish(st, goals, limit, search, start, floor)
        return Outcome("+".join([self.name, *reseed, *passes]), goals, found)


def _goals(options: Options, variant: Variant, found: Findings, shares: bool, placed: bool = False) -> list[Goal]:
    """The goals of one run (`registry.made`), the count goal aiming at the topic shares or not, its counts placed."""
    return made(options, Variant(shares, placed, variant.free, variant.by_bytes, variant.levels), found)


def _weighed(outcome: Outcome) -> bool:
    """Whether that run's slots by bytes were other slots than without (else the plan without is the same plan)."""
    return "weighed" in outcome.found


def _freed(done: Sequence[Outcome]) -> bool:
    """Whether the byte goal took a free step in any run so far (else without free steps first is the same plan)."""
    return any("freed" in o.found for o in done)


class SlotsByBytes(GoalRun):
    """The count goal's slots chosen for the bytes they keep as well, the byte goal's free steps first: the first
    plan, up to BYTE_PARTITIONS partitions with sizes balanced."""

    def offered(self, search: Search) -> bool:
        return search.weigh


class Greedy(GoalRun):
    """The goals as they are: the first plan where slots by bytes are not offered; else after them, where they were
    other slots than without."""

    def applies(self, search: Search, done: Sequence[Outcome]) -> bool:
        return not search.weigh or _weighed(done[-1])


class NoFreeFirstSlotsByBytes(GoalRun):
    """Slots by bytes, the byte goal without its free steps first, where a run took one: up to TRIAL_REPLICAS
    replicas (neither way is better everywhere)."""

    def offered(self, search: Search) -> bool:
        return search.small and search.weigh

    def applies(self, search: Search, done: Sequence[Outcome]) -> bool:
        return _freed(done)


class NoFreeFirst(GoalRun):
    """The goals as they are, the byte goal without its free steps first, where a run took one (and, after slots by
    bytes, the last run's were other slots than without)."""

    def offered(self, search: Search) -> bool:
        return search.small

    def applies(self, search: Search, done: Sequence[Outcome]) -> bool:
        return _freed(done) and (not search.weigh or _weighed(done[-1]))


class FineSlots(GoalRun):
    """Slots by bytes in finer steps, where the first plan's were other slots than without: the flow's resolution
    changes which slots it finds, not always for the better (kept only where it comes out better)."""

    def offered(self, search: Search) -> bool:
        return search.weigh

    def applies(self, search: Search, done: Sequence[Outcome]) -> bool:
        return _weighed(done[0])


PORTFOLIO: tuple[GoalRun, ...] = (
    SlotsByBytes("greedy-slots-by-bytes", Variant(free=True, by_bytes=True)),
    Greedy("greedy", Variant(free=True, by_bytes=False)),
    NoFreeFirstSlotsByBytes("no-free-first-slots-by-bytes", Variant(free=False, by_bytes=True)),
    NoFreeFirst("no-free-first", Variant(free=False, by_bytes=False)),
    FineSlots("fine-slots-by-bytes", Variant(free=True, by_bytes=True, levels=FINE_LEVELS)),
)


def search_plans(search: Search, portfolio: Sequence[GoalRun] = PORTFOLIO) -> Outcome:
    """The strategies of `portfolio` offered for this plan, each that applies after those before it, all from the same
    start, keeping the plan that comes nearer the goals (in goal order), then copies fewer replicas, then fewer bytes
    (`Objective.score`; the first on a tie; the spread of the counts where `rack_flow` may keep them wider than 1, as
    in `_run_best`). A single strategy costs no snapshot. Where the time budget runs out, the best plan so far."""
    st = search.st
    offered = [s for s in portfolio if s.offered(search)]
    if len(offered) == 1:
        return offered[0].run(search)
    start = Run(st)
    spread = rack_flow.applies(st)
    best: tuple[Run, Outcome] | None = None
    last: Run | None = None
    done: list[Outcome] = []
    for strategy in offered:
        if best is not None and st.deadline.out("the search's variants"):
            break  # the best plan so far stands
        if best is not None and not strategy.applies(search, done):
            continue
        if best is not None:
            start.restore(st)
        outcome = strategy.run(search)
        done.append(outcome)
        last = Run(st, outcome.goals, ())
        last.score = search.objective.score(st, spread)
        if best is None or last.score < best[0].score:
            best = last, outcome
    assert best is not None
    if best[0] is not last:
        best[0].restore(st)
    return best[1]


def _run_best(st: State, goal_list: Callable[..., list[Goal]], search: Search) -> tuple[list[Goal], list[str]]:
    """`_run` of the goals; where racks kept the replica counts wider than 1 (`rack_flow.applies`), again from the
    fewest moves to the count range that run reached (`rack_flow.plan`; where that range leaves no placement with
    every topic within 1, to the most topics within 1 and the others' least spread that `topic_keep.keep` finds):
    the re-seed "rack-flow"; else where the count goal may aim at the topic shares or not (`try_shares`), both ways:
    the re-seed "topic-shares"; both runs from the same start, keeping the run that comes nearer the goals (in goal
    order), then copies fewer replicas, then fewer bytes. The goals of the run kept (their notes), and the re-seed
    kept (none: the first run)."""
    objective = search.objective
    settle_leaders = search.options.leaders and search.options.sized
    goals = goal_list(False)
    shares = try_shares(st)
    flow = rack_flow.applies(st) and st.max_moves is None and not st.usable
    if not shares and not flow:
        _run(st, goals, settle_leaders, objective)
        return goals, []
    start = Run(st)
    before = figures(st) if flow and search.tolerance is None else None
    _run(st, goals, settle_leaders, objective)
    reached = min(st.count[b] for b in st.targets), max(st.count[b] for b in st.targets)
    flow = flow and reached[1] - reached[0] > 1
    if (not shares and not flow) or st.deadline.out("the search's variants"):
        return goals, []
    first = Run(st, goals, objective.score(st, flow))
    idle = before is not None and as_good(before, figures(st))  # the start is as good at every figure
    start.restore(st)
    other = goal_list(not flow, placed=flow)
    reps = None
    if flow:
        kept = topic_keep.keep(st, *reached)  # None where the count range lets every topic be within 1
        wide = kept[0] if kept else {}
        reps = rack_flow.plan(st, *reached, wide=wide)
        held = (kept[1] if kept else topic_keep.class_totals(st, *reached)) if reps is None else None
        reps = rack_flow.plan(st, *reached, wide={**held, **wide}) if held else reps
    if reps is not None:  # the fewest moves to that count range, then the other goals from there
        rack_flow.apply(st, reps)
        if search.tolerance is not None:
            rack_flow.level_bytes(st, limits(st, search.tolerance)[None])
    if reps is not None or not flow:
        _run(st, other, settle_leaders, objective)
        if objective.score(st, flow) < first.score:
            return other, ["rack-flow" if flow else "topic-shares"]
    elif idle:
        return goals, []  # nothing to move (`refit` finds the fewest moves where the run is better)
    first.restore(st)
    return goals, []


def _run(st: State, goals: Sequence[Goal], settle_leaders: bool, objective: Objective) -> None:
    """The goals in order, each under the constraints of those before it; the list runs again (at most 3 times)
    while a later goal's moves open the way for an earlier one. A run of the list that brings the goals no closer
    (in goal order: `Objective.distance`) is taken back; then the list runs from the plan as if applied (its placement
    as home, as a second plan of the applied plan would), kept only if that brings the goals closer. So the applied
    plan is a fixed point, also where racks leave a goal unmet (goals could otherwise trade replicas back and forth).
    Not under a move cap or disk-space limits: both count what is copied from the input, and a run from the plan as
    if applied would count from there (it passed brokers' usable bytes)."""
    frozen = Frozen()
    best = objective.distance(st)
    rebased = False
    limited = st.limited
    for k in range(5):
        if not any(best):
            break  # every goal reached: nothing can come closer
        if k and st.deadline.out("the goals"):
            break  # the runs so far stand: each came closer or was taken back
        if k >= 3 and not rebased:
            if limited:
                break  # the run from the plan as if applied counts copies from there: it would pass the cap or space
            rebased = True
        reached, now = _attempt(st, goals, objective, best, rebased)
        if now is not None:
            best, frozen = reached, now
        elif rebased or limited:
            break  # not for a capped plan, nor under disk-space limits: both count the bytes copied from the input
        else:
            rebased = True
    if settle_leaders and (any(best) or st.fixed):
        # reordering moves no data, so it undoes no placement goal: settle the leaders on the final placement, again
        # while that brings them closer (so that the applied plan settles to itself). Not where every goal is met
        # and no partition is fixed (about 3 s of CPU at 1M): every head is then on a lead target (the hard goal
        # moved every replica onto the targets) and the leaders per broker and per topic are within 1 over the
        # partitions the goal reorders, so it hands no leadership on (`balance_preferred` gives away above the
        # ceiling, takes over from 2 ahead, chains above a spread of 1) and the run would change nothing
        leader_goal = next(g for g in goals if g.name == "preferred-leaders")
        for _ in range(3):
            kept = Snapshot(st)
            leader_goal.optimize(st, frozen)
            reached = objective.distance(st)
            if reached >= best:
                kept.restore(st)
                break
            best = reached


def _attempt(
    st: State, goals: Sequence[Goal], objective: Objective, best: tuple, rebased: bool
) -> tuple[tuple, Frozen | None]:
    """One run of the goals (on the plan as if applied when `rebased`): its distance and constraints, or (best, None)
    when it came no closer and was taken back."""
    if rebased:
        return _attempt_applied(st, goals, objective, best)
    kept = Snapshot(st)
    st.capped = []
    now = Frozen()
    for g in goals:
        now.add(g.optimize(st, now))
    reached = objective.distance(st)
    if reached >= best:
        kept.restore(st)
        return best, None
    return reached, now


def _attempt_applied(
    st: State, goals: Sequence[Goal], objective: Objective, best: tuple
) -> tuple[tuple, Frozen | None]:
    """The goals on a fresh state whose input is the current placement (what planning the applied plan again does);
    its replica lists are taken over when that comes closer."""
    fresh = State(st.cluster, st.parts, st.targets, st.fixed, closed=st.closed, placement=st.reps)
    fresh.groups, fresh.memo = st.groups, st.memo
    now = Frozen()
    for g in goals:
        now.add(g.optimize(fresh, now))
    reached = objective.distance(fresh)
    if reached >= best:
        return best, None
    st.restore([tuple(r) for r in fresh.reps])
    st.moves += fresh.moves
    st.copies = sum(len(set(r).difference(h)) for r, h in zip(st.reps, st.home))
    st.capped = fresh.capped
    return reached, now


RELAXED_REPLICAS = 200_000  # replicas up to which `_fewer_bytes` also tries exchanges that move preferred leaders


def _polish(
    st: State, goals: Sequence[Goal], limit: dict | None, search: Search, start: Run | None, floor: dict | None = None
) -> list[str]:
    """Fewer moves and bytes at the goal figures the goals reached: `refit` (from `start`, where given), then
    `exchange.fewer_bytes`. Where a goal is unmet, a second plan of the plan as if applied could then find moves the
    goals did not see from the input, so the plan would no longer be a fixed point: there each result is kept only if
    `second()` moves nothing, and tried only up to `RELAXED_REPLICAS` replicas without a move cap or disk-space limits
    (the check costs a plan, and neither kind of plan is a fixed point by definition: both count what is copied from
    the input, which a second plan does not see, as `SecondPlan`). The passes kept: "uneven-refit", "byte-exchange"."""
    second = search.second
    if st.deadline.out("the polish"):
        return []  # the plan the goals reached stands
    unmet = any(search.objective.distance(st))
    small = sum(map(len, st.reps)) <= RELAXED_REPLICAS
    if unmet and (st.limited or not small):
        return []
    passes = []
    if unmet and start is not None and refit(st, start, goals, second):
        passes.append("uneven-refit")
    if st.deadline.out("the polish"):
        return passes
    kept = Snapshot(st) if unmet else None
    if _fewer_bytes(st, goals, limit, search.objective, small, floor):
        if kept is not None and second().proposed:
            kept.restore(st)
        else:
            passes.append("byte-exchange")
    return passes


def _fewer_bytes(
    st: State, goals: Sequence[Goal], limit: dict | None, objective: Objective, small: bool, floor: dict | None = None
) -> bool:
    """`exchange.fewer_bytes`: whether it changed the plan. Where the leader goal ran and met its goals, first the
    exchanges that move preferred leaders too, then the leader goal again (reordering moves no data): kept when the
    leaders come out within 1 again, everything else as it was (only the moves and bytes drop). Only when `small`
    (a snapshot of the lists and a leader goal's run)."""
    leader_goal = next((g for g in goals if g.name == "preferred-leaders"), None)
    before = objective.distance(st)
    if leader_goal is not None and not objective.term(before, "preferred-leaders") and small:
        kept = Snapshot(st)
        if not fewer_bytes(st, limit, leaders=False, floor=floor):
            return False
        leader_goal.optimize(st, Frozen())
        if objective.distance(st) <= before:
            return True
        kept.restore(st)
    return fewer_bytes(st, limit, floor=floor)


SETTLE = 2  # second plans of the plan as if applied taken over at most (`SecondPlan`)


@dataclass(frozen=True)
class SecondPlan:
    """After the best plan, where a goal is unmet, a second plan of the plan as if applied can still move replicas:
    from a placement the rack repairs made safe, `rack_flow` applies where it did not from the input, and may reach
    the topic goal further. Applies when polishing, up to `RELAXED_REPLICAS` replicas, without a move cap or disk-space
    limits (both count what is copied from the input, which a second plan does not see), where a goal is unmet. Its
    run takes such a second plan's placement over (it comes closer to the goals, or it would move nothing), at most
    `SETTLE` times, so that the applied plan is a fixed point."""

    name: str = "second-plan"

    def applies(self, search: Search) -> bool:
        st = search.st
        if not search.polish or st.limited or sum(map(len, st.reps)) > RELAXED_REPLICAS:
            return False
        return any(search.objective.distance(st))

    def run(self, search: Search) -> bool:
        """Whether it took a second plan over."""
        st = search.st
        took = False
        for _ in range(SETTLE):
            if st.deadline.out("the second plans"):
                return took
            moved = search.second().proposed
            if not moved:
                return took
            take_over(st, moved)
            took = True
        return took


@dataclass(frozen=True)
class Uncapped:
    """Where --max-moves cut a goal short (`st.capped`, when polishing): the plan without the cap
    (`Search.uncapped`). Its bounds are the capped plan's: those of a plan reaching the goals, which the capped plan's
    own figures do not give (its counts, left wide by the cap, would pass for wide racks: decommission of 6 on
    six-brokers.yaml capped at 0 printed "lower bound 33" where every goal needs 37). And where it reaches every goal
    within the cap, it is the plan: the goals under a budget take other, greedier steps than without one, so a cap the
    goals do not need would otherwise change the plan (scale-out.yaml: 12 moves reach every goal; capped at 12, the
    plan left the bytes unmet). Both make the same required moves (`st.optional_from`): the hard goal runs first,
    uncapped, in both. Not where the time budget has run out: the capped plan then stands, with its own bounds."""

    name: str = "uncapped"

    def applies(self, search: Search) -> bool:
        st = search.st
        if not (st.capped and search.polish and st.max_moves is not None):
            return False
        return not st.deadline.out("the plan without --max-moves")  # out of time: the capped plan, its own bounds

    def run(self, search: Search) -> tuple[Plan, bool]:
        """The plan without the cap, and whether it fits within it."""
        st = search.st
        free = search.uncapped()
        assert st.max_moves is not None
        return free, free.replica_moves - st.optional_from <= st.max_moves


SECOND_PLAN, UNCAPPED = SecondPlan(), Uncapped()


def _notes(
    st: State,
    hard: HardGoal,
    measured: Sequence[Goal],
    goals: Sequence[Goal],
    options: Options,
    moving: frozenset[int],
    skipped: frozenset[int],
) -> list[Note]:
    """Each goal's notes in goal order (of the run kept where it ran, else of the goal as measured; a goal not asked
    for tells none), the hard goal's, then the plan's own."""
    ran = {g.name: g for g in goals}
    notes: list[Note] = []
    for entry, g in zip(registry.GOALS, measured):
        if entry.told(options):
            notes += ran.get(entry.name, g).notes(st)
    notes += hard.notes(st)
    notes += rackless_notes(st.cluster, st.targets)
    if st.closed:
        notes.append(Note("hard", "cordoned", len(st.closed), values=tuple(sorted(st.closed))))
    if st.full and any(n.kind in ("unmet", "unrepaired") for n in notes):  # the space limit stood in the way
        full = tuple(sorted(st.full))
        notes.append(Note("hard", "disk-space", len(full), values=full + tuple(st.usable[b] for b in full)))
    if moving:
        notes.append(in_progress_note(st.parts[i].tp for i in moving))
    if skipped:
        names = tuple(sorted({st.parts[i].topic for i in skipped}))
        notes.append(Note("hard", "excluded", len(names), topics=names))
    stranded = sorted(st.parts[i].tp for i in st.fixed for b in st.reps[i] if b not in st.target_set)
    if stranded:
        notes.append(Note("hard", "stranded", len(set(stranded)), partitions=tuple(dict.fromkeys(stranded))))
    notes = [replace(n, kind="unmet-capped") if n.kind == "unmet" and n.goal in st.capped else n for n in notes]
    notes = [
        replace(n, kind="unmet-floor-capped") if n.kind == "unmet-floor" and n.goal in st.capped else n for n in notes
    ]
    if st.capped:
        notes.append(Note("max-moves", "capped", len(set(st.capped)), topics=tuple(dict.fromkeys(st.capped))))
    return notes


def _leaderless(cluster: Cluster, proposed: dict) -> list[Note]:
    """Moved partitions without a leader: their new replicas cannot copy data until a replica comes back."""
    if len(cluster.online_ids) == len(cluster.brokers) or not proposed:
        return []
    from planner.leadership import cluster_states

    states = cluster_states(cluster)
    stuck = tuple(
        sorted(
            tp
            for tp in proposed
            if not states[tp.topic][tp.partition].has_leader
            and set(proposed[tp]) - set(cluster.topic(tp.topic).partition(tp.partition).replicas)
        )
    )
    return [Note("hard", "leaderless", len(stuck), partitions=stuck)] if stuck else []
