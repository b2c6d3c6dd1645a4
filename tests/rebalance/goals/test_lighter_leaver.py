"""`goals.lighter_leaver`: a broker that sends a replica of a topic away keeps it and sends a smaller one of the topic
instead, at the same replica counts, topic counts, moves, preferred leaders and rack safety, up to the byte limit."""

import itertools
from collections import Counter

from planner.model import Broker, Cluster, Partition, Topic
from planner.rebalance.goals import lighter_leaver
from planner.rebalance.goals.lighter_leaver import _Swaps, fewer_bytes, shortcuts
from planner.rebalance.goals.state import State
from planner.rebalance.moves import select_partitions


def _state(reps: dict[int, tuple[int, ...]], sizes: dict[int, int | None], brokers: int = 3, racks=None) -> State:
    t = Topic("t", tuple(Partition("t", i, reps[i], size=sizes[i]) for i in sorted(reps)))
    rack = (lambda b: racks[b]) if racks else (lambda b: None)
    c = Cluster(brokers=tuple(Broker(b, rack=rack(b)) for b in range(brokers)), topics=(t,))
    parts = select_partitions(c, None)
    return State(c, parts, list(range(brokers)), ())


def _copied(st: State) -> int:
    return sum(st.sz(i) for i, r in enumerate(st.reps) for b in r if b not in st.home[i])


def test_the_smallest_replica_that_fits_under_the_limit_goes_instead():
    # broker 0 sent t-0 (100 B) to broker 2; it holds t-1 (10 B) and t-2 (50 B) of the same topic. Keeping t-0 and
    # sending t-1 would lift broker 0 to 150 B, above the largest broker (120 B, broker 1): t-2 goes, 50 B saved
    st = _state({0: (0,), 1: (0,), 2: (0,), 3: (1,)}, {0: 100, 1: 10, 2: 50, 3: 120})
    st.move(0, 0, 2)
    before = _copied(st)
    assert fewer_bytes(st, None)
    assert before - _copied(st) == 50
    assert [tuple(r) for r in st.reps] == [(0,), (0,), (2,), (1,)]
    assert (st.count, st.bytes, st.copies) == ({0: 2, 1: 1, 2: 1}, {0: 110, 1: 120, 2: 50}, 1)
    # with a limit of 160 B per broker, t-1 fits: 90 B saved (the byte goal's limit, above the largest broker)
    st = _state({0: (0,), 1: (0,), 2: (0,), 3: (1,)}, {0: 100, 1: 10, 2: 50, 3: 120})
    st.move(0, 0, 2)
    before = _copied(st)
    assert fewer_bytes(st, {None: 160.0})
    assert before - _copied(st) == 90
    assert [tuple(r) for r in st.reps] == [(0,), (2,), (0,), (1,)]


def test_an_exchange_keeps_rack_safety_and_the_preferred_leaders():
    # racks a, b, c, b, c: t-0 (0, 1) sent its replica on broker 0 to broker 2. t-1 (0, 4), the smallest, would end
    # on brokers 2 and 4, both in rack c; t-2 (0, 3) goes instead. Both preferred leaders change
    # broker (t-0's goes back to 0, t-2's to 2): every broker leads as many as before
    racks = {0: "a", 1: "b", 2: "c", 3: "b", 4: "c"}
    st = _state({0: (0, 1), 1: (0, 4), 2: (0, 3)}, {0: 100, 1: 10, 2: 30}, brokers=5, racks=racks)
    st.move(0, 0, 2)
    lead = dict(st.lead)
    before = _copied(st)
    assert fewer_bytes(st, {None: 200.0})
    assert before - _copied(st) == 70
    assert [tuple(r) for r in st.reps] == [(0, 1), (0, 4), (2, 3)]
    assert st.lead == lead == {0: 2, 1: 0, 2: 1, 3: 0, 4: 0}
    # no racks: t-0 (0, 1) sent broker 0's replica, its preferred leader, to broker 2; t-2 (1, 0) could go instead,
    # but keeping t-0 home gives broker 0 its lead back while t-2's stays on broker 1: broker 0 would lead 2 where
    # every broker leads 1 (the spread widens), so nothing changes
    st = _state({0: (0, 1), 1: (0, 2), 2: (1, 0)}, {0: 100, 1: 10, 2: 20})
    st.move(0, 0, 2)
    assert st.reps[0] == [2, 1] and st.lead == {0: 1, 1: 1, 2: 1}
    assert not fewer_bytes(st, None)
    # where t-0's leader is broker 1 (no leader changes), t-2 goes instead: 80 B saved
    st = _state({0: (1, 0), 1: (0, 2), 2: (1, 0)}, {0: 100, 1: 10, 2: 20})
    st.move(0, 0, 2)
    before = _copied(st)
    assert fewer_bytes(st, None)
    assert before - _copied(st) == 80
    assert [tuple(r) for r in st.reps] == [(1, 0), (0, 2), (1, 2)]
    assert st.lead == {0: 1, 1: 2, 2: 0}


def test_unknown_sizes_and_replicas_that_came_back_are_left_alone():
    # t-1's size is unknown: byte goals never move it; t-0 came from broker 0 and t-2 went back there (no departure)
    st = _state({0: (0,), 1: (0,), 2: (1,)}, {0: 100, 1: None, 2: 5})
    st.move(0, 0, 2)
    assert not fewer_bytes(st, None)
    assert [tuple(r) for r in st.reps] == [(2,), (0,), (1,)]


def test_a_chain_of_two_moves_through_a_broker_becomes_one():
    # t-0 went 0 -> 1 and t-1 (of the same topic) 1 -> 2: t-0 goes 0 -> 2 and t-1 stays, one move and 50 B fewer,
    # every broker's count as it was
    st = _state({0: (0,), 1: (1,)}, {0: 1, 1: 50})
    st.move(0, 0, 1)
    st.move(1, 1, 2)
    assert (st.copies, st.count) == (2, {0: 0, 1: 1, 2: 1})
    assert shortcuts(st, {None: 50.0}) == 1
    assert [tuple(r) for r in st.reps] == [(2,), (1,)]
    assert (st.copies, st.count, st.bytes) == (1, {0: 0, 1: 1, 2: 1}, {0: 0, 1: 50, 2: 1})
    # a broker may hold at most 40 B: keeping t-1 would take broker 1 to 50 B
    st = _state({0: (0,), 1: (1,)}, {0: 1, 1: 50})
    st.move(0, 0, 1)
    st.move(1, 1, 2)
    assert shortcuts(st, {None: 40.0}) == 0
    assert [tuple(r) for r in st.reps] == [(1,), (2,)]


def test_an_exchange_the_destination_refuses_goes_through_another_arrival():
    # t-0 (100 B) went 0 -> 2; t-1 (10 B), staying on 0, is on 2 already; t-2 (50 B) went 4 -> 3. t-0 comes home,
    # t-2 goes to 2 in its place and t-1 to 3: the same counts per broker and moves, 90 B fewer
    st = _state({0: (0, 1), 1: (0, 2), 2: (1, 4)}, {0: 100, 1: 10, 2: 50}, brokers=5)
    st.move(0, 0, 2)
    st.move(2, 4, 3)
    count, before = dict(st.count), _copied(st)
    assert fewer_bytes(st, None)
    assert [tuple(r) for r in st.reps] == [(0, 1), (3, 2), (1, 2)]
    assert (st.count, st.copies, before - _copied(st)) == (count, 2, 90)


def test_room_under_the_limit_made_by_trading_arrivals():
    # broker 0 holds 290 B against a limit of 305 B: keeping t-0 (100 B) and sending t-1 (10 B) would take it to
    # 380 B. u-0 (80 B) arrived there and u-1 (5 B) at broker 2, which sends nothing away: they trade destinations
    # (0 drops to 215 B), then the exchange fits: 90 B fewer copied
    t = Topic("t", tuple(Partition("t", i, (0,), size=s) for i, s in enumerate((100, 10, 200))))
    u = Topic("u", tuple(Partition("u", i, (1,), size=s) for i, s in enumerate((80, 5))))
    c = Cluster(brokers=tuple(Broker(b) for b in range(3)), topics=(t, u))
    st = State(c, select_partitions(c, None), [0, 1, 2], ())
    st.move(0, 0, 2)  # t-0
    st.move(3, 1, 0)  # u-0
    st.move(4, 1, 2)  # u-1
    before = _copied(st)
    assert st.bytes == {0: 290, 1: 0, 2: 105}
    assert fewer_bytes(st, {None: 305.0})
    assert [tuple(r) for r in st.reps] == [(0,), (2,), (0,), (2,), (0,)]
    assert (st.bytes, before - _copied(st)) == ({0: 305, 1: 0, 2: 90}, 90)


def test_room_left_after_every_broker_exchanged_is_spare_for_trades():
    # as above, but u-1 (5 B) arrived at broker 3, which sends v-0 (50 B) away: no trade partner at first (only
    # brokers that send nothing away may take an arrival while they may still need their room for their own
    # exchanges), so broker 0 keeps sending t-0; broker 3 keeps v-0 and sends v-1 (20 B) instead (30 B fewer).
    # Then the room every broker has left is spare: u-0 (80 B) and u-1 trade destinations (broker 3: 55 -> 130 B,
    # broker 0: 290 -> 215 B) and broker 0 keeps t-0 and sends t-1 (10 B): 90 B fewer, 120 B in all
    t = Topic("t", tuple(Partition("t", i, (0,), size=s) for i, s in enumerate((100, 10, 200))))
    u = Topic("u", tuple(Partition("u", i, (1,), size=s) for i, s in enumerate((80, 5))))
    v = Topic("v", tuple(Partition("v", i, (3,), size=s) for i, s in enumerate((50, 20))))
    c = Cluster(brokers=tuple(Broker(b) for b in range(4)), topics=(t, u, v))
    st = State(c, select_partitions(c, None), [0, 1, 2, 3], ())
    st.move(0, 0, 2)  # t-0
    st.move(3, 1, 0)  # u-0
    st.move(4, 1, 3)  # u-1
    st.move(5, 3, 2)  # v-0
    count, before = dict(st.count), _copied(st)
    assert st.bytes == {0: 290, 1: 0, 2: 150, 3: 25}
    assert fewer_bytes(st, {None: 305.0})
    assert [tuple(r) for r in st.reps] == [(0,), (2,), (0,), (3,), (0,), (3,), (2,)]
    assert (st.count, st.bytes, before - _copied(st)) == (count, {0: 305, 1: 0, 2: 30, 3: 130}, 120)


_REFUSAL_PARTS = (((0, 1), 100), ((1, 2), 40), ((0, 2), None), ((3, 4), 10), ((3, 0), 70), ((2, 4), 0))


def test_an_exchanges_refusal_is_checks_verdict_on_its_two_changes():
    # `_Swaps.refusal` spells out `check` of ((p, c, a), (q, a, c)): the same verdict for every p, q, a, c of a
    # placement with moves made, racks, an unknown size beside a size of 0, with and without brokers that report
    # their usable bytes, under no limit, a loose one and one that holds every broker at its bytes (so that every
    # verdict, disk space among them, occurs)
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b"}
    t = Topic("t", tuple(Partition("t", i, r, size=s) for i, (r, s) in enumerate(_REFUSAL_PARTS)))
    verdicts: Counter = Counter()
    for usable in ({0: 20, 1: 30, 3: 90, 4: 50}, {}):
        brokers = tuple(Broker(b, rack=racks[b], usable_bytes=usable.get(b)) for b in range(5))
        c = Cluster(brokers=brokers, topics=(t,))
        st = State(c, select_partitions(c, None), list(range(5)), ())
        for i, src, dst in ((0, 0, 3), (1, 1, 4), (2, 0, 1), (4, 3, 1), (5, 2, 0)):
            st.move(i, src, dst)
        for leaders, limit in ((True, None), (False, {None: 260.0}), (False, {None: 0.0})):
            swaps = _Swaps(st, limit, leaders)
            for p, q, a, dst in itertools.product(range(6), range(6), range(5), range(5)):
                if p != q:
                    why = swaps.refusal(p, q, a, dst)
                    assert why == swaps.check(((p, dst, a), (q, a, dst))), (usable, leaders, p, q, a, dst)
                    verdicts[why] += 1
    assert verdicts == {"placed": 4104, "bytes": 296, "space": 16, "racks": 40, "leaders": 2, None: 42}


def _topics(reps: dict[str, tuple[tuple[int, ...], ...]], sizes: dict[str, tuple[int, ...]], brokers: int) -> State:
    ts = tuple(
        Topic(name, tuple(Partition(name, i, r, size=sizes[name][i]) for i, r in enumerate(rs)))
        for name, rs in reps.items()
    )
    c = Cluster(brokers=tuple(Broker(b) for b in range(brokers)), topics=ts)
    return State(c, select_partitions(c, None), list(range(brokers)), ())


def test_an_exchange_across_topics_trades_their_plus_ones(monkeypatch):
    # topics a (a-0 10 B on broker 0, a-1 60 B on 2) and b (b-0 100 B on 0, b-1 50 B on 2); b-0 went 0 -> 1. Each topic
    # has 2 replicas on 3 brokers: one on each of two brokers (its +1s). Broker 0 keeps b-0 and sends a-0 to broker 1
    # instead: a's +1 goes from 0 to 1, b's from 1 to 0, every broker keeps its count and the move, 90 B fewer
    # (no exchange within a topic could: broker 0 holds no other replica of b)
    sizes = {"a": (10, 60), "b": (100, 50)}
    st = _topics({"a": ((0,), (2,)), "b": ((0,), (2,))}, sizes, 3)
    st.move(2, 0, 1)
    before = _copied(st)
    assert fewer_bytes(st, None)
    assert before - _copied(st) == 90
    assert [tuple(r) for r in st.reps] == [(1,), (2,), (0,), (2,)]
    assert (st.count, st.bytes, st.copies, st.lead) == ({0: 1, 1: 1, 2: 2}, {0: 100, 1: 10, 2: 110}, 1, st.count)
    assert [st.holders[t] for t in (0, 1)] == [{1: 1, 2: 1}, {0: 1, 2: 1}]
    # without these exchanges (`lighter_leaver.PLUS_ONES` 0) nothing changes
    monkeypatch.setattr(lighter_leaver, "PLUS_ONES", 0)
    st = _topics({"a": ((0,), (2,)), "b": ((0,), (2,))}, sizes, 3)
    st.move(2, 0, 1)
    assert not fewer_bytes(st, None)
    assert [tuple(r) for r in st.reps] == [(0,), (2,), (1,), (2,)]
    monkeypatch.undo()
    # with topic c's 105 B on broker 0 too (larger than b-0: no exchange for it), broker 0 is the largest (115 B) and
    # would rise to 205 B: the exchanges across topics never lift a broker above the largest of its group (the bytes
    # max/mean stays what it is), even under a byte limit of 250 B
    st = _topics({"a": ((0,), (2,)), "b": ((0,), (2,)), "c": ((0,),)}, {**sizes, "c": (105,)}, 3)
    st.move(2, 0, 1)
    assert not fewer_bytes(st, {None: 250.0})
    assert [tuple(r) for r in st.reps] == [(0,), (2,), (1,), (2,), (0,)]
