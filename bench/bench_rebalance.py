"""Reassignment planning: scale-out, decommission, racks of 7/4/3 brokers, a 1,000-broker / 100,000-partition
rebalance, failure analysis.

For each plan: replica moves beside the lower bound (target: equal) and beside what Kafka's own `--generate` would
move for the same goal (AdminUtils over the new broker list, measured in the same run), balance before→after, time.
"""

from __future__ import annotations

import os
import time
from collections import Counter

from bench.report import line, timer


def _cluster(n_brokers, racks, topics):
    from planner.model import Broker, Cluster, make_topic

    brokers = tuple(Broker(i, rack=f"rack-{i % racks}" if racks else None) for i in range(n_brokers))
    return Cluster(brokers=brokers, topics=tuple(make_topic(n, a) for n, a in sorted(topics.items())))


def _placed(broker_ids, racks, partitions, rf, start):
    from planner.placement.adminutils import assign_replicas_to_brokers

    metas = [(b, f"rack-{b % racks}" if racks else None) for b in broker_ids]
    return assign_replicas_to_brokers(metas, partitions, rf, fixed_start_index=start)


def _spread(cluster, brokers, leaders=False):
    cnt = (
        Counter(p.replicas[0] for p in cluster.partitions())
        if leaders
        else Counter(b for p in cluster.partitions() for b in p.replicas)
    )
    values = [cnt[b] for b in brokers]
    return max(values) - min(values)


def _kafka_generate_moves(cluster, brokers, start=0):
    """Replica moves of Kafka's --generate over `brokers` for every topic (AdminUtils, fixed start)."""
    from planner.placement.adminutils import assign_replicas_to_brokers

    rack_of = cluster.rack_of()
    metas = [(b, rack_of[b]) for b in sorted(brokers)]
    moves = 0
    for t in cluster.topics:
        new = assign_replicas_to_brokers(metas, t.partition_count, t.replication_factor, fixed_start_index=start)
        moves += sum(len(set(new[p.id]) - set(p.replicas)) for p in t.partitions)
    return moves


def _report(name, cluster, plan, seconds, targets):
    after = plan.after
    kafka = _kafka_generate_moves(cluster, targets)
    line(
        f"{name}: replica moves",
        plan.replica_moves,
        "moves",
        plan.lower_bound,
        "lower bound",
        "= lower bound",
        higher_is_better=False,
    )
    line(
        f"{name}: replica moves",
        plan.replica_moves,
        "moves",
        kafka,
        "Kafka --generate (AdminUtils)",
        higher_is_better=False,
    )
    print(
        f"   {name}: replica spread {_spread(cluster, targets)} -> {_spread(after, targets)}, "
        f"preferred-leader spread {_spread(cluster, targets, True)} -> {_spread(after, targets, True)}, "
        f"worst per-topic spread {_topic_spread(cluster, targets)} -> {_topic_spread(after, targets)}, "
        f"rack-unsafe {_unsafe(cluster, targets)} -> {_unsafe(after, targets)}, planned in {seconds:.2f} s",
        flush=True,
    )


def _topic_spread(cluster, brokers):
    worst = 0
    for t in cluster.topics:
        cnt = Counter(b for p in t.partitions for b in p.replicas)
        values = [cnt[b] for b in brokers]
        worst = max(worst, max(values) - min(values))
    return worst


def _unsafe(cluster, targets):
    from planner.rebalance.moves import rack_count, unsafe_partitions

    return unsafe_partitions(cluster, rack_count(cluster, targets))


def run() -> None:
    from planner.rebalance.decommission import decommission
    from planner.rebalance.goals import balance

    # Scale-out: 9 loaded brokers in 3 racks + 3 new empty ones.
    topics = {f"topic-{i}": _placed(range(9), 3, 200, 3, start=i % 9) for i in range(10)}
    c = _cluster(12, 3, topics)
    with timer() as t:
        plan = balance(c)
    _report("scale-out 9->12 brokers, 2,000 partitions RF 3", c, plan, t["s"], list(range(12)))

    # Decommission one broker of a balanced 12-broker cluster.
    topics = {f"topic-{i}": _placed(range(12), 3, 240, 3, start=i % 12) for i in range(10)}
    c = _cluster(12, 3, topics)
    with timer() as t:
        plan = decommission(c, [11])
    _report("decommission 1 of 12 brokers, 2,400 partitions RF 3", c, plan, t["s"], list(range(11)))

    _uneven_racks()

    # 1,000 brokers / 100,000 partitions: 900 loaded + 100 new.
    with timer() as t_build:
        topics = {f"topic-{i}": _placed(range(900), 10, 1000, 3, start=(7 * i) % 900) for i in range(100)}
        c = _cluster(1000, 10, topics)
    with timer() as t:
        plan = balance(c)
    line(
        "rebalance 1,000 brokers / 100,000 partitions RF 3 (900 loaded + 100 new)",
        t["s"],
        "s",
        t_build["s"],
        "building the cluster (AdminUtils placement of the same partitions)",
        "< 10 s",
        higher_is_better=False,
    )
    _report("1,000 brokers / 100,000 partitions", c, plan, t["s"], list(range(1000)))

    _failures()


def _uneven_racks() -> None:
    """14 brokers on racks of 7/4/3, 40 topics of RF 3 (one replica per rack) or 2, 3,457 partitions each replica on
    a broker of its rack at random: racks refuse most of the topic goal's exchanges (68 s CPU to plan in session 23,
    the exchange search repeated for every candidate, pair of brokers, topic and round). CPU time beside that of a
    decommission of one broker of the 10,000-partition bench cluster (`bench.gen_cluster`: 20 brokers on 10 racks),
    both in this run."""
    from bench.gen_cluster import ensure, uneven_racks
    from planner.adapters.topology_yaml import load_topology
    from planner.rebalance.decommission import decommission
    from planner.rebalance.goals import balance

    big = load_topology(ensure(10_000, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))[0])
    cpu = time.process_time()
    decommission(big, [1])
    yardstick = time.process_time() - cpu

    c = uneven_racks(5, "aaaaaaabbbbccc", 40, 20, 150)
    cpu = time.process_time()
    with timer() as t:
        plan = balance(c)
    cpu = time.process_time() - cpu
    name = f"racks of 7/4/3, 14 brokers, {sum(len(t.partitions) for t in c.topics):,} partitions"
    line(
        f"{name}: CPU time",
        cpu,
        "s",
        yardstick,
        "decommission 1 of 20 brokers, 10,000 partitions (10 racks)",
        "< 5 s",
        higher_is_better=False,
    )
    print(f"   {name}: {plan.replica_moves} moves (lower bound {plan.lower_bound}), {t['s']:.2f} s wall", flush=True)


def _failures() -> None:
    """200 brokers, K=2: NumPy pair tallies vs a direct scan of every partition per pair (sampled, extrapolated)."""
    from itertools import combinations, islice

    from planner.rebalance import failures

    topics = {f"topic-{i}": _placed(range(200), 0, 500, 3, start=(13 * i) % 200) for i in range(40)}
    c = _cluster(200, 0, topics)
    with timer() as t:
        res = failures.broker_failures(c, 2)
    electable, isr, need = failures._members(c)
    sets = [set(m) for m in electable]
    sample = 200
    with timer() as t_scan:
        for a, b in islice(combinations(range(200), 2), sample):
            s = {a, b}
            sum(1 for m in sets if len(m & s) >= len(m))
    all_pairs = 200 * 199 // 2 + 200
    line(
        f"failures: 200 brokers, K=2 ({len(res):,} sets, 20,000 partitions)",
        t["s"],
        "s",
        t_scan["s"] * all_pairs / sample,
        f"direct scan per set (measured on {sample}, extrapolated)",
        "seconds",
        higher_is_better=False,
    )
