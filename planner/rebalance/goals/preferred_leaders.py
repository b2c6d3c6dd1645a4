"""Goal 4: preferred leaders, by reordering replica lists (no data moves): each topic's leaders per broker within 1
first (so the internal topics' leaders, which decide which broker coordinates which consumer group or transaction,
are spread evenly), then every broker's within 1 by handing leadership only from a broker leading more of the
partition's topic to one leading less (never widening a topic's spread). Where no choice keeps both, every broker
within 1 first, then the narrowest topic spread and the fewest topics above 1 found (`keep_most`)."""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass
from typing import Callable, Collection, Mapping, Sequence, cast

from planner.leadership import cluster_states
from planner.model import INTERNAL_TOPICS, Cluster, Partition, TopicPartition
from planner.rebalance.flow import Network
from planner.rebalance.goals.base import Change, Frozen, Goal, keeps, kept_terms, net_deltas, off_even
from planner.rebalance.goals.budget import Deadline
from planner.rebalance.goals.state import State
from planner.rebalance.leaders import balance_preferred, isr_eligibility
from planner.rebalance.moves import names_offline, select_partitions
from planner.rebalance.notes import Note


@dataclass(frozen=True)
class LeaderConstraint:
    """Preferred-leader counts per broker and per (broker, topic) stay within the ranges the goal reached."""

    lo: int
    hi: int
    tlo: dict
    thi: dict

    def allows(self, st: State, changes: Sequence[Change]) -> bool:
        heads = [(i, s, d) for i, s, d in changes if st.reps[i][0] == s]
        if not heads:
            return True
        per = net_deltas([(s, -1) for _, s, _ in heads] + [(d, 1) for _, _, d in heads])
        if not all(keeps(st.lead[b], d, self.lo, self.hi) for b, d in per.items() if b in st.lead):
            return False
        per_t = net_deltas(
            [((s, st.topic_of[i]), -1) for i, s, _ in heads] + [((d, st.topic_of[i]), 1) for i, _, d in heads]
        )
        return all(
            keeps(st.tlead.get(k, 0), d, self.tlo[k[1]], self.thi[k[1]]) for k, d in per_t.items() if k[0] in st.lead
        )


@dataclass
class PreferredLeaderGoal(Goal):
    """Goal: each topic's preferred leaders per broker within 1, then every broker's within 1, over the brokers that
    can lead (`State.lead_targets`). Measured as the leaders off the even share per broker and per topic (`measure`).

    Constraints: every placement goal before it (reordering a replica list moves no data, so it undoes none); it hands
    on `LeaderConstraint` (the leader counts per broker and per topic stay in the ranges reached), which the byte
    goal's moves of a partition's head replica pass.

    Algorithm: reordering replica lists only: each topic's leaders by flow (`flow_leaders`), then every broker's by
    handing leadership from a broker leading more of the partition's topic to one leading less; where no choice keeps
    both, every broker within 1 first, then the narrowest topic spread and fewest topics above 1 (`keep_most`)."""

    say: Callable[[str], None] = lambda msg: None
    name: str = "preferred-leaders"
    eligible: tuple[list, Callable[[int, int], bool]] | None = None
    applied: tuple[State, Callable[[int, int], bool]] | None = None

    def measure(self, st: State) -> int:
        """The leaders off the even share (`base.off_even`) over the brokers that can lead, then each topic's (kept per
        topic in `st.terms`: only the topics reorderings touched are recounted)."""
        st.settle_leads()
        n = len(st.lead)
        lead = off_even(st.lead.values(), n, sum(st.lead.values())) if st.lead else 0
        values = st.tleaders
        lead += kept_terms(
            st, "lead", st.lead_targets, st.led, lambda t: off_even(values[t].values(), n, sum(values[t].values()))
        )
        return lead

    def notes(self, st: State) -> list[Note]:
        return _leader_notes(st, self.name)

    def optimize(self, st: State, frozen: Frozen) -> LeaderConstraint:
        self.say("balancing preferred leaders")
        st.recount_leads()
        if not st.lead:  # every target broker closed (KIP-1066) and empty: none can lead, nothing to balance
            return LeaderConstraint(0, 0, {}, {})
        eligible = self._eligibility(st)
        movable = [i for i in range(len(st.reps)) if i not in st.fixed]
        # the lists as the goal found them, where `keep_most` may run: kept where it comes no closer than they were
        entry = ({i: list(st.reps[i]) for i in movable}, _wide(st)) if len(movable) <= KEEP_PARTITIONS else None
        by_topic: dict[int, list[int]] = {}
        for i in movable:
            by_topic.setdefault(st.topic_of[i], []).append(i)
        members = set(st.lead_targets)
        for t in sorted(by_topic):
            balance_preferred(st.reps, by_topic[t], st.lead_targets, eligible, members=members)
        st.recount_leads()

        def leads_less(i: int, b: int) -> bool:  # hand leadership only to a broker leading less of the topic
            t = st.topic_of[i]
            return st.tlead.get((b, t), 0) < st.tlead.get((st.reps[i][0], t), 0)

        def topic_safe(i: int, b: int) -> bool:
            return eligible(i, b) and leads_less(i, b)

        balance_preferred(
            st.reps, movable, st.lead_targets, topic_safe, where=st.where, on_swap=st.lead_swap, restore=leads_less
        )
        if not _within_one(st) and not st.deadline.out(LEADER_STAGE):  # out of time: the hand-overs stand
            heads = _flow_once(st, movable, eligible)
            spread = max(st.lead.values()) - min(st.lead.values())
            if heads is None and spread > 1 and not st.deadline.out(LEADER_STAGE):
                _lead(st, flow_leaders(st, movable, eligible, per_topic_too=False))
            _lead(st, heads)
            if heads is None and entry is not None:
                self._keep_most(st, movable, eligible, entry)
        ranges = {t: st.topic_lead_range(t) for t in range(len(st.topic_names))}
        return LeaderConstraint(
            min(st.lead.values()),
            max(st.lead.values()),
            {t: r[0] for t, r in ranges.items()},
            {t: r[1] for t, r in ranges.items()},
        )

    def _keep_most(
        self,
        st: State,
        movable: Sequence[int],
        eligible: Callable[[int, int], bool],
        entry: tuple[dict[int, list[int]], tuple[bool, int, int, int]],
    ) -> None:
        """`keep_most`'s heads where their figures (`_wide`: the internal topics' spread among them) are at least as
        good as the reordering's, one better;
        and then the lists as the goal found them instead where theirs are at least as good (so that a second plan of
        the applied plan keeps them)."""
        reordered = ({i: list(st.reps[i]) for i in movable}, _wide(st))
        _lead(st, keep_most(st, movable, eligible))
        if not _dominates(_wide(st), reordered[1]):
            _restore(st, reordered[0])
        elif _dominates(entry[1], _wide(st)) or entry[1] == _wide(st):
            _restore(st, entry[0])

    def _eligibility(self, st: State) -> Callable[[int, int], bool]:
        """Who may lead each partition (`isr_eligibility` of the input, the same for every run over its partitions).
        A state started from the plan as if applied (`State.placed`) asks what the applied cluster would answer:
        a partition whose list the plan changed has no observed state there, so its ISR is its online replicas
        (any online broker may lead it); the others keep their observed ISR."""
        if self.eligible is None or self.eligible[0] is not st.parts:
            self.eligible = (st.parts, isr_eligibility(st.cluster, st.parts))
        base = self.eligible[1]
        if st.placed is None:
            return base
        if self.applied is None or self.applied[0] is not st:
            online = st.cluster.online_ids
            changed = [r != p.replicas for r, p in zip(st.placed, st.parts)]
            self.applied = (st, lambda i, b: b in online if changed[i] else base(i, b))
        return self.applied[1]


def _lead(st: State, heads: Mapping[int, int] | None) -> None:
    """Each partition of `heads` led by the broker it names (its replica list reordered)."""
    if heads is None:
        return
    for i, b in heads.items():
        r = st.reps[i]
        j = r.index(b)
        r[0], r[j] = r[j], r[0]
    st.recount_leads()


def _restore(st: State, lists: Mapping[int, list[int]]) -> None:
    """The replica lists back in the order `lists` holds them."""
    for i, r in lists.items():
        st.reps[i][:] = r
    st.recount_leads()


def _wide(st: State) -> tuple[bool, int, int, int]:
    """The leaders' figures `keep_most` is taken on: brokers above a spread of 1, the internal topics' largest spread,
    the largest topic spread, topics above 1."""
    spreads = [hi - lo for lo, hi in (st.topic_lead_range(t) for t in range(len(st.topic_names)))]
    internal = [s for s, name in zip(spreads, st.topic_names) if name in INTERNAL_TOPICS]
    brokers = max(st.lead.values()) - min(st.lead.values()) > 1
    return brokers, max(internal, default=0), max(spreads, default=0), sum(s > 1 for s in spreads)


def _dominates(a: tuple[bool, int, int, int], b: tuple[bool, int, int, int]) -> bool:
    """Figures a at least as good as b in each, better in one (fewer is better)."""
    return a != b and all(x <= y for x, y in zip(a, b))


def _within_one(st: State) -> bool:
    if max(st.lead.values()) - min(st.lead.values()) > 1:
        return False
    return all(hi - lo <= 1 for lo, hi in (st.topic_lead_range(t) for t in range(len(st.topic_names))))


def _leader_notes(st: State, name: str) -> list[Note]:
    """The brokers' leaders above a spread of 1: unmet. Topics whose leaders stay above 1: those no choice of leaders
    on their placement brings within 1 (`placed_topics`), topics-placed; the others, topics-unmet. Internal topics
    above 1 once more: internal-unmet."""
    notes: list[Note] = []
    if not st.lead:  # no target broker can lead (every one closed and empty)
        return notes
    lo, hi = min(st.lead.values()), max(st.lead.values())
    if hi - lo > 1:
        notes.append(Note(name, "unmet", hi - lo, values=(lo, hi)))
    ranges = [st.topic_lead_range(t) for t in range(len(st.topic_names))]
    above = [t for t, r in enumerate(ranges) if r[1] - r[0] > 1]
    placed = placed_topics(st, above, PreferredLeaderGoal()._eligibility(st)) if above else set()
    for kind, topics in (("topics-unmet", [t for t in above if t not in placed]), ("topics-placed", sorted(placed))):
        if topics:
            names = tuple(st.topic_names[t] for t in topics)
            notes.append(
                Note(name, kind, len(topics), topics=names, values=(max(ranges[t][1] - ranges[t][0] for t in topics),))
            )
    wide = [(st.topic_names[t], ranges[t]) for t in above]
    internal = [(n, r) for n, r in wide if n in INTERNAL_TOPICS]
    if internal:
        notes.append(
            Note(
                name,
                "internal-unmet",
                len(internal),
                topics=tuple(n for n, _ in internal),
                values=(max(r[1] - r[0] for _, r in internal),),
            )
        )
    return notes


def _bounds(total: int, n: int) -> tuple[int, int]:
    q, r = divmod(total, n)
    return q, q + (1 if r else 0)


def _fixed_leads(st: State, in_scope: set[int]) -> tuple[dict[int, int], dict[tuple[int, int], int], dict[int, int]]:
    """Leaders the partitions out of scope keep, per broker and per (broker, topic); partitions per topic led by a
    target broker at the end."""
    lead: dict[int, int] = {b: 0 for b in st.lead_targets}
    tlead: dict[tuple[int, int], int] = {}
    per_topic: dict[int, int] = {}
    for i, r in enumerate(st.reps):
        t = st.topic_of[i]
        if i in in_scope or r[0] in lead:
            per_topic[t] = per_topic.get(t, 0) + 1
        if i not in in_scope and r[0] in lead:
            lead[r[0]] += 1
            tlead[(r[0], t)] = tlead.get((r[0], t), 0) + 1
    return lead, tlead, per_topic


def flow_leaders(
    st: State,
    movable: Sequence[int],
    eligible: Callable[[int, int], bool],
    per_topic_too: bool = True,
    windows: Mapping[int, tuple[int, int]] | None = None,
) -> dict[int, int] | None:
    """A head for every movable partition such that each topic's leaders per target broker are within 1 and every
    broker's too (partitions not movable keep theirs), or None when no such choice exists: a feasible flow with
    lower bounds, source → partition (1) → (topic, broker) [topic floor, ceiling] → broker [floor, ceiling] → sink.
    Each partition's current head is offered first, so it tends to stay. Without `per_topic_too`, only the brokers'
    bounds (when both cannot hold, every broker within 1 comes first). `windows`: the leaders per broker of the
    topics it names within (lo, hi) instead. Also None where the time budget (`State.deadline`) ran out during the
    flow (it asks before each blocking flow but the first).

    The same question as `leaders.balance_preferred`'s, asked of every partition at once: the goal runs that first
    (hand-overs from the heads there are, which keep the heads it need not move and whose order of swaps the plans
    and the golden file pin) and this only where those leave a broker or a topic above 1. Where both succeed they
    choose different heads (`leaders`' docstring has a case), so neither replaces the other."""
    fixed_lead, fixed_tlead, per_topic = _fixed_leads(st, set(movable))
    net = Network()
    src, sink = net.node(), net.node()
    broker_node = {b: net.node() for b in st.lead_targets}
    lo, hi = _bounds(sum(per_topic.values()), len(st.lead_targets))
    if any(net.bounded(broker_node[b], sink, lo - fixed_lead[b], hi - fixed_lead[b]) is None for b in st.lead_targets):
        return None
    if any(len(st.where.get(b, ())) < lo - fixed_lead[b] for b in st.lead_targets):
        return None  # a broker holds fewer replicas than its floor of leaders (a new one): no flow meets it, none built
    made = _choices(st, movable, eligible, broker_node)
    if made is None:
        return None
    choices, offered = made
    n = len(st.lead_targets)
    even = {t: _bounds(total, n) if per_topic_too else (0, total) for t, total in per_topic.items()}
    bounds = even if windows is None else {t: windows.get(t, r) for t, r in even.items()}
    pair_node = _pair_nodes(st, net, bounds, broker_node, offered, fixed_tlead)
    if pair_node is None:
        return None
    choice_edges: list[tuple[int, int, int]] = []
    for i, choice in zip(movable, choices):
        p = net.node()
        net.bounded(src, p, 1, 1)  # every partition gets exactly one head
        for b in choice:
            choice_edges.append((i, b, net.arc(p, pair_node[(st.topic_of[i], b)], 1)))
    if any(offered[pair] < -net.surplus(v) for pair, v in pair_node.items()):
        return None  # a (topic, broker) floor above what its partitions there may lead: no flow meets it
    net.arc(sink, src, len(movable))  # circulation: what reaches the sink goes round again
    if not net.feasible(lambda: st.deadline.out(LEADER_STAGE)):
        return None
    heads = {i: b for i, b, e in choice_edges if net.flow(e)}
    return heads if len(heads) == len(movable) else None


def _basis(st: State, movable: Sequence[int], eligible: Callable[[int, int], bool]) -> bytes:
    """A digest of what the leader flows over `movable` are made of: the target brokers, each movable partition's
    replica list in its order (the flows offer its current head first) and which of them may lead it, and the heads
    of the partitions out of scope. Plans run the goal again on the same placement (`search.search_plans`' attempts,
    its fresh states, its second plans): the same digest, the same flows."""
    ints = array("q", st.lead_targets)
    ints.append(-1)
    reps = st.reps
    for i in movable:
        r = reps[i]
        ints.append(i)
        ints.extend(r)
        ints.append(-2 - sum(1 << k for k, b in enumerate(r) if eligible(i, b)))
    ints.append(-1)
    scope = set(movable)
    ints.extend(r[0] for i, r in enumerate(reps) if i not in scope)
    return hashlib.blake2b(ints.tobytes(), digest_size=16).digest()


def _flow_once(st: State, movable: Sequence[int], eligible: Callable[[int, int], bool]) -> dict[int, int] | None:
    """`flow_leaders`' heads (each topic and every broker within 1), once per plan for the same flows (`State.memo`
    by `_basis`): where none exists, each run of the goal on that placement would build and solve the same
    infeasible flow again. An answer the time budget cut short is not kept."""
    key = ("flow_leaders", _basis(st, movable, eligible))
    if key not in st.memo:
        found = flow_leaders(st, movable, eligible)
        if found is None and st.deadline.stage is not None:
            return None
        st.memo[key] = found
    found = cast("dict[int, int] | None", st.memo[key])
    return None if found is None else dict(found)


def _choices(
    st: State, movable: Sequence[int], eligible: Callable[[int, int], bool], broker_node: Mapping[int, int]
) -> tuple[list[list[int]], dict[tuple[int, int], int]] | None:
    """Each movable partition's replicas on a broker of `broker_node` that may lead it, in its order, and how many
    partitions offer each (topic, broker) a head; None where the time budget ran out."""
    choices: list[list[int]] = []
    offered: dict[tuple[int, int], int] = {}
    for k, i in enumerate(movable):
        if k % BUILD_ASK == BUILD_ASK - 1 and st.deadline.out(LEADER_STAGE):
            return None  # out of time while building (a node and arcs per partition: seconds at 100,000)
        t = st.topic_of[i]
        choice = [b for b in st.reps[i] if b in broker_node and eligible(i, b)]
        choices.append(choice)
        for b in choice:
            offered[(t, b)] = offered.get((t, b), 0) + 1
    return choices, offered


def _pair_nodes(
    st: State,
    net: Network,
    bounds: Mapping[int, tuple[int, int]],
    broker_node: Mapping[int, int],
    offered: Mapping[tuple[int, int], int],
    fixed_tlead: Mapping[tuple[int, int], int],
) -> dict[tuple[int, int], int] | None:
    """A node per (topic, broker) that some partition offers a head, with an arc to the broker bounded by the topic's
    `bounds` less the leaders partitions out of scope keep there; None where a pair's bounds cannot hold, or where the
    time budget ran out. A pair no partition offers one gets no node (its arcs could never carry flow, and the
    other arcs' order, and so the flow, are the same without it): its floor, less those leaders, must be 0 or less."""
    pair_node: dict[tuple[int, int], int] = {}
    for k, (t, (tlo, thi)) in enumerate(bounds.items()):
        if k % TOPICS_ASK == TOPICS_ASK - 1 and st.deadline.out(LEADER_STAGE):
            return None  # out of time while building: a node per (topic, broker), a million at 100,000 partitions
        for b in st.lead_targets:
            f = fixed_tlead.get((b, t), 0)
            if (t, b) not in offered:
                if thi - f < 0 or tlo - f > 0:
                    return None  # a floor above what its partitions there may lead, or a ceiling below 0
                continue
            pair_node[(t, b)] = node = net.node()
            if net.bounded(node, broker_node[b], tlo - f, thi - f) is None:
                return None
    return pair_node


def placed_topics(st: State, topics: Sequence[int], eligible: Callable[[int, int], bool]) -> set[int]:
    """Of `topics`, those whose leaders no choice brings within 1 per lead target on their placement as it is, the
    other topics and the brokers' totals left aside: a feasible flow with lower bounds per topic, partition (1) →
    broker [floor, ceiling of the topic's even share, less what partitions not movable keep there] (each movable
    partition may go on being led by its first replica, or by a target replica eligible to lead it). No such choice
    when some brokers together hold fewer replicas of the topic than their floors add up to (Hall's condition), or
    take more than their ceilings from partitions they alone can lead: the placement holds the topic above 1, which
    no reordering of replica lists changes."""
    wanted = set(topics)
    movable = [i for i in range(len(st.reps)) if i not in st.fixed and st.topic_of[i] in wanted]
    _, fixed_tlead, per_topic = _fixed_leads(st, set(movable))
    by_topic: dict[int, list[int]] = {}
    for i in movable:
        by_topic.setdefault(st.topic_of[i], []).append(i)
    placed = set()
    for t in topics:
        net = Network()
        src, sink = net.node(), net.node()
        tlo, thi = _bounds(per_topic.get(t, 0), len(st.lead_targets))
        node = {b: net.node() for b in st.lead_targets}
        fits = all(
            net.bounded(node[b], sink, tlo - fixed_tlead.get((b, t), 0), thi - fixed_tlead.get((b, t), 0)) is not None
            for b in st.lead_targets
        )
        for i in by_topic.get(t, []) if fits else []:
            p = net.node()
            net.bounded(src, p, 1, 1)
            for b in st.reps[i]:
                if b in node and (b == st.reps[i][0] or eligible(i, b)):
                    net.arc(p, node[b], 1)
        net.arc(sink, src, len(by_topic.get(t, [])))
        if not (fits and net.feasible()):
            placed.add(t)
    return placed


KEEP_PARTITIONS = 20_000  # partitions to reorder at most for `keep_most` (each of its flows is over all of them)
KEEP_FLOWS = 24  # flows at most `keep_most` runs for one choice of leaders
LEADER_STAGE = "the leader goal"  # the time budget's note names it where it ran out there
BUILD_ASK = 4096  # partitions `flow_leaders` adds to its network between two questions to the time budget
TOPICS_ASK = 64  # topics (each a node per broker) it adds between two questions


def keep_most(st: State, movable: Sequence[int], eligible: Callable[[int, int], bool]) -> dict[int, int] | None:
    """Where no choice of heads keeps every topic's leaders and every broker's within 1: heads with every broker within
    1, the narrowest topic spread found, then the most topics within 1 found at it (`_Windows`); None when the brokers
    cannot all be within 1. Kept in `State.memo` by what the flows are made of (`_basis`), as plans run the goal again
    on the same placement: the same heads each time."""
    key = ("keep_most", _basis(st, movable, eligible))
    if key not in st.memo:
        if st.deadline.stage is not None:
            return None  # the time ran out already: the heads as they are
        found = _Windows(st, movable, eligible).search()
        if st.deadline.stage is not None:
            return None  # cut short by the time budget (`_Windows.heads`): no answer to keep
        st.memo[key] = found
    return cast("dict[int, int] | None", st.memo[key])


class _Windows:
    """`keep_most`'s search, each check a `flow_leaders` with windows on the topics' leaders per broker (at most
    `KEEP_FLOWS` of them):
    - the narrowest window w about every topic's even share (floor - w to ceiling + w) by doubling, then halving;
    - the topics kept within 1 at it: those the flow found within 1, then the others whose placement allows it
      (`placed_topics`), the internal topics first, then fewest partitions first (the larger ones, with more
      partitions to lead on every broker, take what the others cannot): as many as fit, halving, then each other
      one that fits;
    - the others' windows narrower, placed where their leaders sit: as wide for each, taken off the floor first (as
      far as every broker can still lead that many: on racks of different sizes the brokers of the small rack must
      lead more of some topics, not fewer), then the ceiling."""

    def __init__(self, st: State, movable: Sequence[int], eligible: Callable[[int, int], bool]) -> None:
        self.st, self.movable, self.eligible = st, movable, eligible
        _, self.fixed, per_topic = _fixed_leads(st, set(movable))
        self.per_topic = per_topic
        self.topics = sorted(per_topic)
        self.even = {t: _bounds(per_topic[t], len(st.lead_targets)) for t in self.topics}
        self.flows = 0

    def heads(self, windows: dict[int, tuple[int, int]]) -> dict[int, int] | None:
        """The flow's heads with these windows; None where there are none, or (after the first flow) where the time
        budget has run out (`State.deadline`): then no more flows (`KEEP_FLOWS` reached)."""
        if self.flows and self.st.deadline.out(LEADER_STAGE):
            self.flows = KEEP_FLOWS
            return None
        self.flows += 1
        return flow_leaders(self.st, self.movable, self.eligible, windows=windows)

    def about(self, w: int, kept: Collection[int] = ()) -> dict[int, tuple[int, int]]:
        return {t: (self.even[t][0] - w, self.even[t][1] + w) for t in self.topics if t not in kept}

    def ranges(self, heads: Mapping[int, int]) -> dict[int, tuple[int, int]]:
        """Each topic's least and most leaders per broker with these heads."""
        led = dict(self.fixed)
        for i, b in heads.items():
            key = (self.st.topic_of[i], b)
            led[key] = led.get(key, 0) + 1
        targets = self.st.lead_targets
        return {t: (min(v := [led.get((t, b), 0) for b in targets]), max(v)) for t in self.topics}

    def within(self, heads: Mapping[int, int]) -> frozenset[int]:
        return frozenset(t for t, (lo, hi) in self.ranges(heads).items() if hi - lo <= 1)

    def search(self) -> dict[int, int] | None:
        found = self.narrowest()
        if found is None:
            return None
        w, best = found
        kept, best = self.keep(w, best)
        return self.narrower(kept, best)

    def narrowest(self) -> tuple[int, dict[int, int]] | None:
        widest = max(self.per_topic.values(), default=0)
        lo, hi = 1, 1
        best = self.heads(self.about(hi))
        while best is None and hi < widest:
            lo, hi = hi + 1, min(2 * hi, widest)
            best = self.heads(self.about(hi))
        if best is None:  # the brokers cannot all be within 1
            return None
        while lo < hi and self.flows < KEEP_FLOWS:
            mid = (lo + hi) // 2
            got = self.heads(self.about(mid))
            if got is None:
                lo = mid + 1
            else:
                hi, best = mid, got
        return hi, best

    def keep(self, w: int, best: dict[int, int]) -> tuple[frozenset[int], dict[int, int]]:
        kept = self.within(best)
        placed = placed_topics(self.st, self.topics, self.eligible)
        names = self.st.topic_names
        order = sorted(
            (t for t in self.topics if t not in placed and t not in kept),
            key=lambda t: (names[t] not in INTERNAL_TOPICS, self.per_topic[t], t),
        )
        lo, hi = 0, len(order)  # all of them first
        while lo < hi and self.flows < KEEP_FLOWS:
            mid = hi if lo == 0 and hi == len(order) else (lo + hi + 1) // 2
            got = self.heads(self.about(w, kept | frozenset(order[:mid])))
            if got is None:
                hi = mid - 1
            else:
                lo, best = mid, got
                kept = self.within(got) | kept | frozenset(order[:mid])
        for t in order[lo + 1 :]:
            if self.flows >= KEEP_FLOWS:
                break
            if t not in kept and (got := self.heads(self.about(w, kept | {t}))) is not None:
                kept, best = self.within(got) | kept | {t}, got
        return kept, best

    def narrower(self, kept: frozenset[int], best: dict[int, int]) -> dict[int, int]:
        st = self.st
        sit = {t: r for t, r in self.ranges(best).items() if t not in kept}
        can = dict(self.fixed)  # leaders each broker could have of each topic
        for i in self.movable:
            for b in st.reps[i]:
                if b in st.lead and self.eligible(i, b):
                    can[(st.topic_of[i], b)] = can.get((st.topic_of[i], b), 0) + 1
        least = {t: min(can.get((t, b), 0) for b in st.lead_targets) for t in sit}

        def windows(width: int) -> dict[int, tuple[int, int]]:
            out = {}
            for t, (lo, hi) in sit.items():
                change = hi - lo - width  # to take off (or, below 0, to add)
                off = min(change, max(0, least[t] - lo)) if change > 0 else change // 2
                out[t] = (lo + off, hi - (change - off))
            return out

        lo, hi = 2, max((hi - lo for lo, hi in sit.values()), default=0)
        while lo < hi and self.flows < KEEP_FLOWS:
            mid = (lo + hi) // 2
            got = self.heads(windows(mid))
            if got is None:
                lo = mid + 1
            else:
                hi, best = mid, got
        return best


def elect_leaders(
    cluster: Cluster, topics: Sequence[str] | None = None, deadline: Deadline | None = None
) -> tuple[dict[TopicPartition, tuple[int, ...]], list[TopicPartition]]:
    """`reassign elect-leaders`: the preferred-leader goal of `rebalance` (`PreferredLeaderGoal`: each topic's
    leaders per online broker within 1 and every broker's, or where the replica lists allow no such choice, every
    broker within 1, then the narrowest topic spread, the internal topics kept first) on the placement as it is,
    reordering replica lists only (no data movement); and the partitions whose current leader is not their (new)
    preferred leader, so that `kafka-leader-election.sh --election-type PREFERRED` can move leadership.

    A partition mid-reassignment keeps its list and its leader (the controller is moving it); one with a replica on a
    broker that is not online keeps its list (Kafka's `--execute` refuses a list naming such a broker). Returns (new
    replica lists of the partitions whose order changes, partitions to elect).

    `deadline` (`budget.Deadline`): where it runs out (in the goal's flows, or between its runs), the reordering found
    so far, taken only where it brings the leaders closer than the input (the caller notes it: `deadline.note()`).
    """
    parts = select_partitions(cluster, topics)
    online = cluster.online_ids
    fixed = [i for i, p in enumerate(parts) if p.adding or p.removing or names_offline(p.replicas, online)]
    now, lists = cluster, [p.replicas for p in parts]
    # the goal again on its own reordering while that brings the leaders closer (`_leader_score`), as a second run
    # of `elect-leaders` on the applied plan would: the plan is then a fixed point of the command (where no choice
    # keeps every topic within 1, the goal could otherwise trade one topic's spread for another's, run after run)
    deadline = deadline if deadline is not None else Deadline()
    for k in range(ELECT_ROUNDS):
        if k and deadline.out("the leader goal's runs"):
            break
        st = _elected(now, select_partitions(now, topics), fixed, deadline)
        if _leader_score(st, use_input=False) >= _leader_score(st, use_input=True):
            break
        reordered = {p.tp: tuple(r) for p, r in zip(st.parts, st.reps) if tuple(r) != p.replicas}
        now, lists = now.with_assignment(reordered), [tuple(r) for r in st.reps]
    proposed = {p.tp: r for p, r in zip(parts, lists) if r != p.replicas}
    states = cluster_states(cluster)
    elect = []
    for p, r in zip(parts, lists):
        if p.adding or p.removing:
            continue
        ps = states[p.topic][p.id]
        head = r[0]
        if ps.leader != head and head in online and head in ps.isr:
            elect.append(p.tp)
    return proposed, elect


ELECT_ROUNDS = 4  # runs of the leader goal at most in `elect_leaders`, each from the reordering before


def _elected(cluster: Cluster, parts: list[Partition], fixed: list[int], deadline: Deadline) -> State:
    """The leader goal on the partitions as they are, `fixed` keeping their lists, over the online brokers; where
    every broker within 1 costs an internal topic its spread, the internal topic's partitions keep their leaders and
    the others are balanced around them (an internal topic never comes out wider than it went in)."""
    st = _led(cluster, parts, fixed, deadline)
    worse = _internal_worse(st)
    if worse:
        keep = fixed + [i for i, t in enumerate(st.topic_of) if t in worse and i not in fixed]
        st = _led(cluster, parts, keep, deadline)
    return st


def _led(cluster: Cluster, parts: list[Partition], fixed: Sequence[int], deadline: Deadline | None = None) -> State:
    st = State(cluster, parts, sorted(cluster.online_ids), fixed)
    st.deadline = deadline if deadline is not None else st.deadline
    if parts and st.lead_targets:
        PreferredLeaderGoal().optimize(st, Frozen())
    return st


def _spreads(st: State, heads: Sequence[int]) -> tuple[int, int, dict[int, int]]:
    """The spread of preferred leaders over the lead targets with these heads, the sum of their squares, and each
    topic's spread."""
    lead = {b: 0 for b in st.lead_targets}
    per: list[dict[int, int]] = [{} for _ in st.topic_names]  # topic -> lead target -> its leaders there (> 0)
    for i, h in enumerate(heads):
        if h in lead:
            lead[h] += 1
            led = per[st.topic_of[i]]
            led[h] = led.get(h, 0) + 1
    targets = len(st.lead_targets)
    # each topic's counts over the lead targets: those it names, and 0 where it names fewer than all (a pass over the
    # topics' leaders, not over every topic and lead target: 8 million at 100,000 partitions)
    topics = {
        t: (max(led.values(), default=0) - (min(led.values()) if len(led) == targets else 0))
        for t, led in enumerate(per)
    }
    squares = sum(n * n for n in lead.values())
    return (max(lead.values()) - min(lead.values()) if lead else 0), squares, topics


def _leader_score(st: State, use_input: bool) -> tuple[int, int, int, int, int, int]:
    """The leaders' figures, fewer better, in the goal's order: the brokers' spread above 1, the internal topics'
    widest spread, the widest topic spread, the topics above 1, the sum of the topics' spreads, the sum of the
    brokers' leaders squared (where racks or single replicas hold the spread, the leaders as even as they go); of the
    state's input lists (`use_input`) or its lists now."""
    heads = [p.replicas[0] for p in st.parts] if use_input else [r[0] for r in st.reps]
    brokers, squares, topics = _spreads(st, heads)
    internal = [s for t, s in topics.items() if st.topic_names[t] in INTERNAL_TOPICS]
    spreads = list(topics.values())
    return (
        max(0, brokers - 1),
        max(internal, default=0),
        max(spreads, default=0),
        sum(s > 1 for s in spreads),
        sum(spreads),
        squares,
    )


def _internal_worse(st: State) -> set[int]:
    """The internal topics whose preferred-leader spread over the lead targets is wider than before the reordering."""
    *_, was = _spreads(st, [p.replicas[0] for p in st.parts])
    *_, now = _spreads(st, [r[0] for r in st.reps])
    return {t for t, name in enumerate(st.topic_names) if name in INTERNAL_TOPICS and now[t] > was[t]}


def leader_bounds(
    cluster: Cluster,
    proposed: Mapping[TopicPartition, tuple[int, ...]],
    topics: Sequence[str] | None = None,
    deadline: Deadline | None = None,
) -> tuple[int, int]:
    """Lower bounds of what `elect-leaders` reports over the online brokers, on every reordering of the lists it may
    reorder (those of `topics`, settled and on online brokers; the other partitions keep their heads), each head
    an eligible replica (`isr_eligibility`) or the partition's own: the preferred-leader spread of the brokers, and
    the largest topic leader spread. Each is 0 or 1 as the leaders' number divides, or, where the plan (`proposed`)
    left it wider than 1, the narrowest spread that a feasible flow (`_fits`) allows (a binary search up to the
    plan's). Where the time budget (`deadline`) has run out or runs out between two flows, the bound that needs no
    flow (0 or 1 as the leaders' number divides): lower still, and still a bound."""
    late = None if deadline is None else (lambda: deadline.out("the leader bounds"))
    parts = list(cluster.partitions())
    online = cluster.online_ids
    chosen = set(topics) if topics else None
    fixed = [
        i
        for i, p in enumerate(parts)
        if (chosen is not None and p.topic not in chosen) or p.adding or p.removing or names_offline(p.replicas, online)
    ]
    st = State(cluster, parts, sorted(online), fixed)
    if not st.lead_targets:
        return 0, 0
    eligible = isr_eligibility(cluster, parts)
    movable = [i for i in range(len(parts)) if i not in st.fixed]
    heads = [proposed.get(p.tp, p.replicas)[0] for p in parts]
    brokers, _, spreads = _spreads(st, heads)
    broker_bound = _least_spread(st, movable, eligible, brokers, late=late)
    topic_bound = 0
    by_topic: dict[int, list[int]] = {}
    for i in movable:
        by_topic.setdefault(st.topic_of[i], []).append(i)
    for t, spread in spreads.items():
        topic_bound = max(topic_bound, _least_spread(st, by_topic.get(t, []), eligible, spread, t, late))
    return broker_bound, topic_bound


def _least_spread(
    st: State,
    movable: Sequence[int],
    eligible: Callable[[int, int], bool],
    upto: int,
    topic: int | None = None,
    late: Callable[[], bool] | None = None,
) -> int:
    """The narrowest spread of preferred leaders over the lead targets (of `topic`'s partitions, or all) that some
    choice of heads of `movable` reaches, the others' heads kept; `upto`: a spread some choice reaches. `late`: asked
    before each flow; where it says the time is up, the bound without flows (0 or 1)."""
    fixed = {b: 0 for b in st.lead_targets}
    total = len(movable)
    for i in st.fixed:  # not every partition: this runs once per topic (a pass over all of them each was quadratic)
        if (topic is None or st.topic_of[i] == topic) and st.reps[i][0] in fixed:
            fixed[st.reps[i][0]] += 1
            total += 1
    q, r = divmod(total, len(st.lead_targets))
    least = 1 if r else 0
    if upto <= least:
        return upto
    # The leader counts a choice of heads reaches form an M-convex set (the degrees of a bipartite b-matching), whose
    # decreasingly-minimal element is at once the least maximum and the most minimum (Frank and Murota, "Discrete
    # decreasing minimization", Part I, 2022): the narrowest spread is that maximum less that minimum, two binary
    # searches of one-sided flows (before, every window [lo, lo + s] of each tried spread s: up to s flows a step),
    # each between brackets found without a flow (`_brackets`): most flows are not needed at all
    ceil = q + (1 if r else 0)
    floor_max, greedy_max, greedy_min, ceil_min = _brackets(st, movable, eligible, fixed, total)
    lo, hi = max(ceil, floor_max), min(total, greedy_max)  # the least maximum: every lead target at most `hi`
    while lo < hi:
        if late is not None and late():
            return least
        mid = (lo + hi) // 2
        if _fits(st, movable, eligible, fixed, 0, mid):
            hi = mid
        else:
            lo = mid + 1
    most = lo
    lo, hi = greedy_min, min(q, ceil_min)  # the most minimum: every lead target at least `lo`
    while lo < hi:
        if late is not None and late():
            return least
        mid = (lo + hi + 1) // 2
        if _fits(st, movable, eligible, fixed, mid, total):
            lo = mid
        else:
            hi = mid - 1
    return min(upto, max(least, most - lo))


def _brackets(
    st: State, movable: Sequence[int], eligible: Callable[[int, int], bool], fixed: Mapping[int, int], total: int
) -> tuple[int, int, int, int]:
    """Brackets of `_least_spread`'s two searches, without a flow, on the heads `_fits` may choose (its own head or
    an eligible replica on a lead target):
    - no choice's maximum is below the leaders over the lead targets that can have any, nor below what one keeps;
    - a choice's maximum and minimum: every partition in turn to its least loaded head;
    - no choice's minimum is above the fewest a lead target keeps plus can take.
    Where a partition has no head to choose, no choice exists, and the searches' answers without one: the maximum
    `total`, the minimum 0."""
    load = dict(fixed)
    can = dict.fromkeys(fixed, 0)
    choices = []
    for i in movable:
        head = st.parts[i].replicas[0]
        heads = [b for b in st.reps[i] if b in load and (b == head or eligible(i, b))]
        if not heads:
            return total, total, 0, 0
        for b in heads:
            can[b] += 1
        choices.append(heads)
    for heads in choices:
        b = min(heads, key=load.__getitem__)
        load[b] += 1
    reach = max(1, sum(1 for b in fixed if fixed[b] or can[b]))
    keeps = min(fixed[b] + can[b] for b in fixed)
    return max(-(-total // reach), *fixed.values()), max(load.values()), min(load.values()), keeps


def _fits(
    st: State, movable: Sequence[int], eligible: Callable[[int, int], bool], fixed: Mapping[int, int], lo: int, hi: int
) -> bool:
    """Whether some choice of heads of `movable` (each its own head or an eligible replica on a lead target) puts
    every lead target's preferred leaders, with the heads `fixed` counts, within [lo, hi]: a feasible flow with lower
    bounds, source -> partition (1) -> broker [lo, hi, less what it keeps] -> sink."""
    net = Network()
    src, sink = net.node(), net.node()
    node = {b: net.node() for b in st.lead_targets}
    if any(net.bounded(node[b], sink, lo - fixed[b], hi - fixed[b]) is None for b in st.lead_targets):
        return False
    for i in movable:
        p = net.node()
        net.bounded(src, p, 1, 1)
        for b in st.reps[i]:
            if b in node and (b == st.parts[i].replicas[0] or eligible(i, b)):
                net.arc(p, node[b], 1)
    net.arc(sink, src, len(movable))
    return net.feasible()
