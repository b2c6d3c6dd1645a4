"""The goals' working state: its indexes built at once equal those of replica-by-replica counting, a state started
from a placement counts that placement as home, and the objective's distance (each goal's `measure`, kept per topic)
equals a full recount after moves."""

import gc
import random
from collections import Counter

from planner.rebalance.decommission import decommission
from planner.rebalance.goals import balance
from planner.rebalance.goals.base import off_even as _off_even
from planner.rebalance.goals.byte_balance import floors, limits
from planner.rebalance.goals.geometry import forced_topics
from planner.rebalance.goals.objective import Objective
from planner.rebalance.goals.registry import Options, measuring
from planner.rebalance.goals.state import State
from planner.rebalance.moves import select_partitions, with_sizes
from tests.rebalance.rebalance_scenarios import scale_out


def _cluster():
    c = scale_out(seed=5, old=6, new=2, racks=3, topics=6)
    rnd = random.Random(5)
    return with_sizes(c, {p.tp: rnd.randint(0, 1000) for p in c.partitions()})


def _counted(st: State) -> dict:
    """The indexes as counting each replica and each head in partition order gives them."""
    count, size, where, tcount, heads, theads = Counter(), Counter(), {}, Counter(), Counter(), Counter()
    for i, r in enumerate(st.reps):
        t = st.topic_of[i]
        heads[r[0]] += 1
        theads[(r[0], t)] += 1
        for b in r:
            count[b] += 1
            size[b] += st.sz(i)
            where.setdefault(b, set()).add(i)
            tcount[(b, t)] += 1
    return {
        "count": {b: count[b] for b in st.cluster.broker_ids},
        "bytes": {b: size[b] for b in st.cluster.broker_ids},
        "where": {b: where.get(b, set()) for b in st.cluster.broker_ids},
        "tcount": {(b, t): c for b, m in st.tcount.items() for t, c in m.items() if c},
        "holders": {(b, t): c for t, m in enumerate(st.holders) for b, c in m.items()},
        "lead": {b: heads[b] for b in st.lead_targets},
        "tleaders": {(b, t): c for t, m in enumerate(st.tleaders) for b, c in m.items()},
        "tlead": {k: c for k, c in st.tlead.items() if c},
        "expected": (dict(tcount), dict(theads)),
    }


def _indexes(st: State) -> dict:
    got = _counted(st)
    tcount, theads = got.pop("expected")
    assert got["tcount"] == got["holders"] == tcount
    assert got["tleaders"] == got["tlead"] == {k: c for k, c in theads.items() if k[0] in st.lead}
    return {k: got[k] for k in ("count", "bytes", "where", "lead")}


def test_state_built_at_once_counts_as_replica_by_replica():
    c = _cluster()
    parts = select_partitions(c)
    st = State(c, parts, sorted(c.online_ids), ())
    assert st._runs is not None and len(st._runs) == len(st.topic_names) == 7
    expected = _counted(st)
    assert _indexes(st) == {k: expected[k] for k in ("count", "bytes", "where", "lead")}
    assert sum(st.count.values()) == sum(len(p.replicas) for p in parts)
    # a topic's partitions apart (not as select_partitions lists them): counted replica by replica, the same
    mixed = parts[::2] + parts[1::2]
    apart = State(c, mixed, sorted(c.online_ids), ())
    assert apart._runs is None
    assert sorted(apart.count.items()) == sorted(st.count.items())
    assert _indexes(apart)["bytes"] == _indexes(st)["bytes"]


def test_state_from_a_placement_counts_it_as_home():
    c = _cluster()
    parts = select_partitions(c)
    targets = sorted(c.online_ids)
    st = State(c, parts, targets, ())
    moved = [list(p.replicas) for p in parts]
    moved[0][0] = next(b for b in targets if b not in moved[0])
    fresh = State(c, parts, targets, (), placement=moved)
    assert fresh.placed is not None and fresh.placed[0] == tuple(moved[0]) and fresh.home[0] == tuple(moved[0])
    assert fresh.home[1] == parts[1].replicas and fresh.copies == 0
    assert all(not s for s in fresh.foreign.values()) and all(not s for s in fresh.departed.values())
    assert fresh.count[moved[0][0]] == st.count[moved[0][0]] + 1
    assert {i for i, home in enumerate(fresh.home) if moved[0][0] in home} == fresh.where[moved[0][0]]


def _distance(st: State, tolerance: float) -> tuple:
    """The objective's distance, bytes balanced at `tolerance`."""
    return Objective(measuring(Options(lambda msg: None, True, True, tolerance))).distance(st)


def _full_distance(st: State, tolerance: float) -> tuple:
    """`_distance` recounted over every broker and topic."""
    count = topic = 0
    forced = forced_topics(st) if None in st.groups else {}  # spread wider by racks: balanced per class
    for members in st.groups.values():
        count += _off_even([st.count[b] for b in members], len(members), sum(st.count[b] for b in members))
        per_topic: dict[int, list[int]] = {}
        for b in members:
            for t, n in st.tcount[b].items():
                if n and t not in forced:
                    per_topic.setdefault(t, []).append(n)
        topic += sum(_off_even(v, len(members), sum(v)) for v in per_topic.values())
    for t, why in forced.items():
        for inside in why.classes:
            v = [n for b, n in st.holders[t].items() if b in inside]
            topic += _off_even(v, len(inside), sum(v))
    n = len(st.lead)
    lead = _off_even(st.lead.values(), n, sum(st.lead.values()))
    lead += sum(_off_even(m.values(), n, sum(m.values())) for m in st.tleaders if m)
    limit = limits(st, tolerance)
    over = sum(max(0.0, st.bytes[b] - limit[g]) for g, members in st.groups.items() for b in members)
    floor = floors(st, tolerance)  # and the bytes below the floor (issue 32), of brokers that may take replicas
    over += sum(
        max(0.0, floor[g] - st.bytes[b]) for g, members in st.groups.items() for b in members if b not in st.closed
    )
    return count, topic, lead, over


def test_distance_kept_per_topic_equals_a_full_recount_after_moves():
    c = _cluster()
    targets = sorted(c.online_ids)
    st = State(c, select_partitions(c), targets, ())
    rnd = random.Random(7)
    assert _distance(st, 0.1) == _full_distance(st, 0.1)
    done = 0
    for step in range(300):
        i = rnd.randrange(len(st.reps))
        src, dst = rnd.choice(st.reps[i]), rnd.choice(targets)
        if dst not in st.reps[i]:
            st.move(i, src, dst)
            done += 1
        if step % 37 == 0:
            assert _distance(st, 0.1) == _full_distance(st, 0.1)
    st.groups = {"a": targets[:4], "b": targets[4:]}  # other groups: every term recounted
    assert _distance(st, 0.1) == _full_distance(st, 0.1)
    assert done > 200 and _distance(st, 0.1)[1] > 0
    # racks of 3, 3 and 2 brokers: some topics are spread wider by racks, their terms counted per class
    assert sorted(forced_topics(State(c, select_partitions(c), targets, ()))) == [0, 2]


def test_recount_leads_after_reordering_in_place_equals_a_full_count():
    """`recount_leads` counts again only the partitions whose head changed since the last count: heads reordered in
    place (as the leader goal's per-topic pass does), moves and `lead_swap`s mixed, each count equal to counting
    every head; the brokers that can lead stay the same list (so `_distance` keeps its per-topic lead terms)."""
    c = _cluster()
    targets = sorted(c.online_ids)
    st = State(c, select_partitions(c), targets, ())
    leaders = st.lead_targets
    rnd = random.Random(3)
    reordered = 0
    for step in range(400):
        i = rnd.randrange(len(st.reps))
        r = st.reps[i]
        if step % 3 == 0 and len(r) > 1:  # a head swapped in place, not counted yet
            j = rnd.randrange(1, len(r))
            r[0], r[j] = r[j], r[0]
            reordered += 1
        elif step % 3 == 1:
            dst = rnd.choice(targets)
            if dst not in r and step % 2:
                st.move(i, rnd.choice(r), dst)
            elif len(r) > 1:  # reordered with the counts kept current
                old, r[0], r[1] = r[0], r[1], r[0]
                st.lead_swap(i, old, r[0])
        if step % 50 == 49:
            st.recount_leads()
            assert st.lead_targets is leaders
            assert _indexes(st) == {k: v for k, v in _counted(st).items() if k in ("count", "bytes", "where", "lead")}
            assert _distance(st, 0.1) == _full_distance(st, 0.1)
    assert reordered == 134


def test_the_goals_make_no_reference_cycles():
    """`balance` pauses the cyclic garbage collector while the goals run: a reference cycle made per step (a
    generator stored in the object it belongs to, say) would hold its memory until the plan is done. Nothing the
    plans leave is freed by a collection (tuples aside: a collection only stops tracking those of numbers)."""

    def tracked() -> Counter:
        return Counter(type(o).__name__ for o in gc.get_objects() if type(o) is not tuple)

    c = _cluster()
    plans = []
    offline = c.with_broker_states({7: "offline"})
    for plan in (lambda: balance(c), lambda: balance(offline), lambda: decommission(c, [0])):
        gc.collect()
        gc.disable()
        try:
            plans.append(plan())
            left = tracked()
            gc.collect()
            assert left - tracked() == Counter()
        finally:
            gc.enable()
    # [134, 97, 148] before arrivals traded onto spare room (2 B fewer), [135, 97, 148] before the byte goal's floor
    assert [len(p.proposed) for p in plans] == [139, 99, 153]


def _moves(st: State, how_many: int, seed: int) -> list[tuple[int, int, int]]:
    """Moves that `State.placeable` allows, some of them back to where the replica was (home), from a seeded walk."""
    rnd = random.Random(seed)
    made: list[tuple[int, int, int]] = []
    while len(made) < how_many:
        i = rnd.randrange(len(st.reps))
        src = rnd.choice(st.reps[i])
        back = [b for b in st.home[i] if b not in st.reps[i]]
        dst = back[0] if back and rnd.random() < 0.3 else rnd.choice(st.targets)
        if st.placeable(i, src, dst):
            st.move(i, src, dst)
            made.append((i, src, dst))
    return made


def _order(st: State) -> dict:
    """Every per-broker index as it iterates (the order of its entries, not only its contents)."""
    brokers = st.cluster.broker_ids
    return {
        "where": {b: list(st.where[b]) for b in brokers},
        "departed": {b: list(st.departed[b]) for b in brokers},
        "foreign": {b: list(st.foreign[b]) for b in brokers},
        "tcount": {b: list(st.tcount[b].items()) for b in brokers},
        "holders": [list(h.items()) for h in st.holders],
        "tleaders": [list(h.items()) for h in st.tleaders],
        "count": dict(st.count),
        "bytes": dict(st.bytes),
        "incoming": dict(st.incoming),
        "lead": dict(st.lead),
        "tlead": dict(st.tlead),
        "reps": [list(r) for r in st.reps],
        "figures": (st.copies, st.moves),
    }


def test_deferred_moves_leave_every_index_as_moves_one_by_one():
    c = _cluster()
    parts = select_partitions(c)
    one_by_one = State(c, parts, sorted(c.online_ids), ())
    moves = _moves(one_by_one, 400, seed=3)
    deferred = State(c, parts, sorted(c.online_ids), ())
    deferred.defer()
    for k, (i, src, dst) in enumerate(moves):
        if k == 150:
            deferred.defer()  # a second run: the first one's changes made before it starts
        deferred.move(i, src, dst)
    # the replica lists, counts, bytes, holders and leaders current while deferred; the four indexes not yet
    assert deferred.count == one_by_one.count and deferred.bytes == one_by_one.bytes
    assert [dict(h) for h in deferred.holders] == [dict(h) for h in one_by_one.holders]
    assert deferred.lead == one_by_one.lead
    assert deferred.where != one_by_one.where
    deferred.undefer()
    assert _order(deferred) == _order(one_by_one)
    assert _indexes(deferred) == _indexes(one_by_one)
    assert (len(moves), one_by_one.moves, one_by_one.copies) == (400, 400, 191)
    deferred.undefer()  # nothing deferred: nothing changes
    assert _order(deferred) == _order(one_by_one)


def test_touch_pair_pends_the_keys_touch_pends():
    from planner.rebalance.goals.geometry import targets_of
    from planner.rebalance.goals.pick import BrokerHeap

    c = _cluster()
    st = State(c, select_partitions(c), sorted(c.online_ids), ())
    target, _ = targets_of(st)
    both, pair = BrokerHeap(st, target), BrokerHeap(st, target)
    i = next(i for i, r in enumerate(st.reps) if st.placeable(i, r[0], 7))
    src = st.reps[i][0]
    st.move(i, src, 7)
    both.touch(src, 7)
    pair.touch_pair(src, 7)
    assert pair.pending == both.pending
    assert (i, src) == (0, 1)
    assert pair.pending == [(94 - 72, 48_348 - 637, 1), (1 - 71, 637, 7)]  # (count - target, bytes, broker)


def test_restore_while_deferred_makes_the_deferred_changes_first():
    c = _cluster()
    parts = select_partitions(c)
    st = State(c, parts, sorted(c.online_ids), ())
    start = [tuple(r) for r in st.reps]
    st.defer()
    assert len(_moves(st, 50, seed=4)) == 50
    st.restore(start)
    fresh = State(c, parts, sorted(c.online_ids), ())
    assert _indexes(st) == _indexes(fresh)
    assert {b: st.departed[b] | st.foreign[b] for b in c.broker_ids} == dict.fromkeys(c.broker_ids, set())


def test_a_snapshot_restored_twice_gives_back_its_incoming_bytes_each_time(make_cluster):
    # broker 2 reports 150 B usable; t-0 (100 B) is copied there and the snapshot from before taken back, then again:
    # both times nothing is left copied to broker 2. The snapshot handed the state its own dict of bytes copied, which
    # the second copy then counted in: the second restore left 100 B copied to broker 2, so t-1's 100 B no longer fit
    # (and where a run took copies off a broker, the restored count was short: copies beyond its usable bytes).
    from dataclasses import replace

    from planner.rebalance.goals.state.snapshot import Snapshot

    c = make_cluster(3, 0, {"t": {0: (0,), 1: (1,)}})
    c = replace(c, brokers=tuple(replace(b, usable_bytes=150) if b.id == 2 else b for b in c.brokers))
    c = with_sizes(c, {p.tp: 100 for p in c.partitions()})
    st = State(c, select_partitions(c), [0, 1, 2], ())
    before = Snapshot(st)
    st.move(0, 0, 2)
    assert st.incoming == {0: 0, 1: 0, 2: 100}
    before.restore(st)
    assert st.incoming == {0: 0, 1: 0, 2: 0}
    st.move(0, 0, 2)
    before.restore(st)
    assert (st.incoming, st.reps) == ({0: 0, 1: 0, 2: 0}, [[0], [1]])
    assert st.fits(1, 2) and st.fits(0, 2)


def test_a_rack_blocked_replica_is_one_pick_finds_no_destination_for():
    """The count goal skips `pick` where `rack_blocked` says no broker below its target may take the replica (issue
    30): on every replica of the scale-out (racks r0, r1, r2; new brokers 6 and 7 on r0 and r1) it says so only
    where `pick` finds none."""
    from planner.rebalance.goals.geometry import targets_of
    from planner.rebalance.goals.pick import BrokerHeap

    c = _cluster()
    st = State(c, select_partitions(c), sorted(c.online_ids), ())
    target, _ = targets_of(st)
    heap = BrokerHeap(st, target)

    def below(b: int) -> bool:
        return st.count[b] < target[b]

    racks = heap.racks_below(below)
    assert racks == {st.rack_of[6], st.rack_of[7]} and len(racks) == 2
    blocked = picked = 0
    for i, r in enumerate(st.reps):
        for src in r:
            if heap.rack_blocked(i, src, racks):
                blocked += 1
                assert heap.pick(i, src, below) is None
            elif heap.pick(i, src, below) is not None:
                picked += 1
    # a replica on the third rack of a partition on all three racks may go to neither new broker: blocked
    assert (
        (blocked, picked)
        == (67, 508)
        == (
            sum(len(set(map(st.rack_of.get, r))) == 3 for r in st.reps if len(r) == 3),
            sum(len(r) for r in st.reps) - blocked,
        )
    )


def test_the_topic_ranges_of_a_move_and_an_exchange_are_those_the_counts_give():
    """`TopicConstraint.allows` of one move or an exchange (its fast paths) equals the count of each (broker, topic)
    changed kept in its range (`keeps`), and a move it refuses refuses every exchange for another topic's replica
    (`moves`: what the byte goal's steps skip)."""
    from planner.rebalance.goals.base import TopicCounts, keeps
    from planner.rebalance.goals.topic_spread import TopicConstraint

    c = _cluster()
    st = State(c, select_partitions(c), sorted(c.online_ids), ())
    rnd = random.Random(7)
    brokers = sorted(c.online_ids)
    lo, hi = {}, {}
    for t in range(len(st.holders)):
        for g in {st.group_of(b) for b in brokers}:
            counts = sorted(st.tcount[b].get(t, 0) for b in brokers if st.group_of(b) == g)
            lo[(g, t)], hi[(g, t)] = counts[0] + rnd.randint(0, 1), counts[-1] - rnd.randint(0, 1)
    tc = TopicConstraint(lo, hi)
    assert isinstance(tc, TopicCounts)

    def by_counts(changes):
        deltas = Counter()
        for i, s, d in changes:
            deltas[(s, st.topic_of[i])] -= 1
            deltas[(d, st.topic_of[i])] += 1
        return all(
            keeps(st.tcount[b].get(t, 0), n, lo[(st.group_of(b), t)], hi[(st.group_of(b), t)])
            for (b, t), n in deltas.items()
            if n
        )

    seen = Counter()
    for _ in range(3000):
        i, j = rnd.randrange(len(st.reps)), rnd.randrange(len(st.reps))
        s, d = rnd.choice(st.reps[i]), rnd.choice([b for b in brokers if b not in st.reps[i]])
        move = [(i, s, d)]
        assert tc.allows(st, move) == by_counts(move) == tc.moves(st, st.topic_of[i], s, d)
        if d in st.reps[j] and s not in st.reps[j]:
            swap = [(i, s, d), (j, d, s)]
            assert tc.allows(st, swap) == by_counts(swap)
            same = st.topic_of[i] == st.topic_of[j]
            seen[(same, tc.moves(st, st.topic_of[i], s, d), tc.allows(st, swap))] += 1
            if not same and not tc.moves(st, st.topic_of[i], s, d):
                assert not tc.allows(st, swap)
    # (same topic, the move kept in range, the exchange): every kind met, an exchange within a topic always allowed
    assert dict(seen) == {
        (True, True, True): 36,
        (True, False, True): 83,
        (False, True, True): 42,
        (False, True, False): 113,
        (False, False, False): 294,
    }


def test_a_pick_the_racks_refused_answers_the_same_racks_without_looking(monkeypatch):
    """Where a pick found no broker because the racks refused every one it looked at, `pick` answers None for a
    partition with the same racks around it (`_rack_floor`) without looking, while the heap and the state are as they
    were (issue 30; lognormal-uneven from about 20,000 partitions: the count goal's picks look at 64 brokers of the
    large rack). Each such answer is the one a look gives, and that look would have dropped no stale key (so the heap
    is the same either way, and so is every later pick: the plan is the same)."""
    from bench.corpus import FAMILIES, generate
    from planner.rebalance.goals.pick import BrokerHeap

    cluster = generate(next(f for f in FAMILIES if f.name == "lognormal-uneven"), 20_000)
    answered = []
    pick, scan = BrokerHeap.pick, BrokerHeap._scan

    def checked(self, i, src, ok, limit=64):
        st = self.st
        others, floor, _, _ = self._rack_floor(i, src)
        if (st.moves, self.changes) == self.at and (ok, limit, frozenset(others), floor) in self.dead:
            self._flush()  # what pick does first (a no-op here: the heap is as it was)
            heap = list(self.h)
            popped, valid, dead = scan(self, i, src, ok, limit, self._rack_floor(i, src))
            self.h += popped
            assert (valid, dead, len(popped), len(self.h)) == ([], True, limit, len(heap)), (i, src)
            self.h = heap
            answered.append(i)
        return pick(self, i, src, ok, limit)

    monkeypatch.setattr(BrokerHeap, "pick", checked)
    plan = balance(cluster, rack_repair=True)
    assert (len(answered), plan.replica_moves, plan.lower_bound) == (42_782, 13_815, 8_343)
