"""goals/preferred_leaders.py: which topics' leaders their placement holds above a spread of 1 (`placed_topics`),
checked against every choice of leaders on small clusters, and the note that names them on racks of 7/4/3."""

from __future__ import annotations

import random
from collections import Counter
from itertools import product

from testkit import build_cluster

from planner.formats.plan import word_note
from planner.rebalance.goals import balance
from planner.rebalance.goals.preferred_leaders import placed_topics
from planner.rebalance.goals.state import State
from tests.rebalance.test_topic_exchanges import _cluster


def _within_one_somewhere(c, topic: str) -> bool:
    """Brute force: some choice of a leader among each partition's replicas puts the topic's leaders within 1."""
    lists = [p.replicas for p in c.topic(topic).partitions]
    for heads in product(*lists):
        led = Counter(heads)
        if max(led[b] for b in c.broker_ids) - min(led[b] for b in c.broker_ids) <= 1:
            return True
    return False


def test_placed_topics_are_exactly_those_no_choice_of_leaders_brings_within_1():
    # 300 random placements of 3 to 5 brokers, 1 to 3 topics of 1 to 7 partitions of RF 1 to 3: the flow names a
    # topic exactly where no choice of leaders among the replicas (every one eligible) puts it within 1
    rng = random.Random(3)
    named = topics_seen = 0
    for _ in range(300):
        n = rng.randint(3, 5)
        topics = {
            f"t{t}": {p: tuple(rng.sample(range(n), rng.randint(1, 3))) for p in range(rng.randint(1, 7))}
            for t in range(rng.randint(1, 3))
        }
        c = build_cluster(n, topics=topics)
        st = State(c, list(c.partitions()), list(range(n)), ())
        st.recount_leads()
        got = placed_topics(st, range(len(st.topic_names)), lambda i, b: True)
        want = {t for t, name in enumerate(st.topic_names) if not _within_one_somewhere(c, name)}
        assert got == want, topics
        named += len(got)
        topics_seen += len(st.topic_names)
    assert (named, topics_seen) == (82, 623)


def test_on_racks_of_7_4_3_the_placement_holds_the_topics_whose_leaders_stay_above_1():
    # seed 7 of the racks of 7/4/3 (test_rack_flow): the count goal's narrowest range leaves two topics with leaders
    # above 1 (one before `count_range`). Neither can do better on its placement, whatever the other topics and the
    # brokers' totals. Since `topic_keep` they are the two topics the counts and racks keep wider than 1
    # (count-forced), with next to none of their replicas on rack c: t10 has 18 partitions on 14 brokers (each must
    # lead 1 or 2) and brokers 11 to 13 hold none of it, so the other 11 lead 18 (one of them 2 at least, the others
    # 0: a spread of 2); t9 has 35 (each 2 or 3) and only broker 12 of rack c holds one replica of it, so the other 11
    # lead 34 at least (one of them 4: a spread of 4). Before `topic_keep`: spreads of 2 both (t10 on 13 brokers,
    # t9 holding one or two replicas on each rack-c broker)
    c = _cluster(7, "aaaaaaabbbbccc", 12, 40)
    plan = balance(c)
    after = c.with_assignment(plan.proposed)
    notes = [n for n in plan.notes if n.goal == "preferred-leaders"]
    assert [(n.kind, n.topics, n.values) for n in notes] == [("topics-placed", ("t10", "t9"), (4,))]
    held = {t: Counter(b for p in after.topic(t).partitions for b in p.replicas) for t in ("t10", "t9")}
    assert [len(after.topic(t).partitions) for t in ("t10", "t9")] == [18, 35]
    assert [held["t10"][b] for b in c.broker_ids] == [3, 2, 3, 3, 3, 2, 2, 5, 4, 5, 4, 0, 0, 0]
    assert [held["t9"][b] for b in c.broker_ids] == [5, 5, 5, 5, 5, 5, 5, 8, 9, 8, 9, 0, 1, 0]
    assert word_note(notes[0]) == (
        "2 topic(s) keep a preferred-leader spread above 1 (up to 4) because of where their replicas are: no choice "
        "of leaders among each partition's replicas (in its ISR) brings them within 1, reordering replica lists "
        "changes nothing there (t10, t9)"
    )
