"""Goal 5: bytes per target broker (known sizes only) within a tolerance: the largest broker at most (1 + tolerance) ×
the mean of its group (the ceiling), then the smallest that may take replicas at least (1 − tolerance) × that mean (the
floor, so that a scale-out fills the new brokers), reached with the fewest replica moves and then the fewest bytes
moved; once inside, nothing more moves. Partitions of unknown size never move for this goal.

Each step takes the heaviest broker above the limit and any other (the 64 lightest). First a change that copies no
replica the plan does not copy already (`_Free`): a replica the plan moved to the heavy broker going on to the light
one, or back home, alone or exchanged for one of the light broker's, or an exchange in which a replica going home
pays for the other's copy; so the goal adds no move where the earlier goals' copies can carry the bytes (on the peer
benchmark's scale-outs it reaches the tolerance at the count and topic goals' fewest moves). Else a single move where
the earlier goals allow it (replica counts may differ by one), or an exchange of a big replica on the heavy broker for
a smaller one on the light broker (two moves, counts unchanged). Preferred: a change that brings the heavy broker
within the limit without lifting the light one above it, with the fewest copies and then the fewest bytes; otherwise
the largest step. Only a candidate that would beat the best so far is checked against the earlier goals' constraints.
`free=False` leaves out the first kind (`balance` plans both ways on small clusters: neither is better everywhere).
Under --max-moves, each step goes to the lightest broker that has a change (`ByteGoal._spread_step`), so the few moves
the cap allows go round the receiving brokers.

The floor (`ByteGoal._fill`) runs after the ceiling, with the same candidates the other way round: the lightest broker
below the floor takes from one of the heaviest (`_FloorFree` from the 16 heaviest, then `_FloorPair` from the 64),
each change moving at most what leaves the donor at or above the floor and the light broker at or below the ceiling,
so neither undoes the other. The floor is (1 − tolerance) × the reachable mean (`reachable`): a replica larger than
the mean holds its broker above it whatever the plan, so the largest such replicas are left out of the mean, each with
a broker of its own (water-filling); the mean of the rest is the most every broker can hold at once. So a giant
partition lifts no floor out of every plan's reach.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Iterator, Sequence

from planner.rebalance.goals.base import Change, CountConstraint, Findings, Frozen, Goal, TopicCounts
from planner.rebalance.goals.geometry import targets_of
from planner.rebalance.goals.state import State
from planner.rebalance.goals.windows import hopeful
from planner.rebalance.notes import Note

if TYPE_CHECKING:  # numpy is imported where a free step has windows enough (`_sift`)
    import numpy as np

PROGRESS_STEPS = 200  # the byte goal's steps between two progress lines
LIGHTS = 64  # the brokers (lightest first) a heavy broker may hand bytes to in one step
# the floor's donors (heaviest first) scanned for a change that copies nothing more (`_FloorFree`): on the 60-broker
# peer scale-out, 64 took the floor's steps to half the plan's CPU; 16 plan as few moves and bytes there
FREE_DONORS = 16
PLACED = 500_000  # `SizeIndex.placeable`'s answers kept at most (about 50 MB)
# a free step sifts its pairs' windows on arrays (`windows.hopeful`) from this many of them (numpy's calls cost more
# than the walks of a few)
VECTOR_WINDOWS = 512


def limits(st: State, tolerance: float) -> dict[str | None, float]:
    """Per group: the most bytes a broker may hold, (1 + tolerance) × the group's mean (known sizes)."""
    out = {}
    for g, members in st.groups.items():
        total = sum(st.bytes[b] for b in members)
        out[g] = (1 + tolerance) * total / len(members)
    return out


def giants(st: State, members: Iterable[int], limit: float) -> dict[int, float]:
    """The brokers of `members` holding replicas (of known size) larger than `limit`, each with its ceiling instead of
    the limit: the limit plus those replicas' bytes. No placement brings such a broker within the limit, and moving
    such a replica only makes the broker taking it too heavy, so the byte goal leaves them where they are and holds
    their broker to the limit beside them; it never hands it bytes (issue 30: on 10,000 Pareto-sized partitions four
    replicas of one partition were each 4.4 × the limit; the replica-count goal keeps their brokers at their share of
    replicas, so the goal exchanged them big for small, thousands of steps, towards a limit out of reach). Empty where
    no replica is that large: nearly always, one comparison."""
    if st.largest <= limit:
        return {}
    size, out = st.size, {}
    for b in members:
        big = sum(s for i in st.where[b] if (s := size[i]) is not None and s > limit)
        if big:
            out[b] = limit + big
    return out


def floors(st: State, tolerance: float) -> dict[str | None, float]:
    """Per group: the fewest bytes a broker that may take replicas should hold, (1 - tolerance) × the most every
    broker of the group could hold (`reachable`: the mean, less the replicas too large for any placement to share
    out, each on a broker of its own); a cordoned broker takes none, so no floor holds it. Known sizes."""
    out = {}
    size = st.size
    for g, members in st.groups.items():
        total = sum(st.bytes[b] for b in members)
        sizes = [s for b in members for i in st.where[b] if (s := size[i]) is not None]
        out[g] = (1 - tolerance) * reachable(total, sizes, len(members))
    return out


def reachable(total: float, sizes: Sequence[int], n: int) -> float:
    """The most bytes every one of n brokers can hold at once, given `total` bytes in replicas of `sizes`
    (water-filling): the mean, unless a replica is larger than it; then that replica's broker holds at least its size
    and the others share what is left, so the largest replicas above the mean of the rest are left out, one broker
    each (two on one broker would only leave less for the others). No placement's smallest broker holds more."""
    big = heapq.nlargest(n - 1, sizes)  # at most n - 1 left out, the largest first
    k = 0
    while k < len(big) and k < n - 1 and big[k] * (n - k) > total:
        total -= big[k]
        k += 1
    return total / (n - k) if n > k else 0.0


def _floor_lower_bound(st: State, tolerance: float, by_rack: dict | None) -> int:
    """Fewest bytes any plan reaching the byte goal's floor copies: a broker's bytes rise only by the replicas copied
    onto it, so each broker that may take replicas (not cordoned) below (1 - tolerance) × the reachable mean its group
    ends with (`reachable`, as `floors` counts it) takes copies of at least its shortfall. The bytes a group ends with:
    per rack when every partition keeps one replica per rack (`by_rack`: each rack ends with one replica of each
    partition, as `_bytes_lower_bound` counts), else the bytes of every replica less those of the partitions that never
    move held outside the targets (they stay there), over the targets. Unknown sizes count 0."""
    groups = list(by_rack.values()) if by_rack else [st.targets]
    if by_rack:
        total = sum(st.sz(i) for i in range(len(st.reps)))
    else:
        total = sum(st.bytes[b] for b in st.cluster.broker_ids)
        total -= sum(
            st.sz(i) for b in st.cluster.broker_ids if b not in st.target_set for i in st.where[b] if i in st.fixed
        )
    if by_rack:  # each rack ends with one replica of each partition
        sizes = [st.sz(i) for i in range(len(st.reps))]
    else:  # every replica but those of partitions that never move held outside the targets
        sizes = [
            st.sz(i) for b in st.cluster.broker_ids for i in st.where[b] if b in st.target_set or i not in st.fixed
        ]
    short = 0
    for members in groups:
        floor = (1 - tolerance) * reachable(total, sizes, len(members))
        short += sum(int(max(0.0, floor - st.bytes[b])) for b in members if b not in st.closed)
    return short


def _bytes_lower_bound(st: State, tolerance: float, by_rack: dict | None) -> tuple[int, int]:
    """Fewest bytes any plan reaching the replica-count and byte goals copies, and any reaching the per-topic goal too:
    every replica leaves a broker, and broker b must lose at least its bytes above the limit (above its ceiling
    where it holds replicas larger than the limit: `giants`; taking one of those away loses more) and at least its
    replicas above the ceiling of the mean (the smallest of them at the least), all of them when b is not a target.
    With the topic goal (`_TopicSheds`), b also loses its replicas of each topic above the topic's floor but the +1s
    it keeps.
    Unknown sizes count 0. Per rack when every partition keeps one replica per rack (`by_rack`: each rack then ends
    with one replica of each partition)."""
    groups = list(by_rack.values()) if by_rack else [st.targets]
    outside = 0
    for b in st.cluster.broker_ids:
        if b not in st.target_set:
            outside += sum(st.sz(i) for i in st.where[b] if i not in st.fixed)
    if by_rack:
        total_bytes, total = sum(st.sz(i) for i in range(len(st.reps))), len(st.reps)
        topic_totals = Counter(st.topic_of)
    else:
        total_bytes = sum(st.bytes[b] for b in st.cluster.broker_ids)
        total = sum(st.count[b] for b in st.cluster.broker_ids)
        topic_totals = Counter({t: sum(held.values()) for t, held in enumerate(st.holders)})
    plain = with_topics = outside
    size = st.size
    for members in groups:
        n = len(members)
        limit, ceil = (1 + tolerance) * total_bytes / n, -(-total // n)
        sheds = _TopicSheds(st, {t: divmod(c, n) for t, c in topic_totals.items()}, ceil)
        per_broker = 0
        caps = giants(st, members, limit)  # a broker holding replicas above the limit keeps them (`giants`)
        for b in members:
            movable = [i for i in st.where[b] if i not in st.fixed] if st.fixed else st.where[b]
            extra = st.count[b] - ceil
            over = int(max(0.0, st.bytes[b] - caps.get(b, limit)))
            # the sizes of b's movable replicas, in their order, read once for both terms
            sizes = [size[i] or 0 for i in movable] if extra > 0 or sheds.floors is not None else []
            count_only = max(over, sum(heapq.nsmallest(extra, sizes)) if extra > 0 else 0)
            plain += count_only
            per_broker += max(count_only, sheds.add(b, movable, sizes))
        with_topics += max(per_broker, sheds.total())
    return plain, with_topics


class _TopicSheds:
    """The topic goal's part of the bytes bound in one group of brokers. A topic of q replicas per broker and r more
    ends with q or q + 1 on each broker (q + 1 on at most r of them), and a broker holds at most the ceiling of the
    mean, so at most `room` = that less Σq such +1s: broker b loses its replicas of each topic above q (the smallest
    of each) but one (the largest of those) per +1 it keeps. Per broker, the +1s it may keep save the most; over the
    group, what the +1s save is at most what the r largest savings of each topic add up to, and at most what the
    `room` largest of each broker do."""

    def __init__(self, st: State, floors: dict[int, tuple[int, int]], ceil: int):
        self.st, self.floors = st, None if st.closed else floors  # cordoned brokers: no topic terms
        self.room = max(0, ceil - sum(q for q, _ in floors.values()))
        self.shed = 0
        self.by_broker = 0  # the largest savings of each broker, summed
        self.by_topic: dict[int, list[int]] = {}  # topic -> what keeping a +1 saves on each broker holding above q
        self.every = 0  # the same summed over topics of q = 0 (r, all their replicas, is no fewer than their holders)

    def add(self, b: int, movable: Collection[int], sizes: Sequence[int]) -> int:
        """Count broker b in (`sizes`: those of its `movable` replicas, in their order); its own bound (its +1s saving
        the most)."""
        floors = self.floors
        if floors is None:
            return 0
        of_topic: dict[int, list[int]] = {}  # topic -> the sizes of its movable replicas on b
        topic_of = self.st.topic_of
        for i, v in zip(movable, sizes):
            t = topic_of[i]
            got = of_topic.get(t)
            if got is None:
                of_topic[t] = [v]
            else:
                got.append(v)
        held, by_topic = self.st.tcount[b], self.by_topic
        shed, kept, every = 0, [], 0
        for t, lost in of_topic.items():
            q, r = floors[t]
            k = held[t] - q  # b's replicas of t above its floor (none movable: nothing lost)
            if k <= 0:
                continue
            if len(lost) == 1:  # most: one replica of the topic on b
                largest = lost[0]
                shed += largest
            elif not q:  # k, all b holds of t, is no fewer than those that may move: every one lost
                largest = max(lost)
                shed += sum(lost)
            else:
                lost = sorted(lost)[:k]
                shed += sum(lost)
                largest = lost[-1]
            if r:
                kept.append(largest)
                if q:
                    by_topic.setdefault(t, []).append(largest)
                else:
                    every += largest
        self.every += every
        saved = sum(heapq.nlargest(self.room, kept))
        self.shed += shed
        self.by_broker += saved
        return shed - saved

    def total(self) -> int:
        if self.floors is None:
            return 0
        by_topic = sum(sum(heapq.nlargest(self.floors[t][1], v)) for t, v in self.by_topic.items())
        return self.shed - min(self.by_broker, by_topic + self.every)


@dataclass
class ByteGoal(Goal):
    """Goal: bytes per target broker (known sizes only) within the tolerance: the largest broker of each group at most
    (1 + tolerance) × the group's mean, and the smallest that may take replicas at least (1 − tolerance) × it (the
    floor). Measured as the bytes above that limit and below the floor, summed over the brokers (`measure`; 0 where
    bytes are not balanced: `measured`); bounded below by the bytes any plan must copy (`lower_bound`).

    A broker holding replicas larger than the limit (`giants`) is held to the limit beside them (its ceiling), and
    those replicas stay where they are.

    Constraints: those of every goal before it (`Frozen`: counts, topic spreads, preferred leaders in their ranges);
    partitions of unknown size never move for it. It hands none on: it is the last goal.

    Algorithm: each step takes the heaviest broker above the limit and one of the 64 lightest: first a change that
    copies no replica the plan does not copy already (`_Free`, where `free`; "freed" recorded in `found`), else the
    single move or exchange (big for small) that brings the heavy broker within the limit with the fewest copies and
    then bytes, else the largest step; a candidate is checked against the constraints only when it would beat the
    best so far (module docstring). Then the floor (`_fill`): the lightest broker below it takes from one of the 64
    heaviest in the same way, within both bounds."""

    tolerance: float = 0.10
    say: Callable[[str], None] = lambda msg: None
    name: str = "bytes"
    unmet: list = field(default_factory=list)  # the groups the last run left above the limit (its notes)
    short: list = field(default_factory=list)  # the groups the last run left with a broker below the floor (its notes)
    free: bool = True  # first a change that copies nothing more (`_Free`)
    found: Findings = field(default_factory=Findings)  # "freed": a step took one
    measured: bool = True  # its term counts: bytes are balanced (sizes known, and asked for)

    def optimize(self, st: State, frozen: Frozen) -> None:
        self.say("balancing bytes")
        self.unmet = []
        self.short = []
        limit, floor = limits(st, self.tolerance), floors(st, self.tolerance)
        sizes = SizeIndex(st, frozen)
        for g, members in st.groups.items():
            self._balance(st, frozen, members, limit[g], sizes)
            self._fill(st, frozen, members, limit[g], floor[g], sizes)
        return None

    def measure(self, st: State) -> float:
        """The bytes above the limit (`limits`; a broker's ceiling where it holds larger replicas: `giants`) and below
        the floor (`floors`: brokers that may take replicas), summed over the brokers of each group; 0.0 where not
        `measured`."""
        if not self.measured:
            return 0.0
        limit, floor = limits(st, self.tolerance), floors(st, self.tolerance)
        over = 0.0
        for g, members in st.groups.items():
            caps = giants(st, members, limit[g])
            over += sum(max(0.0, st.bytes[b] - caps.get(b, limit[g])) for b in members)
        closed = st.closed
        under = sum(
            max(0.0, floor[g] - st.bytes[b]) for g, members in st.groups.items() for b in members if b not in closed
        )
        return over + under

    def lower_bound(
        self, st: State, repaired: bool, unsafe: list[tuple[int, int, list[int]]] | None = None
    ) -> tuple[int, int] | None:
        """`_bytes_lower_bound` (without and with the topic goal's sheds) where sizes are known, each at least the
        bytes the brokers below the floor must take (`_floor_lower_bound`); else None."""
        by_rack = targets_of(st, repaired)[1]
        if not st.has_sizes:
            return None
        plain, with_topics = _bytes_lower_bound(st, self.tolerance, by_rack)
        short = _floor_lower_bound(st, self.tolerance, by_rack)
        return max(plain, short), max(with_topics, short)

    def notes(self, st: State) -> list[Note]:
        """Topics of unknown size (where others are known): unknown-sizes; partitions with replicas larger than the
        limit (`giants`): giants; groups the last run left above the limit: unmet, with the largest broker's bytes
        (less those replicas) over its group's mean and the limit's."""
        notes = []
        unknown = sorted({st.parts[i].topic for i in range(len(st.reps)) if not st.known(i)})
        if st.has_sizes and unknown:
            notes.append(Note("bytes", "unknown-sizes", len(unknown), topics=tuple(unknown)))
        limit = limits(st, self.tolerance)
        caps = {g: giants(st, members, limit[g]) for g, members in st.groups.items()}
        big = sorted({st.parts[i].tp for g in caps for b in caps[g] for i in st.where[b] if st.sz(i) > limit[g]})
        if big:
            notes.append(Note("bytes", "giants", len(big), partitions=tuple(big), values=(1 + self.tolerance,)))
        if self.unmet:
            worst = 0.0
            for members in self.unmet:
                mean = sum(st.bytes[b] for b in members) / len(members)
                g, held = st.group_of(members[0]), 0.0
                for b in members:  # its bytes, less those of replicas larger than the limit
                    held = max(held, st.bytes[b] - (caps[g][b] - limit[g]) if b in caps[g] else st.bytes[b])
                worst = max(worst, held / mean if mean else 1.0)
            notes.append(Note("bytes", "unmet", len(self.unmet), values=(worst, 1 + self.tolerance)))
        if self.short:
            least, target = math.inf, 1 - self.tolerance
            floor = floors(st, self.tolerance)
            for g, members in st.groups.items():
                if members not in self.short:
                    continue
                mean = sum(st.bytes[b] for b in members) / len(members)
                low = min(st.bytes[b] for b in members if b not in st.closed)
                ratio = low / mean if mean else 1.0
                if ratio < least:  # both against the mean: the floor below 1 - tolerance where a replica larger
                    least, target = ratio, floor[g] / mean if mean else target  # than the mean lowers it
            notes.append(Note("bytes", "unmet-floor", len(self.short), values=(least, target)))
        return notes

    def _balance(self, st: State, frozen: Frozen, members: Sequence[int], limit: float, sizes: SizeIndex) -> None:
        caps = giants(st, members, limit)  # brokers with their ceilings: never light, their giants never move
        # (bytes, broker) of the others, kept current by the goal's moves
        order = sorted((st.bytes[b], b) for b in members if b not in caps)
        for steps in range(64 * len(st.reps) + 64):
            top = _heaviest(st, order, caps, limit)
            if top is None:
                return
            heavy, cap = top
            if st.deadline.out("the byte goal"):
                break  # the steps made so far stand: each brought the heaviest broker down
            if steps and not steps % PROGRESS_STEPS:
                self.say(
                    f"balancing bytes: {steps:,} steps, the largest broker {st.bytes[heavy] / cap:.3f} × the limit"
                )
            if not st.allowed():
                st.capped.append(self.name)
                break
            lights: list[int] = []
            for _, b in order:  # the lightest first, by (bytes, id)
                if len(lights) == LIGHTS:
                    break
                if b != heavy and b not in st.closed:
                    lights.append(b)
            ceiling = caps.get(heavy)
            if st.max_moves is None:
                step = self._step(st, frozen, heavy, lights, limit, sizes, ceiling)
            else:
                step = self._spread_step(st, frozen, heavy, lights, limit, sizes, ceiling)
            if step is None:
                if not st.allowed(2):
                    st.capped.append(self.name)
                break
            touched = {b for _, s, d in step for b in (s, d) if b not in caps}
            for b in touched:
                del order[bisect.bisect_left(order, (st.bytes[b], b))]
            for i, s, d in step:
                st.move(i, s, d)
                sizes.moved(i, s, d)
            for b in touched:
                bisect.insort(order, (st.bytes[b], b))
        self.unmet.append(members)

    def _spread_step(
        self,
        st: State,
        frozen: Frozen,
        heavy: int,
        lights: Sequence[int],
        limit: float,
        sizes: SizeIndex,
        ceiling: float | None = None,
    ) -> list[Change] | None:
        """Under --max-moves: the best change (`_step`) with the lightest of `lights` that has one, so that the few
        moves the cap allows go round the receiving brokers by how far each is below the others (the best over all
        of them could hand one new broker most of the bytes, step after step)."""
        for light in lights:
            step = self._step(st, frozen, heavy, [light], limit, sizes, ceiling)
            if step is not None:
                return step
        return None

    def _fill(
        self, st: State, frozen: Frozen, members: Sequence[int], limit: float, floor: float, sizes: SizeIndex
    ) -> None:
        """The floor, after the ceiling (`_balance`): each step takes the lightest broker below the floor (that may take
        replicas, and has not been found stuck) and one of the 64 heaviest as the donor, and makes the change that
        brings it up to the floor without taking the donor below the floor or itself above the limit (`_FloorPair`,
        `_FloorFree`), so neither bound undoes the other; else the largest step within those bounds. A broker no change
        can raise is left as it is (the next lightest is tried)."""
        closed = st.closed
        order = sorted((st.bytes[b], b) for b in members)  # (bytes, broker), kept current by the goal's moves
        stuck: set[int] = set()
        # donor -> its `_Heavy`, built once and dropped when a step changes what it reads: the donor's replicas (a
        # step touching it) or where a replica it held before now is (a step moving such a replica)
        held: dict[int, _Heavy] = {}
        for steps in range(64 * len(st.reps) + 64):
            light = next((b for v, b in order if b not in closed and b not in stuck and v < floor), None)
            if light is None:
                if stuck:
                    break
                return
            if st.deadline.out("the byte goal"):
                break  # the steps made so far stand: each brought a broker nearer the floor
            if steps and not steps % PROGRESS_STEPS:
                self.say(
                    f"balancing bytes: {steps:,} steps, the smallest broker {st.bytes[light] / floor:.3f} × the floor"
                )
            if not st.allowed():
                st.capped.append(self.name)
                break
            step = self._fill_step(st, frozen, light, _donors(order, light, floor), limit, floor, sizes, held)
            if step is None:
                if not st.allowed(2):
                    st.capped.append(self.name)
                    break
                stuck.add(light)
                continue
            _make(st, step, order, sizes)
            for b in {b for _, s, d in step for b in (s, d)}.union(*(st.home[i] for i, _, _ in step)):
                held.pop(b, None)
            for kept in held.values():
                for i, _, _ in step:
                    kept.moved(st, i)
        self.short.append(members)

    def _fill_step(
        self,
        st: State,
        frozen: Frozen,
        light: int,
        donors: Sequence[int],
        limit: float,
        floor: float,
        sizes: SizeIndex,
        held: dict[int, _Heavy],
    ) -> list[Change] | None:
        """The best change between the light broker and any of `donors` (the heaviest first), as `_step` ranks them:
        first one that copies nothing more (`_FloorFree`, where `free`: the `FREE_DONORS` heaviest only), else a move
        or exchange (`_FloorPair`)."""
        if self.free:
            best: list = [None]
            frees = [_FloorFree(st, frozen, sizes, donor, light, limit, best, floor) for donor in donors[:FREE_DONORS]]
            _sift(frees)
            for free in frees:
                free.scan()
            if best[0] is not None:
                self.found.record("freed")
                return best[0][1]
        best = [None]
        for donor in donors:
            heavy = held.get(donor)
            if heavy is None:
                heavy = held[donor] = _Heavy(st, donor, sizes)
            _FloorPair(self, st, frozen, heavy, light, limit, best, floor).scan()
        return best[0][1] if best[0] else None

    def _step(
        self,
        st: State,
        frozen: Frozen,
        heavy: int,
        lights: Sequence[int],
        limit: float,
        sizes: SizeIndex,
        ceiling: float | None = None,
    ) -> list[Change] | None:
        """The best change between the heavy broker and any of `lights` (the lightest first); a candidate is checked
        against the earlier goals' constraints only when it would beat the best found so far. `ceiling`: the heavy
        broker's ceiling where it holds replicas larger than the limit (`giants`: they do not move)."""
        free = _free_step(st, frozen, sizes, heavy, lights, limit, ceiling) if self.free else None
        if free is not None:
            self.found.record("freed")
            return free
        best: list = [None]  # (key, changes)
        held = _Heavy(st, heavy, sizes, None if ceiling is None else (limit, ceiling))
        for light in lights:
            _Pair(self, st, frozen, held, light, limit, best).scan()
        return best[0][1] if best[0] else None

    @staticmethod
    def _key(st: State, changes: Sequence[Change], delta: int, want: float, room: float) -> tuple:
        """Inside the limits: (False, copies, bytes copied); else (True, bytes moved per copy, copies, bytes copied).
        Copies and bytes are net, against the input placement: a replica that goes back to a broker that held it
        before takes a planned copy back (-1, less its size), one the plan moved already goes on at no copy."""
        cost = copied = 0
        for i, s, d in changes:
            c = st.cost(i, s, d)
            cost += c
            copied += c * st.sz(i)
        if want <= delta <= room:
            return (False, cost, copied, tuple(changes))
        return (True, -delta / max(1, cost), cost, copied, tuple(changes))


class SizeIndex:
    """Per broker, its replicas of known size as `size × n + index` (so in (size, index) order), sorted: built on first
    use in a run of the goal and kept current by its own moves (the goals before it make none meanwhile). A step then
    finds a light broker's replicas of a given size by bisection instead of sorting all of them. `frozen`: the
    constraints of the goals before it (`allows`), the topic goal's among them (`counts`)."""

    def __init__(self, st: State, frozen: Frozen | None = None):
        self.st, self.frozen = st, Frozen() if frozen is None else frozen
        self.n = len(st.reps) or 1
        self.keys: dict[int, list[int]] = {}
        self.topics: dict[int, dict[int, list[int]]] = {}  # broker -> topic -> its `keys` of that topic
        # broker -> topic -> whether a replica of it may leave the broker (`leaves`) / come to it (`enters`): the topic
        # constraint's (`counts`) `keeps` of the broker's count of it, kept until a replica of the topic moves to or
        # from the broker (it reads only that count and the constraint's fixed ranges). A move of t from s to d is
        # allowed where t may leave s and come to d (`TopicCounts.moves`). A step asks thousands of exchanges, nearly
        # all refused by it (issue 30's uniform-even at 10,000: 14 million asks, 99 % refused; zipf-giants-perbroker:
        # 13 of its free steps' 14 million refusals), of the same topics on the same brokers step after step. Dropped,
        # all of them, past `PLACED` answers
        self.counts = next((c for c in self.frozen.constraints if isinstance(c, TopicCounts)), None)
        self.leave: dict[int, _Keeps] = {}
        self.enter: dict[int, _Keeps] = {}
        self.topic_answers = [0]  # how many they keep (a list the `_Keeps` share: they hold no `SizeIndex`)
        # (i, s, d) -> `State.can_move(i, s, d)`, until the next move: the free steps ask each replica of a pair with
        # several of the other broker's (issue 30's zipf-giants-perbroker at 10,000: 19 million asks in 2,665 steps)
        self.can: dict[Change, bool] = {}
        # i -> (s, d) -> `State.placeable(i, s, d)`, until i moves (it reads only i's replica list): the free steps
        # ask it again step after step, of the same heavy broker's replicas and the same light brokers. Dropped, all
        # but i's, past `PLACED` answers (a million-partition plan would otherwise keep tens of millions)
        self.placed: dict[int, dict[tuple[int, int], bool]] = {}
        # src -> dst -> `cheap(src, dst)`, and the replicas they hold (at most `PLACED`)
        self.zero: dict[int, dict[int, tuple[dict[int, int], list[int], set[int], list]]] = {}
        self.zero_to: dict[int, set[int]] = {}  # dst -> the src of its `zero` entries (some dropped since)
        self.zero_kept = 0
        self.answers = 0
        # src -> `_cheap(st, src, dst)`'s part common to every dst (src's foreign replicas of known size, at 0) and, by
        # broker b, those of them b held before (-1 going to b): until a replica moves to or from src
        self.foreign: dict[int, tuple[dict[int, int], dict[int, list[int]]]] = {}
        self.vectors: tuple | None = None  # `arrays`, once asked

    def allows(self, changes: list[Change]) -> bool:
        """`frozen.allows(st, changes)`, but for the replica-count constraint where no broker's count changes (an
        exchange: `CountConstraint` keeps an unchanged count in its range), which it would allow: most candidates
        the steps check are exchanges, and most are refused by the other constraints (issue 30's case c: 4.3
        million refusals, 69,000 allowed)."""
        st = self.st
        neutral = len(changes) == 2 and changes[0][1] == changes[1][2] and changes[0][2] == changes[1][1]
        if neutral:
            (i, s, d), (j, _, _) = changes
            t, u = st.topic_of[i], st.topic_of[j]
            # an exchange across topics: the topic constraint refuses it where either topic's move leaves its range
            if t != u and self.counts is not None and not (self.moves(t, s, d) and self.moves(u, d, s)):
                return False
        for c in self.frozen.constraints:  # a loop, not all() over a generator
            if neutral and type(c) is CountConstraint:
                continue
            if not c.allows(st, changes):
                return False
        return True

    def moves(self, t: int, s: int, d: int) -> bool:
        """`TopicCounts.moves` of the topic constraint (`counts`, not None): t may leave s and come to d."""
        return self.leaves(s)[t] and self.enters(d)[t]

    def leaves(self, b: int) -> "_Keeps":
        """topic -> whether a replica of it may leave b (`counts` not None), answered on first ask and kept."""
        got = self.leave.get(b)
        if got is None:
            got = self.leave[b] = self._keeps(b, -1)
        return got

    def enters(self, b: int) -> "_Keeps":
        """topic -> whether a replica of it may come to b (`counts` not None), answered on first ask and kept."""
        got = self.enter.get(b)
        if got is None:
            got = self.enter[b] = self._keeps(b, 1)
        return got

    def _keeps(self, b: int, d: int) -> "_Keeps":
        if self.topic_answers[0] > PLACED:  # all dropped
            self.leave, self.enter, self.topic_answers[0] = {}, {}, 0
        assert self.counts is not None
        return _Keeps(self.counts, self.st, b, d, self.topic_answers)

    def placeable(self, i: int, s: int, d: int) -> bool:
        """`State.placeable(i, s, d)`, kept until i moves."""
        by_pair = self.placed.get(i)
        if by_pair is None:
            by_pair = self.placed[i] = {}
        ok = by_pair.get((s, d))
        if ok is None:
            ok = by_pair[(s, d)] = self.st.placeable(i, s, d)
            self.answers += 1
            if self.answers > PLACED:
                self.placed, self.answers = {i: by_pair}, len(by_pair)
        return ok

    def can_move(self, change: Change) -> bool:
        """`State.can_move(*change)`: `placeable` where no broker has a disk limit, else kept until the next move."""
        if not self.st.usable:
            return self.placeable(*change)
        ok = self.can.get(change)
        if ok is None:
            ok = self.can[change] = self.st.can_move(*change)
        return ok

    def cheap(self, src: int, dst: int) -> tuple[dict[int, int], list[int], set[int], list]:
        """`_cheap(st, src, dst)`, its replicas as keys, sorted, their topics (empty until `_Free.scan` first
        needs them: it fills the set) and their partitions, sizes and topics as arrays, with the topics as a list
        (empty until `_sift` fills the list): kept until a replica moves to or from src, or one that dst held before (it
        reads src's replicas and `State.departed[dst]`, in their sets' order, and the replicas' homes). A free step
        asks it of each light broker for the heavy one, and two thirds of zipf-giants-perbroker's steps have the heavy
        broker of the step before (most give replicas the plan moved there, which leave `departed` as it is)."""
        by_dst = self.zero.get(src)
        if by_dst is None:
            by_dst = self.zero[src] = {}
        got = by_dst.get(dst)
        if got is None:
            out = _cheap(self.st, src, dst)
            size, n, held = self.st.size, self.n, self.of(src)
            # every one of src's replicas of known size (a broker the plan filled: all moved there): its keys
            keys = held.copy() if len(out) == len(held) else sorted((size[j] or 0) * n + j for j in out)
            got = by_dst[dst] = out, keys, set(), []
            self.zero_to.setdefault(dst, set()).add(src)
            self.zero_kept += len(out)
            if self.zero_kept > PLACED:  # all but this answer dropped
                self.zero, self.zero_to, self.zero_kept = {src: {dst: got}}, {dst: {src}}, len(out)
        return got

    def arrays(self) -> "tuple[np.ndarray, np.ndarray, int] | None":
        """Every replica's size (0 where unknown) and topic as numpy arrays, and one more than the largest size,
        made on first ask; None where a key (`size × n + index`), or a size offset by `LIGHTS` such spans, might not
        fit in 63 bits, or where a broker's bytes might not be exact as a float (all of them together from 2**53: a
        pair's `top` is then compared as Python compares it)."""
        if self.vectors is None:
            import numpy as np

            st = self.st
            sizes = [s or 0 for s in st.size]
            span = max(sizes, default=0) + 1
            if span * max(self.n, LIGHTS) >= 2**62 or sum(sizes) >= 2**53:
                self.vectors = ()
            else:
                self.vectors = np.array(sizes, dtype=np.int64), np.array(st.topic_of, dtype=np.int64), span
        return self.vectors or None

    def mine(self, src: int, dst: int) -> dict[int, int]:
        """`_cheap(st, src, dst)`, from src's foreign replicas kept for every dst (`foreign`): a free step asks it of
        the heavy broker for each of 64 light ones."""
        got = self.foreign.get(src)
        if got is None:
            st = self.st
            home, size = st.home, st.size
            common = {i: 0 for i in st.foreign[src] if size[i] is not None}
            back: dict[int, list[int]] = {}
            for i in common:
                for b in home[i]:
                    back.setdefault(b, []).append(i)
            got = self.foreign[src] = common, back
        common, back = got
        out = common.copy()
        for i in back.get(dst, ()):
            out[i] = -1
        return _cheap(self.st, src, dst, out)

    def of(self, b: int) -> list[int]:
        keys = self.keys.get(b)
        if keys is None:
            size, n = self.st.size, self.n
            keys = self.keys[b] = sorted(s * n + i for i in self.st.where[b] if (s := size[i]) is not None)
        return keys

    def of_topic(self, b: int, t: int) -> list[int]:
        """b's replicas of known size of topic t, as keys, sorted."""
        topics = self.topics.get(b)
        if topics is None:
            topics = self.topics[b] = {}
            topic_of = self.st.topic_of
            for k in self.of(b):
                topics.setdefault(topic_of[k % self.n], []).append(k)
        return topics.get(t, [])

    def moved(self, i: int, src: int, dst: int) -> None:
        zero, home = self.zero, self.st.home[i]
        for b in (src, dst):  # their replicas changed
            for out, *_ in zero.pop(b, {}).values():
                self.zero_kept -= len(out)
            if b in home:  # the replicas b held before and holds no more changed (and the order they come in)
                for x in self.zero_to.pop(b, ()):
                    got = zero.get(x, {}).pop(b, None)
                    if got is not None:
                        self.zero_kept -= len(got[0])
        t = self.st.topic_of[i]
        for b in (src, dst):  # the topic's counts on them changed
            for kept in (self.leave.get(b), self.enter.get(b)):
                if kept is not None and kept.pop(t, None) is not None:
                    self.topic_answers[0] -= 1
        self.can.clear()
        self.placed.pop(i, None)
        self.foreign.pop(src, None)
        self.foreign.pop(dst, None)
        size = self.st.size[i]
        if size is None:
            return
        key = size * self.n + i
        for index in (self.keys.get(src), self.topics.get(src, {}).get(t)):
            if index is not None:
                del index[bisect.bisect_left(index, key)]
        if dst in self.keys:
            bisect.insort(self.keys[dst], key)
        if dst in self.topics:
            bisect.insort(self.topics[dst].setdefault(t, []), key)


class _Keeps(dict):
    """topic -> whether broker `b`'s count of it may change by `d` (-1: a replica leaves, 1: one comes), the topic
    constraint's `TopicCounts.keeps`, answered on the first ask (`__missing__`) and kept by `SizeIndex` until a
    replica of the topic moves to or from b. A hit is one dict lookup: the free steps ask millions. `answers`: the
    count of answers `SizeIndex` keeps, one more per answer."""

    __slots__ = ("counts", "st", "b", "d", "answers")

    def __init__(self, counts: TopicCounts, st: State, b: int, d: int, answers: list[int]):
        super().__init__()
        self.counts, self.st, self.b, self.d, self.answers = counts, st, b, d, answers

    def __missing__(self, t: int) -> bool:
        ok = self[t] = self.counts.keeps(self.st, self.b, t, self.d)
        self.answers[0] += 1
        return ok


class _Heavy:
    """The heavy broker of a step: its replicas of known size (`SizeIndex` keys, smallest first), the positions of
    those the plan moved there (a move off costs no copy), and the brokers holding a replica it held before."""

    def __init__(self, st: State, heavy: int, sizes: SizeIndex, giant: tuple[float, float] | None = None):
        n = sizes.n
        self.broker, self.index, self.keys = heavy, sizes, sizes.of(heavy)
        # where it holds replicas larger than the limit, (the limit, its ceiling) (`giants`): those replicas stay, and
        # it is held to the ceiling
        self.limit: float | None = None if giant is None else giant[0]
        self.ceiling: float | None = None if giant is None else giant[1]
        moved_in = (
            bisect.bisect_left(self.keys, s * n + i) for i in st.foreign[heavy] if (s := st.size[i]) is not None
        )
        self.foreign = sorted(moved_in)
        # replica -> rack -> whether it may move from the heavy broker to a broker of that rack that may take
        # replicas and does not hold it (`may_go`: `State.rack_placeable` reads only the replica list and the rack):
        # a step asks it of up to 64 light brokers on a few racks (issue 30: 18 million asks at 10,000 partitions).
        # The lists change only by the goal's moves: `_fill` mends the entries of those it moves (`moved`).
        self.placed: dict[int, dict[str | None, bool]] = {}
        # rack -> the positions in `keys` of the replicas that may move to a broker of that rack (taking replicas,
        # not holding them: `State.rack_placeable`), in order: on racks of different sizes most replicas may not
        # (rack safety), and only those a scan need look at (`rack_positions` says when they are made; `moved` keeps
        # them current)
        self.to_rack: dict[str | None, list[int]] = {}
        self.visits: dict[str | None, int] = {}  # rack -> the replicas scans for it looked at without them
        # broker -> the largest replica it holds that the heavy broker held before (taking it back undoes a copy)
        self.back: dict[int, int] = {}
        for j in st.departed[heavy]:
            for b in st.reps[j]:
                self.back[b] = max(self.back.get(b, 0), st.sz(j))

    def may_go(self, st: State, i: int, rack: str | None) -> bool:
        """`State.rack_placeable(i, heavy, rack)`, kept in `placed`."""
        by_rack = self.placed.get(i)
        if by_rack is None:
            by_rack = self.placed[i] = {}
        ok = by_rack.get(rack)
        if ok is None:
            ok = by_rack[rack] = st.rack_placeable(i, self.broker, rack)
        return ok

    def rack_positions(self, st: State, rack: str | None) -> list[int] | None:
        """The positions in `keys` of the replicas that may move to a broker of `rack` (`to_rack`); their answers are
        `placed`'s for that rack too. Made once the scans for the rack have looked at as many replicas without them as
        making them looks at (`visits`): where few are refused, or the scans look at a few, they would cost more than
        they save (issue-a: 7 % of its CPU made every time); None until then. None for the heavy broker's own rack and
        without racks (every replica but the fixed ones may move there: none to skip; racks balanced apart,
        `State.groups`, ask only these)."""
        if not st.n_racks or rack == st.rack_of.get(self.broker):
            return None
        found = self.to_rack.get(rack)
        if found is None:
            if self.visits.get(rack, 0) < len(self.keys):
                return None
            n = self.index.n
            found = self.to_rack[rack] = [p for p, k in enumerate(self.keys) if self.may_go(st, k % n, rack)]
        return found

    def moved(self, st: State, i: int) -> None:
        """Partition i's list changed by a move between two other brokers: its answers again (it may still be here)."""
        self.placed.pop(i, None)
        s = st.size[i]
        if not self.to_rack or s is None:
            return
        key = s * self.index.n + i
        p = bisect.bisect_left(self.keys, key)
        if p == len(self.keys) or self.keys[p] != key:
            return
        for rack, found in self.to_rack.items():
            k = bisect.bisect_left(found, p)
            there = k < len(found) and found[k] == p
            ok = self.may_go(st, i, rack)
            if there and not ok:
                del found[k]
            elif ok and not there:
                found.insert(k, p)


class _Pair:
    """The candidates between the heavy broker and one light broker, offered to the step's best (`best[0]`: the key
    and changes of the best so far) in the order of a full scan: the heavy broker's replicas smallest first, each as
    a single move and as exchanges for the smallest of the light broker's replicas (that may move to the heavy one)
    it could swap for, an exchange ending the replica's turn once taken.

    A replica whose every candidate is worse than the best so far changes nothing in that scan (the best only gets
    better), so the scan skips the replicas that copy a new replica to the light broker and leave a replica the heavy
    broker held before (nearly all of them) while their size rules them out: below the smallest size whose
    candidates could beat the best, or above the largest. The others (moved to the heavy broker by the plan, or held
    by the light broker before) are always looked at."""

    def __init__(
        self,
        goal: ByteGoal,
        st: State,
        frozen: Frozen,
        heavy: _Heavy,
        light: int,
        limit: float,
        best: list,
    ):
        self.goal, self.st, self.frozen, self.heavy, self.light, self.best = goal, st, frozen, heavy, light, best
        h = heavy.broker
        self.gap = st.bytes[h] - st.bytes[light]
        self.want = st.bytes[h] - (limit if heavy.ceiling is None else heavy.ceiling)
        self.room = limit - st.bytes[light]
        self.top = min(self.room, self.gap - 1)
        self.sizes = heavy.index
        self.n = self.sizes.n
        self.theirs = self.sizes.of(light)  # the light broker's replicas of known size, as `SizeIndex` keys
        self.s_min = self.theirs[0] // self.n if self.theirs else 0
        self.movable: dict[int, bool] = {}  # j -> whether j may move from the light broker to the heavy one
        self.open = light in st.target_set and light not in st.closed  # it may take replicas
        self.rack = st.rack_of.get(light)
        self.topics = self.sizes.counts
        if st.usable:  # a move that does not fit records the broker as full: check every one, as a full sort would
            for k in self.theirs:
                self._may(k % self.n)
        # no single move between the two passes the replica-count constraint (it looks at the brokers only)
        self.single = all(c.allows(st, [(-1, h, light)]) for c in frozen.constraints if isinstance(c, CountConstraint))
        # the least copies taking one of its replicas to the heavy broker may cost: -1 for one the heavy broker held
        # before (and the light broker not), 0 for one the plan moved to the light broker
        self.min_back = -1 if light in heavy.back else 0 if st.foreign[light] else 1
        # the least copies a candidate's change back (none for a single move) may add
        self.least_back = min(0, self.min_back) if self.single else self.min_back

    def _may(self, j: int) -> bool:
        ok = self.movable.get(j)
        if ok is None:
            ok = self.movable[j] = self.st.can_move(j, self.light, self.heavy.broker)
        return ok

    def _from(self, p: int, most: int, keys: list[int] | None = None) -> Iterator[tuple[int, int]]:
        """(size, j) of the first `most` of the light broker's replicas (or those of `keys`, `SizeIndex` keys of some of
        them) from position p on that may move to the heavy one, smallest first."""
        keys = self.theirs if keys is None else keys
        n, found = self.n, 0
        for x in range(p, len(keys)):
            if found == most:
                return
            if self._may(keys[x] % n):
                found += 1
                yield divmod(keys[x], n)

    def _inside(self) -> bool:
        """Whether the best so far brings the heavy broker within the limit without lifting the light one above it."""
        return self.best[0] is not None and not self.best[0][0][0]

    def scan(self) -> None:
        if self._inside() and self.want > self.room:
            return  # nothing between these two lands inside the limits, and the best does: none is better
        keys, n = self.heavy.keys, self.n
        # the heavy broker's replicas up to the limit where it holds larger ones (`giants`: they stay)
        end = len(keys) if self.heavy.limit is None else _first(keys, math.floor(self.heavy.limit) + 1, n)
        if self.st.usable:
            for k in keys[:end]:
                self._entry(*divmod(k, n))
            return
        held_before = self._held_before()
        foreign, best = self.heavy.foreign, self.best
        # an exchange's replica going to the light broker costs -1 copy at the least where the light broker held it
        # before, 0 where the plan moved it to the heavy one, else 1: where the best lands inside the limits with
        # fewer copies than any candidate here costs, none is better (the key's copies come before its bytes)
        least_out = -1 if held_before else 0 if foreign else 1
        if self._inside() and best[0][0][1] < least_out + self.least_back:
            return
        if not self.open:
            return  # it takes no replica: no candidate (`_can_move`)
        # where kept, only the replicas that may move to the light broker's rack: a candidate of any other changes
        # nothing (`_entry` returns at `_can_move`, every check before it only reads), so the scan goes from one of
        # those to the next
        found = self.heavy.rack_positions(self.st, self.rack)  # None: every one
        # the positions always looked at: the replicas the plan moved to the heavy broker or the light one held before
        always = sorted(set(foreign).union(held_before)) if held_before else foreign
        if always and found is not None:
            mine = set(found)
            always = [p for p in always if p in mine]
        last, many = len(always), 0 if found is None else len(found)
        pos = 0
        seen: object = self  # the best the bounds were computed for (none yet: `self` stands for "not computed")
        cut_at = cut_end = start_at = 0
        entry, bisect_left = self._entry, bisect.bisect_left
        visits = 0
        while pos < end:
            if best[0] is not seen:  # the bounds change only when the best does
                seen = best[0]
                low, high, low_any = self._bounds()
                cut_at = _first(keys, low, n)
                # the others of size up to `high` only: above it, none beats the best
                cut_end = _first(keys, high if math.isinf(high) else math.floor(high) + 1, n)
                start_at = _first(keys, low_any, n)
            if found is None:
                cut = max(pos, cut_at)
                if cut >= cut_end:
                    cut = end
            else:
                c = bisect_left(found, max(pos, cut_at))
                cut = found[c] if c < many and found[c] < cut_end else end
            k = bisect_left(always, max(pos, start_at))
            pos = min(cut, always[k]) if k < last else cut
            if pos >= end:
                break
            visits += 1
            entry(*divmod(keys[pos], n))
            pos += 1
        if found is None:
            self.heavy.visits[self.rack] = self.heavy.visits.get(self.rack, 0) + visits

    def _held_before(self) -> list[int]:
        """Positions of the heavy broker's replicas that the light broker held before the plan."""
        st, keys, n = self.st, self.heavy.keys, self.n
        mine = st.returning(self.heavy.broker, self.light)
        return sorted(bisect.bisect_left(keys, s * n + i) for i in mine if (s := st.size[i]) is not None)

    def _bounds(self) -> tuple[float, float, float]:
        """The sizes a replica needs for any of its candidates to beat the best so far: (smallest, largest) for one
        that copies a replica to the light broker and leaves one the heavy broker held before (its move costs one copy
        and copies its size; an exchange costs that plus `min_back`, and copies at least its size less the largest
        replica it takes back to the heavy broker), and the smallest for any replica (a candidate moves at most its
        size less the light broker's smallest replica)."""
        best = self.best[0]
        if best is None:
            return -math.inf, math.inf, -math.inf
        key, below = best[0], min(0, self.s_min)
        inside = self.want + below  # below it, neither a move nor an exchange lands inside the limits
        if not key[0]:  # the best lands inside the limits: so must a better one, with no more copies and bytes
            cost = 1 + min(0, self.min_back)
            if key[1] < cost:
                return math.inf, -math.inf, inside
            back = self.heavy.back.get(self.light, 0)
            return inside, key[2] - below + back if key[1] == cost else math.inf, inside
        rate = -key[1]
        low, any_low = self._ratio_floor(rate), rate + below - 1 - abs(rate) * 1e-9
        if self.want <= self.room:  # a candidate inside the limits beats the best
            low, any_low = min(low, inside), min(any_low, inside)
        return low, math.inf, any_low

    def _ratio_floor(self, rate: float) -> float:
        """The smallest size whose move or exchanges could move `rate` bytes per copy (less a margin for rounding),
        for a replica whose move costs one copy: an exchange costs at least `1 + min_back` and moves at most its size
        less the light broker's smallest replica, and at most `top`."""
        floors = [rate] if self.single and self.st.allowed(1) else []
        per = max(1, 1 + self.min_back)
        if self.theirs and self.top / per >= rate * (1 - 1e-9):
            floors.append(self.s_min + rate * per)
        low = min(floors, default=math.inf)
        return low - 1 - abs(low) * 1e-9 if low < math.inf else low

    def _can_move(self, i: int) -> bool:
        """`st.can_move(i, heavy, light)`, its answer for the light broker's rack kept (`_Heavy.may_go`: once the
        light broker takes replicas and does not hold i, `State.placeable` asks only its rack)."""
        st, light = self.st, self.light
        if not self.open or light in st.reps[i]:
            return False
        return self.heavy.may_go(st, i, self.rack) and (light not in st.usable or st.fits(i, light))

    def _entry(self, si: int, i: int) -> None:
        """Replica i of the heavy broker: its move, then its exchanges (as the full scan offers them)."""
        st, heavy, light, want, room = self.st, self.heavy.broker, self.light, self.want, self.room
        best = self.best[0]
        if best is not None and not best[0][0] and not st.usable:  # the best lands inside the limits: a better
            home = st.home[i]  # candidate has no more copies (`State.cost` written out)
            if best[0][1] < (light not in home) - (heavy not in home) + self.least_back:
                return
        # exchanges: j as small as possible with si - sj between want and min(room, gap - 1)
        theirs, n, movable = self.theirs, self.n, self.movable
        p = bisect.bisect_left(theirs, math.ceil(si - self.top) * n)
        if self._inside() and not want <= si <= room:
            first = next(self._from(p, 1), None)
            if first is None or not first[0] < si or si - first[0] < want:
                return  # neither the move nor an exchange could land inside the limits: not better
        if not self._can_move(i):
            return
        # where the topic ranges refuse i's topic leaving the heavy broker for the light one, they refuse the move and
        # every exchange for a replica of another topic (its counts change as the move's do): none is offered
        # (`offer` would refuse it; issue 30's case c: millions of candidates, each keyed before being refused)
        t, topics, topic_of = st.topic_of[i], self.topics, st.topic_of
        alone = topics is None or self.sizes.moves(t, heavy, light)
        if self.single and 0 < si < self.gap and alone:
            self.offer([(i, heavy, light)], si)
        # the fewest bytes a better exchange moves while the best stays (an accepted one ends the turn): one inside
        # the limits moves at least `want`, one outside at least the best's bytes per copy (it costs at least 1)
        best = self.best[0]
        least = -math.inf if best is None else want if not best[0][0] else min(want, -best[0][1])
        # the first 6 of the light broker's replicas from p on that may move (`_from`, written out: the hot path); an
        # exchange for one of another topic whose move the topic ranges refuse is not offered (`offer` would refuse it)
        found, end, can_move, moves = 0, len(theirs), st.can_move, self.sizes.moves
        while found < 6 and p < end:
            key = theirs[p]
            p += 1
            j = key % n
            ok = movable.get(j)
            if ok is None:
                ok = movable[j] = can_move(j, light, heavy)
            if ok:
                found += 1
                sj = key // n
                if sj >= si or (
                    si - sj >= least
                    and ((u := topic_of[j]) == t or (alone and (topics is None or moves(u, light, heavy))))
                    and self.offer([(i, heavy, light), (j, light, heavy)], si - sj)
                ):
                    return
        # an exchange within one topic changes no topic's counts: the earlier goals' constraints rarely refuse it
        mine = self.sizes.of_topic(light, t)
        for sj, j in self._from(bisect.bisect_left(mine, math.ceil(si - self.top) * self.n), 2, mine):
            if sj >= si or (si - sj >= least and self.offer([(i, heavy, light), (j, light, heavy)], si - sj)):
                break

    def offer(self, changes: list[Change], delta: int) -> bool:
        """Keep `changes` if better than the best and allowed; whether it was allowed (None: not better)."""
        st, best = self.st, self.best
        inside = self.want <= delta <= self.room
        if best[0] is not None:
            top = best[0][0]
            if not top[0] and not inside:
                return False  # its key starts with True: not better than a change inside the limits
            if top[0] and not inside:  # both outside: compare the bytes moved per copy before building the key
                home = st.home
                cost = 0
                for i, s, d in changes:
                    h = home[i]
                    cost += (d not in h) - (s not in h)
                if -delta / max(1, cost) > top[1]:
                    return False
        key = self.goal._key(st, changes, delta, self.want, self.room)
        if best[0] is not None and key >= best[0][0]:
            return False
        cost = sum(st.cost(i, s, d) for i, s, d in changes)
        if st.allowed(max(0, cost)) and self.sizes.allows(changes):
            best[0] = (key, changes)
            return True
        return False


def _free_step(
    st: State,
    frozen: Frozen,
    sizes: SizeIndex,
    heavy: int,
    lights: Sequence[int],
    limit: float,
    ceiling: float | None = None,
) -> list[Change] | None:
    """The best change between the heavy broker and any of `lights` that copies no more replicas than the plan does
    (`_Free`), if any: fewest copies (taking some back first), then one that lands inside the limits (then the fewest
    bytes copied), else the fewest bytes copied per byte moved, then the most bytes moved. `ceiling`: as `_step`'s."""
    best: list = [None]  # (key, changes)
    frees = [_Free(st, frozen, sizes, heavy, light, limit, best, ceiling) for light in lights]
    _sift(frees)
    for free in frees:
        free.scan()
    return best[0][1] if best[0] else None


def _sift(frees: Sequence[_Free]) -> None:
    """Where every check only reads (`_Free.topics`) and the pairs have windows enough (`VECTOR_WINDOWS`): each
    pair's items (`_Free.items`), those of mine whose windows `windows.hopeful` finds may hold a change the topic ranges
    allow (with those going home), found for all the pairs at once. Their scans make no move, so what is asked here
    holds for them (`_Free.mine` kept)."""
    todo = [f for f in frees if f.top > 0 and f.topics is not None]
    if not todo:
        return
    sizes = todo[0].sizes
    for f in todo:
        f.mine = sizes.mine(f.heavy, f.light)
    rows = sum(len(f.mine or ()) for f in todo)
    arrays = sizes.arrays()
    if rows < VECTOR_WINDOWS or arrays is None:
        return
    import numpy as np

    size_of, topic_of, span = arrays
    topic = sizes.st.topic_of
    ids: list[int] = []
    costs: list[int] = []
    # per row, whether the topic ranges let its topic leave the heavy broker and come to the light one; the same for
    # each of theirs the other way (`_Free.topics`)
    mine_out: list[bool] = []
    mine_in: list[bool] = []
    theirs_out: list[bool] = []
    theirs_in: list[bool] = []
    counts, runs, lens, tops = [], [], [], []
    for f in todo:
        mine = f.mine
        assert mine is not None and f.topics is not None
        _, order, _, kept = sizes.cheap(f.light, f.heavy)
        if not kept:  # the light broker's side as arrays, kept with `order`: partition, size, topic
            keys = np.array(order, dtype=np.int64)
            js = keys % sizes.n
            kept += [js, keys // sizes.n, topic_of[js], topic_of[js].tolist()]
        out_h, in_l, out_l, in_h = f.topics
        ids.extend(mine)
        costs.extend(mine.values())
        tl = list(map(topic.__getitem__, mine))
        mine_out.extend(map(out_h.__getitem__, tl))
        mine_in.extend(map(in_l.__getitem__, tl))
        theirs_out.extend(map(out_l.__getitem__, kept[3]))
        theirs_in.extend(map(in_h.__getitem__, kept[3]))
        counts.append(len(mine))
        runs.append(kept)
        lens.append(len(order))
        tops.append(f.top)
    pair = np.repeat(np.arange(len(todo)), counts)
    ids_a, costs_a = np.array(ids, dtype=np.int64), np.array(costs, dtype=np.int64)
    sj = np.concatenate([r[1] for r in runs])
    placed = np.repeat(np.arange(len(todo), dtype=np.int64) * span, lens) + sj
    theirs = placed, np.concatenate([r[0] for r in runs]), sj, np.concatenate([r[2] for r in runs])
    hope = hopeful(
        pair,
        ids_a,
        size_of[ids_a],
        topic_of[ids_a],
        np.array(mine_out, dtype=bool) & np.array(mine_in, dtype=bool),
        costs_a < 0,
        np.array(tops, dtype=np.float64),
        span,
        (*theirs, np.array(theirs_out, dtype=bool) & np.array(theirs_in, dtype=bool)),
        np.cumsum(lens),
    )
    kept_rows = np.flatnonzero(hope)
    bounds = np.searchsorted(kept_rows, np.cumsum([0] + counts)).tolist()
    chosen, their_costs = ids_a[kept_rows].tolist(), costs_a[kept_rows].tolist()
    for r, f in enumerate(todo):
        f.items = list(zip(chosen[bounds[r] : bounds[r + 1]], their_costs[bounds[r] : bounds[r + 1]]))


class _Free:
    """The changes between the heavy broker and one light broker that copy no replica the plan does not copy already:
    a replica the plan moved there going on elsewhere, or back to a broker that held it (a copy taken back), alone or
    exchanged for one of the light broker's; or a replica leaving its home broker while one going back home pays for
    its copy. Each moves bytes from the heavy broker without taking the light one above the limit or past it (so the
    bytes above the limit only fall, step by step)."""

    TRIES = 4  # per replica, the exchanges (the best first) checked against the constraints
    BACK = 16  # the same for a replica going home (few of them)

    def __init__(
        self,
        st: State,
        frozen: Frozen,
        sizes: SizeIndex,
        heavy: int,
        light: int,
        limit: float,
        best: list,
        ceiling: float | None = None,
    ):
        self.st, self.frozen, self.sizes, self.heavy, self.light, self.best = st, frozen, sizes, heavy, light, best
        self.pair = heavy, light
        # `ceiling`: the heavy broker's where it holds replicas larger than the limit (`giants`). No change here moves
        # one: each leaves the light broker at or below the limit (`top`), which a broker holding one is not
        self.want = st.bytes[heavy] - (limit if ceiling is None else ceiling)
        self.room = limit - st.bytes[light]
        self.top = min(self.room, st.bytes[heavy] - st.bytes[light] - 1)
        counts = (c for c in frozen.constraints if isinstance(c, CountConstraint))
        self.single = all(c.allows(st, [(-1, heavy, light)]) for c in counts)
        # where the topic ranges refuse moves and every check only reads (no disk limits): topic -> whether a replica
        # of it may leave / come to either broker (`SizeIndex.leaves`, `enters`), else None
        self.topics = None
        if not st.usable and sizes.counts is not None:
            self.topics = sizes.leaves(heavy), sizes.enters(light), sizes.leaves(light), sizes.enters(heavy)
        self.mine: dict[int, int] | None = None  # `SizeIndex.mine(heavy, light)`, where `_sift` asked it
        self.items: list[tuple[int, int]] | None = None  # of mine, those whose windows `_sift` kept, and their costs

    def scan(self) -> None:
        if self.top <= 0:
            return
        st, h, l, n = self.st, self.heavy, self.light, self.sizes.n
        sizes = self.sizes
        mine = sizes.mine(h, l) if self.mine is None else self.mine
        theirs, order, present, _ = sizes.cheap(l, h)
        if self.single:
            for i in mine:
                self._move(i)
        # each of mine with its cost: all of them, or those `_sift` kept
        items: Iterable[tuple[int, int]] = mine.items() if self.items is None else self.items
        # for each of mine, the light broker's smallest replica (of those copying none, or of all of them where a
        # copy taken back pays) that leaves at most `top` bytes moved: the most bytes moved
        # the fewest copies one of theirs (of those copying none; of all of them: the others copy one) adds going to
        # the heavy broker: an exchange costing more copies than the best so far is not better (copies come first)
        best, least, least_any = self.best, min(theirs.values(), default=0), min(theirs.values(), default=1)
        # where the topic ranges refuse i's topic leaving h for l and no replica of `order` is of that topic, no
        # window of it holds one: `_exchanges` would return at once (zipf-giants-perbroker at 10,000: 5.9 of its
        # 10.6 million calls), so it is not called (`present`: the topics of `order`, made at the first such i)
        topic_of, refusing = st.topic_of, self.topics is not None
        out_h, in_l = self.topics[:2] if self.topics is not None else ({}, {})
        for i, c in items:
            if best[0] is None or c + least <= best[0][0][0]:
                t = topic_of[i]
                if not refusing or (alone := out_h[t] and in_l[t]):
                    self._exchanges(i, order, self.TRIES if c == 0 else self.BACK, True)
                elif t in (present or self._topics(order, present)):
                    self._exchanges(i, order, self.TRIES if c == 0 else self.BACK, alone)
            if c < 0 and (best[0] is None or c + least_any <= best[0][0][0]):
                self._exchanges(i, sizes.of(l), self.BACK)
        # for each of theirs going home, the heavy broker's replicas moving the most and the fewest bytes inside
        keys = sizes.of(h)
        for j in (j for j, c in theirs.items() if c < 0):
            sj = st.sz(j)
            down = bisect.bisect_right(keys, math.floor(sj + self.top) * n + n - 1)
            self._partners(j, (keys[x] for x in range(down - 1, max(-1, down - 1 - self.BACK), -1)))
            up = bisect.bisect_left(keys, math.ceil(sj + self.want) * n)
            self._partners(j, (keys[x] for x in range(up, min(len(keys), up + self.BACK))))

    def _topics(self, order: list[int], present: set[int]) -> set[int]:
        """The topics of `order` (keys of the light broker's replicas): `present`, filled at the first ask."""
        if not present and order:
            topic_of, n = self.st.topic_of, self.sizes.n
            present.update(topic_of[k % n] for k in order)
        return present

    def _exchanges(self, i: int, keys: list[int], tries: int, alone: bool | None = None) -> None:
        """i for the first of the light broker's replicas of `keys` (`SizeIndex` keys, sorted) that moves at most
        `top` bytes and is allowed, trying a few. `alone`: whether the topic ranges let i's topic go from the heavy
        broker to the light one (True too where they refuse nothing), where the caller knows."""
        sizes, st = self.sizes, self.st
        if not self._placeable(i):
            return  # every exchange of i is refused (`_keep`): none changes the best
        n, si = sizes.n, st.size[i] or 0
        k = bisect.bisect_left(keys, math.ceil(si - self.top) * n)
        window = keys[k : k + tries]
        t = st.topic_of[i]
        if alone is None:
            alone = self.topics is None or (self.topics[0][t] and self.topics[1][t])
        if not alone:
            # the topic ranges refuse i's topic leaving h for l, so every exchange of i for a replica of another topic
            # (`_refused`): without one of its own topic among the tries none is taken, and where
            # every check only reads (no disk limits), a scan that takes none changes nothing
            topic_of = st.topic_of
            for key in window:
                if topic_of[key % n] == t:
                    break
            else:
                return
        for key in window:
            j = key % n
            if key // n >= si or (j != i and self._swap(i, j) is not False):
                break

    def _partners(self, j: int, partners: Iterator[int]) -> None:
        st, sizes, n = self.st, self.sizes, self.sizes.n
        keys: Iterable[int] = partners
        if not st.usable:
            if not sizes.placeable(j, self.light, self.heavy):
                return  # every exchange for j is refused (`_keep`; under disk limits it asks i's room first, which
                # records a full broker)
            if self.topics is not None and not (self.topics[2][u := st.topic_of[j]] and self.topics[3][u]):
                # as in `_exchanges`: only a partner of j's own topic could be taken
                keys = list(keys)
                topic_of = st.topic_of
                if all(topic_of[key % n] != u for key in keys):
                    return
        for key in keys:
            if self._swap(key % n, j) is not False:
                break

    def _move(self, i: int) -> bool | None:
        """i moving from the heavy broker to the light one, kept if better and allowed (`_keep`): True; False when
        refused (asked first, where every check only reads); None when not better (or moving no bytes, or too many,
        or copying one more). Written out: the floor's free steps offer each replica of the donor's that the plan
        moved there (lognormal-uneven at 100,000: an eighth of the plan's time went to those offers)."""
        st, h, l = self.st, self.heavy, self.light
        si = st.size[i] or 0
        if not 0 < si <= self.top:
            return None
        at = st.home[i]
        c = (l not in at) - (h not in at)
        if c > 0:
            return None
        if self.topics is not None:
            # where every check only reads, the refusals asked first, from the pair's kept answers: most single moves
            # the floor's free steps offer are refused (lognormal-uneven at 100,000: 2.1 million, the best so far
            # mostly none, so each was keyed before: 708,000 by the topic ranges, the rest by the replica lists)
            t = st.topic_of[i]
            if not (self.topics[0][t] and self.topics[1][t]) or not self._placeable(i):
                return False
        return self._keep([(i, h, l)], si, c, c * si)

    def _placeable(self, i: int) -> bool:
        """`SizeIndex.placeable(i, heavy, light)`, its kept answer read without building the pair again."""
        kept = self.sizes.placed.get(i)
        ok = None if kept is None else kept.get(self.pair)
        return self.sizes.placeable(i, self.heavy, self.light) if ok is None else ok

    def _swap(self, i: int, j: int) -> bool | None:
        """`_move`, for i (on the heavy broker) exchanged for j (on the light one): nearly every candidate
        of the free steps is one (issue 30's zipf-giants-perbroker at 10,000: 25 million)."""
        size, home, h, l = self.st.size, self.st.home, self.heavy, self.light
        si, sj = size[i] or 0, size[j] or 0
        delta = si - sj
        if not 0 < delta <= self.top:
            return None
        at_i, at_j = home[i], home[j]
        ci, cj = (l not in at_i) - (h not in at_i), (h not in at_j) - (l not in at_j)
        if ci + cj > 0:
            return None
        return self._keep([(i, h, l), (j, l, h)], delta, ci + cj, ci * si + cj * sj)

    def _keep(self, changes: list[Change], delta: int, cost: int, copied: int) -> bool | None:
        """Keep `changes` (moving `delta` bytes at `cost` copies and `copied` bytes) if better than the
        best so far and allowed."""
        outside = self.want > delta
        rate = copied / delta if outside else copied
        best = self.best
        if best[0] is not None:  # `key >= best[0][0]` written out, the key built only where it is better
            top = best[0][0]
            if cost != top[0]:
                worse = cost > top[0]
            elif outside != top[1]:
                worse = outside > top[1]
            elif rate != top[2]:
                worse = rate > top[2]
            elif delta != -top[3]:
                worse = delta < -top[3]
            else:
                worse = tuple(changes) >= top[4]
            if worse:
                return None
        key = (cost, outside, rate, -delta, tuple(changes))
        if self.topics is not None and self._refused(changes):
            # asked first where every check only reads (without disk limits `can_move` records no full broker): the
            # topic ranges refuse nearly all (zipf-giants-perbroker at 10,000: 13 of 14 million refusals)
            return False
        sizes = self.sizes
        can_move = sizes.can_move
        for change in changes:  # a loop, not all() over a generator
            if not can_move(change):
                return False
        if sizes.allows(changes):
            best[0] = (key, changes)
            return True
        return False

    def _refused(self, changes: list[Change]) -> bool:
        """Whether the topic constraint refuses `changes` (`topics` not None; `SizeIndex.allows` answers False for
        it), read from the pair's kept answers: an exchange across topics where the topic ranges do not let both go
        (a single move asked that in `_move`)."""
        if len(changes) != 2:
            return False
        (i, s, d), (j, s2, d2) = changes
        if s != d2 or d != s2:
            return False
        t, u = self.st.topic_of[i], self.st.topic_of[j]
        if t == u:
            return False
        assert self.topics is not None
        out_h, in_l, out_l, in_h = self.topics
        if s == self.heavy:
            return not (out_h[t] and in_l[t] and out_l[u] and in_h[u])
        return not (out_l[t] and in_h[t] and out_h[u] and in_l[u])


def _cheap(st: State, src: int, dst: int, out: dict[int, int] | None = None) -> dict[int, int]:
    """src's replicas of known size whose move to dst copies none: replica -> its cost (0, or -1 going home). `out`:
    its foreign ones with their costs, where known (`SizeIndex.mine`)."""
    home, size = st.home, st.size  # `State.cost` and `State.known` written out
    # `State.cost(i, src, dst)` is (dst not in home) - (src not in home): for one the plan moved to src (src not its
    # home) -1 where dst held it before, else 0; for one dst held before (and holds no more) -1 where it is foreign
    # on src (met first, above), else 0: never above 0, so every one of known size, in that order
    if out is None:
        out = {i: -(dst in home[i]) for i in st.foreign[src] if size[i] is not None}
    for i in st.returning(src, dst):
        if i not in out and size[i] is not None:
            out[i] = 0
    return out


def _heaviest(
    st: State, order: list[tuple[int, int]], caps: dict[int, float], limit: float
) -> tuple[int, float] | None:
    """The broker furthest above its ceiling and that ceiling: the limit, or that of a broker holding replicas larger
    than the limit (`caps`, of `giants`; brokers not in `order`); among the others the most bytes, then the lowest
    id (`order`: (bytes, broker), sorted). None where every broker is within its ceiling."""
    over: list[tuple[float, int, float]] = []
    if order:
        heavy = order[bisect.bisect_left(order, (order[-1][0],))][1]  # the most bytes, then the lowest id
        if st.bytes[heavy] > limit:
            over.append((st.bytes[heavy] - limit, -heavy, limit))
    over.extend((st.bytes[b] - cap, -b, cap) for b, cap in caps.items() if st.bytes[b] > cap)
    if not over:
        return None
    _, b, cap = max(over)
    return -b, cap


def _first(keys: list[int], size: float, n: int) -> int:
    """The position of the first of `keys` (`SizeIndex` keys, sorted) whose size is at least `size`."""
    if size == -math.inf:
        return 0
    if size == math.inf:
        return len(keys)
    return bisect.bisect_left(keys, math.ceil(size) * n)


def _donors(order: list[tuple[int, int]], light: int, floor: float) -> list[int]:
    """The floor's donors: the 64 heaviest brokers of `order` ((bytes, broker), sorted) above the floor, heaviest
    first, but the light broker."""
    donors: list[int] = []
    for v, b in reversed(order):
        if len(donors) == LIGHTS or v <= floor:
            break
        if b != light:
            donors.append(b)
    return donors


def _make(st: State, step: Sequence[Change], order: list[tuple[int, int]], sizes: SizeIndex) -> None:
    """The step's moves made, `order` ((bytes, broker), sorted) and `sizes` kept current."""
    touched = {b for _, s, d in step for b in (s, d)}
    for b in touched:
        del order[bisect.bisect_left(order, (st.bytes[b], b))]
    for i, s, d in step:
        st.move(i, s, d)
        sizes.moved(i, s, d)
    for b in touched:
        bisect.insort(order, (st.bytes[b], b))


def _floor_step_bounds(st: State, donor: int, light: int, limit: float, floor: float) -> tuple[float, float, float]:
    """The floor's (want, room, top) for a change from `donor` to `light`: want = floor − the light broker's bytes;
    room = min(donor − floor, limit − light), so the donor stays at or above the floor and the light broker at or
    below the limit; top = the most a change may move, within the room and less than the gap between the two."""
    room = min(st.bytes[donor] - floor, limit - st.bytes[light])
    return floor - st.bytes[light], room, min(room, st.bytes[donor] - st.bytes[light] - 1)


class _FloorPair(_Pair):
    """`_Pair` for the floor: the donor (`heavy`) gives the light broker below the floor `want` = floor − its bytes;
    a change moves at most `room` = min(donor − floor, limit − light) (and less than the gap): the donor stays at or
    above the floor, the light broker at or below the limit. Candidates moving more are refused."""

    def __init__(
        self,
        goal: ByteGoal,
        st: State,
        frozen: Frozen,
        heavy: _Heavy,
        light: int,
        limit: float,
        best: list,
        floor: float,
    ):
        super().__init__(goal, st, frozen, heavy, light, limit, best)
        self.want, self.room, self.top = _floor_step_bounds(st, heavy.broker, light, limit, floor)

    def scan(self) -> None:
        if self.top > 0:
            super().scan()

    def offer(self, changes: list[Change], delta: int) -> bool:
        if delta > self.top:
            return False
        return super().offer(changes, delta)


class _FloorFree(_Free):
    """`_Free` for the floor: the donor (`heavy`) gives the light broker; `want` and `top` as `_FloorPair`'s."""

    def __init__(
        self,
        st: State,
        frozen: Frozen,
        sizes: SizeIndex,
        heavy: int,
        light: int,
        limit: float,
        best: list,
        floor: float,
    ):
        super().__init__(st, frozen, sizes, heavy, light, limit, best)
        self.want, self.room, self.top = _floor_step_bounds(st, heavy, light, limit, floor)
