"""Which brokers of a group get each topic's slots, so that the most replicas stay where they are?

A topic with R replicas over the n brokers of a group ends with q = R // n on each and one more on r = R % n of them
(its *slots*). A broker ends with room for so many slots: its count target less the topics' floors, each slot of a
different topic, and where the targets leave ceilings to share, one more on `spare` brokers of the group's choice.
A slot on a broker holding more than q of the topic keeps a replica there that would otherwise leave: one move saved.

Every slot must be given, so the most moves saved is a minimum-cost flow of value Σ r: source → topic (r) → broker
(1 per topic; cost 0 where the slot saves a move, else 1) → sink (the broker's room), and 1 more per broker through a
shared node of capacity `spare` (`flow.Network.min_cost_flow`: the costs are 0 or 1, so there are few rounds). Pure.
"""

from __future__ import annotations

from typing import Callable, Collection, Hashable, Mapping, Sequence, TypeVar

from planner.rebalance.flow import Network

K = TypeVar("K", bound=Hashable)

# topic-broker pairs above which the exact flow is not built (callers bound it otherwise): about 3 s of flow there
# (1,000 topics x 1,000 brokers; 1M partitions have 17,538 x 2,100)
MOST_ARCS = 1_000_000


def best_slots(
    wants: Mapping[K, int],
    saving: Mapping[K, Sequence[int]],
    room: Mapping[int, int],
    spare: int = 0,
    within: Mapping[K, Collection[int]] | None = None,
    like: Mapping[K, Collection[int]] | None = None,
) -> dict[K, set[int]] | None:
    """topic -> the brokers of `room` (listed in order of preference) given its `wants[t]` slots, with the most
    slots on the brokers of `saving[t]` (a topic's own order of preference among them) of any such assignment, where
    a broker b takes at most `room[b]` slots, or one more for at most `spare` brokers. `within[t]`: the only brokers
    t's slots may go to (a key may be a topic's part, say its slots in one rack, of brokers no other part of the topic
    has). `like`: an assignment to stay closest to among those keeping the most (default: the first pass's). None when
    no assignment gives every slot, or the flow would have more than `MOST_ARCS` arcs."""
    brokers = list(room)
    topics = [t for t, w in wants.items() if w > 0]
    if len(topics) * len(brokers) > MOST_ARCS:
        return None
    if within is not None:
        saving = {t: [b for b in saving.get(t, ()) if t not in within or b in within[t]] for t in topics}
    first, load = _first(wants, saving, room, spare, topics)
    if like is not None:
        return _flow(wants, saving, room, spare, within, topics, first, load, like)
    quick = _fill(wants, room, spare, within or {}, topics, {t: set(s) for t, s in first.items()}, dict(load))
    if quick is not None and kept(quick, saving) == upper_limit(wants, saving, room, spare):
        return quick  # as many as the flow's two simple cuts allow: a maximum, in the order of preference
    best = _flow(wants, saving, room, spare, within, topics, first, load, like)
    if quick is not None and best is not None and kept(quick, saving) == kept(best, saving):
        return quick  # a maximum too, in the order of preference
    return best


def _flow(
    wants: Mapping[K, int],
    saving: Mapping[K, Sequence[int]],
    room: Mapping[int, int],
    spare: int,
    within: Mapping[K, Collection[int]] | None,
    topics: list[K],
    first: dict[K, set[int]],
    load: dict[int, int],
    like: Mapping[K, Collection[int]] | None,
) -> dict[K, set[int]] | None:
    """`best_slots`' flow. Of the assignments keeping the most, the one with the fewest slots outside `like`: a slot
    outside it costs 1 more, a slot that keeps nothing costs more than all those. Without `like`, the flow starts
    from the slots `first` gives (on saving brokers only, so at no cost: the least for so much flow)."""
    brokers = list(room)
    net = Network(2 + len(topics) + len(brokers) + 1)
    src, sink, pool = 0, 1, 2 + len(topics) + len(brokers)
    node = {b: 2 + len(topics) + k for k, b in enumerate(brokers)}
    need = sum(wants[t] for t in topics)
    lost = need + 2  # a slot that saves no move costs more than every slot outside `like`
    arcs: dict[K, tuple[list[int], list[int]]] = {}  # topic -> its brokers, the arcs to them
    if like is not None:
        load = dict.fromkeys(room, 0)
    for k, t in enumerate(topics):
        hint = set(like.get(t, ())) if like is not None else first[t]
        allowed = within.get(t) if within is not None else None
        mine = [b for b in saving.get(t, ()) if b in node]
        keep = set(mine)
        others = [b for b in brokers if b not in keep and (allowed is None or b in allowed)]
        given = [b for b in mine if b in hint]
        net.arc(src, 2 + k, wants[t], 0, 0 if like is not None else len(given))
        # each of `given` carries the slot `_first` gave
        to = [*net.fan(2 + k, [node[b] for b in given], 0, 0 if like is not None else 1)]
        order = given + [b for b in mine if b not in hint]
        to += net.fan(2 + k, [node[b] for b in order[len(given) :]], 1)
        order += [b for b in others if b in hint]
        to += net.fan(2 + k, [node[b] for b in order[len(mine) :]], lost)
        to += net.fan(2 + k, [node[b] for b in others if b not in hint], lost + 1)
        arcs[t] = (order + [b for b in others if b not in hint], to)
    over = 0
    for b in brokers:
        net.arc(node[b], sink, room[b], 0, min(load[b], room[b]))
        if spare:
            net.arc(node[b], pool, 1, 0, load[b] - room[b] if load[b] > room[b] else 0)
            over += load[b] > room[b]
    if spare:
        net.arc(pool, sink, spare, 0, over)
    sent = sum(load.values())
    if sent + net.min_cost_flow(src, sink, need - sent) < need:
        return None
    return {t: {b for b, carried in zip(order, net.flows(to)) if carried} for t, (order, to) in arcs.items()}


def _first(
    wants: Mapping[K, int], saving: Mapping[K, Sequence[int]], room: Mapping[int, int], spare: int, topics: list[K]
) -> tuple[dict[K, set[int]], dict[int, int]]:
    """Each topic's slots to its saving brokers with room, topics in order, each topic's brokers in order: the
    slots and each broker's count of them."""
    load = dict.fromkeys(room, 0)
    over = 0
    slots: dict[K, set[int]] = {}
    for t in topics:
        mine: set[int] = set()
        want = wants[t]
        for b in saving.get(t, ()):
            if len(mine) >= want:
                break
            k = load.get(b)
            if k is not None and (k < room[b] or (k == room[b] and over < spare)):
                mine.add(b)
                load[b] = k + 1
                over += k == room[b]
        slots[t] = mine
    return slots, load


def _fill(
    wants: Mapping[K, int],
    room: Mapping[int, int],
    spare: int,
    within: Mapping[K, Collection[int]],
    topics: list[K],
    slots: dict[K, set[int]],
    load: dict[int, int],
) -> dict[K, set[int]] | None:
    """The slots still to give, to the brokers with the most room left, the topics with the most slots still to
    give first (Gale–Ryser's construction); None where some slot finds no broker that way."""
    over = sum(1 for b, k in load.items() if k > room[b])
    for t in sorted(topics, key=lambda t: -(wants[t] - len(slots[t]))):
        mine = slots[t]
        need = wants[t] - len(mine)
        if need <= 0:
            continue
        for b in sorted((b for b in within.get(t, room) if b not in mine), key=lambda b: (load[b] - room[b], b)):
            k = load[b]
            if need and (k < room[b] or (k == room[b] and over < spare)):
                mine.add(b)
                load[b] = k + 1
                over += k == room[b]
                need -= 1
        if need:
            return None
    return slots


def kept(slots: Mapping[K, set[int]], saving: Mapping[K, Sequence[int]]) -> int:
    """The slots on brokers that save a move."""
    return sum(len(mine.intersection(saving.get(t, ()))) for t, mine in slots.items())


def upper_limit(
    wants: Mapping[K, int], saving: Mapping[K, Sequence[int]], room: Mapping[int, int], spare: int = 0
) -> int:
    """The two simple cuts of the flow: no assignment keeps more than Σ_t min(wants, brokers that could save on t),
    nor more than Σ_b min(room, topics b could save on) plus one for each of at most `spare` brokers that could save
    on more than their room."""
    savers: dict[int, int] = {}
    for t, over in saving.items():
        if wants.get(t, 0) > 0:
            for b in over:
                savers[b] = savers.get(b, 0) + 1
    by_broker = sum(min(room[b], k) for b, k in savers.items())
    by_broker += min(spare, sum(1 for b, k in savers.items() if k > room[b]))
    return min(sum(min(w, len(saving.get(t, ()))) for t, w in wants.items() if w > 0), by_broker)


def weighted_slots(
    wants: Mapping[K, int],
    saving: Mapping[K, Sequence[int]],
    room: Mapping[int, int],
    value: Mapping[tuple[K, int], int],
    penalty: Mapping[int, int],
    within: Mapping[K, Collection[int]] | None = None,
    like: Mapping[K, Collection[int]] | None = None,
    stop: Callable[[], bool] | None = None,
) -> dict[K, set[int]] | None:
    """topic -> the brokers given its `wants[t]` slots, at most `room[b]` on broker b (None: they do not fit, or
    `stop` ended the flow: `Network.min_cost_flow`): of the
    assignments with the most slots on the brokers of `saving[t]` (each saves a move), one with the greatest sum of
    `value[(t, b)]` over those slots less `penalty[b]` over the slots that save nothing (small integers: the bytes
    they keep, in steps), then with the fewest slots outside `like`. `within[t]`: the only brokers t's slots may go to.

    A minimum-cost flow as `best_slots`' (source -> topic -> broker -> sink): a slot saving a move costs the most
    value less its own, one saving none more than any values can make up, plus its penalty; values and penalties
    count (need + 1) times a slot outside `like`, which counts 1."""
    brokers = list(room)
    topics = [t for t, w in wants.items() if w > 0]
    net = Network(2 + len(topics) + len(brokers))
    src, sink = 0, 1
    node = {b: 2 + len(topics) + k for k, b in enumerate(brokers)}
    need = sum(wants[t] for t in topics)
    top = max(value.values(), default=0)
    worst = max(penalty.values(), default=0)
    scale = need + 1 if like is not None else 1  # a slot outside `like` costs 1: less than any value
    top, worst = top * scale, worst * scale
    lost = need * (top + worst + 1) + 1  # a slot that saves no move costs more than any values can make up
    arcs: dict[K, tuple[list[int], range]] = {}  # topic -> its brokers, the arcs to them
    for k, t in enumerate(topics):
        allowed = within.get(t) if within is not None else None
        mine = [b for b in saving.get(t, ()) if b in node]
        keep = set(mine)
        others = [b for b in brokers if b not in keep and (allowed is None or b in allowed)]
        net.arc(src, 2 + k, wants[t])
        hint = like.get(t, ()) if like is not None else ()
        costs = [top - scale * value.get((t, b), 0) + (b not in hint) for b in mine]
        costs += [lost + scale * penalty.get(b, 0) + (b not in hint) for b in others]
        order = mine + others
        arcs[t] = (order, net.fan(2 + k, [node[b] for b in order], costs))
    for b in brokers:
        net.arc(node[b], sink, room[b])
    if net.min_cost_flow(src, sink, need, stop) < need:
        return None
    return {t: {b for b, carried in zip(order, net.flows(to)) if carried} for t, (order, to) in arcs.items()}
