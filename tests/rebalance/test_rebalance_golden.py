"""Golden outputs: preferred-leader balancing (`balance_preferred`, with its swap sequence) and replication-factor
changes (`set_replication_factor`) on seeded random clusters, pinned in data/rebalance_golden.json."""

import json
import random
from pathlib import Path

import pytest

from planner.formats.plan import word_note
from planner.model import Broker, Cluster, ObservedState, Partition, PlannerError, Topic
from planner.rebalance.leaders import balance_preferred
from planner.rebalance.replication import set_replication_factor

DATA = Path(__file__).parent / "data" / "rebalance_golden.json"
GOLDEN = {} if __name__ == "__main__" else json.loads(DATA.read_text())
SEEDS = range(100)


def leaders_output(seed: int):
    """3-9 brokers (some outside the balanced set), 1-40 partitions of RF 1-4 with skewed heads, a seeded
    eligibility table, `where` given or derived."""
    rnd = random.Random(seed)
    n = rnd.randint(3, 9)
    reps = []
    for _ in range(rnd.randint(1, 40)):
        rf = rnd.randint(1, min(4, n))
        replicas = rnd.sample(range(n), rf)
        if rnd.random() < 0.5:  # pile heads on broker 0
            replicas = [0] + [b for b in replicas if b != 0][: rf - 1]
        reps.append(replicas)
    idxs = sorted(rnd.sample(range(len(reps)), rnd.randint(0, len(reps))))
    brokers = sorted(rnd.sample(range(n), rnd.randint(1, n)))
    banned = {(i, b) for i in range(len(reps)) for b in range(n) if rnd.random() < 0.15}
    where = None
    if rnd.random() < 0.5:
        where = {b: {i for i in idxs if b in reps[i]} for b in brokers}
    swaps = []
    changed = balance_preferred(
        reps, idxs, brokers, lambda i, b: (i, b) not in banned, where, lambda i, old, new: swaps.append([i, old, new])
    )
    return {"changed": changed, "reps": reps, "swaps": swaps}


def rf_cluster(rnd: random.Random) -> Cluster:
    n = rnd.randint(2, 8)
    racks = rnd.choice([0, 2, 3])
    brokers = tuple(
        Broker(b, rack=f"r{b % racks}" if racks else None, state=rnd.choice(["online"] * 5 + ["offline"]))
        for b in range(n)
    )
    topics = []
    for name in ("a", "b", "c")[: rnd.randint(1, 3)]:
        parts = []
        for pid in range(rnd.randint(1, 12)):
            replicas = tuple(rnd.sample(range(n), rnd.randint(1, n)))
            observed = None
            if rnd.random() < 0.5:
                isr = tuple(b for b in replicas if rnd.random() < 0.7)
                observed = ObservedState(leader=isr[0] if isr else -1, isr=isr)
            adding = (replicas[-1],) if len(replicas) > 1 and rnd.random() < 0.1 else ()
            parts.append(Partition(name, pid, replicas, adding=adding, observed=observed))
        topics.append(Topic(name, tuple(parts)))
    return Cluster(brokers=brokers, topics=tuple(topics))


def rf_output(seed: int):
    rnd = random.Random(seed)
    cluster = rf_cluster(rnd)
    topic = rnd.choice([t.name for t in cluster.topics] * 9 + ["x"])
    online = sum(1 for b in cluster.brokers if b.state == "online")
    rf = rnd.choice([0, online + 1] + list(range(1, online + 1)) * 6)
    try:
        plan = set_replication_factor(cluster, topic, rf)
    except PlannerError as exc:
        return {"error": str(exc)}
    return {
        "proposed": sorted([f"{tp.topic}-{tp.partition}", list(r)] for tp, r in plan.proposed.items()),
        "lower_bound": plan.lower_bound,
        "brokers": list(plan.brokers),
        "notes": [word_note(note) for note in plan.notes],
        "goal": plan.goal,
    }


CASES = {"balance-preferred": leaders_output, "set-replication-factor": rf_output}


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_equal_the_golden_file(name):
    for seed in SEEDS:
        assert CASES[name](seed) == GOLDEN[name][seed], (name, seed)


if __name__ == "__main__":  # writes the golden file from the code as it is (review the diff before committing)
    DATA.write_text(json.dumps({name: [run(s) for s in SEEDS] for name, run in CASES.items()}, indent=0) + "\n")
