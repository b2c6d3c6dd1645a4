"""Where do racks force the goals' figures: counts balanced per rack, or topics wider than 1 over all brokers?

The rack geometry the goals share, counts over a `State` that move nothing:
- `targets_of`: each target broker's replica-count target, per rack where every partition keeps one replica per rack;
- `uneven_racks`: the target brokers per rack where racks differ in size (else racks force no topic wider than 1);
- `RackLimits`, `rack_gaps`: the fewest and most replicas rack safety lets one rack hold, and from them the least
  spread a rack forces on a topic when every broker holds lo..hi replicas; `racks_force`: whether any topic is forced;
- `forced_classes`: the classes of brokers a forced topic is balanced within, each with the fewest and most of its
  replicas a rack-safe placement puts there (for `uneven`'s flows);
- `forced_topics` (`Forced`, `forced_in` by topic name): the topics racks force wider than 1 at the counts reached,
  each with its lower bound; `balanced_in`: the sets of brokers the topic goal balances each topic over;
  `spreads`, `spread`: a placement's topic figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Sequence

from planner.model import Cluster
from planner.rebalance.goals.state import State
from planner.rebalance.moves import count_targets


def rack_limits(st: State) -> RackLimits | None:
    """What `forced_classes` counts over the partitions, for several count ranges of one state; None where racks
    force nothing (`uneven_racks`)."""
    racks = uneven_racks(st)
    return None if racks is None else RackLimits(st, len(racks))


def forced_classes(
    st: State, lo: int, hi: int, limits: RackLimits | None = None
) -> dict[int, list[tuple[frozenset[int], int, int]]]:
    """Topic -> its classes (`forced_topics`' proof for brokers holding lo..hi each, over every topic, brokers
    balanced together), each with the fewest and most of the topic's replicas any rack-safe placement puts there.
    `limits`: `rack_limits` of this state (else counted here)."""
    racks = uneven_racks(st)
    if racks is None:
        return {}
    limits = limits or RackLimits(st, len(racks))
    n = len(st.targets)
    out: dict[int, list[tuple[frozenset[int], int, int]]] = {}
    for t in range(len(st.topic_names)):
        forcing = [k for k, gap in rack_gaps(limits, t, racks, n, lo, hi).items() if gap > 1]
        if not forcing:
            continue
        others = [k for k in racks if k not in forcing]
        groups = [[k] for k in forcing] + ([others] if others else [])
        least, most, total = limits.least[t], limits.most[t], limits.total[t]
        out[t] = []
        for ks in groups:
            inside, outside = len(ks), len(racks) - len(ks)
            low = max(least * inside, total - most * outside)
            high = min(most * inside, total - least * outside)
            out[t].append((frozenset(b for k in ks for b in racks[k]), low, high))
    return out


def racks_force(st: State, lo: int, hi: int) -> bool:
    """Whether racks of different sizes force some topic wider than 1 over all target brokers (`forced_topics`'
    proof, for every topic) in every rack-safe plan whose brokers hold lo..hi replicas each."""
    racks = uneven_racks(st)
    if racks is None:
        return False
    limits = RackLimits(st, len(racks))
    n = len(st.targets)
    return any(gap > 1 for t in range(len(st.topic_names)) for gap in rack_gaps(limits, t, racks, n, lo, hi).values())


def uneven_racks(st: State) -> dict[str | None, list[int]] | None:
    """The target brokers per rack where every one has a rack and racks differ in size; else None (racks then force
    no topic wider than 1)."""
    racks: dict[str | None, list[int]] = {}
    for b in st.targets:
        racks.setdefault(st.rack_of.get(b), []).append(b)
    return None if None in racks or len({len(m) for m in racks.values()}) < 2 else racks


def rack_gaps(limits: RackLimits, t: int, racks: dict, n: int, lo: int, hi: int) -> dict:
    """Rack -> the lower bound racks put on topic t's spread (`RackLimits.gap`), n target brokers holding lo..hi."""
    return {k: limits.gap(t, k, len(m), n - len(m), lo, hi) for k, m in racks.items()}


class RackLimits:
    """Per topic, the fewest and most replicas rack safety lets one rack hold (the same for every rack, but for the
    fixed partitions' replicas, counted per rack), and the same summed over all topics."""

    def __init__(self, st: State, n: int):
        topics = len(st.topic_names)
        self.least, self.most, self.total = [0] * topics, [0] * topics, [0] * topics
        self.fixed: dict[tuple[int, str | None], int] = {}  # (topic, rack) -> its fixed partitions' replicas there
        for i, r in enumerate(st.reps):
            t = st.topic_of[i]
            if i in st.fixed:
                for b in r:
                    if b in st.target_set:
                        key = (t, st.rack_of.get(b))
                        self.fixed[key] = self.fixed.get(key, 0) + 1
                        self.total[t] += 1
                continue
            f, d = len(r), st.distinct_racks(r)
            self.total[t] += f
            self.least[t] += 1 if f >= n and d >= n else 0
            self.most[t] += max(1, f - n + 1) if d >= min(f, n) else f - d + 1
        self.all_least, self.all_most = sum(self.least), sum(self.most)
        self.in_rack: dict[str | None, int] = {}
        for (_, k), c in self.fixed.items():
            self.in_rack[k] = self.in_rack.get(k, 0) + c

    def gap(self, t: int, k: str | None, m: int, rest: int, lo: int, hi: int) -> int:
        """The least spread of topic t that rack k (m brokers; `rest` target brokers outside) forces when every
        broker holds lo..hi replicas."""
        own = self.fixed.get((t, k), 0)
        t_least, t_most, total = self.least[t] + own, self.most[t] + own, self.total[t]
        others = self.in_rack.get(k, 0) - own
        low = max(t_least, m * lo - (self.all_most - self.most[t] + others))
        high = min(t_most, m * hi - (self.all_least - self.least[t] + others), total)
        return max(-(-low // m) - (total - low) // rest, -(-(total - high) // rest) - high // m)


def unsafe_of(st: State) -> list[tuple[int, int, list[int]]]:
    """Rack-unsafe partitions that may move and can be made rack-safe: (index, racks it lacks, brokers whose replica
    shares a rack with another replica of it). Those that cannot (too few of the racks they lack have a target broker
    that takes the copy: not closed, enough usable bytes) go to `st.unrepairable`."""
    n = st.n_racks
    st.unrepairable = []
    if not n:
        return []
    out = []
    rack = st.rack_of.get
    for i, r in enumerate(st.reps):
        if len(set(map(rack, r))) >= min(len(r), n) or i in st.fixed:
            continue  # rack-safe (most partitions: one set of racks each, no list)
        racks = [rack(b) for b in r]
        lacks = min(len(r), n) - len(set(racks))
        if (st.closed or st.usable) and len(_open_racks(st, i, set(racks))) < lacks:
            st.unrepairable.append(i)
            continue
        out.append((i, lacks, [b for b, k in zip(r, racks) if racks.count(k) > 1]))
    return out


def _open_racks(st: State, i: int, used: set) -> set:
    """The racks partition i does not use that have a target broker taking its copy (not closed, room for it)."""
    size = st.sz(i)
    return {
        st.rack_of.get(b)
        for b in st.targets
        if st.rack_of.get(b) not in used and b not in st.closed and (b not in st.usable or st.usable[b] >= size)
    }


def targets_of(st: State, repaired: bool = False) -> tuple[dict[int, int], dict[str, list[int]] | None]:
    """Per-broker replica-count targets. When every partition has one replica in each rack (RF == racks, all
    rack-safe, or about to be repaired when `repaired`: not those no move can repair), each rack holds exactly one
    replica of every partition, so the targets are balanced within each rack."""
    n = st.n_racks
    left = frozenset(st.unrepairable)  # unsafe, and no move can repair them
    if (
        n
        and st.reps
        and all(
            len(r) == n and (st.distinct_racks(r) == n or (repaired and i not in st.fixed and i not in left))
            for i, r in enumerate(st.reps)
        )
    ):
        by_rack: dict[str, list[int]] = {}
        for b in st.targets:
            by_rack.setdefault(st.rack_of[b] or "", []).append(b)
        target: dict[int, int] = {}
        for members in by_rack.values():
            target.update(count_targets(st.count, members, len(st.reps), st.closed))
        return target, by_rack
    return count_targets(st.count, st.targets, sum(len(r) for r in st.reps), st.closed), None


@dataclass(frozen=True)
class Forced:
    """A topic that racks of different sizes spread wider than 1 over all target brokers in every plan that keeps
    rack safety and the replica counts in the range the count goal reached: `bound`, the smallest spread such a plan
    can give it; `classes`, the brokers it is balanced within (each rack that forces it alone, the others together)."""

    bound: int
    classes: tuple[frozenset[int], ...]


def forced_topics(st: State) -> dict[int, Forced]:
    """Topics whose even spread over all target brokers racks of different sizes rule out (a proof per topic).

    With n racks among the targets, a rack-safe partition of replication factor f keeps at least min(1, f // n)
    (1 when f >= n) and at most max(1, f - n + 1) replicas in each rack; one left rack-unsafe keeps its d racks, so
    at most f - d + 1 in one rack; a fixed partition keeps its replicas. Each broker's replica count stays within
    [lo, hi], the count goal's range, so rack R (m brokers) holds at least m·lo and at most m·hi replicas in all:
    topic t then holds in R at least low = max(its minimum, m·lo − the others' maximum) and at most high =
    min(its maximum, m·hi − the others' minimum). Some broker of R holds ⌈low/m⌉ or more while some broker outside
    (N − m brokers, T − low replicas or fewer) holds ⌊(T − low)/(N − m)⌋ or fewer, and the same from `high`: the
    larger gap is a lower bound on t's spread. Where it is above 1 for some rack, t is forced: balanced within each
    such rack alone and over the other racks together (each rack alone when the brokers are balanced per rack
    already). Only with racks of different sizes and no cordoned target (else racks force no spread above 1 this
    way)."""
    racks = uneven_racks(st)
    if st.closed or racks is None:
        return {}
    # the placement itself is such a plan, so only a topic spread above 1 now can be forced
    wide = [t for t in range(len(st.topic_names)) if spread(st, t, st.target_set) > 1]
    if not wide:
        return {}
    limits = RackLimits(st, len(racks))
    lo, hi = min(st.count[b] for b in st.targets), max(st.count[b] for b in st.targets)
    out: dict[int, Forced] = {}
    for t in wide:
        gaps = rack_gaps(limits, t, racks, len(st.targets), lo, hi)
        forcing = [k for k, gap in gaps.items() if gap > 1]
        if forcing and None not in st.groups:  # balanced per rack already: each rack alone
            out[t] = Forced(max(gaps.values()), tuple(frozenset(m) for m in racks.values()))
        elif forcing:
            others = frozenset(b for k, m in racks.items() if k not in forcing for b in m)
            classes = tuple(frozenset(racks[k]) for k in forcing) + ((others,) if others else ())
            out[t] = Forced(max(gaps.values()), classes)
    return out


def balanced_in(st: State, wide: dict[int, Forced] | None = None) -> list[Sequence[frozenset[int]]]:
    """Per topic, the sets of brokers the topic goal balances it over: each group of brokers balanced together, or
    each class racks force it into (`wide`: `forced_topics` of the state, else found here)."""
    groups = [frozenset(m) for m in st.groups.values()]
    wide = forced_topics(st) if wide is None else wide
    return [wide[t].classes if t in wide else groups for t in range(len(st.topic_names))]


def spreads(st: State) -> list[tuple[int, int]]:
    """Per topic, its largest spread over the sets of brokers the topic goal balances it over (`balanced_in`), and
    its spread over all target brokers: the topic figures of a placement."""
    return [
        (max((spread(st, t, m) for m in where), default=0), spread(st, t, st.target_set))
        for t, where in enumerate(balanced_in(st))
    ]


def forced_in(cluster: Cluster, targets: Sequence[int]) -> dict[str, Forced]:
    """`forced_topics` of a placement over `targets` (what a plan's figures are checked against), by topic name."""
    st = State(cluster, list(cluster.partitions()), sorted(targets), ())
    by_rack = targets_of(st)[1]
    if by_rack:
        st.groups = dict(sorted(by_rack.items()))
    return {st.topic_names[t]: why for t, why in forced_topics(st).items()}


def spread(st: State, t: int, members: Collection[int]) -> int:
    lo, hi = st.topic_range(t, members, low=True)
    return hi - lo
