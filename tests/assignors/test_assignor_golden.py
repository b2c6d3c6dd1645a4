"""Golden outputs: the sticky assignors (GeneralAssignmentBuilder and ConstrainedAssignmentBuilder paths, with and
without racks) and KIP-848 uniform with mixed subscriptions, on seeded random groups. Each case's exact result (member
order, list order, transferring partitions) is pinned in data/assignor_golden.json: a change to the builders that
changes any output shows here."""

import json
import random
from pathlib import Path

import pytest

from planner.assignors import sticky, uniform_heterogeneous
from planner.assignors.group import Member
from planner.model import TopicPartition as TP

GOLDEN = (
    {} if __name__ == "__main__" else json.loads((Path(__file__).parent / "data" / "assignor_golden.json").read_text())
)
TOPICS = ["t0", "t1", "t2", "t3"]


def text(tps):
    return [f"{tp.topic}-{tp.partition}" for tp in tps]


def sticky_group(seed: int, uniform_subs: bool, racks: bool):
    """1-4 topics of 1-12 partitions, 1-7 members with owned partitions (some stale or claimed twice), generations,
    static ids, and for `racks` members' racks and replicas' racks."""
    rnd = random.Random(seed)
    counts = {t: rnd.randint(1, 12) for t in TOPICS[: rnd.randint(1, 4)]}
    names = list(counts)
    shared = rnd.sample(names, rnd.randint(1, len(names)))
    members = []
    for i in range(rnd.randint(1, 7)):
        subs = shared if uniform_subs else rnd.sample(names, rnd.randint(1, len(names)))
        pool = [TP(t, p) for t in names for p in range(counts[t] + 1)]  # includes a partition that does not exist
        owned = rnd.sample(pool, rnd.randint(0, min(8, len(pool))))
        members.append(
            Member(
                id=f"m{rnd.randint(0, 99)}-{i}",
                topics=tuple(subs),
                owned=tuple(owned),
                generation=rnd.choice([None, 1, 2, 3, 3]),
                instance_id=rnd.choice([None, f"i{i}"]),
                rack=rnd.choice([None, "a", "b", "c"]) if racks else None,
            )
        )
    replica_racks = None
    if racks:
        replica_racks = {
            TP(t, p): frozenset(rnd.sample("abc", rnd.randint(0, 3))) for t in counts for p in range(counts[t])
        }
    return members, counts, replica_racks


def sticky_output(seed: int, uniform_subs: bool, racks: bool):
    members, counts, replica_racks = sticky_group(seed, uniform_subs, racks)
    result = sticky.assign(members, counts, replica_racks)
    return {
        "assignment": [[mid, text(tps)] for mid, tps in result.assignment.items()],
        "transferring": sorted([f"{tp.topic}-{tp.partition}", mid] for tp, mid in result.transferring.items()),
        "uniform": result.uniform,
    }


def uniform_group(seed: int):
    """2-6 topics of 1-10 partitions, 1-8 members with overlapping subscriptions and a previous target assignment."""
    rnd = random.Random(seed)
    counts = {f"t{i}": rnd.randint(1, 10) for i in range(rnd.randint(2, 6))}
    names = list(counts)
    ids = [f"member-{rnd.randint(0, 999)}-{i}" for i in range(rnd.randint(1, 8))]
    subs = {mid: rnd.sample(names, rnd.randint(0, len(names))) for mid in ids}
    holders = {mid: [] for mid in ids}
    for t in names:
        for p in range(counts[t]):
            if rnd.random() < 0.6:
                holders[rnd.choice(ids)].append(TP(t, p))
    return ids, subs, holders, counts


def uniform_output(seed: int):
    ids, subs, current, counts = uniform_group(seed)
    out = uniform_heterogeneous.assign(ids, subs, current, counts, topic_key=lambda t: t[::-1])
    return [[mid, text(tps)] for mid, tps in out.items()]


CASES = {
    "sticky-mixed": lambda s: sticky_output(s, False, False),
    "sticky-mixed-racks": lambda s: sticky_output(s, False, True),
    "sticky-uniform": lambda s: sticky_output(s, True, False),
    "sticky-uniform-racks": lambda s: sticky_output(s, True, True),
    "uniform-heterogeneous": uniform_output,
}
SEEDS = range(120)


def outputs() -> dict:
    return {name: [run(seed) for seed in SEEDS] for name, run in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_equal_the_golden_file(name):
    run = CASES[name]
    for seed in SEEDS:
        assert run(seed) == GOLDEN[name][seed], (name, seed)


if __name__ == "__main__":  # writes the golden file from the code as it is (review the diff before committing)
    (Path(__file__).parent / "data" / "assignor_golden.json").write_text(json.dumps(outputs(), indent=0) + "\n")
