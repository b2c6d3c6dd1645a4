"""What fails when brokers fail: for each set of up to K brokers (or each rack), the partitions left without a leader
and those that fall under `min.insync.replicas`. Vectorised with NumPy (imported inside the functions).

A partition starts from its current state (`planner.leadership`: observed leader/ISR, brokers already offline applied).
When the brokers of a set fail:
* it has no leader if none of its "electable" replicas survives: the ISR members, or, for topics with
  `unclean.leader.election.enable=true`, any replica (Kafka's offline election: `PartitionStateMachine.scala`
  `offlinePartitionLeaderElection`, `PartitionChangeBuilder.electAnyLeader`);
* it is under min ISR if fewer than `min.insync.replicas` (topic config, default 1) ISR members survive
  (producers with acks=all get NOT_ENOUGH_REPLICAS).
For one partition with m electable members, a set hits it when it contains all m; with `need = |ISR| − minISR + 1`
ISR members it pushes it under min ISR. Pairs are counted exactly from per-broker and per-pair tallies
(inclusion–exclusion), so K=2 over 200 brokers costs a few array passes, not 20,000 scans of every partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Sequence

from planner.leadership import cluster_states
from planner.model import Cluster, PlannerError


@dataclass(frozen=True)
class FailureImpact:
    brokers: tuple[int, ...]
    label: str  # "1,2" or "rack eu-west-1a"
    leaderless: int
    under_min_isr: int


def _members(cluster: Cluster):
    """Per partition: electable members, ISR members, and the ISR size that keeps min ISR."""
    states = cluster_states(cluster)
    electable, isr, need_isr = [], [], []
    for t in cluster.topics:
        min_isr = t.config_int("min.insync.replicas", 1)
        unclean = t.config_bool("unclean.leader.election.enable", False)
        online = cluster.online_ids
        for p, st in zip(t.partitions, states[t.name]):
            live_isr = tuple(b for b in st.isr if b in online) if st.has_leader else ()
            live_reps = tuple(b for b in p.replicas if b in online)
            electable.append(live_reps if unclean else live_isr)
            isr.append(live_isr)
            need_isr.append(len(live_isr) - min_isr + 1)  # ISR members that must fail to go under min ISR
    return electable, isr, need_isr


def _tally(np, groups: Sequence[tuple[int, ...]], needs: Sequence[int], index: dict[int, int], n: int, k: int):
    """Counts per single broker (n) and per pair (n × n) of partitions hit, for the hit rule "need of members"."""
    base = sum(1 for m in needs if m <= 0)
    single1 = np.zeros(n, dtype=np.int64)  # need == 1: any member
    pair1 = np.zeros((n, n), dtype=np.int64)  # need == 1: both members (for inclusion–exclusion)
    pair2 = np.zeros((n, n), dtype=np.int64)  # need == 2: both members
    rows1, rows2 = [], []
    for members, m in zip(groups, needs):
        if m == 1:
            rows1.append([index[b] for b in members])
        elif m == 2 and k >= 2:
            rows2.append([index[b] for b in members])
    for rows, single, pair in ((rows1, single1, pair1), (rows2, None, pair2)):
        by_len: dict[int, list] = {}
        for r in rows:
            by_len.setdefault(len(r), []).append(r)
        for length, rs in by_len.items():
            arr = np.asarray(rs, dtype=np.int64).reshape(len(rs), length)
            if single is not None:
                np.add.at(single, arr.ravel(), 1)
            if k >= 2 and length >= 2:
                for a, b in combinations(range(length), 2):
                    np.add.at(pair, (arr[:, a], arr[:, b]), 1)
                    np.add.at(pair, (arr[:, b], arr[:, a]), 1)
    return base, single1, pair1, pair2


def broker_failures(
    cluster: Cluster, max_failed: int = 1, top: int | None = None, progress: Callable[[str], None] | None = None
) -> list[FailureImpact]:
    """Every set of 1..max_failed online brokers, worst first (leaderless, then under min ISR, then ids)."""
    import numpy as np

    if max_failed < 1:
        raise PlannerError("--max-failed-brokers must be at least 1")
    ids = sorted(cluster.online_ids)
    if max_failed > len(ids):
        raise PlannerError(f"--max-failed-brokers {max_failed} is more than the {len(ids)} online brokers")
    index = {b: i for i, b in enumerate(ids)}
    n = len(ids)
    from math import comb

    direct = sum(comb(n, k) for k in range(3, max_failed + 1))
    if direct > 2_000_000:
        raise PlannerError(
            f"--max-failed-brokers {max_failed} over {n} brokers means {direct:,} sets of 3 or more brokers, too many "
            "to count one by one; use --max-failed-brokers 2 or --by-rack"
        )
    electable, isr, need_isr = _members(cluster)
    need_lead = [len(m) for m in electable]
    results: list[FailureImpact] = []
    k2 = min(max_failed, 2)
    lead = _tally(np, electable, need_lead, index, n, k2)
    under = _tally(np, isr, need_isr, index, n, k2)

    def singles(t):
        base, s1, _, _ = t
        return base + s1

    def pairs(t):
        base, s1, p1, p2 = t
        return base + s1[:, None] + s1[None, :] - p1 + p2

    ls, us = singles(lead), singles(under)
    for b in ids:
        i = index[b]
        results.append(FailureImpact((b,), str(b), int(ls[i]), int(us[i])))
    if max_failed >= 2:
        if progress:
            progress(f"{n * (n - 1) // 2} broker pairs")
        lp, up = pairs(lead), pairs(under)
        iu, ju = np.triu_indices(n, 1)
        lv, uv = lp[iu, ju], up[iu, ju]
        for a, b, x, y in zip(iu.tolist(), ju.tolist(), lv.tolist(), uv.tolist()):
            results.append(FailureImpact((ids[a], ids[b]), f"{ids[a]},{ids[b]}", x, y))
    if max_failed >= 3:
        # Three or more: direct counting over the partitions that so few failures can hit.
        el = [(tuple(index[b] for b in m), len(m)) for m in electable]
        ir = [(tuple(index[b] for b in m), nd) for m, nd in zip(isr, need_isr)]
        base_l = sum(1 for _, m in el if m <= 0)
        base_u = sum(1 for _, m in ir if m <= 0)
        for k in range(3, max_failed + 1):
            if progress:
                progress(f"sets of {k} brokers")
            cand_l = [(set(m), nd) for m, nd in el if 0 < nd <= k]
            cand_u = [(set(m), nd) for m, nd in ir if 0 < nd <= k]
            for combo in combinations(range(n), k):
                s = set(combo)
                x = base_l + sum(1 for m, nd in cand_l if len(m & s) >= nd)
                y = base_u + sum(1 for m, nd in cand_u if len(m & s) >= nd)
                bs = tuple(ids[c] for c in combo)
                results.append(FailureImpact(bs, ",".join(map(str, bs)), x, y))
    results.sort(key=lambda r: (-r.leaderless, -r.under_min_isr, len(r.brokers), r.brokers))
    return results[:top] if top else results


def rack_failures(cluster: Cluster) -> list[FailureImpact]:
    """Each rack failing as a whole, worst first."""
    import numpy as np

    racks: dict[str, list[int]] = {}
    for b in cluster.brokers:
        if b.online:
            if b.rack is None:
                raise PlannerError(f"--by-rack: broker {b.id} has no rack; give every broker a rack in the topology")
            racks.setdefault(b.rack, []).append(b.id)
    electable, isr, need_isr = _members(cluster)
    out = []
    for rack, members in sorted(racks.items()):
        s = set(members)
        lost_l = np.fromiter((sum(1 for b in m if b in s) for m in electable), dtype=np.int64, count=len(electable))
        lost_u = np.fromiter((sum(1 for b in m if b in s) for m in isr), dtype=np.int64, count=len(isr))
        x = int(np.count_nonzero(lost_l >= np.asarray([len(m) for m in electable], dtype=np.int64)))
        y = int(np.count_nonzero(lost_u >= np.asarray(need_isr, dtype=np.int64)))
        out.append(FailureImpact(tuple(sorted(members)), f"rack {rack}", x, y))
    out.sort(key=lambda r: (-r.leaderless, -r.under_min_isr, r.label))
    return out
