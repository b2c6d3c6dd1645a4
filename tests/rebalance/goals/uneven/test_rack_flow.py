"""goals/uneven/rack_flow.py: where racks of different sizes keep the replica counts wider than 1, the fewest moves to
counts within a spread and topics within 1 where the topic goal balances them, as a min-cost flow. Its least is the
printed lower bound there: checked against brute force over every rack-safe placement of small random clusters, and
against the certifier's MILP (bench/peers/optimum.py) for the figures our plan reached."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, product
from math import prod

from testkit import build_cluster

from bench.gen_cluster import uneven_racks
from bench.peers.optimum import certify
from bench.peers.scenarios import SCENARIOS
from planner.rebalance.decommission import decommission
from planner.rebalance.goals import balance
from planner.rebalance.goals.geometry import forced_classes
from planner.rebalance.goals.state import State
from planner.rebalance.goals.uneven import rack_flow
from planner.rebalance.moves import select_partitions, with_sizes
from tests.rebalance.goals.test_topic_spread import _cluster

RACKS = ("aab", "aaab", "aabc", "aaabbc", "aabbc", "aaabc")  # a rack per broker: racks of different sizes


def _random_cluster(rng: random.Random, limit: int = 20_000, most: int = 4):
    """A rack layout of RACKS, 1 to 3 topics of 1 to `most` partitions, each of replication factor 1 to the racks,
    placed rack-safe at random; the targets all brokers or all but one (a decommission). At most `limit` rack-safe
    placements over the targets (for `_least`)."""
    while True:
        racks = rng.choice(RACKS)
        n, kinds = len(racks), sorted(set(racks))
        by_rack = {k: [b for b in range(n) if racks[b] == k] for k in kinds}
        topics = {}
        for t in range(rng.randint(1, 3)):
            parts = {}
            for p in range(rng.randint(1, most)):
                chosen = rng.sample(kinds, rng.randint(1, len(kinds)))
                parts[p] = tuple(rng.choice(by_rack[k]) for k in chosen)
            topics[f"t{t}"] = parts
        c = build_cluster(n, racks=list(racks), topics=topics)
        targets = list(range(n))
        if rng.random() < 0.4:
            targets.remove(rng.randrange(n))
        if len({racks[b] for b in targets}) < len(kinds) or len({racks.count(racks[b]) for b in targets}) < 2:
            continue
        st = State(c, select_partitions(c), targets, ())
        if rack_flow.applies(st) and prod(len(_choices(st, r)) for r in st.home) <= limit:
            return c, targets, st


def _choices(st: State, replicas) -> list[tuple[int, ...]]:
    """Every rack-safe set of target brokers for a partition of this many replicas (one per rack at most)."""
    return [c for c in combinations(st.targets, len(replicas)) if len({st.rack_of[b] for b in c}) == len(c)]


def _least(st: State, spread: int) -> int | None:
    """Brute force: the fewest moves of any rack-safe placement with counts within `spread` and each topic within 1
    over all targets, or in each class where racks force it (`forced_classes` of the count range)."""
    n = len(st.targets)
    total = sum(len(r) for r in st.home)
    ranges = [(lo, lo + spread) for lo in range(max(0, -(-total // n) - spread), total // n + 1)]
    classes = {r: forced_classes(st, *r) for r in ranges}
    topics = len(st.topic_names)
    best = None
    for choice in product(*(_choices(st, r) for r in st.home)):
        counts = Counter(b for r in choice for b in r)
        tc = Counter((st.topic_of[i], b) for i, r in enumerate(choice) for b in r)
        for lo, hi in ranges:
            if any(not lo <= counts[b] <= hi for b in st.targets):
                continue
            forced = classes[(lo, hi)]
            groups = [[m for m, _, _ in forced[t]] if t in forced else [st.targets] for t in range(topics)]
            if all(
                max(tc[(t, b)] for b in m) - min(tc[(t, b)] for b in m) <= 1 for t in range(topics) for m in groups[t]
            ):
                moves = sum(len(set(r) - set(h)) for r, h in zip(choice, st.home))
                best = moves if best is None else min(best, moves)
    return best


def test_the_bound_is_the_least_of_brute_force_over_every_rack_safe_placement():
    rng = random.Random(29)
    seen = Counter()
    for _ in range(150):
        c, targets, st = _random_cluster(rng)
        spread = rng.randint(1, 3)
        bound = rack_flow.lower_bound(st, spread)
        least = _least(st, spread)
        assert bound == least, (c, targets, spread)
        seen[bound is None] += 1
    assert seen == Counter({False: 137, True: 13})  # 13 with no such placement at all


def test_the_bound_plans_print_is_never_above_the_certified_fewest_moves_for_their_figures_and_plans_settle():
    rng = random.Random(30)
    seen = Counter()
    for _ in range(100):
        c, targets, _ = _random_cluster(rng, limit=10**99, most=16)
        plan = balance(c, brokers=targets, leaders=False)
        if not any(n.goal == "replica-count" and n.kind == "unmet" for n in plan.notes):
            seen["met"] += 1
            continue
        after = c.with_assignment(plan.proposed)
        assert balance(after, brokers=targets, leaders=False).replica_moves == 0  # the applied plan is a fixed point
        o = certify(c, after, None, targets, seconds=30)
        assert o.moves.proven and plan.lower_bound <= o.moves.low <= plan.replica_moves
        seen["tight" if plan.lower_bound == o.moves.low else "below"] += 1
        seen["plan at the bound"] += plan.replica_moves == plan.lower_bound
    # where the count goal is out of reach: the bound the certifier's optimum in 31 of 32 (below it in one, whose
    # MILP holds the topics to what the plan reached over all brokers too), 29 plans on it
    assert seen == Counter({"met": 68, "tight": 31, "below": 1, "plan at the bound": 29})


def test_the_decommission_with_racks_of_4_3_3_brokers_meets_the_certified_fewest_moves():
    # the peer scenario: 541 partitions of RF 3 keep one replica per rack, 120 of RF 2 may change racks; counts
    # 165..201 (spread 36) and 23 topics wider than 1 are what racks force. The certifier's MILP proves 283 moves
    # the fewest for the figures our plan reaches; the bound is that figure
    s = SCENARIOS["decommission"]()
    plan = decommission(with_sizes(s.cluster, s.sizes), s.decommission)
    after = s.cluster.with_assignment(plan.proposed)
    o = certify(s.cluster, after, None, s.targets, seconds=60)
    assert (plan.lower_bound, o.moves.low, o.moves.high) == (283, 283, 283)
    # 283 before the byte goal's floor (issue 32), which takes one move more (the certifier counts no bytes here)
    assert plan.replica_moves == 284


def test_racks_of_7_4_3_plan_the_fewest_moves_to_the_figures_the_goals_reach():
    # RF 3 one replica per rack and RF 2 on two racks, each replica on a random broker of its rack: racks force the
    # counts and some topics wider than 1. The goals reach their figures with moves the figures do not need (seed 6:
    # 148 moves where the certifier's MILP proves 133 the fewest for the same figures); the least-cost flow over the
    # count range and each wider topic's ranges per broker they reached (`_refit`) finds that 133. Seed 5: 152 -> 142
    # moves, one topic more within 1 where balanced (6 unmet -> 5), the fewest for those figures. Seed 7: 136 -> 120
    # (116 the fewest): the flow's placement balances the leaders of fewer topics until those are held as the goals
    # placed them. The bound counts the topics left unmet within the spread they reached over all brokers: 127 -> 136,
    # 128 -> 130, 107 -> 108.
    # after: replica spread, leader spread, largest topic spread, topics above 1, largest topic leader spread, topics
    # above 1, rack-unsafe partitions (before the change: seed 5 (23, 1, 7, 12, 1, 0, 0), seeds 6 and 7 the same)
    # Since the count goal goes to the narrowest count range racks allow by `count_range` (where it took `_narrow`'s
    # moves before; the same count ranges here): seed 5 142 -> 139 moves at the same figures (certified 142 -> 138),
    # bound 136 -> 135; seed 7 the same 120 moves, one topic more with its leaders above a spread of 1 (certified
    # 116 -> 114 for those figures), bound 108 -> 109
    # Since the topic goal keeps the most topics within 1 the count range allows (`topic_keep`), the RF 2 topics
    # above 1 where balanced (5, 2, 4 unmet before) are 2, 1, 2 (the fewest, as an aggregate MILP finds: the
    # test_topic_keep cases), all count-forced, at 146, 140, 120 moves (certified 143, 138, 119 for those figures);
    # bounds 140, 137, 114 (the flow's least with those topics within the spread they reached)
    # Since `refit` also tries each wider topic held no further from its even share on each broker than the goals
    # left it (where the flow within the ranges reached finds a placement a second plan moves further from, its
    # replicas off their shares): seed 6 140 -> 139, seed 7 120 -> 119 (the certified fewest), the same figures
    cases = [
        (5, (146, 140, 143, 143), 2, (23, 1, 7, 8, 1, 0, 0)),
        (6, (139, 137, 138, 138), 1, (14, 1, 6, 5, 1, 0, 0)),
        (7, (119, 114, 119, 119), 2, (27, 1, 9, 10, 4, 2, 0)),
    ]
    for seed, figures, wide, placed in cases:
        c = _cluster(seed, "aaaaaaabbbbccc", 12, 40)
        plan = balance(c)
        after = c.with_assignment(plan.proposed)
        o = certify(c, after, None, sorted(c.broker_ids), seconds=60)
        assert (plan.replica_moves, plan.lower_bound, o.moves.low, o.moves.high) == figures
        kinds = [(n.goal, n.kind) for n in plan.notes][:3]
        assert kinds == [("replica-count", "unmet"), ("topic-spread", "rack-forced"), ("topic-spread", "count-forced")]
        assert plan.notes[2].count == wide
        a = plan.scored[0].after
        assert (a.replica_spread, a.leader_spread, a.topic_replica_spread, a.topics_replica_spread_over_1) == placed[:4]
        assert (a.topic_leader_spread, a.topics_leader_spread_over_1, a.rack_unsafe) == placed[4:]
        assert balance(after).replica_moves == 0  # the applied plan is a fixed point


def test_the_refit_costs_replicas_off_their_even_share_where_a_second_plan_would_move_them_back():
    # 8 topics of 5 to 30 partitions on racks of 7/4/3: one topic (t7) the counts and racks keep wider than 1. The
    # flow to the figures the goals reached, t7 held to the range it reached on each broker (2..5), finds 61 moves
    # (the certifier's fewest for those figures) but leaves 8 replicas off their topics' even shares where the goals
    # left 3; a second plan of it moves them back (65 copies in all), so that refit is not kept. With each replica
    # off its share costing as much as a move, the flow finds 62 (before: 64, the goals' own run)
    c = uneven_racks(4, "aaaaaaabbbbccc", 8, 5, 30)
    plan = balance(c)
    after = c.with_assignment(plan.proposed)
    a = plan.scored[0].after
    assert (plan.replica_moves, plan.lower_bound) == (62, 60)
    assert (a.replica_spread, a.topic_replica_spread, a.topics_replica_spread_over_1) == (9, 5, 5)
    assert (a.leader_spread, a.topic_leader_spread, a.topics_leader_spread_over_1, a.rack_unsafe) == (1, 1, 0, 0)
    assert [(n.goal, n.kind, n.count) for n in plan.notes][:3] == [
        ("replica-count", "unmet", 9),
        ("topic-spread", "rack-forced", 4),
        ("topic-spread", "count-forced", 1),
    ]
    o = certify(c, after, None, sorted(c.broker_ids), seconds=60)
    assert (o.moves.low, o.moves.high) == (61, 61)
    assert balance(after).replica_moves == 0  # the applied plan is a fixed point
