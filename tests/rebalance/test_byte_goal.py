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


def test_the_bytes_bound_over_arrays_is_the_bound_of_the_loops():
    # `bytes_lower_bound` sums per broker over NumPy arrays from 20,000 partitions (`_SheddingArrays`): the same
    # integers as its loops, on the peer scale-outs (one group of brokers) and on 9 brokers in 3 racks with one
    # replica of every partition per rack (per-rack groups), at three tolerances
    import random

    from bench.peers.scenarios import SCENARIOS
    from planner.rebalance.goals.byte_balance import bytes_lower_bound
    from planner.rebalance.goals.hard import targets_of

    rng = random.Random(7)
    topics = {
        f"t{k}": {p: tuple(3 * rng.randrange(3) + r for r in rng.sample(range(3), 3)) for p in range(k + 3)}
        for k in range(12)
    }
    racked = build_cluster(9, racks=3, topics=topics)
    racked = with_sizes(racked, {p.tp: rng.randrange(1, 1 << 30) for p in racked.partitions()})
    clusters = [with_sizes(SCENARIOS[n]().cluster, SCENARIOS[n]().sizes) for n in ("small-topics", "large")] + [racked]
    bounds = []
    for c in clusters:
        st = State(c, select_partitions(c), sorted(c.broker_ids), ())
        by_rack = targets_of(st, True)[1]
        for tolerance in (0.0, 0.10, 0.5):
            loops = bytes_lower_bound(st, tolerance, by_rack, arrays=False)
            assert bytes_lower_bound(st, tolerance, by_rack, arrays=True) == loops
        bounds.append((by_rack is not None, bytes_lower_bound(st, 0.10, by_rack)))
    assert bounds[:2] == [(False, (1280955920124, 1354847474843)), (False, (1043883304960, 1255041932337))]
    assert bounds[2][0]
