"""Where do racks of different sizes force a topic wider than 1 over all target brokers? The rack geometry the
goals share: the target brokers per rack where racks differ in size (`uneven_racks`), the fewest and most replicas
rack safety lets one rack hold (`RackLimits`), and from them the least spread a rack forces on a topic when every
broker holds lo..hi replicas (`rack_gaps`), whether any topic is forced (`racks_force`), and the classes of brokers
a forced topic is balanced within, with the fewest and most of its replicas each can hold (`forced_classes`).
Pure: counts over a `State`, no moves."""

from __future__ import annotations

from planner.rebalance.goals.state import State


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
