"""`planner.leadership.elr_partition_state` against Kafka's own controller code: seeded partitions (replicas, ISR,
ELR, LastKnownElr, leader, min.insync.replicas, unclean election, the brokers still up) fenced one broker at a time
by the PartitionChangeBuilder of the release in tests/realkafka/real_cluster.py (tests/realkafka/ElrFences.java),
and by ours; every result the same. No cluster is started: the builder runs in one JVM.

Broker ids include ones that share a java.util.HashSet bucket (1, 17 and 33; 1001 and 1017) and one above 2^16 (its
hash is spread), so the ELR's order is checked too. Left out, as they are no fence: partitions none of whose ISR
members goes down, and leaderless ones that keep an ISR (a cluster without ELR; `elr_partition_state` treats both
as before ELR)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from realkafka.real_cluster import TOOL_JVM, classpath, java

from planner.leadership import elr_partition_state
from planner.model import NO_LEADER, ObservedState, Partition

HARNESS = Path(__file__).with_name("ElrFences.java")
POOL = [1, 2, 3, 4, 5, 6, 16, 17, 33, 1001, 1017, 65537]


def _cases(seed: int, count: int) -> list[tuple]:
    rnd = random.Random(seed)
    cases: list[tuple] = []
    while len(cases) < count:
        replicas = rnd.sample(POOL, rnd.randint(1, 5))
        isr = rnd.sample(replicas, rnd.randint(0, len(replicas)))
        rest = [r for r in replicas if r not in isr]
        elr = rnd.sample(rest, rnd.randint(0, len(rest))) if rnd.random() < 0.4 else []
        lke = rnd.sample(rest, rnd.randint(0, min(1, len(rest)))) if rnd.random() < 0.3 else []
        leader = rnd.choice(isr) if isr else NO_LEADER
        live = [b for b in POOL if rnd.random() < 0.5]
        if all(b in live for b in isr):
            continue  # no fence
        cases.append((replicas, isr, elr, lke, leader, rnd.randint(1, 4), rnd.random() < 0.3, live))
    return cases


def _ids(ids) -> str:
    return ",".join(map(str, ids))


def test_fences_as_kafkas_partition_change_builder():
    cases = _cases(966, 2000)
    stdin = "".join(
        f"{_ids(r)}|{_ids(i)}|{_ids(e)}|{_ids(k)}|{leader}|{m}|{int(u)}|{_ids(live)}\n"
        for r, i, e, k, leader, m, u, live in cases
    )
    done = subprocess.run(
        [java(), *TOOL_JVM, "-cp", classpath(), str(HARNESS)], input=stdin, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    theirs = done.stdout.splitlines()
    ours, elected_unclean = [], 0
    for replicas, isr, elr, lke, leader, min_isr, unclean, live in cases:
        observed = ObservedState(leader, tuple(isr), elr=tuple(elr), last_known_elr=tuple(lke))
        part = Partition("t", 0, tuple(replicas), observed=observed)
        st = elr_partition_state(part, frozenset(live), unclean, min_isr)
        assert st.elr is not None and st.last_known_elr is not None
        elected_unclean += st.unclean
        ours.append(f"{st.leader}|{_ids(st.isr)}|{_ids(st.elr)}|{_ids(st.last_known_elr)}")
    assert len(theirs) == len(cases)
    assert [(c, o) for c, o, t in zip(cases, ours, theirs) if o != t] == []
    # the seeded cases reach the branches: emptied ISRs, ELRs of several, unclean elections
    assert sum(t.split("|")[1] == "" for t in theirs) > 100
    assert sum("," in t.split("|")[2] for t in theirs) > 100
    assert elected_unclean > 50
