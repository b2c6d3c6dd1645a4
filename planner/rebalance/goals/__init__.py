"""Minimal-movement balancing from the current assignment (rebalance, scale-out, decommission), driven by an ordered
list of goals. Pure, deterministic.

`balance` reads as the list: each goal (one module behind `base.Goal`) improves the working state with the fewest
replica moves, then the fewest bytes moved, under the constraints the goals before it hand on, so a later goal never
undoes an earlier one:

1. hard (`hard.py`): replicas only on target brokers (none added to a broker whose log dirs are all cordoned,
   KIP-1066), replication factor kept, rack safety never lowered and
   rack-unsafe partitions repaired, partitions mid-reassignment and excluded topics left alone;
2. replica count per target broker within 1 (`replica_count.py`);
3. each topic's replicas per broker within 1 of its even share (`topic_spread.py`);
4. preferred leaders per broker and per topic within 1 (`preferred_leaders.py`): reordering only, no data moves;
5. bytes per broker within a tolerance of the mean (`byte_balance.py`), when sizes are known.

What a goal could not reach, and why, comes back as `rebalance.notes.Note` data for the renderer to word.
"""

from __future__ import annotations

import functools
import gc
import re
from collections import Counter
from dataclasses import replace
from typing import Callable, Iterable, ParamSpec, Sequence, TypeVar

from planner.model import INTERNAL_TOPICS, Cluster, Partition, PlannerError
from planner.rebalance.goals.base import Frozen, Goal
from planner.rebalance.goals.budget import Deadline
from planner.rebalance.goals.byte_balance import ByteGoal, byte_notes, bytes_lower_bound, limits
from planner.rebalance.goals.geometry import forced_topics, spreads, targets_of
from planner.rebalance.goals.hard import HardGoal, count_lower_bound, unsafe_of
from planner.rebalance.goals.lighter_leaver import fewer_bytes
from planner.rebalance.goals.preferred_leaders import PreferredLeaderGoal, leader_notes
from planner.rebalance.goals.replica_count import (
    BYTE_PARTITIONS,
    TRIAL_REPLICAS,
    ReplicaCountGoal,
    count_notes,
    try_shares,
)
from planner.rebalance.goals.shares import FINE_LEVELS, LEVELS, joint_lower_bound
from planner.rebalance.goals.state import State
from planner.rebalance.goals.state.snapshot import Run, Snapshot, take_over
from planner.rebalance.goals.topic_spread import TopicSpreadGoal, topic_notes
from planner.rebalance.goals.uneven import as_good, count_range, figures, may_refit, rack_flow, refit, topic_keep
from planner.rebalance.moves import Plan, count_targets, excess, select_partitions
from planner.rebalance.notes import Note, in_progress_note, rackless_notes

__all__ = ["balance", "check_brokers", "select_partitions", "Goal", "Note", "DEFAULT_BYTE_TOLERANCE"]

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


def topic_lower_bound(st: State, rack_repair: bool) -> int:
    """Replicas of each topic above its even share's ceiling (the +1s to the brokers holding most), summed: every
    move takes one replica of one topic off a broker. Per rack when every partition keeps one replica per rack."""
    _, by_rack = targets_of(st, repaired=rack_repair)
    total = 0
    shares = Counter(st.topic_of)  # partitions per topic: one replica each per rack
    # replicas of partitions that never move (mid-reassignment, excluded) on brokers outside the targets stay there:
    # not counted (as `count_lower_bound` does), else the bound would exceed a plan that moves every other replica
    stranded: Counter = Counter()
    for i in st.fixed:
        for b in st.reps[i]:
            if b not in st.target_set:
                stranded[(st.topic_of[i], b)] += 1
    for t in range(len(st.topic_names)):
        counts = {b: c - stranded[(t, b)] for b, c in st.holders[t].items() if c > stranded[(t, b)]}
        if by_rack is None:
            total += _excess_over_share(st, counts)
            continue
        share = shares[t]
        for members in by_rack.values():
            inside = {b: counts.get(b, 0) for b in members}
            total += excess(inside, count_targets(inside, members, share, st.closed))
    return total


def _excess_over_share(st: State, counts: dict[int, int]) -> int:
    """`excess` over `count_targets` of one topic's replicas per broker (`counts`: the brokers holding any) on the
    target brokers: without closed brokers, the +1s go to the targets holding most, so only the holders count."""
    total = sum(counts.values())
    if st.closed:
        return excess(counts, count_targets(counts, st.targets, total, st.closed))
    q, r = divmod(total, len(st.targets))
    # a broker among the r holding most takes one more than q: those holding more than q come first, so
    # min(r, how many hold more) of them hold one replica less above their target
    over = [c - q for b, c in counts.items() if b in st.target_set and c > q]
    outside = sum(c for b, c in counts.items() if b not in st.target_set)
    return sum(over) - min(r, len(over)) + outside


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
    unsafe = unsafe_of(st)  # of the input: the bounds, the joint bound and the hard goal's repairs read it
    lower, topic_lower, bytes_lower = _bounds(st, rack_repair, byte_tolerance, unsafe)
    # counts and topics together, where every replica is on a target and no repair changes what a rack holds
    by_rack = targets_of(st)[1]
    joint = None if unsafe else joint_lower_bound(st, list(by_rack.values()) if by_rack else [st.targets])
    # without rack repair, moves off brokers outside the targets can still make every partition rack-safe: the goals
    # then balance per rack (`HardGoal` sets `st.groups`), and the bounds are those of a plan that repairs
    per_rack = None
    if not rack_repair and targets_of(st)[1] is None and targets_of(st, repaired=True)[1] is not None:
        per_rack = _bounds(st, True, byte_tolerance, unsafe)
    hard = HardGoal(rack_repair, say, unsafe=unsafe)
    sized = balance_bytes and st.has_sizes

    byte_goals: list[ByteGoal] = []
    count_goals: list[ReplicaCountGoal] = []  # the last plan's

    def goal_list(
        shares: bool, placed: bool = False, free: bool = True, by_bytes: bool = False, levels: int = LEVELS
    ) -> list[Goal]:
        count = ReplicaCountGoal(
            say,
            level_bytes=sized,
            tolerance=byte_tolerance,
            shares=shares,
            placed=placed,
            by_bytes=by_bytes,
            levels=levels,
        )
        count_goals.append(count)
        goals: list[Goal] = [count, TopicSpreadGoal(say)]
        goals += [PreferredLeaderGoal(say)] if leaders else []
        if sized:
            byte_goals.append(ByteGoal(byte_tolerance, say, free=free))
            goals.append(byte_goals[-1])
        return goals

    hard.optimize(st, Frozen())
    if per_rack is not None and None not in st.groups:
        lower, topic_lower, bytes_lower = per_rack
    tolerance = byte_tolerance if sized else None
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

    weighs: list[bool] = []  # per plan with the slots by bytes: whether they were other slots than without

    def plan(free: bool, by_bytes: bool = False, levels: int = LEVELS) -> list[Goal]:
        """The goals (the byte goal's free steps first or not: `ByteGoal.free`; the count goal's slots chosen for
        their bytes or not, in `levels` steps: `ReplicaCountGoal.by_bytes`), then `_polish`."""
        count_goals.clear()
        start = Run(st) if polish and may_refit(st, sized) else None
        make = functools.partial(goal_list, free=free, by_bytes=by_bytes, levels=levels)
        goals = _run_best(st, make, leaders and sized, tolerance)
        if polish:
            _polish(st, goals, limits(st, byte_tolerance) if sized else None, tolerance, second, start)
        weighs.extend([weighed()] if by_bytes else [])
        return goals

    # both ways up to TRIAL_REPLICAS replicas where the byte goal took a free step (else both are the same plan), and
    # up to BYTE_PARTITIONS partitions with the count goal's slots chosen for their bytes and without (where they
    # were other slots than without: else the plan without is the same plan)
    small = sized and sum(map(len, st.reps)) <= TRIAL_REPLICAS
    weigh = sized and len(parts) <= BYTE_PARTITIONS

    def freed() -> bool:
        return any(g.freed for g in byte_goals)

    def weighed() -> bool:
        return any(g.weighed for g in count_goals)

    def freed_weighed() -> bool:
        return freed() and weighed()

    tries: list[_Try] = [(functools.partial(plan, True, weigh), None)]
    tries += [(functools.partial(plan, True, False), weighed)] if weigh else []
    tries += [(functools.partial(plan, False, weigh), freed)] if small else []
    tries += [(functools.partial(plan, False, False), freed_weighed)] if small and weigh else []
    # and where the first plan's slots by bytes were other slots than without, once more in finer steps: the flow's
    # resolution changes which slots it finds, not always for the better (kept only where it comes out better)
    tries += [(functools.partial(plan, True, True, FINE_LEVELS), lambda: weighs[0])] if weigh else []
    goals = _best_of(st, tolerance, tries)
    if polish:
        _settle(st, parts, tolerance, second)
    byte_goal = next((g for g in goals if isinstance(g, ByteGoal)), None)
    notes = _notes(st, hard, leaders, byte_goal, byte_tolerance, moving, skipped)
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
    free, fits = _uncapped(st, polish, functools.partial(replan, cluster, goal=goal, progress=progress))
    if free is not None and fits:
        return free
    proposed = _proposed(parts, st)
    notes += _leaderless(cluster, proposed)
    return Plan(
        before=cluster,
        proposed=proposed,
        goal=goal,
        brokers=tuple(targets),
        notes=tuple(notes),
        unmet=tuple(dict.fromkeys(st.capped)),
        **_plan_bounds(free, lower, None if bytes_lower is None else bytes_lower[topic_bytes]),
    )


def _uncapped(st: State, polish: bool, replan: Callable[..., Plan]) -> tuple[Plan | None, bool]:
    """Where --max-moves cut a goal short (`st.capped`): the plan without the cap (`replan`). Its bounds are the
    capped plan's: those of a plan reaching the goals, which the capped plan's own figures do not give (its counts,
    left wide by the cap, would pass for wide racks: decommission of 6 on six-brokers.yaml capped at 0 printed
    "lower bound 33" where every goal needs 37). And where it reaches every goal within the cap, it is the plan: the
    goals under a budget take other, greedier steps than without one, so a cap the goals do not need would otherwise
    change the plan (scale-out.yaml: 12 moves reach every goal; capped at 12, the plan left the bytes unmet). Both
    make the same required moves (`st.optional_from`): the hard goal runs first, uncapped, in both."""
    if not st.capped or not polish or st.max_moves is None:
        return None, False
    free = replan(max_moves=None, polish=True)
    return free, free.replica_moves - st.optional_from <= st.max_moves


def _plan_bounds(free: Plan | None, lower: int, bytes_lower: int | None) -> dict:
    """The plan's bounds: of the plan without the cap where there is one (`_uncapped`), else its own."""
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
    st: State, repaired: bool, tolerance: float, unsafe: list[tuple[int, int, list[int]]]
) -> tuple[int, int, tuple[int, int] | None]:
    """The lower bounds of the count, topic and byte goals (bytes: without and with the topic goal's sheds), balanced
    per rack when every partition keeps (or, when `repaired`, gets) one replica per rack; `unsafe`: `unsafe_of(st)`."""
    by_rack = targets_of(st, repaired)[1]
    count, topic = count_lower_bound(st, repaired, unsafe), topic_lower_bound(st, repaired)
    return count, topic, bytes_lower_bound(st, tolerance, by_rack) if st.has_sizes else None


def _check_fits(parts: Sequence[Partition], targets: Sequence[int]) -> None:
    """Each partition the plan may move fits the targets (those mid-reassignment or excluded stay where they are)."""
    for p in parts:
        if len(p.replicas) > len(targets):
            raise PlannerError(
                f"partition {p.tp} has {len(p.replicas)} replicas but only {len(targets)} target broker(s) "
                f"({','.join(map(str, targets))}); add brokers or lower its replication factor first"
            )


def _run_best(
    st: State, goal_list: Callable[..., list[Goal]], settle_leaders: bool, tolerance: float | None
) -> list[Goal]:
    """`_run` of the goals; where racks kept the replica counts wider than 1 (`rack_flow.applies`), again from the
    fewest moves to the count range that run reached (`rack_flow.plan`; where that range leaves no placement with
    every topic within 1, to the most topics within 1 and the others' least spread that `topic_keep.keep` finds),
    else where the count goal may aim at the topic shares or not (`try_shares`), both ways; both runs from the same
    start, keeping the run that comes closer to the goals (in goal order), then copies fewer replicas, then fewer
    bytes. The goals of the run kept (their notes)."""
    goals = goal_list(False)
    shares = try_shares(st)
    flow = rack_flow.applies(st) and st.max_moves is None and not st.usable
    if not shares and not flow:
        _run(st, goals, settle_leaders, tolerance)
        return goals
    start = Run(st)
    before = figures(st) if flow and tolerance is None else None
    _run(st, goals, settle_leaders, tolerance)
    reached = min(st.count[b] for b in st.targets), max(st.count[b] for b in st.targets)
    flow = flow and reached[1] - reached[0] > 1
    if (not shares and not flow) or st.deadline.out("the search's variants"):
        return goals
    first = Run(st, goals, _score(st, tolerance, flow))
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
        if tolerance is not None:
            rack_flow.level_bytes(st, limits(st, tolerance)[None])
    if reps is not None or not flow:
        _run(st, other, settle_leaders, tolerance)
        if _score(st, tolerance, flow) < first.score:
            return other
    elif idle:
        return goals  # nothing to move (`refit` finds the fewest moves where the run is better)
    first.restore(st)
    return goals


_Try = tuple[Callable[[], list[Goal]], Callable[[], bool] | None]  # a plan to make, and when (None: always)


def _best_of(st: State, tolerance: float | None, tries: Sequence[_Try]) -> list[Goal]:
    """The first plan of `tries`, then each other whose condition holds after the plans before it, all from the same
    start, keeping the plan that comes closer to the goals (in goal order), then copies fewer replicas, then fewer
    bytes (`_score`; the first on a tie; the count term is the spread of the counts where `rack_flow` may keep them
    wider than 1, as in `_run_best`). The goals of the plan kept (their notes). A single try costs no snapshot."""
    if len(tries) == 1:
        return tries[0][0]()
    start = Run(st)
    spread = rack_flow.applies(st)
    best: Run | None = None
    last: Run | None = None
    for make, when in tries:
        if best is not None and st.deadline.out("the search's variants"):
            break  # the best plan so far stands
        if best is not None and when is not None and not when():
            continue
        if best is not None:
            start.restore(st)
        last = Run(st, make(), ())
        last.score = _score(st, tolerance, spread)
        if best is None or last.score < best.score:
            best = last
    assert best is not None
    if best is not last:
        best.restore(st)
    return best.goals


SETTLE = 2  # second plans of the plan as if applied taken over at most (`_settle`)


def _settle(st: State, parts: Sequence[Partition], tolerance: float | None, second: Callable[[], Plan]) -> None:
    """Where a goal is unmet, a second plan of the plan as if applied can still move replicas: from a placement the
    rack repairs made safe, `rack_flow` applies where it did not from the input, and may reach the topic goal further.
    Up to `RELAXED_REPLICAS` replicas, without a move cap or disk-space limits, such a second plan's placement is
    taken over (it comes closer to the goals, or it would move nothing), at most `SETTLE` times, so that the applied
    plan is a fixed point."""
    if st.max_moves is not None or st.usable or sum(map(len, st.reps)) > RELAXED_REPLICAS:
        return  # a cap and disk space count what is copied from the input, which a second plan does not see
    if not any(_distance(st, tolerance)):
        return
    for _ in range(SETTLE):
        if st.deadline.out("the second plans"):
            return
        moved = second().proposed
        if not moved:
            return
        take_over(st, moved)


RELAXED_REPLICAS = 200_000  # replicas up to which `_fewer_bytes` also tries exchanges that move preferred leaders


def _polish(
    st: State,
    goals: Sequence[Goal],
    limit: dict | None,
    tolerance: float | None,
    second: Callable[[], Plan],
    start: Run | None,
) -> None:
    """Fewer moves and bytes at the goal figures the goals reached: `refit` (from `start`, where given), then
    `exchange.fewer_bytes`. Where a goal is unmet, a second plan of the plan as if applied could then find moves the
    goals did not see from the input, so the plan would no longer be a fixed point: there each result is kept only if
    `second()` moves nothing, and tried only up to `RELAXED_REPLICAS` replicas without a move cap (the check costs a
    plan)."""
    unmet = any(_distance(st, tolerance))
    small = sum(map(len, st.reps)) <= RELAXED_REPLICAS
    if unmet and (st.max_moves is not None or not small):
        return
    if unmet and start is not None:
        refit(st, start, goals, second)
    kept = Snapshot(st) if unmet else None
    if _fewer_bytes(st, goals, limit, tolerance, small) and kept is not None and second().proposed:
        kept.restore(st)


def _fewer_bytes(st: State, goals: Sequence[Goal], limit: dict | None, tolerance: float | None, small: bool) -> bool:
    """`exchange.fewer_bytes`: whether it changed the plan. Where the leader goal ran and met its goals, first the
    exchanges that move preferred leaders too, then the leader goal again (reordering moves no data): kept when the
    leaders come out within 1 again, everything else as it was (only the moves and bytes drop). Only when `small`
    (a snapshot of the lists and a leader goal's run)."""
    leader_goal = next((g for g in goals if g.name == "preferred-leaders"), None)
    before = _distance(st, tolerance)
    if leader_goal is not None and not before[2] and small:
        kept = Snapshot(st)
        if not fewer_bytes(st, limit, leaders=False):
            return False
        leader_goal.optimize(st, Frozen())
        if _distance(st, tolerance) <= before:
            return True
        kept.restore(st)
    return fewer_bytes(st, limit)


def _score(st: State, tolerance: float | None, spread: bool = False) -> tuple:
    """How far from the goals (`_distance`), then copies, then bytes copied; with `spread`, the count term is the
    spread of the counts (what the summary shows where racks keep them wider than 1) instead of the replicas off the
    even share, and the topic term first the topics above a spread of 1 where the topic goal balances them (what
    the summary names: `topic_keep` may keep more topics within 1 at more replicas off their shares in all)."""
    copied = sum(st.sz(i) for i, (r, home) in enumerate(zip(st.reps, st.home)) for b in r if b not in home)
    distance: tuple = _distance(st, tolerance)
    if spread:
        counts = [st.count[b] for b in st.targets]
        wide = sum(1 for s, _ in spreads(st) if s > 1)
        distance = (max(counts) - min(counts), (wide, distance[1]), *distance[2:])
    return distance, st.copies, copied


def _run(st: State, goals: Sequence[Goal], settle_leaders: bool, tolerance: float | None) -> None:
    """The goals in order, each under the constraints of those before it; the list runs again (at most 3 times)
    while a later goal's moves open the way for an earlier one. A run of the list that brings the goals no closer
    (in goal order: `_distance`) is taken back; then the list runs from the plan as if applied (its placement as
    home, as a second plan of the applied plan would), kept only if that brings the goals closer. So the applied plan
    is a fixed point, also where racks leave a goal unmet (goals could otherwise trade replicas back and forth). Not
    under a move cap or disk-space limits: both count what is copied from the input, and a run from the plan as if
    applied would count from there (it passed brokers' usable bytes)."""
    frozen = Frozen()
    best = _distance(st, tolerance)
    rebased = False
    limited = st.max_moves is not None or bool(st.usable)
    for k in range(5):
        if not any(best):
            break  # every goal reached: nothing can come closer
        if k >= 3 and not rebased:
            if limited:
                break  # the run from the plan as if applied counts copies from there: it would pass the cap or space
            rebased = True
        reached, now = _attempt(st, goals, tolerance, best, rebased)
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
            reached = _distance(st, tolerance)
            if reached >= best:
                kept.restore(st)
                break
            best = reached


def _attempt(
    st: State, goals: Sequence[Goal], tolerance: float | None, best: tuple, rebased: bool
) -> tuple[tuple, Frozen | None]:
    """One run of the goals (on the plan as if applied when `rebased`): its distance and constraints, or (best, None)
    when it came no closer and was taken back."""
    if rebased:
        return _attempt_applied(st, goals, tolerance, best)
    kept = Snapshot(st)
    st.capped = []
    now = Frozen()
    for g in goals:
        now.add(g.optimize(st, now))
    reached = _distance(st, tolerance)
    if reached >= best:
        kept.restore(st)
        return best, None
    return reached, now


def _attempt_applied(
    st: State, goals: Sequence[Goal], tolerance: float | None, best: tuple
) -> tuple[tuple, Frozen | None]:
    """The goals on a fresh state whose input is the current placement (what planning the applied plan again does);
    its replica lists are taken over when that comes closer."""
    fresh = State(st.cluster, st.parts, st.targets, st.fixed, closed=st.closed, placement=st.reps)
    fresh.groups, fresh.memo = st.groups, st.memo
    now = Frozen()
    for g in goals:
        now.add(g.optimize(fresh, now))
    reached = _distance(fresh, tolerance)
    if reached >= best:
        return best, None
    st.restore([tuple(r) for r in fresh.reps])
    st.moves += fresh.moves
    st.copies = sum(len(set(r).difference(h)) for r, h in zip(st.reps, st.home))
    st.capped = fresh.capped
    return reached, now


def _off_even(values: Iterable[int], n: int, total: int) -> int:
    """How far `values` (of n brokers, summing to `total`; brokers not listed hold 0) are from the even share:
    replicas above its ceiling plus replicas missing below its floor. No broker (every target closed and empty: none
    can lead) lists none: 0."""
    if not n:
        return 0
    q, r = divmod(total, n)
    if not q:  # floor 0, ceiling 1 (or 0 with nothing to share): each value above 1 is off by its excess
        return total - sum(map(bool, values))
    hi = q + (1 if r else 0)
    listed = 0
    off = 0
    for v in values:
        listed += 1
        off += max(0, v - hi) + max(0, q - v)
    return off + (n - listed) * q


def _distance(st: State, tolerance: float | None) -> tuple[int, int, int, float]:
    """How far the state is from the goals, in goal order: replica counts, per-topic counts (each per group of
    brokers balanced together), preferred leaders per broker and per topic, bytes above the tolerance."""
    count = 0
    for members in st.groups.values():
        count += _off_even((st.count[b] for b in members), len(members), sum(st.count[b] for b in members))
    group_of = {b: g for g, members in st.groups.items() for b in members}
    sizes = {g: len(members) for g, members in st.groups.items()}
    topic = _terms(st, "topic", st.groups, st.touched, lambda t: _topic_term(st.holders[t], group_of, sizes))
    forced = forced_topics(st) if None in st.groups else {}  # of this placement, as a second plan finds them
    for t, why in forced.items():  # a topic racks spread wider: over each class of brokers it is balanced in
        topic -= st.terms["topic"][1][t]
        for inside in why.classes:
            v = [c for b, c in st.holders[t].items() if b in inside]
            topic += _off_even(v, len(inside), sum(v))
    st.settle_leads()
    n = len(st.lead)
    lead = _off_even(st.lead.values(), n, sum(st.lead.values())) if st.lead else 0
    values = st.tleaders
    lead += _terms(
        st, "lead", st.lead_targets, st.led, lambda t: _off_even(values[t].values(), n, sum(values[t].values()))
    )
    over = 0.0
    if tolerance is not None:
        limit = limits(st, tolerance)
        over = sum(max(0.0, st.bytes[b] - limit[g]) for g, members in st.groups.items() for b in members)
    return count, topic, lead, over


def _terms(st: State, name: str, basis: object, touched: set[int], term: Callable[[int], int]) -> int:
    """The sum over topics of `term`, kept in `st.terms[name]` while `basis` (the brokers it counts over) stays the
    same object: only the topics in `touched` (emptied here) are recounted."""
    kept = st.terms.get(name)
    if kept is None or kept[0] is not basis:
        kept = (basis, {})
        st.terms[name] = kept
        touched.update(range(len(st.topic_names)))
    terms = kept[1]
    for t in touched:
        terms[t] = term(t)
    touched.clear()
    return sum(terms.values())


def _topic_term(holders: dict[int, int], group_of: dict[int, str | None], sizes: dict[str | None, int]) -> int:
    """`_off_even` of one topic's replicas per broker in each group of brokers balanced together."""
    if len(sizes) == 1:
        ((g, n),) = sizes.items()
        values = [c for b, c in holders.items() if b in group_of]
        return _off_even(values, n, sum(values))
    per_group: dict[str | None, list[int]] = {}
    for b, c in holders.items():
        if b in group_of:
            per_group.setdefault(group_of[b], []).append(c)
    return sum(_off_even(v, sizes[g], sum(v)) for g, v in per_group.items())


def _notes(
    st: State,
    hard: HardGoal,
    leaders: bool,
    byte_goal: ByteGoal | None,
    tolerance: float,
    moving: frozenset[int],
    skipped: frozenset[int],
) -> list[Note]:
    notes = count_notes(st, "replica-count") + _count_forced(st, topic_notes(st, "topic-spread"))
    notes += leader_notes(st, "preferred-leaders") if leaders else []
    notes += byte_notes(st, byte_goal, tolerance)
    if hard.repaired:
        notes.append(Note("hard", "rack-repaired", hard.repaired, values=(hard.repair_moves,)))
    if hard.unrepaired:
        left = tuple(sorted(st.parts[i].tp for i in hard.unrepaired))
        notes.append(Note("hard", "unrepaired", len(left), partitions=left))
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
    if st.capped:
        notes.append(Note("max-moves", "capped", len(set(st.capped)), topics=tuple(dict.fromkeys(st.capped))))
    return notes


def _count_forced(st: State, notes: list[Note]) -> list[Note]:
    """The topic goal's unmet note split: the topics the replica counts and racks together keep above a spread of 1
    (`topic_keep.count_forced`) noted as count-forced, each with its spread over all target brokers."""
    unmet = next((n for n in notes if n.kind == "unmet"), None)
    if unmet is None:
        return notes
    index = {name: t for t, name in enumerate(st.topic_names)}
    proven = {st.topic_names[t] for t in topic_keep.count_forced(st, [index[name] for name in unmet.topics])}
    if not proven:
        return notes
    left = tuple(name for name in unmet.topics if name not in proven)
    forced = tuple(name for name in unmet.topics if name in proven)
    reached = spreads(st)
    out = [n for n in notes if n is not unmet]
    out += [replace(unmet, count=len(left), topics=left)] if left else []
    values = tuple(reached[index[name]][1] for name in forced)
    return out + [Note(unmet.goal, "count-forced", len(forced), topics=forced, values=values)]


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
