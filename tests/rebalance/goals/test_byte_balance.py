"""The byte goal (goal 5) on a hand-built working state: what it counts when it chooses between changes."""

from testkit import build_cluster

from planner.model import TopicPartition
from planner.rebalance.goals.base import Frozen
from planner.rebalance.goals.byte_balance import ByteGoal
from planner.rebalance.goals.state import State
from planner.rebalance.moves import select_partitions, with_sizes

GIB = 1 << 30


def test_the_byte_goal_counts_the_bytes_a_swap_takes_back_as_net_bytes_moved():
    # Brokers 1-3, one replica per partition. Earlier goals moved a (90 GiB) from broker 2 and b (36 GiB) from
    # broker 3 to broker 1, which now holds 126 GiB against a limit of 99 (mean 90, tolerance 10 %). Two changes
    # bring it within the limit with the same copies: b on to broker 2 (one copy moved on: 126 GiB copied in all),
    # or a back home to broker 2 for x (52 GiB) from broker 2 (a's copy taken back, x's made: 88 GiB). Counted gross
    # (the bytes each change copies, 36 against 52), the first won; net against the input placement, the swap does
    c = build_cluster(3, first_id=1, topics={"a": {0: (2,)}, "b": {0: (3,)}, "m": {0: (3,)}, "x": {0: (2,)}})
    sizes = {"a": 90, "b": 36, "m": 92, "x": 52}
    c = with_sizes(c, {TopicPartition(t, 0): s * GIB for t, s in sizes.items()})
    parts = select_partitions(c)
    st = State(c, parts, [1, 2, 3], ())
    index = {p.topic: i for i, p in enumerate(parts)}
    st.move(index["a"], 2, 1)
    st.move(index["b"], 3, 1)
    ByteGoal(0.10).optimize(st, Frozen())
    assert {p.topic: tuple(st.reps[i]) for i, p in enumerate(parts)} == {"a": (2,), "b": (1,), "m": (3,), "x": (1,)}
    assert (st.copies, {b: st.bytes[b] // GIB for b in (1, 2, 3)}) == (2, {1: 88, 2: 90, 3: 92})
