"""A corpus of cluster families for the plan benchmark (issue 30): clusters the planner was not tuned on.

A family fixes the shape of the data, a size (partitions) and a seed make one cluster of it:
- partition sizes: uniform, log-normal, Pareto, or Zipf with a few giants holding a large share of the bytes;
- topic sizes: heavy-tailed between 1 and 360 partitions ("pareto"), or many 1-3-partition topics and a few huge
  ones ("small-many");
- racks: none, even, uneven (racks of 7/4/3 parts), or one per broker;
- replication factors: 1, 2, 3, 4, or a mix within the cluster;
- a state: empty new brokers (a scale-out), hot-spot brokers (two at about 3x their share of replicas, by hand
  moves), rack-unsafe hand moves, an offline broker.
Replicas are placed by Kafka's AdminUtils (`planner.placement.adminutils`) over the brokers that were there first,
each topic with its own start index, as topics created one by one are. Deterministic: the same family, size and
seed give the same cluster (`tests/bench/test_corpus.py`).

`ISSUE_CASES`: the issue's three slow clusters, (a) 60 -> 66 brokers on 6 racks, 389 topics, about 10,000
partitions; (b) 27 -> 30 on 3 racks, RF 2 and 3, the top 1 % of partitions holding 40 % of the bytes, 8,055
partitions; (c) 20 brokers without racks, RF 1/2/4, two brokers at 3x their share, 1,073 partitions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

GIB = 1 << 30


@dataclass(frozen=True)
class Family:
    name: str
    sizes: str = "lognormal"  # uniform | lognormal | pareto | zipf-giants
    topics: str = "pareto"  # pareto | small-many
    racks: str = "even"  # none | even | uneven | per-broker
    rf: tuple[int, ...] = (3,)  # drawn per topic
    state: str = "new-brokers"  # new-brokers | hot-spot | rack-unsafe | offline
    per_broker: int = 150  # partitions per broker that was there first (sets the broker count)
    new: int = 0  # empty new brokers (state new-brokers): 0 = one per ten
    rack_count: int = 3
    topic_count: int = 0  # 0: as the topic distribution draws them; else exactly this many


FAMILIES = (
    Family("uniform-even", sizes="uniform"),
    Family("lognormal-uneven", racks="uneven", rf=(2, 3), state="rack-unsafe"),
    Family("pareto-norack", sizes="pareto", racks="none", rf=(1, 2, 3, 4), state="hot-spot"),
    Family("zipf-giants-perbroker", sizes="zipf-giants", racks="per-broker", rf=(3,), state="offline"),
    Family("small-topics-mixed", topics="small-many", racks="even", rf=(1, 2, 3), rack_count=4),
)

ISSUE_CASES = {
    "a": (Family("issue-a", racks="even", rack_count=6, per_broker=167, new=6, topic_count=389), 10_000),
    "b": (Family("issue-b", sizes="zipf-giants", rack_count=3, rf=(2, 3), per_broker=298, new=3), 8_055),
    "c": (Family("issue-c", sizes="pareto", racks="none", rf=(1, 2, 4), state="hot-spot", per_broker=54), 1_073),
}


def topic_counts(family: Family, n: int, rnd: random.Random) -> list[int]:
    """Partitions of each topic, adding up to n."""
    counts: list[int] = []
    if family.topic_count:
        raw = [min(360.0, rnd.paretovariate(0.9)) for _ in range(family.topic_count)]
        scale = n / sum(raw)
        counts = [max(1, min(360, round(r * scale))) for r in raw]
        counts[-1] = max(1, counts[-1] + n - sum(counts))
        return counts
    left = n
    while left > 0:
        if family.topics == "small-many":
            c = rnd.choice((120, 240, 360)) if rnd.random() < 0.02 else rnd.randint(1, 3)
        else:
            c = min(360, int(rnd.paretovariate(0.9)))
        counts.append(min(c, left))
        left -= counts[-1]
    return counts


def partition_sizes(kind: str, n: int, rnd: random.Random) -> list[int]:
    if kind == "uniform":
        return [rnd.randrange(50 * GIB) for _ in range(n)]
    if kind == "lognormal":
        return [int(min(2**50, rnd.lognormvariate(30, 1.5))) for _ in range(n)]
    if kind == "pareto":
        return [int(min(2**50, GIB * rnd.paretovariate(1.1))) for _ in range(n)]
    # Zipf with giants: the top 1 % of partitions hold 40 % of the bytes
    sizes = [int(GIB / (k + 1) ** 0.6) for k in range(n)]
    giants = max(1, n // 100)
    rest = sum(sizes[giants:])
    share = rest * 40 // 60  # the giants' bytes: 40 % of the total
    for k in range(giants):
        sizes[k] = share // giants + k
    rnd.shuffle(sizes)
    return sizes


def rack_names(kind: str, brokers: int, count: int) -> list[str | None]:
    if kind == "none":
        return [None] * brokers
    if kind == "per-broker":
        return [f"rack-{b:03d}" for b in range(brokers)]
    if kind == "uneven":  # racks of 7/4/3 parts
        return ["rack-" + "aaaaaaabbbbccc"[b % 14] for b in range(brokers)]
    return [f"rack-{b % count}" for b in range(brokers)]


def generate(family: Family, n: int, seed: int = 0):
    """The cluster of `family` with about n partitions (exactly n), seeded."""
    from planner.model import OFFLINE, Broker, Cluster, make_topic
    from planner.placement.adminutils import assign_replicas_to_brokers

    rnd = random.Random(f"{family.name}/{n}/{seed}")
    old = max(max(family.rf) + 1, round(n / family.per_broker))
    new = (family.new or max(1, old // 10)) if family.state == "new-brokers" else 0
    racks = rack_names(family.racks, old + new, family.rack_count)
    metas = [(b, racks[b]) for b in range(old)]
    counts = topic_counts(family, n, rnd)
    sizes = partition_sizes(family.sizes, n, rnd)
    assignment: dict[str, dict[int, list[int]]] = {}
    for t, c in enumerate(counts):
        rf = rnd.choice(family.rf)
        placed = assign_replicas_to_brokers(metas, c, rf, fixed_start_index=rnd.randrange(old))
        assignment[f"topic-{t:04d}"] = {p: list(placed[p]) for p in range(c)}
    if family.state == "hot-spot":
        _hot_spots(assignment, old, rnd)
    elif family.state == "rack-unsafe":
        _rack_unsafe(assignment, racks, rnd)
    states = {old - 1: OFFLINE} if family.state == "offline" else {}
    brokers = tuple(Broker(b, rack=racks[b], state=states.get(b, "online")) for b in range(old + new))
    topics, at = [], 0
    for name, a in assignment.items():
        top = make_topic(name, a)
        parts = tuple(replace(p, size=sizes[at + p.id]) for p in top.partitions)
        at += len(parts)
        topics.append(replace(top, partitions=parts))
    return Cluster(brokers=brokers, topics=tuple(topics), name=f"{family.name}-{n}")


def _hot_spots(assignment: dict[str, dict[int, list[int]]], old: int, rnd: random.Random) -> None:
    """Hand moves onto brokers 0 and 1 until each holds about 3x its share of replicas."""
    replicas = [(t, p, k) for t, a in assignment.items() for p, r in a.items() for k in range(len(r))]
    share = len(replicas) / old
    rnd.shuffle(replicas)
    held = {0: 0, 1: 0}
    for a in assignment.values():
        for r in a.values():
            for b in r:
                if b in held:
                    held[b] += 1
    for t, p, k in replicas:
        r = assignment[t][p]
        for hot in (0, 1):
            if held[hot] < 3 * share and hot not in r:
                r[k] = hot
                held[hot] += 1
                break


def _rack_unsafe(assignment: dict[str, dict[int, list[int]]], racks: list[str | None], rnd: random.Random) -> None:
    """Hand moves that left 2 % of the partitions with two replicas on one rack."""
    same = {}
    for b, rack in enumerate(racks):
        same.setdefault(rack, []).append(b)
    for a in assignment.values():
        for r in a.values():
            if len(r) > 1 and rnd.random() < 0.02:
                mates = [b for b in same[racks[r[0]]] if b not in r and b < len(racks)]
                if mates:
                    r[-1] = rnd.choice(mates)
