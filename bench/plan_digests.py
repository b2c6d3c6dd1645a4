"""Digests of the plans the goals make, on the clusters issue 31 names: the shipped topologies, the peer scenarios, the
corpus families at small sizes, a few hundred seeded small clusters (options drawn per seed), and the 10k/100k
generated clusters (`--large`). A plan's digest covers everything the renderers print of it: the proposed lists, the
bounds, the notes and the goals a cap left unmet; elect-leaders plans their reorderings and elections.

    python -m bench.plan_digests            # the small families: prints one line per family and its digest
    python -m bench.plan_digests --large    # the 10k and 100k clusters too
    python -m bench.plan_digests --write    # pins the small families' digests in tests/rebalance/data

Restructuring the goals must leave every digest as it was (tests/rebalance/goals/test_plan_digests.py checks the
small families; the large ones are checked by hand before a change to `planner/rebalance/` lands).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

from planner.model import OFFLINE, Broker, Cluster, PlannerError, make_topic

PINNED = Path(__file__).resolve().parent.parent / "tests" / "rebalance" / "data" / "plan_digests.json"
TOPOLOGIES = Path(__file__).resolve().parent.parent / "topologies"


def plan_text(plan) -> str:
    """What a plan's renderers read of it, as one text."""
    return repr(
        (
            plan.goal,
            sorted((tp.topic, tp.partition, r) for tp, r in plan.proposed.items()),
            plan.lower_bound,
            plan.bytes_lower_bound,
            plan.brokers,
            plan.notes,
            plan.unmet,
            plan.leader_bounds,
        )
    )


def outcome(make: Callable[[], object]) -> str:
    try:
        result = make()
    except PlannerError as exc:
        return f"error: {exc}"
    if isinstance(result, tuple):  # elect_leaders: (proposed, elect)
        proposed, elect = result
        return repr((sorted((tp.topic, tp.partition, r) for tp, r in proposed.items()), sorted(elect)))
    return plan_text(result)


def _digest(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


# -- the cases ------------------------------------------------------------------------------------------------------
def _core():
    from planner.rebalance.decommission import decommission, replace_broker
    from planner.rebalance.goals import balance
    from planner.rebalance.goals.preferred_leaders import elect_leaders
    from planner.rebalance.replication import set_replication_factor

    return balance, decommission, replace_broker, elect_leaders, set_replication_factor


def topologies() -> Iterator[tuple[str, Callable]]:
    from planner.adapters.topology_yaml import load_topology

    balance, decommission, replace_broker, elect_leaders, _ = _core()
    for path in sorted(TOPOLOGIES.glob("*.yaml")):
        c = load_topology(str(path))
        online = list(c.online_ids)
        yield f"{path.stem} rebalance", lambda c=c: balance(c)
        yield f"{path.stem} elect-leaders", lambda c=c: elect_leaders(c)
        yield f"{path.stem} decommission {online[-1]}", lambda c=c, b=online[-1]: decommission(c, [b])
        yield f"{path.stem} no leaders", lambda c=c: balance(c, leaders=False, max_moves=3)
        if len(online) > 1:
            yield f"{path.stem} replace", lambda c=c, o=online: replace_broker(c, o[0], o[-1])


def peers() -> Iterator[tuple[str, Callable]]:
    from bench.peers.scenarios import SCENARIOS
    from planner.rebalance.moves import with_sizes

    balance, decommission, _, _, set_replication_factor = _core()
    for name, make in SCENARIOS.items():
        if name == "large":
            continue  # in --large
        s = make()
        c = with_sizes(s.cluster, s.sizes)
        if s.replication:
            yield f"peer {name}", lambda c=c, s=s: set_replication_factor(c, *s.replication)
        elif s.decommission:
            yield f"peer {name}", lambda c=c, s=s: decommission(c, list(s.decommission))
        else:
            yield f"peer {name}", lambda c=c: balance(c)


def families() -> Iterator[tuple[str, Callable]]:
    from bench.corpus import FAMILIES, ISSUE_CASES, generate

    balance, decommission, _, elect_leaders, _ = _core()
    for family in FAMILIES:
        for n in (200, 1000):
            c = generate(family, n)
            yield f"{family.name}-{n} rebalance", lambda c=c: balance(c)
            yield f"{family.name}-{n} decommission 0", lambda c=c: decommission(c, [0])
            yield f"{family.name}-{n} elect-leaders", lambda c=c: elect_leaders(c)
    for key, (family, _n) in ISSUE_CASES.items():
        c = generate(replace(family, per_broker=min(family.per_broker, 20), topic_count=0), 400)
        yield f"issue-{key} small rebalance", lambda c=c: balance(c)


def small_cluster(seed: int) -> tuple[Cluster, dict]:
    """3-9 brokers, racks none/even/uneven, RF 1-3 topics of 1-24 partitions placed at random (some hot spots, some
    rack-unsafe), sizes on half the clusters, a broker offline or cordoned on some; options drawn per seed."""
    rnd = random.Random(f"digest/{seed}")
    n = rnd.randint(3, 9)
    rack_kind = rnd.choice(["none", "even", "uneven"])
    if rack_kind == "none":
        racks: list[str | None] = [None] * n
    elif rack_kind == "even":
        k = rnd.choice([2, 3])
        racks = [f"r{b % k}" for b in range(n)]
    else:
        racks = [rnd.choice(["a", "a", "a", "b", "b", "c"]) for _ in range(n)]
    sized = rnd.random() < 0.5
    hot = rnd.random() < 0.3
    topics = []
    for t in range(rnd.randint(1, 6)):
        rf = rnd.randint(1, min(3, n))
        parts = {}
        for p in range(rnd.randint(1, 24)):
            pool = list(range(n)) if not hot else [0, 1] * 3 + list(range(n))
            reps: list[int] = []
            while len(reps) < rf:
                b = rnd.choice(pool)
                if b not in reps:
                    reps.append(b)
            parts[p] = reps
        top = make_topic(f"t{t}", parts)
        if sized:
            top = replace(
                top, partitions=tuple(replace(p, size=rnd.choice([1, 10, 100, 1000]) << 20) for p in top.partitions)
            )
        topics.append(top)
    states = {}
    if n > 3 and rnd.random() < 0.15:
        states[rnd.randrange(n)] = OFFLINE
    brokers = tuple(Broker(b, rack=racks[b], state=states.get(b, "online")) for b in range(n))
    options: dict = {}
    r = rnd.random()
    if r < 0.15:
        options["max_moves"] = rnd.randint(0, 12)
    elif r < 0.25:
        options["leaders"] = False
    elif r < 0.35:
        options["rack_repair"] = False
    elif r < 0.42:
        options["topics"] = ["t0"]
    elif r < 0.48:
        options["exclude_topics"] = ["t1"]
    elif r < 0.55:
        options["byte_tolerance"] = rnd.choice([0.01, 0.05, 0.3])
    return Cluster(brokers=brokers, topics=tuple(topics)), options


def seeded(count: int = 300) -> Iterator[tuple[str, Callable]]:
    from bench.gen_cluster import uneven_racks
    from tests.rebalance.rebalance_scenarios import scale_out

    balance, decommission, _, elect_leaders, _ = _core()
    for seed in range(count):
        c, options = small_cluster(seed)
        yield f"small {seed} {options}", lambda c=c, o=options: balance(c, **o)
        if seed % 3 == 0:
            online = list(c.online_ids)
            yield f"small {seed} decommission", lambda c=c, b=online[-1]: decommission(c, [b])
        if seed % 5 == 0:
            yield f"small {seed} elect-leaders", lambda c=c: elect_leaders(c)
    for seed in range(12):
        yield f"scale-out {seed}", lambda seed=seed: balance(scale_out(seed))
    for seed, racks in enumerate(["aaaaaaabbbbccc", "aaaabbbcc", "aaabbc", "aaaaabbc"] * 3):
        c = uneven_racks(seed, racks, 8, 2, 12)
        yield f"uneven {seed} {racks}", lambda c=c: balance(c)
        if seed % 2 == 0:
            yield f"uneven {seed} decommission", lambda c=c: decommission(c, [0])


def large() -> Iterator[tuple[str, Callable]]:
    from bench.corpus import ISSUE_CASES, generate
    from bench.gen_cluster import ensure
    from bench.peers.scenarios import SCENARIOS
    from planner.adapters.topology_yaml import load_topology
    from planner.rebalance.moves import with_sizes

    balance, decommission, _, elect_leaders, _ = _core()
    s = SCENARIOS["large"]()
    yield "peer large", lambda: balance(with_sizes(s.cluster, s.sizes))
    for key, (family, n) in ISSUE_CASES.items():
        c = generate(family, n)
        yield f"issue-{key} {n} rebalance", lambda c=c: balance(c)
    for n in (10_000, 100_000):
        c = load_topology(ensure(n, "bench/data")[0])
        yield f"cluster-{n} rebalance", lambda c=c: balance(c)
        yield f"cluster-{n} decommission 1", lambda c=c: decommission(c, [1])
        yield f"cluster-{n} elect-leaders", lambda c=c: elect_leaders(c)


FAMILY_CASES = {"topologies": topologies, "peers": peers, "families": families, "seeded": seeded}


def digests(which: dict[str, Callable[[], Iterator]], say: Callable[[str], None] = lambda s: None) -> dict:
    out = {}
    for family, cases in which.items():
        started = time.process_time()
        texts = []
        for name, make in cases():
            texts.append(name + "\n" + outcome(make))
        out[family] = _digest(texts)
        say(f"{family:<12} {len(texts):>4} plans  {out[family]}  {time.process_time() - started:.1f} s CPU")
    return out


if __name__ == "__main__":
    which = dict(FAMILY_CASES)
    if "--large" in sys.argv:
        which = {"large": large} if "--only-large" in sys.argv else {**which, "large": large}
    got = digests(which, print)
    if "--write" in sys.argv:
        PINNED.write_text(json.dumps({k: v for k, v in got.items() if k in FAMILY_CASES}, indent=1) + "\n")
    elif PINNED.exists():
        pinned = json.loads(PINNED.read_text())
        changed = [k for k in pinned if k in got and got[k] != pinned[k]]
        print("changed: " + (", ".join(changed) if changed else "none"))
