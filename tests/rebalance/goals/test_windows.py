"""The free steps' windows sifted on arrays (`windows.hopeful`, `byte_balance._sift`): a window is left out only where
its walk would end without a change, so every plan is the one the walks in Python make."""

import json

import numpy as np

from bench.plan_digests import FAMILY_CASES, PINNED, digests
from planner.rebalance.goals import byte_balance
from planner.rebalance.goals.windows import hopeful


def _theirs(runs, span):
    """Each pair's replicas (partition, size, topic, whether the ranges let the topic go to the heavy broker), in
    size order, laid end to end as `hopeful` takes them."""
    rank = [r for r, run in enumerate(runs) for _ in run]
    flat = [x for run in runs for x in run]
    sizes = np.array([s for _, s, _, _ in flat], dtype=np.int64)
    return (
        (
            np.array(rank, dtype=np.int64) * span + sizes,
            np.array([j for j, _, _, _ in flat], dtype=np.int64),
            sizes,
            np.array([u for _, _, u, _ in flat], dtype=np.int64),
            np.array([b for _, _, _, b in flat], dtype=bool),
        ),
        np.cumsum([len(run) for run in runs]),
    )


def test_a_window_is_kept_where_a_slot_before_its_end_is_not_refused():
    # pair 0: the light broker's replicas 100..105 of sizes 10..60, topics 1, 1, 2, 3, 4, 5; topic 1's and 5's may
    # go to the heavy broker. Pair 1: two replicas of sizes 5 and 8, topic 9, which may not. top: 25 and 100
    span = 1000
    theirs, ends = _theirs(
        [
            [(100, 10, 1, True), (101, 20, 1, True), (102, 30, 2, False), (103, 40, 3, False), (104, 50, 4, False),
             (105, 60, 5, True)],
            [(200, 5, 9, False), (201, 8, 9, False)],
        ],
        span,
    )  # fmt: skip
    rows = [
        # (pair, partition, size, topic, may go to the light broker, goes home): expected
        ((0, 1, 55, 7, True, False), False),  # from 30: 102, 103, 104 refused (their topics may not go), then 105
        # (60) as large as it: the walk ends
        ((0, 2, 70, 7, True, False), True),  # from 45: 104 refused, 105 (topic 5 may go) is not
        ((0, 3, 70, 7, False, False), False),  # its topic may not go: every slot across topics refused, to the end
        ((0, 4, 70, 4, False, False), True),  # ...but 104 is of its own topic: an exchange within a topic
        ((0, 5, 25, 7, True, False), True),  # from 0: 100 (topic 1 may go)
        ((0, 6, 12, 7, False, False), False),  # 100 refused, then 101 (20) as large as it
        ((0, 102, 70, 2, True, False), True),  # 104 refused, 105 not
        ((0, 8, 35, 7, False, False), False),  # from 10: 100, 101, 102 refused, 103 (40) ends it
        ((0, 9, 5, 7, False, True), True),  # one going home is always walked
        ((1, 10, 9, 7, True, False), False),  # pair 1 (top 100): 200, 201 refused, its run ends (not pair 0's)
        ((1, 11, 9, 9, False, False), True),  # of topic 9 itself
        ((0, 100, 12, 1, True, False), False),  # 100 is the same partition (passed over), then 101 (20) ends it
        ((1, 12, 6, 7, False, False), False),  # 200 refused, then 201 (8) as large as it
    ]
    got = hopeful(
        np.array([r[0] for r, _ in rows]),
        np.array([r[1] for r, _ in rows], dtype=np.int64),
        np.array([r[2] for r, _ in rows], dtype=np.int64),
        np.array([r[3] for r, _ in rows], dtype=np.int64),
        np.array([r[4] for r, _ in rows], dtype=bool),
        np.array([r[5] for r, _ in rows], dtype=bool),
        np.array([25.0, 100.0]),
        span,
        theirs,
        ends,
    )
    assert got.tolist() == [want for _, want in rows]


def test_every_step_sifted_plans_the_families_as_pinned(monkeypatch):
    # the corpus families at 200 and 1,000 partitions with every free step's windows sifted on arrays (by default
    # only steps of 512 windows and more are): the digests pinned from the walks in Python
    monkeypatch.setattr(byte_balance, "VECTOR_WINDOWS", 1)
    sifted = []
    real = byte_balance.hopeful
    monkeypatch.setattr(byte_balance, "hopeful", lambda *a: sifted.append(1) or real(*a))
    assert digests({"families": FAMILY_CASES["families"]}) == {"families": json.loads(PINNED.read_text())["families"]}
    assert len(sifted) > 1000
