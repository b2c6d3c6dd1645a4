"""How many replicas of each topic should each broker end with, so that the count goal's moves spread topics too?

What the replica-count goal aims at per topic: the replicas of each topic each broker of a group ends with, so that
the moves that bring the counts to their targets also spread every topic within 1 (goal 3); which brokers get a
topic's +1 is `slots`; and the lower bound of counts and topics together (`joint_lower_bound`).

A topic with R replicas over n brokers ends with q = R // n on each and one more on r = R % n of them (its *slots*);
a broker whose count target is T then holds T − Σq slots, one per topic at most. A broker that keeps a slot of a
topic it holds more than q of keeps a replica that would otherwise leave, so the slots go first to such brokers
(topics with the fewest candidates first; with sizes, the brokers whose slot keeps the largest replica first, the
one they would otherwise give up, so the fewest bytes move; then those with the most slots still to fill), then the
rest to the
brokers with the most slots left (largest first: Gale–Ryser's construction). Every replica above a broker's share
then leaves, each one needed: the moves are Σ max(0, held − share) over brokers and topics, the fewest that reach
these targets.

With the byte goal's limit, of the slot assignments that keep the most replicas, one that keeps the most bytes where
they count (`_by_bytes`): a broker above the limit gives up its bytes above it whichever slots it keeps, so a slot
there is worth the replica it keeps only up to what the smallest replicas it gives up come to beyond that (less what
it receives to reach its floors). That room caps a broker's slots together, which the flow (a cap per slot) does not
see: the brokers whose slots keep more than their room are valued down in proportion and the flow runs again.
"""

from __future__ import annotations

import heapq
from typing import Callable, Collection, Sequence, cast

from planner.rebalance.goals.shares.slots import best_slots, kept, upper_limit, weighted_slots
from planner.rebalance.goals.state import State

SLOTS_STAGE = "the count goal's slots by bytes"  # the time budget's note names it where it ran out there
AUGMENTS = 256  # augmenting paths tried at most (each a breadth-first search over brokers and topics)
# topic-broker pairs above which the count goal keeps the greedy +1 slots (the flow closest to them costs about 1.5 s
# at 200,000 pairs, and the goals may run several times): the 100k cluster has 1,699 x 210
FLOW_ARCS = 400_000
# topic-broker pairs up to which the slots weigh the bytes they keep as well (`_by_bytes`; callers bound the replicas)
BYTE_ARCS = 100_000
LEVELS = 64  # the bytes a slot keeps, in steps of 1/LEVELS of the most any slot keeps
PENALTY = 4  # a slot that keeps nothing, on a broker above the byte limit: what it costs more, in 1/PENALTY of LEVELS
FINE_LEVELS = 256  # the steps of `goals.balance`'s plan by bytes in finer steps (kept where it moves fewer bytes)
REVALUE = 3  # times at most the slots by bytes are chosen again, a broker's values scaled to its room (`_by_bytes`)


def topic_shares(
    st: State,
    target: dict[int, int],
    members: Sequence[int],
    totals: dict[int, int],
    most: int,
    limit: float | None = None,
    pinned: Collection[int] = (),
    levels: int = LEVELS,
) -> dict:
    """topic -> {broker: replicas of the topic it should end with} for the brokers of `members` (a group) whose
    count of the topic should change; `totals`: topic -> its replicas in the group. Empty where the count targets
    cannot be met this way (a target below the topics' floors, slots that do not fit) or where reaching these shares
    would move more than `most` replicas (the count goal's moves and the topic goal's excess together: what the goals
    would cost without it)."""
    n = len(members)
    inside = frozenset(members)
    floor = {t: c // n for t, c in totals.items()}
    extra = {t: c % n for t, c in totals.items() if c % n}
    floors = sum(floor.values())  # once, not per broker (topics × brokers)
    room = {b: target[b] - floors for b in members}
    if any(k < 0 or k > len(extra) for k in room.values()):
        return {}
    slots = _slots(st, inside, floor, extra, room, limit, pinned, levels)
    if slots is None:
        return {}
    out: dict[int, dict[int, int]] = {}
    shed = 0
    for t, q in floor.items():
        held = st.holders[t]
        mine = slots.get(t, set())
        brokers = members if q else set(held) & inside | mine
        change = {b: q + (b in mine) for b in brokers if held.get(b, 0) != q + (b in mine)}
        if change:
            out[t] = change
            shed += sum(held[b] - c for b, c in change.items() if held.get(b, 0) > c)
    return out if shed <= most else {}


def _slots(
    st: State,
    inside: frozenset[int],
    floor: dict,
    extra: dict,
    room: dict,
    limit: float | None = None,
    pinned: Collection[int] = (),
    levels: int = LEVELS,
) -> dict[int, set[int]] | None:
    """topic -> the brokers given its slots (None: they do not fit): the most that save a move of any assignment
    (`slots.best_slots`, each rack's slots apart for a topic of RF = racks: `_parts`), the closest of those to
    `_keeping`'s greedy choice by bytes and `_rest` (bytes are the tie-break), that choice itself where it is one of
    them or where the flow is too large to build. With the byte goal's `limit`, of those keeping the most, the one
    keeping the most bytes where they count (`_by_bytes`; the topics of `pinned` as without it)."""
    candidates = {
        t: [b for b, c in st.holders[t].items() if b in inside and c > floor[t] and b not in st.closed] for t in extra
    }
    order = sorted(extra, key=lambda t: (len(candidates[t]) - extra[t], t))  # scarcest topics first
    # only where a topic has more candidates than slots does the order choose (else every candidate with room gets one)
    saving = _savings(st, {t: c for t, c in candidates.items() if len(c) > extra[t]}, floor)
    left = dict(room)
    greedy: dict[int, set[int]] | None = _keeping(st, order, candidates, extra, saving, left)

    def keeps() -> dict[int, set[int]]:  # per topic, the brokers holding more than its floor
        return {t: {b for b, c in st.holders[t].items() if b in inside and c > floor[t]} for t in extra}

    if greedy is not None and not _rest(extra, left, greedy, keeps):
        greedy = None
    if len(extra) * len(room) > FLOW_ARCS:
        return greedy
    preferred = {t: sorted(candidates[t], key=_by_saving(t, saving, room, st.holders[t])) for t in order}
    wants, parts, within = _parts(st, floor, extra, order, preferred, room)
    brokers = {b: room[b] for b in sorted(room, key=lambda b: (-room[b], b))}
    hint = None
    slots = None
    if greedy is not None:
        hint = {(t, k): {b for b in greedy[t] if k is None or st.rack_of.get(b) == k} for t, k in wants}
        if all(len(hint[k]) == w for k, w in wants.items()) and kept(hint, parts) == upper_limit(wants, parts, brokers):
            slots = hint  # each rack's slots as asked, and as many kept as the flow's two simple cuts allow
    if slots is None:
        slots = best_slots(wants, parts, brokers, within=within, like=hint)
    if slots is None:
        return None
    if limit is not None and len(extra) * len(room) <= BYTE_ARCS:
        slots = _by_bytes(st, inside, floor, limit, wants, parts, brokers, within, slots, hint, pinned, levels)
    out: dict[int, set[int]] = {t: set() for t in order}
    for (t, _), mine in slots.items():
        out[t] |= mine
    return out


def _parts(
    st: State, floor: dict, extra: dict, order: list[int], preferred: dict[int, list[int]], room: dict
) -> tuple[dict[tuple[int, str | None], int], dict[tuple[int, str | None], list[int]], dict]:
    """The slots to give as `slots.best_slots` takes them: (topic, None) -> its slots, and for a topic whose every
    partition keeps one replica in each rack (RF = racks, rack-safe) (topic, rack) -> its slots in that rack, whose
    replicas per rack never change (a move keeps its rack); the brokers they save a move on (in order of preference);
    the brokers each (topic, rack) may use."""
    by_rack: dict[str | None, list[int]] = {}
    for b in sorted(room):
        by_rack.setdefault(st.rack_of.get(b), []).append(b)
    locked = _locked(st, extra) if st.n_racks > 1 else set()
    wants: dict[tuple[int, str | None], int] = {}
    saving: dict[tuple[int, str | None], list[int]] = {}
    within: dict[tuple[int, str | None], list[int]] = {}
    for t in order:
        held = st.holders[t]
        parts = {k: sum(held.get(b, 0) for b in brokers) - floor[t] * len(brokers) for k, brokers in by_rack.items()}
        if t in locked and all(0 <= w <= len(by_rack[k]) for k, w in parts.items()):
            for k, w in parts.items():
                wants[(t, k)], within[(t, k)] = w, by_rack[k]
                saving[(t, k)] = [b for b in preferred[t] if st.rack_of.get(b) == k]
        else:
            wants[(t, None)], saving[(t, None)] = extra[t], preferred[t]
    return wants, saving, within


def _locked(st: State, topics: dict) -> set[int]:
    """The topics of `topics` whose every partition has one replica in each rack."""
    n = st.n_racks
    out = set(topics)
    rack = st.rack_of.get
    for i, r in enumerate(st.reps):
        t = st.topic_of[i]
        if t in out and (len(r) != n or len(set(map(rack, r))) != n):
            out.discard(t)
    return out


def _keeping(
    st: State, order: list[int], candidates: dict[int, list[int]], extra: dict, saving: dict, room: dict
) -> dict[int, set[int]]:
    """Slots given to brokers holding more than the floor of the topic (each saves a move), in `order` (scarcest
    topics first), the brokers whose slot saves the most bytes first."""
    slots: dict[int, set[int]] = {}
    for t in order:
        chosen = [b for b in candidates[t] if room[b] > 0]
        if len(chosen) > extra[t]:  # else every one of them (most topics: fewer holders than replicas)
            chosen = sorted(chosen, key=_by_saving(t, saving, room, st.holders[t]))[: extra[t]]
        slots[t] = set(chosen)
        for b in chosen:
            room[b] -= 1
    return slots


def _rest(extra: dict, room: dict, slots: dict[int, set[int]], keeps: Callable[[], dict[int, set[int]]]) -> bool:
    """The slots still to give, to the brokers with the most room first (largest topics first), then along
    augmenting paths where a broker must trade a slot for another (Hopcroft-Karp's step): whether all fit."""
    heap = [(-k, b) for b, k in room.items() if k > 0]
    heapq.heapify(heap)
    for t in sorted(extra, key=lambda t: (-(extra[t] - len(slots.get(t, ()))), t)):
        mine = slots.setdefault(t, set())
        skipped = []
        while len(mine) < extra[t] and heap:
            k, b = heapq.heappop(heap)
            if b in mine:
                skipped.append((k, b))
                continue
            mine.add(b)
            room[b] -= 1
            if room[b]:
                heapq.heappush(heap, (-room[b], b))
        for item in skipped:
            heapq.heappush(heap, item)
    if all(len(slots[t]) >= extra[t] for t in extra):
        return not any(room.values())  # every slot given: no augmenting path to look for
    holding: dict[int, set[int]] = {b: set() for b in room}
    above = keeps()
    for t, mine in slots.items():
        for b in mine:
            holding[b].add(t)
    budget = AUGMENTS
    for t in sorted(extra):
        while len(slots[t]) < extra[t]:
            budget -= 1
            if budget < 0 or not _augment(t, room, slots, holding, above):
                return False  # too many, or none: the count goal goes its usual way
    return not any(room.values())


def _augment(
    start: int, room: dict, slots: dict[int, set[int]], holding: dict[int, set[int]], keeps: dict[int, set[int]]
) -> bool:
    """One more slot for topic `start`: a broker takes it, giving up a slot that another broker takes, and so on to
    a broker with room (breadth first; at each step brokers that hold more than the topic's floor first, as taking
    its slot costs them no move)."""
    brokers = sorted(room)
    took: dict[int, int] = {}  # broker -> the topic whose slot it takes on the path
    gave: dict[int, int] = {start: -1}  # topic -> the broker giving up its slot on the path (-1: the start)
    queue = [start]
    for t in queue:
        for b in sorted(brokers, key=lambda b: b not in keeps[t]):
            if b in took or b in slots[t]:
                continue
            took[b] = t
            if room[b] > 0:
                room[b] -= 1
                while True:  # walk the path back: b takes t; the broker that gave t's slot up takes the next one
                    t = took[b]
                    slots[t].add(b)
                    holding[b].add(t)
                    b = gave[t]
                    if b < 0:
                        return True
                    slots[t].discard(b)
                    holding[b].discard(t)
            for u in sorted(holding[b]):
                if u not in gave:
                    gave[u] = b
                    queue.append(u)
    return False


def joint_lower_bound(st: State, groups: Sequence[Sequence[int]]) -> int | None:
    """Fewest moves of any plan that brings both the replica counts and every topic within 1 in each of `groups`
    (the brokers balanced together), or None where this bound does not apply (replicas off the targets, partitions that
    never move, cordoned brokers).

    Broker b must shed max(0, held − final) replicas of each topic, final being q or q + 1 (a slot); a slot saves a
    move only on a broker holding more than q. The most slots that save a move, with every topic's r slots given and
    every broker's count within 1 of the group's mean, is `slots.best_slots`' flow: the bound is the sheds less that,
    the least of this model, exactly. Where the flow is too large to build, its two simple cuts (`upper_limit`)."""
    if st.fixed or st.closed or any(st.where[b] for b in st.cluster.broker_ids if b not in st.target_set):
        return None
    total = 0
    for members in groups:
        n, inside = len(members), frozenset(members)
        per_topic: dict[int, int] = {}
        for b in members:
            for t, c in st.tcount[b].items():
                per_topic[t] = per_topic.get(t, 0) + c
        replicas = sum(per_topic.values())
        # every broker ends with room for lo slots, and `spare` of them (the ceilings) for one more
        lo, spare = replicas // n - sum(c // n for c in per_topic.values()), replicas % n
        shed = 0
        wants: dict[int, int] = {}
        saving: dict[int, list[int]] = {}
        for t, c in per_topic.items():
            q, r = divmod(c, n)
            over = [b for b, h in st.holders[t].items() if b in inside and h > q]
            shed += sum(st.holders[t][b] - q for b in over)
            if r:
                wants[t], saving[t] = r, over
        room = {b: lo for b in sorted(members)}
        slots = best_slots(wants, saving, room, spare)
        total += shed - (kept(slots, saving) if slots is not None else upper_limit(wants, saving, room, spare))
    return total


def _savings(st: State, candidates: dict[int, list[int]], floor: dict[int, int]) -> dict[tuple[int, int], int]:
    """(topic, broker) -> the bytes keeping one more replica of the topic saves the broker: the largest of those it
    would give up, its (floor + 1)-th largest of the topic (sizes known; else nothing)."""
    if not st.has_sizes:
        return {}
    wanted = {t: frozenset(bs) for t, bs in candidates.items() if bs}
    sizes: dict[tuple[int, int], list[int]] = {}
    topic_of, size = st.topic_of, st.size
    for i, r in enumerate(st.reps):
        t = topic_of[i]
        brokers = wanted.get(t)
        if brokers is not None:
            for b in r:
                if b in brokers:
                    sizes.setdefault((t, b), []).append(size[i] or 0)
    return {k: max(v) if not floor[k[0]] else sorted(v)[-1 - floor[k[0]]] for k, v in sizes.items()}


def _by_saving(t: int, saving: dict, room: dict, held: dict) -> Callable[[int], tuple]:
    """The order in which brokers get a slot of topic t: those it saves the most bytes first, then the most room."""
    return lambda b: (-saving.get((t, b), 0), -room[b], -held[b], b)


def _by_bytes(
    st: State,
    inside: frozenset[int],
    floor: dict,
    limit: float,
    wants: dict,
    parts: dict,
    brokers: dict,
    within: dict,
    slots: dict,
    hint: dict | None,
    pinned: Collection[int],
    levels: int = LEVELS,
) -> dict:
    """Of the slot assignments keeping as many as `slots` does (the most), one keeping the most bytes where they
    count (`_byte_values`), then closest to `hint` (or to `slots`): `slots.weighted_slots`. The topics of `pinned`
    keep their `slots`."""
    value, penalty, keeps, room, step = _byte_values(st, inside, floor, limit, levels)
    if pinned:  # only their brokers, every one of them
        parts = {k: [b for b in v if b in slots[k]] if k[0] in pinned else v for k, v in parts.items()}
        within = {**within, **{k: sorted(slots[k]) for k in wants if k[0] in pinned}}
    values = {(k, b): v for k in wants for b in parts[k] if (v := value.get((k[0], b), 0))}
    like = hint or slots
    best = _weighted(st, wants, parts, brokers, values, penalty, within, like) or slots
    most, chosen, scale = _kept_bytes(best, parts, keeps, room, penalty, step), best, dict.fromkeys(brokers, 1.0)
    for _ in range(REVALUE):  # the flow caps each slot's worth, not a broker's sum: scale the brokers kept past it
        kept = _kept_by_broker(chosen, parts, keeps)
        over = {b: room[b] / k for b, k in kept.items() if k > room[b]}
        if not over:
            break
        for b, f in over.items():
            scale[b] *= f
        values = {(k, b): v for k in wants for b in parts[k] if (v := round(value.get((k[0], b), 0) * scale[b]))}
        again = _weighted(st, wants, parts, brokers, values, penalty, within, like)
        if again is None:
            break
        chosen = again
        now = _kept_bytes(chosen, parts, keeps, room, penalty, step)
        if now > most:
            best, most = chosen, now
    return best


def _weighted(
    st: State, wants: dict, parts: dict, brokers: dict, values: dict, penalty: dict, within: dict, like: dict
) -> dict | None:
    """`slots.weighted_slots`, once per plan for the same arguments (`State.memo`): `search.search_plans` makes a plan
    again from the same start (the byte goal's steps another way), whose count goal asks for the same flows. Where
    the time budget runs out (`State.deadline`), None: the caller's slots without bytes stand (not kept in the memo)."""
    key = (
        "weighted_slots",
        tuple(wants.items()),
        tuple((k, tuple(v)) for k, v in parts.items()),
        tuple(brokers.items()),
        tuple(values.items()),
        tuple(penalty.items()),
        tuple((k, tuple(sorted(v))) for k, v in within.items()),
        tuple((k, tuple(sorted(v))) for k, v in like.items()),
    )
    if key not in st.memo:
        if st.deadline.stage is not None:
            return None  # the time ran out already (no clock read)
        out = st.deadline.out  # asked only by a flow of many rounds: a small plan reads no clock here
        found = weighted_slots(wants, parts, brokers, values, penalty, within, like, lambda: out(SLOTS_STAGE))
        if found is None and st.deadline.stage is not None:
            return None  # cut short by the time budget: no answer to keep
        st.memo[key] = found
    found = cast("dict | None", st.memo[key])
    return None if found is None else {k: set(v) for k, v in found.items()}


def _kept_by_broker(slots: dict, parts: dict, keeps: dict[tuple[int, int], int]) -> dict[int, int]:
    """broker -> the bytes its slots keep (those on the brokers of `parts`, which save a move)."""
    out: dict[int, int] = {}
    for k, mine in slots.items():
        for b in mine.intersection(parts[k]):
            out[b] = out.get(b, 0) + keeps.get((k[0], b), 0)
    return out


def _kept_bytes(slots: dict, parts: dict, keeps: dict, room: dict[int, float], penalty: dict, step: float) -> float:
    """What `_by_bytes` weighs an assignment by: the bytes each broker's slots keep, up to its `room`, less the
    penalties (in bytes) of the slots that keep nothing."""
    lost = sum(penalty.get(b, 0) for k, mine in slots.items() for b in mine.difference(parts[k])) * step
    return sum(min(k, room[b]) for b, k in _kept_by_broker(slots, parts, keeps).items()) - lost


def _byte_values(
    st: State, inside: frozenset[int], floor: dict, limit: float, levels: int = LEVELS
) -> tuple[dict, dict, dict[tuple[int, int], int], dict[int, float], float]:
    """What a slot is worth in bytes, as (topic, broker) -> 0..levels, and what a slot that keeps nothing costs more on
    each broker, 0 or levels // PENALTY. A slot of topic t on broker b holding more than its floor q keeps the replica b
    would otherwise give up, its (q + 1)-th largest of t; but a broker above the byte limit must give up its bytes above
    it anyway: what it keeps counts only while the smallest replicas it gives up (with no slot) come to more than that,
    so the worth is capped at that difference. A slot that keeps nothing brings a broker a replica: one above the limit
    must then give up as much again. A broker holding fewer than q of t receives the difference, counted at t's mean
    replica size, which that room leaves less of. Also: (topic, broker) -> the bytes its slot keeps, broker -> the bytes
    its slots may keep in all (its room below the limit) and the bytes of a step."""
    sizes: dict[tuple[int, int], list[int]] = {}
    topic_of, holders = st.topic_of, st.holders
    mean: dict[int, list[int]] = {}  # topic -> its replicas' bytes, its replicas (topics with a floor)
    for i, r in enumerate(st.reps):
        t = topic_of[i]
        q = floor.get(t)
        if q is None:
            continue
        if q:
            m = mean.setdefault(t, [0, 0])
            m[0] += st.sz(i) * len(r)
            m[1] += len(r)
        for b in r:
            if b in inside and holders[t][b] > q:
                sizes.setdefault((t, b), []).append(st.sz(i))
    shed: dict[int, int] = {}
    saving: dict[tuple[int, int], int] = {}
    for (t, b), v in sizes.items():
        v.sort()
        q = floor[t]
        shed[b] = shed.get(b, 0) + sum(v[: len(v) - q])
        saving[(t, b)] = v[-1 - q]
    room = {b: shed.get(b, 0) - (st.bytes[b] - limit) for b in inside}
    for t, (z, n) in mean.items():
        q, held = floor[t], holders[t]
        for b in inside:
            if held.get(b, 0) < q:
                room[b] -= (q - held.get(b, 0)) * z / n
    room = {b: max(0.0, v) for b, v in room.items()}
    value: dict[tuple[int, int], float] = {}
    for (t, b), s in saving.items():
        value[(t, b)] = min(s, room[b])
    top = max(value.values(), default=0) or 1
    out = {k: round(levels * v / top) for k, v in value.items()}
    penalty = {b: levels // PENALTY if st.bytes[b] > limit else 0 for b in inside}
    return out, penalty, saving, room, top / levels
