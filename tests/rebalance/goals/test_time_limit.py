"""The time budget (`budget.Deadline`, `--time-limit`): where it runs out, the plan is the best found so far, with a
note naming the stage, never nothing. A fake clock makes the run out deterministic."""

from collections import Counter

from testkit import build_cluster

from planner.formats.plan import word_note
from planner.model import TopicPartition
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
    # {1: 257, 2: 257, 3: 238, 4: 184} before the byte goal's floor (issue 32) filled broker 4 to 0.9 x the mean
    assert (plan.replica_moves, _gib_per_broker(plan), plan.notes) == (9, {1: 256, 2: 253, 3: 215, 4: 212}, ())


def test_the_time_running_out_in_the_byte_goal_returns_the_plan_so_far_with_a_note():
    # the clock's second reading is the byte goal's first look: the counts and topics are balanced, the bytes not yet
    plan = balance(_cluster(), deadline=Deadline(10, _Clock(1)))
    # {1: 257, 2: 256, 3: 218, 4: 205} before the floor (the polish's exchanges now keep broker 4 at its bytes)
    assert (plan.replica_moves, _gib_per_broker(plan)) == (10, {1: 251, 2: 256, 3: 218, 4: 211})
    assert [word_note(n) for n in plan.notes] == [
        "time limit of 10 s reached in the byte goal; the plan is the best found so far"
    ]


def test_the_time_running_out_between_variants_keeps_the_best_so_far():
    # the first variant ran to the end: it is the plan, the others are not tried (the third reading: the byte goal's
    # floor reads the clock too, issue 32)
    plan = balance(_cluster(), deadline=Deadline(2.5, _Clock(3)))
    assert (plan.replica_moves, _gib_per_broker(plan)) == (9, {1: 256, 2: 253, 3: 215, 4: 212})
    assert [word_note(n) for n in plan.notes] == [
        "time limit of 2.5 s reached in the search's variants; the plan is the best found so far"
    ]


def test_the_time_limit_must_be_above_zero(topo, planner_cli):
    code, out, err = planner_cli("reassign", "rebalance", topo, "--time-limit", "0")
    assert (code, out, err) == (2, "", "error: --time-limit 0: give a number of seconds above 0\n")
