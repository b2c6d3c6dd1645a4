"""The plans the goals make, pinned by digest (issue 31: restructuring the goals leaves every plan byte for byte as it
was): the shipped topologies, the peer scenarios, the corpus families at 200 and 1,000 partitions, and 490 plans on
seeded small clusters with options drawn per seed (`bench/plan_digests.py`; `--large` checks the 10k/100k clusters
by hand). A change meant to change plans re-pins them with `python -m bench.plan_digests --write` and says why."""

import json

import pytest

from bench.plan_digests import FAMILY_CASES, PINNED, digests, outcome, small_cluster

PINNED_DIGESTS = json.loads(PINNED.read_text())


@pytest.mark.parametrize("family", sorted(FAMILY_CASES))
def test_the_plans_of_each_family_are_those_pinned(family):
    assert digests({family: FAMILY_CASES[family]}) == {family: PINNED_DIGESTS[family]}


def test_the_digest_sees_a_change_in_any_plan():
    # a plan whose bound alone differs gives another digest: the check can fail
    cases = list(FAMILY_CASES["topologies"]())[:2]
    base = digests({"x": lambda: iter(cases)})
    name, make = cases[0]

    def changed():
        from dataclasses import replace

        plan = make()
        return replace(plan, lower_bound=(plan.lower_bound or 0) + 1)

    assert digests({"x": lambda: iter([(name, changed), cases[1]])}) != base


def test_the_seeded_small_clusters_cover_the_options_and_shapes():
    kinds = [small_cluster(seed) for seed in range(300)]
    options = {k for _, o in kinds for k in o}
    assert options == {"max_moves", "leaders", "rack_repair", "topics", "exclude_topics", "byte_tolerance"}
    racks = {len({b.rack for b in c.brokers}) if c.brokers[0].rack else 0 for c, _ in kinds}
    assert {0, 1, 2, 3} <= racks
    assert any(p.size for c, _ in kinds for t in c.topics for p in t.partitions)
    assert any(b.state != "online" for c, _ in kinds for b in c.brokers)
    from planner.rebalance.decommission import decommission

    assert outcome(lambda: decommission(kinds[0][0], [99])) == (
        "error: --brokers: unknown broker id(s) 99; the cluster has brokers 0,1,2,3,4"
    )
