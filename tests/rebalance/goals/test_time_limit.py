"""The time budget (`budget.Deadline`, `--time-limit`): where it runs out, the plan is the best found so far, with a
note naming the stage, never nothing. A fake clock makes the run out deterministic."""

from collections import Counter

from testkit import build_cluster

from planner.formats.plan import word_note
from planner.model import TopicPartition
from planner.rebalance.execution import leader_election
from planner.rebalance.goals import balance
from planner.rebalance.goals.budget import Deadline
from planner.rebalance.moves import with_sizes

GIB = 1 << 30


class _Clock:
    """0 s for the first `reads` readings (the first: the deadline's start), 100 s from then on."""

    def __init__(self, reads: int):
        self.reads, self.left = 0, reads

    def __call__(self) -> float:
        self.reads += 1
        return 0.0 if self.reads <= self.left else 100.0


def _cluster():
    # brokers 1-3 hold two topics, broker 4 is new; "big" has partitions of 90 down to 40 GiB
    topics = {
        "big": {p: (p % 3 + 1, (p + 1) % 3 + 1) for p in range(6)},
        "small": {p: (p % 3 + 1, (p + 2) % 3 + 1) for p in range(12)},
    }
    sizes = {TopicPartition("big", p): (90 - 10 * p) * GIB for p in range(6)}
    sizes |= {TopicPartition("small", p): (1 + p) * GIB for p in range(12)}
    return with_sizes(build_cluster(4, first_id=1, topics=topics), sizes)


def _gib_per_broker(plan) -> dict[int, int]:
    load: Counter = Counter()
    for p in plan.after.partitions():
        for b in p.replicas:
            load[b] += (p.size or 0) // GIB
    return dict(sorted(load.items()))


def test_a_plan_without_a_limit_has_no_note():
    plan = balance(_cluster(), deadline=Deadline(10, _Clock(10**6)))
    assert (plan.replica_moves, _gib_per_broker(plan), plan.notes) == (9, {1: 256, 2: 253, 3: 215, 4: 212}, ())


def test_the_time_running_out_in_the_byte_goal_returns_the_plan_so_far_with_a_note():
    # the clock's second reading is the byte goal's first look: the counts and topics are balanced, the bytes not yet;
    # nothing after it runs (no second run of the goals, no polish), so the byte goal's own note tells what is left
    plan = balance(_cluster(), deadline=Deadline(10, _Clock(1)))
    assert (plan.replica_moves, _gib_per_broker(plan)) == (9, {1: 256, 2: 263, 3: 218, 4: 199})
    assert [word_note(n) for n in plan.notes] == [
        "bytes per broker could not be brought within the tolerance: the largest broker holds 1.124 × the mean, "
        "against 1.10",
        "bytes per broker could not be brought within the tolerance: the smallest broker holds 0.850 × the mean, "
        "against 0.90",
        "time limit of 10 s reached in the byte goal; the plan is the best found so far",
    ]


def test_the_time_running_out_before_the_polish_keeps_the_goals_plan():
    # the byte goal's ceiling and floor read the clock once each (in time); the polish finds the time up: the goals'
    # plan, unpolished
    plan = balance(_cluster(), deadline=Deadline(10, _Clock(3)))
    assert (plan.replica_moves, _gib_per_broker(plan)) == (9, {1: 256, 2: 253, 3: 215, 4: 212})
    assert [word_note(n) for n in plan.notes] == [
        "time limit of 10 s reached in the polish; the plan is the best found so far"
    ]


def test_the_time_running_out_between_variants_keeps_the_best_so_far():
    # the first variant ran to the end (its byte goal's ceiling and floor and its polish read the clock four times): it
    # is the plan, the others are not tried
    plan = balance(_cluster(), deadline=Deadline(2.5, _Clock(5)))
    assert (plan.replica_moves, _gib_per_broker(plan)) == (9, {1: 256, 2: 253, 3: 215, 4: 212})
    assert [word_note(n) for n in plan.notes] == [
        "time limit of 2.5 s reached in the search's variants; the plan is the best found so far"
    ]


def test_the_time_limit_must_be_above_zero(topo, planner_cli):
    code, out, err = planner_cli("reassign", "rebalance", topo, "--time-limit", "0")
    assert (code, out, err) == (2, "", "error: --time-limit 0: give a number of seconds above 0\n")


def test_the_time_running_out_in_the_topic_goal_returns_a_plan_with_a_note():
    # 20 topics (the topic goal asks the clock every 16 topics), broker 4 new, no sizes (no byte goal): the clock's
    # second reading is the topic goal's; the count goal has reached the topic shares already, so the plan is whole
    topics = {f"t{k:02d}": {p: (1 + (p + k) % 3, 1 + (p + k + 1) % 3) for p in range(6)} for k in range(20)}
    plan = balance(build_cluster(4, first_id=1, topics=topics), deadline=Deadline(10, _Clock(1)))
    load = Counter(b for p in plan.after.partitions() for b in p.replicas)
    assert (plan.replica_moves, dict(sorted(load.items()))) == (60, {1: 60, 2: 60, 3: 60, 4: 60})
    assert [word_note(n) for n in plan.notes] == [
        "time limit of 10 s reached in the topic goal; the plan is the best found so far"
    ]


def test_elect_leaders_under_a_time_limit_returns_the_reordering_so_far_with_a_note():
    # 6 brokers, replica lists sorted (brokers 1-3 lead all 36 partitions): the first run of the leader goal evens the
    # leaders out, the clock's second reading (before a second run) finds the time up: that reordering, with the note
    topics = {
        f"t{k}": {p: tuple(sorted({(p + k) % 6 + 1, (p + k + 2) % 6 + 1, (p + 2 * k + 3) % 6 + 1})) for p in range(12)}
        for k in range(3)
    }
    cluster = build_cluster(6, first_id=1, topics=topics)
    ex = leader_election(cluster, None, Deadline(10, _Clock(1)))
    leaders = Counter(p.replicas[0] for p in ex.plan.after.partitions())
    before = Counter(p.replicas[0] for p in cluster.partitions())
    assert (dict(sorted(before.items())), len(ex.plan.proposed)) == ({1: 18, 2: 14, 3: 4}, 20)
    assert dict(sorted(leaders.items())) == {1: 6, 2: 6, 3: 6, 4: 6, 5: 6, 6: 6}
    assert [word_note(n) for n in ex.plan.notes] == [
        "time limit of 10 s reached in the leader goal's runs; the plan is the best found so far"
    ]


def test_elect_leaders_checks_its_time_limit(topo, planner_cli):
    code, out, err = planner_cli("reassign", "elect-leaders", topo, "--time-limit", "-1")
    assert (code, out, err) == (2, "", "error: --time-limit -1: give a number of seconds above 0\n")
