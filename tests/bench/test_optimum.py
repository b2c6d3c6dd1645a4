"""The certifier (bench/peers/optimum.py): the fewest moves, then bytes, of any plan reaching the goal figures a given
plan reached, on clusters small enough to solve by hand, and on a seeded scale-out where our plan is that optimum."""

from __future__ import annotations

from pathlib import Path

from bench.peers.optimum import at_counts, certify, leaders_fit, spec
from planner.model import Broker, Cluster, Partition, Topic, TopicPartition


def _cluster(assign: dict[int, list[list[int]]], brokers: int, racks: str = "") -> Cluster:
    """Topic "t<i>" with the given replica lists; broker b in rack racks[b] (no racks when empty)."""
    return Cluster(
        brokers=tuple(Broker(b, rack=racks[b] if racks else None) for b in range(brokers)),
        topics=tuple(
            Topic(f"t{i}", tuple(Partition(f"t{i}", p, tuple(r)) for p, r in enumerate(parts)))
            for i, parts in sorted(assign.items())
        ),
    )


def test_the_fewest_moves_then_the_fewest_bytes_within_the_byte_limit():
    # six partitions of one topic (RF 1) all on broker 0 of 3: each broker ends with 2, so 4 move. Sizes 30, 25, 20,
    # 10, 10, 5 (100 in all, mean 33.3, limit 1.10 x mean = 36.7): broker 0 keeps two replicas of 36.7 at most,
    # the most being 30 + 5 = 35 (keeping 30 + 25 would move only 45 but leave 55 on it), so 65 bytes move; the rest
    # fit two by two under the limit (25 + 10, 20 + 10)
    before = _cluster({0: [[0], [0], [0], [0], [0], [0]]}, 3)
    sizes = dict(zip((TopicPartition("t0", p) for p in range(6)), (30, 25, 20, 10, 10, 5)))
    ours = _cluster({0: [[1], [2], [0], [0], [2], [1]]}, 3)  # keeps 20 + 10: 70 bytes moved, brokers at 30, 35, 35
    o = certify(before, ours, sizes, [0, 1, 2])
    assert (o.moves.low, o.moves.high, o.moves.proven, o.leaders) == (4, 4, True, "checked")
    assert (o.bytes.low, o.bytes.high, o.bytes.proven) == (65, 65, True)


def test_the_fewest_bytes_at_our_own_counts_per_topic_and_broker():
    # the case above: our plan keeps 20 + 10 on broker 0 and sends two replicas to each other broker (70 bytes).
    # With those counts (2, 2, 2) and as many replicas kept, only which two stay on broker 0 and where the others
    # go is left: 30 + 5 stay (35, under the limit of 36.7), 65 bytes move, proven; the LP alone bounds it at 63
    before = _cluster({0: [[0], [0], [0], [0], [0], [0]]}, 3)
    sizes = dict(zip((TopicPartition("t0", p) for p in range(6)), (30, 25, 20, 10, 10, 5)))
    ours = _cluster({0: [[1], [2], [0], [0], [2], [1]]}, 3)
    b = at_counts(before, ours, sizes, [0, 1, 2])
    assert (b.low, b.high, b.proven) == (65, 65, True)
    lp = at_counts(before, ours, sizes, [0, 1, 2], integral=False)
    assert (lp.low, lp.high, lp.proven) == (63, 70, False)
    # a plan that swaps two partitions of a topic between two brokers keeps fewer replicas in place than its counts
    # allow (none of 2): not bracketed here (0 below, its own 30 bytes above)
    sizes = {TopicPartition("t0", 0): 10, TopicPartition("t0", 1): 20}
    b = at_counts(_cluster({0: [[0], [1]]}, 2), _cluster({0: [[1], [0]]}, 2), sizes, [0, 1])
    assert (b.low, b.high, b.proven) == (0, 30, False)


def test_the_byte_limit_is_at_least_what_our_plan_reached():
    # 50, 10, 10, 10 on broker 0 of 2, RF 1: two move; any split of two and two leaves 60 on one broker, above
    # 1.10 x the mean of 40, so the limit is our plan's largest broker (60): keeping 50 + 10 moves 20 bytes
    before = _cluster({0: [[0], [0], [0], [0]]}, 2)
    sizes = dict(zip((TopicPartition("t0", p) for p in range(4)), (50, 10, 10, 10)))
    ours = _cluster({0: [[1], [0], [0], [1]]}, 2)  # 60 bytes moved
    o = certify(before, ours, sizes, [0, 1])
    assert (o.moves.high, o.moves.proven, o.bytes.high, o.bytes.proven) == (2, True, 20, True)


def test_rack_safety_as_strong_as_ours():
    # racks a a b b; two partitions of RF 2, each on both brokers of one rack, counts already even. A plan that
    # makes both rack-safe must move one replica of each to the other rack (2 moves); one that leaves them as they
    # are needs none
    before = _cluster({0: [[0, 1], [2, 3]]}, 4, racks="aabb")
    safe = _cluster({0: [[0, 2], [3, 1]]}, 4, racks="aabb")
    o = certify(before, safe, None, [0, 1, 2, 3])
    assert (o.moves.low, o.moves.high, o.bytes) == (2, 2, None)
    left = certify(before, before, None, [0, 1, 2, 3]).moves
    assert (left.low, left.high, left.proven) == (0, 0, True)


def test_a_decommission_moves_every_replica_off_the_broker_at_least():
    # broker 2 leaves; its 3 replicas (one per partition, RF 2 on 3 brokers) must go, and brokers 0 and 1 end with
    # 3 each: 3 moves, which our plan makes too
    before = _cluster({0: [[0, 2], [1, 2], [2, 0]]}, 3)
    ours = _cluster({0: [[0, 1], [1, 0], [1, 0]]}, 3)
    assert certify(before, ours, None, [0, 1]).moves.high == 3


def test_leaders_that_cannot_be_spread_among_the_chosen_replicas_are_found():
    # three partitions all on brokers 0 and 1 of 3: whatever leads them, broker 2 leads none and 0 or 1 leads two
    before = _cluster({0: [[0, 1], [1, 2], [2, 0]]}, 3)
    s = spec(before, before, None, [0, 1, 2])
    assert s.leader_spread == 0
    assert leaders_fit(s, [[0, 1], [0, 1], [0, 1]]) is False
    assert leaders_fit(s, [[0, 1], [1, 2], [2, 0]]) is True


def test_our_scale_out_plan_makes_the_fewest_moves_possible():
    # the peer benchmark's 9 -> 12 scale-out with sizes: no plan reaching every goal figure ours reached (replica,
    # topic and leader spreads of 1, rack-safe) makes fewer than our 568 moves (our own bound says 567)
    from bench.peers.scenarios import scale_out
    from planner.rebalance.goals import balance
    from planner.rebalance.moves import with_sizes

    s = scale_out()
    plan = balance(with_sizes(s.cluster, s.sizes))
    o = certify(s.cluster, plan.after, None, s.targets)
    assert (o.moves.low, o.moves.high, o.moves.proven, o.leaders) == (568, 568, True, "checked")
    # 569 since the byte goal's floor (issue 32) fills the new brokers to 0.9 x the mean: one move more than the
    # fewest for the figures the certifier is given here (no sizes), the price of that floor
    assert plan.replica_moves == 569


def test_the_planner_never_imports_scipy():
    # scipy is a bench and test extra (pyproject's dev and bench): kafka-planner itself installs without it
    planner = Path(__file__).resolve().parents[2] / "planner"
    assert [str(f) for f in planner.rglob("*.py") if "scipy" in f.read_text(encoding="utf-8")] == []


def test_above_the_column_limit_the_bytes_are_bracketed_by_a_relaxation_and_a_restriction(monkeypatch):
    # the first case again, solved as the 60-broker scenario is: below, the LP of the relaxation that drops the
    # destinations (broker 0 keeps two replicas, fractionally up to the limit of 36.7: 63.3 move); above, the whole
    # model on the brokers stage 1 used (here all three): 65
    from bench.peers import optimum

    monkeypatch.setattr(optimum, "FULL_COLUMNS", 0)
    before = _cluster({0: [[0], [0], [0], [0], [0], [0]]}, 3)
    sizes = dict(zip((TopicPartition("t0", p) for p in range(6)), (30, 25, 20, 10, 10, 5)))
    ours = _cluster({0: [[1], [2], [0], [0], [2], [1]]}, 3)
    o = certify(before, ours, sizes, [0, 1, 2])
    assert (o.moves.high, o.bytes.low, o.bytes.high, o.bytes.proven) == (4, 63, 65, False)


def test_the_issues_scale_out_plan_makes_the_fewest_moves_possible():
    # the issue's 9 -> 12 scale-out (tests/rebalance/rebalance_scenarios.py, no sizes): 625 moves, and no plan that
    # reaches the goal figures ours reached makes fewer (HiGHS proves it)
    from planner.rebalance.goals import balance
    from tests.rebalance.rebalance_scenarios import scale_out

    c = scale_out()
    plan = balance(c)
    o = certify(c, plan.after, None, c.broker_ids)
    assert (o.moves.low, o.moves.high, o.moves.proven, o.leaders) == (625, 625, True, "checked")
    assert plan.replica_moves == 625


def test_the_peer_bench_prints_the_certified_optimum_beside_ours_and_our_bounds():
    # the line `python -m bench peers` prints after each table, on the RF change (72 replicas added: nothing to
    # choose but where, and ours is the optimum); only the solver's times vary from run to run
    import re

    from bench.peers.harness import Row, certificate
    from bench.peers.scenarios import raise_rf
    from bench.peers.score import score
    from planner.rebalance.moves import with_sizes
    from planner.rebalance.replication import set_replication_factor

    s = raise_rf()
    plan = set_replication_factor(with_sizes(s.cluster, s.sizes), "orders", 3)
    changes = {tp: tuple(r) for tp, r in plan.proposed.items()}
    ours = score(s.cluster, s.cluster.with_assignment(changes), s.sizes, s.targets)
    row = Row("kafka-planner", ours, 0.0, "", changes=changes, bounds=(plan.lower_bound, plan.bytes_lower_bound))
    line = re.sub(r"[0-9.]+ s wall, [0-9.]+ s CPU", "T", certificate(s, [row], (30.0, 30.0)))
    assert line == (
        "fewest possible (MILP, HiGHS; the goals ours reached): 72 moves (proven; T), then at that many moves "
        "32.95 GiB (proven; T); at ours' count of each topic per broker at least 32.95 GiB (LP; T); ours 72 moves "
        "(bound 72), 33.0 GiB (bound 33.0 GiB)"
    )
