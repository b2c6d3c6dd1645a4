"""`reassign elect-leaders` runs rebalance's preferred-leader goal (`goals.preferred_leaders`): each topic's leaders
per online broker within 1 where the replica lists allow it, every broker's within 1, and an internal topic never
wider than it went in; the summary shows both spreads with their lower bounds (issue 30)."""

from __future__ import annotations

import random
from collections import Counter
from itertools import product

from testkit import build_cluster

from planner.formats.plan import plan_stats, render_plan_text
from planner.java import JavaRandom
from planner.model import Broker, Cluster, TopicPartition, make_topic
from planner.placement.adminutils import assign_replicas_to_brokers
from planner.rebalance.execution import leader_election
from planner.rebalance.goals.preferred_leaders import _led, elect_leaders, leader_bounds

TP = TopicPartition


def sorted_lists_cluster(seed: int = 2) -> Cluster:
    """Issue 30's case: 12 brokers on 3 racks, 34 topics of 6-48 partitions (RF 3, some 2) placed by AdminUtils with
    their replica lists then sorted (low ids lead), and `__consumer_offsets` (50 x 3) as Kafka placed it."""
    rng, jrnd = random.Random(seed), JavaRandom(seed)
    racks = {b: "abc"[(b - 1) % 3] for b in range(1, 13)}
    metas = [(b, racks[b]) for b in sorted(racks)]
    topics = []
    for i in range(34):
        n, rf = rng.choice([6, 8, 12, 16, 18, 24, 30, 36, 48]), 3 if rng.random() < 0.85 else 2
        placed = assign_replicas_to_brokers(metas, n, rf, rnd=jrnd)
        topics.append(make_topic(f"topic-{i:02d}", {p: sorted(r) for p, r in placed.items()}))
    topics.append(make_topic("__consumer_offsets", assign_replicas_to_brokers(metas, 50, 3, rnd=jrnd)))
    brokers = tuple(Broker(b, rack=racks[b]) for b in sorted(racks))
    return Cluster(brokers=brokers, topics=tuple(sorted(topics, key=lambda t: t.name)))


def _goal_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "leader spread" in line]


def test_sorted_lists_on_12_brokers_every_topic_and_the_offsets_within_1():
    # Before: broker 1 leads most of every topic. The breadth-first chains balanced the brokers (220 -> 1) but left
    # the largest topic at 12 (31 -> 34 topics above 1) and spread __consumer_offsets from 1 to 11; the goal brings
    # every topic within 1, the offsets kept at 1.
    c = sorted_lists_cluster()
    ex = leader_election(c, None)
    assert _goal_lines(render_plan_text(ex.plan)) == [
        "  preferred-leader spread:        220 -> 1 (lower bound 1)",
        "  largest topic leader spread:    12 -> 1 (31 -> 0 topics above 1; lower bound 1)",
        "  internal-topic leader spread:   1 -> 1",
    ]
    assert (len(ex.plan.proposed), ex.plan.replica_moves, len(ex.elect)) == (320, 0, 320)
    assert plan_stats(ex.plan)["leader_bounds"] == {"leader_spread": 1, "topic_leader_spread": 1}
    assert elect_leaders(c.with_assignment(ex.plan.proposed)) == ({}, [])  # a second run reorders nothing


def test_an_internal_topic_is_never_made_wider():
    # Brokers 0-3. __consumer_offsets is led by 0, 1, 2, 3 (spread 0); topic t's two single replicas sit on broker 0,
    # which leads 3, the others 1 each. Every broker within 1 needs broker 0 to lead no offsets partition, so another
    # broker leads two of them (the offsets at 2): the goal alone does that; the offsets keep their leaders instead
    # and the brokers their spread of 2 (the bound of 1 is only reached by widening the offsets).
    c = build_cluster(
        4,
        topics={
            "__consumer_offsets": {0: (0, 1), 1: (1, 2), 2: (2, 3), 3: (3, 0)},
            "t": {0: (0,), 1: (0,)},
        },
    )
    alone = _led(c, list(c.partitions()), [])
    assert [r[0] for r in alone.reps[:4]] != [0, 1, 2, 3]
    proposed, _ = elect_leaders(c)
    assert proposed == {}
    ex = leader_election(c, None)
    assert _goal_lines(render_plan_text(ex.plan)) == [
        "  preferred-leader spread:        2 -> 2 (lower bound 1)",
        "  largest topic leader spread:    2 -> 2 (1 -> 1 topics above 1; lower bound 2)",
        "  internal-topic leader spread:   0 -> 0",
    ]


def test_the_bounds_are_the_narrowest_any_choice_of_leaders_reaches():
    # Against brute force over every choice of heads, on small random placements.
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(2, 4)
        topics = {
            f"t{t}": {p: tuple(rng.sample(range(n), rng.randint(1, min(2, n)))) for p in range(rng.randint(1, 4))}
            for t in range(rng.randint(1, 2))
        }
        c = build_cluster(n, topics=topics)
        proposed, _ = elect_leaders(c)
        got = leader_bounds(c, proposed)
        parts = list(c.partitions())
        best_brokers, best_topic = 99, 99
        for heads in product(*(p.replicas for p in parts)):
            led = Counter(heads)
            per = Counter((p.topic, h) for p, h in zip(parts, heads))
            best_brokers = min(best_brokers, max(led[b] for b in range(n)) - min(led[b] for b in range(n)))
            widest = max(max(per[(t, b)] for b in range(n)) - min(per[(t, b)] for b in range(n)) for t in topics)
            best_topic = min(best_topic, widest)
        assert got == (best_brokers, best_topic), topics


def test_sorted_lists_on_the_10k_scale_out_at_both_bounds_and_a_second_run_reorders_nothing():
    # The peer benchmark's 10,000-partition scale-out (50 brokers hold every replica, 10 new ones none) with its
    # replica lists sorted: the new brokers can lead nothing, so the brokers' bound is 200 (the others lead 200 each);
    # every topic ends at its own bound. The bounds' searches were up to s flows a step of a spread s (about 160 s
    # CPU here); they are two binary searches of one-sided flows now (the whole run about 6 s CPU on a loaded machine).
    from dataclasses import replace

    from bench.peers.scenarios import large_scale_out

    c = large_scale_out().cluster
    c = replace(
        c,
        topics=tuple(
            t
            if t.name == "__consumer_offsets"
            else replace(t, partitions=tuple(replace(p, replicas=tuple(sorted(p.replicas))) for p in t.partitions))
            for t in c.topics
        ),
    )
    ex = leader_election(c, None)
    assert _goal_lines(render_plan_text(ex.plan)) == [
        "  preferred-leader spread:        528 -> 200 (lower bound 200)",
        "  largest topic leader spread:    12 -> 4 (123 -> 73 topics above 1; lower bound 4)",
        "  internal-topic leader spread:   1 -> 1",
    ]
    assert (len(ex.plan.proposed), ex.plan.replica_moves, len(ex.elect)) == (3051, 0, 3046)
    assert leader_election(c, None).plan.proposed == ex.plan.proposed  # deterministic
    assert elect_leaders(c.with_assignment(ex.plan.proposed))[0] == {}  # a second run reorders nothing
