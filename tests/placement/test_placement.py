"""Placement: AdminUtils (P1–P5, P7 rack texts), KRaft striped placer (P6), vectorised and balanced placement."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.java import JavaRandom, MockRandom
from planner.model import Broker, Cluster, PlannerError, make_topic
from planner.placement import adminutils as kafka
from planner.placement import balanced, bulk
from planner.placement import striped as kraft
from planner.placement.placer import place_new_partitions, plan_new_topic


def place_new_topic(*args, **kwargs):
    return plan_new_topic(*args, **kwargs)[0]


P1_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def as_lists(assignment):
    return {p: list(r) for p, r in assignment.items()}


# -- P1 / P2 / P3 ------------------------------------------------------------------------------------------


def test_p1_rack_alternated_list():
    assert kafka.rack_alternated_brokers(P1_RACKS) == [0, 3, 1, 5, 4, 2]
    without_5 = {b: r for b, r in P1_RACKS.items() if b != 5}
    assert kafka.rack_alternated_brokers(without_5) == [0, 3, 1, 4, 2]


def test_p1_rack_aware_assignment():
    brokers = sorted(P1_RACKS.items())
    assert kafka.assign_replicas_to_brokers(brokers, 7, 3, 0, 0) == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }


def test_p2_rack_unaware_assignment():
    brokers = [(b, None) for b in range(5)]
    assert kafka.assign_replicas_to_brokers(brokers, 10, 3, 0, -1) == {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }


@pytest.mark.parametrize("rf", [0, 6])
def test_p2_invalid_replication_factor(rf):
    brokers = [(b, None) for b in range(5)]
    with pytest.raises(PlannerError) as e:
        kafka.assign_replicas_to_brokers(brokers, 10, rf, 0)
    assert str(e.value) == (
        "Replication factor must be larger than 0."
        if rf == 0
        else "Replication factor: 6 larger than available brokers: 5."
    )


@pytest.mark.parametrize(
    "n, rf, message",
    [
        (0, 3, "Number of partitions must be larger than 0."),
        (10, 0, "Replication factor must be larger than 0."),
        (10, 6, "Replication factor: 6 larger than available brokers: 5."),
        (10, 5, "Not all brokers have rack information for replica rack aware assignment."),
    ],
)
def test_p3_invalid_parameters(n, rf, message):
    brokers = [(0, "rack1"), (1, "rack3"), (2, "rack3"), (3, "rack2"), (4, None)]
    with pytest.raises(PlannerError) as e:
        kafka.assign_replicas_to_brokers(brokers, n, rf, 0)
    assert str(e.value) == message


# -- P4 / P5: adding partitions ------------------------------------------------------------------------------


def four_brokers(assignment):
    return Cluster(brokers=tuple(Broker(i) for i in range(4)), topics=(make_topic("t", assignment),))


def test_p4_add_partitions_all_servers():
    cluster = four_brokers({0: [2, 3, 0, 1]})
    assert kafka.add_partitions_start([0, 1, 2, 3], [2, 3, 0, 1]) == 2
    added, _ = place_new_partitions(cluster, "t", 7)
    expected = {
        1: (3, {3, 2, 0, 1}),
        2: (0, {0, 3, 1, 2}),
        3: (1, {1, 0, 2, 3}),
        4: (2, {2, 3, 0, 1}),
        5: (3, {3, 0, 1, 2}),
        6: (0, {0, 1, 2, 3}),
    }
    assert {p: (r[0], set(r)) for p, r in added.items()} == expected


def test_p5_add_partitions_partial_servers():
    cluster = four_brokers({0: [1, 2]})
    assert place_new_partitions(cluster, "t", 3)[0] == {1: [2, 0], 2: [3, 1]}


def test_add_partitions_must_increase():
    cluster = four_brokers({0: [1, 2], 1: [2, 3]})
    with pytest.raises(PlannerError) as e:
        place_new_partitions(cluster, "t", 2)
    assert str(e.value) == (
        "The number of partitions for a topic can only be increased. Topic t currently has 2 partitions, 2 would not "
        "be an increase."
    )


# -- P7 rack information rules of the tools ----------------------------------------------------------------


def test_p7_broker_rack_information():
    nodes = [(0, "rack0"), (1, "rack1"), (2, None)]
    assert kafka.broker_metadatas(nodes[:2], True) == [(0, "rack0"), (1, "rack1")]
    assert kafka.broker_metadatas(nodes[:2], False) == [(0, None), (1, None)]
    with pytest.raises(PlannerError) as e:
        kafka.broker_metadatas(nodes[1:], True)
    assert str(e.value).startswith("Not all brokers have rack information")
    assert kafka.broker_metadatas(nodes[1:], False) == [(1, None), (2, None)]


def test_p7_not_enough_brokers_text():
    with pytest.raises(PlannerError) as e:
        kafka.assign_replicas_to_brokers([(0, None), (1, None)], 1, 3, 0)
    assert str(e.value).startswith("Replication factor: 3 larger than available brokers: 2")


# -- P6: KRaft StripedReplicaPlacer --------------------------------------------------------------------------


def test_p6_broker_list():
    bl = kraft.BrokerList([0, 1, 2, 3])
    assert [bl.next(0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    assert [bl.next(1) for _ in range(5)] == [1, 2, 3, 0, -1]
    assert kraft.BrokerList().next(1) == -1


def test_p6_avoid_fenced_replica_single_rack():
    rl = kraft.RackList(
        MockRandom(), [(3, None, False), (1, None, True), (0, None, False), (4, None, False), (2, None, False)]
    )
    assert (rl.total, rl.unfenced, rl.names) == (5, 4, [None])
    for rf in (0, -1):
        with pytest.raises(PlannerError) as e:
            rl.place(rf)
        assert str(e.value) == f"Invalid replication factor {rf}: the replication factor must be positive."
    assert [rl.place(4) for _ in range(5)] == [[3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]]


def test_p6_placement_on_fenced_replica_single_rack():
    rl = kraft.RackList(MockRandom(), [(3, None, False), (1, None, True), (2, None, False)])
    assert [rl.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_p6_multiple_racks():
    rl = kraft.RackList(
        MockRandom(),
        [(11, "1", False), (10, "1", False), (30, "3", False), (31, "3", False), (21, "2", False), (20, "2", True)],
    )
    assert (rl.total, rl.unfenced, rl.names) == (6, 5, ["1", "2", "3"])
    assert [rl.place(4) for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_p6_invalid_racks():
    rl = kraft.RackList(
        MockRandom(),
        [
            (11, "1", False),
            (10, "1", False),
            (30, "3", True),
            (31, "3", True),
            (20, "2", True),
            (21, "2", True),
            (41, "4", False),
            (40, "4", True),
        ],
    )
    assert (rl.total, rl.unfenced, rl.names) == (8, 3, ["1", "2", "3", "4"])
    assert [rl.place(4) for _ in range(3)] == [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


def test_p6_successful_placement():
    brokers = [(0, None, False), (3, None, False), (2, None, False), (1, None, False)]
    assert kraft.place_striped(brokers, 5, 3, MockRandom()) == {
        0: [2, 3, 0],
        1: [3, 0, 1],
        2: [0, 1, 2],
        3: [1, 2, 3],
        4: [1, 0, 2],
    }


def test_p6_single_unfenced_broker():
    assert kraft.place_striped([(0, None, False), (1, None, True)], 3, 1, MockRandom()) == {0: [0], 1: [0], 2: [0]}


def test_p6_even_distribution():
    placed = kraft.place_striped([(i, None, False) for i in range(4)], 200, 2, MockRandom())
    counts = Counter(tuple(r) for r in placed.values())
    assert counts == {
        (0, 1): 14,
        (0, 2): 22,
        (0, 3): 14,
        (1, 0): 17,
        (1, 2): 17,
        (1, 3): 16,
        (2, 0): 13,
        (2, 1): 17,
        (2, 3): 20,
        (3, 0): 20,
        (3, 1): 19,
        (3, 2): 11,
    }


@pytest.mark.parametrize(
    "brokers, rf, message",
    [
        ([(11, None, True), (10, None, True)], 1, "All brokers are currently fenced."),
        (
            [(1, None, False), (2, None, False)],
            3,
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered.",
        ),
        (
            [(1, None, False), (2, None, False)],
            0,
            "Invalid replication factor 0: the replication factor must be positive.",
        ),
    ],
)
def test_p6_placer_errors(brokers, rf, message):
    with pytest.raises(PlannerError) as e:
        kraft.place_striped(brokers, 1, rf, MockRandom())
    assert str(e.value) == message


def test_p6_rack_list_errors():
    fenced = kraft.RackList(MockRandom(), [(1, None, True), (2, None, True), (3, None, True)])
    with pytest.raises(PlannerError, match=r"^All brokers are currently fenced\.$"):
        fenced.place(3)
    few = kraft.RackList(MockRandom(), [(1, None, False), (2, None, False)])
    with pytest.raises(PlannerError, match=r"only 2 broker\(s\) are registered\.$"):
        few.place(3)
    with pytest.raises(
        PlannerError, match=r"^Invalid replication factor -1: the replication factor must be positive\.$"
    ):
        few.place(-1)


def test_kraft_placer_errors_are_wrapped_like_the_controller():
    cluster = Cluster(brokers=(Broker(1),))
    with pytest.raises(PlannerError) as e:
        place_new_topic(cluster, 3, 3, placer="kraft")
    assert str(e.value) == (
        "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be "
        "reached because only 1 broker(s) are registered."
    )


def test_kraft_add_partitions_continue_after_the_last_partition():
    brokers = tuple(Broker(i) for i in range(3))
    existing = {0: [0, 1], 1: [1, 2]}
    cluster = Cluster(brokers=brokers, topics=(make_topic("t", existing),))
    added, _ = place_new_partitions(cluster, "t", 4, placer="kraft", seed=1)
    # rack offset and broker offset continue from the last partition (leader 1): no draw for the unfenced list
    rl = kraft.RackList(JavaRandom(1), [(b, None, False) for b in range(3)], [[0, 1], [1, 2]])
    # the last partition's first broker seen in the rack is 1 (index 1): the offset continues at (1 + 1) % 3
    assert rl.racks[None].unfenced.offset == 2
    assert list(added) == [2, 3]
    assert all(len(set(r)) == 2 for r in added.values())


# -- vectorised placement equals the scalar loops ------------------------------------------------------------


@settings(max_examples=150, deadline=None)
def _assert_bulk_equals_kafka(ids, racks, parts, rf, start, shift, start_pid):
    """The vectorised matrices, rack-unaware and rack-aware, give Kafka's loops' assignment element by element."""
    assert bulk.matrix_to_assignment(
        bulk.unaware_matrix(ids, parts, rf, start, shift, start_pid), start_pid
    ) == kafka.place_unaware(ids, parts, rf, start, shift, start_pid)
    assert bulk.matrix_to_assignment(
        bulk.aware_matrix(racks, parts, rf, start, shift, start_pid), start_pid
    ) == kafka.place_aware(racks, parts, rf, start, shift, start_pid)


@given(
    n=st.integers(1, 12),
    data=st.data(),
)
def test_bulk_equals_scalar(n, data):
    rf = data.draw(st.integers(1, n))
    parts = data.draw(st.integers(1, 40))
    start = data.draw(st.integers(0, n - 1))
    shift = data.draw(st.integers(0, 3 * n))
    start_pid = data.draw(st.sampled_from([-1, 0, 1, 5, 13, 29]))
    ids = data.draw(st.lists(st.integers(0, 99), min_size=n, max_size=n, unique=True))
    racks = {b: data.draw(st.sampled_from("abcd")) for b in ids}
    _assert_bulk_equals_kafka(ids, racks, parts, rf, start, shift, start_pid)


@pytest.mark.parametrize(
    "n_brokers, racks, parts, rf, seed",
    [
        (6, 3, 2_000, 3, 0),
        (7, 0, 2_001, 2, 1),
        (12, 4, 5_003, 3, 42),
        (30, 10, 10_000, 3, 7),
        (5, 0, 3_000, 5, 99),
        (9, 2, 2_500, 4, 12345),
        (1, 0, 2_000, 1, 3),
        (11, 11, 4_000, 3, 2024),
    ],
)
def test_assign_replicas_at_scale_equals_scalar_loops(n_brokers, racks, parts, rf, seed):
    """From BULK_PARTITIONS on, AdminUtils placement runs vectorised: same result as Kafka's loops, for random draws
    (java.util.Random(seed)), fixed starts and a continued partition range."""
    from planner.java import JavaRandom

    ids = [3 * i + 1 for i in range(n_brokers)]
    metas = [(b, f"r{i % racks}" if racks else None) for i, b in enumerate(ids)]
    assert parts >= kafka.BULK_PARTITIONS
    rnd = JavaRandom(seed)
    start, shift = rnd.next_int(n_brokers), rnd.next_int(n_brokers)

    def scalar(st, sh, pid0=-1):
        if racks:
            return kafka.place_aware(dict(metas), parts, rf, st, sh, pid0)
        return kafka.place_unaware(ids, parts, rf, st, sh, pid0)

    assert kafka.assign_replicas_to_brokers(metas, parts, rf, rnd=JavaRandom(seed)) == scalar(start, shift)
    fixed = seed % n_brokers
    assert kafka.assign_replicas_to_brokers(metas, parts, rf, fixed) == scalar(fixed, fixed)
    assert kafka.assign_replicas_to_brokers(metas, parts, rf, fixed, 17) == scalar(fixed, fixed, 17)


# -- properties over random clusters --------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_adminutils_properties(data):
    n = data.draw(st.integers(1, 10))
    n_racks = data.draw(st.integers(0, 4))
    brokers = [(b, None if n_racks == 0 else f"r{data.draw(st.integers(0, n_racks - 1))}") for b in range(n)]
    rf = data.draw(st.integers(1, n))
    parts = data.draw(st.integers(1, 60))
    start = data.draw(st.integers(0, n - 1))
    a = kafka.assign_replicas_to_brokers(brokers, parts, rf, start)
    racks = dict(brokers)
    distinct_racks = len(set(racks.values()))
    assert sorted(a) == list(range(parts))
    leaders = Counter()
    for replicas in a.values():
        assert len(replicas) == rf and len(set(replicas)) == rf
        if n_racks:
            assert len({racks[b] for b in replicas}) == min(rf, distinct_racks)
        leaders[replicas[0]] += 1
    # leaders go round robin: counts differ by at most one
    counts = [leaders[b] for b, _ in brokers]
    assert max(counts) - min(counts) <= 1
    if not n_racks:
        replicas_per_broker = Counter(b for r in a.values() for b in r)
        per = [replicas_per_broker[b] for b in range(n)]
        assert max(per) - min(per) <= rf


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_kraft_properties(data):
    n = data.draw(st.integers(1, 9))
    brokers = [(b, data.draw(st.sampled_from([None, "a", "b", "c"])), data.draw(st.booleans())) for b in range(n)]
    if all(f for _, _, f in brokers):
        brokers[0] = (0, brokers[0][1], False)
    rf = data.draw(st.integers(1, n))
    placed = kraft.place_striped(brokers, data.draw(st.integers(1, 30)), rf, JavaRandom(data.draw(st.integers(0, 99))))
    fenced = {b for b, _, f in brokers if f}
    racks = {b: r for b, r, _ in brokers}
    for replicas in placed.values():
        assert len(replicas) == rf and len(set(replicas)) == rf
        assert replicas[0] not in fenced
        assert len({racks[b] for b in replicas}) == min(rf, len(set(racks.values())))


# -- the balanced choice ----------------------------------------------------------------------------------------


def test_balanced_beats_a_fixed_start_on_a_loaded_cluster():
    brokers = tuple(Broker(i) for i in range(1, 7))
    loaded = Cluster(brokers=brokers, topics=(make_topic("old", {0: [1, 2], 1: [2, 3], 2: [3, 1]}),))
    fixed = place_new_topic(loaded, 3, 2, start_index=0)
    chosen, how = plan_new_topic(loaded, 3, 2)

    def spread(extra):
        c = Counter(b for r in list(extra.values()) + [[1, 2], [2, 3], [3, 1]] for b in r)
        per = [c[b] for b in range(1, 7)]
        return max(per) - min(per)

    assert fixed == {0: [1, 2], 1: [2, 3], 2: [3, 4]}
    assert spread(fixed) == 4
    assert chosen == {0: [4, 5], 1: [5, 6], 2: [6, 1]}
    assert spread(chosen) == 2
    # no start/shift Kafka could draw does better (a ring 4→5→6→4 is not an AdminUtils shape)
    every = [kafka.place_unaware([1, 2, 3, 4, 5, 6], 3, 2, a, b) for a in range(6) for b in range(6)]
    assert min(spread(x) for x in every) == 2
    assert how == "Kafka AdminUtils, rack-unaware, balanced choice: start index 3, replica shift 0"


def test_balanced_choice_is_a_placement_kafka_could_draw():
    brokers = tuple(Broker(i, rack=f"r{i % 3}") for i in range(9))
    cluster = Cluster(brokers=brokers, topics=(make_topic("x", {0: [0, 1, 2], 1: [0, 4, 5]}),))
    metadatas = [(b.id, b.rack) for b in brokers]
    assignment, start, shift = balanced.choose_start(cluster, metadatas, 7, 3)
    assert assignment == kafka.place_aware(dict(metadatas), 7, 3, start, shift)
    assert 0 <= start < 9 and 0 <= shift < 9


def test_balanced_large_problem_uses_the_vectorised_path_and_agrees_with_scalar():
    brokers = [(b, None) for b in range(40)]
    cluster = Cluster(
        brokers=tuple(Broker(b) for b, _ in brokers),
        topics=(make_topic("x", {p: [p % 7, (p % 7) + 1] for p in range(30)}),),
    )
    assignment, start, shift = balanced.choose_start(cluster, brokers, 400, 3)
    assert assignment == kafka.place_unaware([b for b, _ in brokers], 400, 3, start, shift)
    new = Counter(b for r in assignment.values() for b in r)
    assert set(new.values()) == {30}  # 1,200 replicas, 30 on each broker
    existing = Counter(b for p in range(30) for b in (p % 7, (p % 7) + 1))

    def sum_of_squares(a):
        total = Counter(existing)
        total.update(b for r in a.values() for b in r)
        return sum(total[b] ** 2 for b in range(40))

    fixed = kafka.place_unaware([b for b, _ in brokers], 400, 3, 0, 0)
    assert sum_of_squares(assignment) <= sum_of_squares(fixed)


def test_start_index_out_of_range():
    cluster = Cluster(brokers=tuple(Broker(i) for i in range(3)))
    with pytest.raises(PlannerError, match=r"--start-index 3 must be between 0 and 2"):
        place_new_topic(cluster, 3, 1, start_index=3)


def test_seeded_kafka_placement_reproduces_the_random_draws():
    cluster = Cluster(brokers=tuple(Broker(i) for i in range(5)))
    rnd = JavaRandom(11)
    start, shift = rnd.next_int(5), rnd.next_int(5)
    assert place_new_topic(cluster, 8, 3, seed=11) == kafka.place_unaware(list(range(5)), 8, 3, start, shift)


# -- large problems: periodic rows, candidate counts without matrices, the Rows mapping ----------------------------


@settings(max_examples=120, deadline=None)
@given(n=st.integers(1, 7), data=st.data())
def test_bulk_rows_repeat_per_position_and_shift_residue(n, data):
    """With more partitions than n × (n − 1) distinct rows, the matrix gathers each row placed once: still equal to
    Kafka's loops element by element."""
    rf = data.draw(st.integers(1, n))
    parts = data.draw(st.integers(2 * n * max(1, n - 1), 2 * n * max(1, n - 1) + 3 * n))
    start, shift = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, 3 * n))
    start_pid = data.draw(st.sampled_from([-1, 0, 1, 5, 13, 29]))
    ids = data.draw(st.lists(st.integers(0, 99), min_size=n, max_size=n, unique=True))
    racks = {b: data.draw(st.sampled_from("abc")) for b in ids}
    _assert_bulk_equals_kafka(ids, racks, parts, rf, start, shift, start_pid)


def _choose_by_matrices(ids, racks, base_r, base_l, parts, rf, start_pid):
    """The balanced choice as it was first written: place every candidate's whole matrix and score its counts."""
    import numpy as np

    position = {b: i for i, b in enumerate(ids)}

    def score(start, shift):
        if racks:
            m = bulk.aware_matrix(racks, parts, rf, start, shift, start_pid)
        else:
            m = bulk.unaware_matrix(ids, parts, rf, start, shift, start_pid)
        reps = np.asarray([base_r[b] for b in ids]) + np.bincount([position[b] for b in m.ravel()], minlength=len(ids))
        leads = np.asarray([base_l[b] for b in ids]) + np.bincount([position[b] for b in m[:, 0]], minlength=len(ids))
        return (
            int(reps.max() - reps.min()),
            int(leads.max() - leads.min()),
            int((reps * reps).sum()),
            int((leads * leads).sum()),
        )

    n = len(ids)
    best = min((score(s, s), s, s) for s in range(n))
    for _, start, _ in sorted((score(s, s), s, s) for s in range(n))[:3]:
        for shift in range(0, n, max(1, n // 64)):
            best = min(best, (score(start, shift), start, shift))
    return best[1], best[2]


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 14), aware=st.booleans(), data=st.data())
def test_balanced_counts_choose_exactly_what_whole_matrices_choose(n, aware, data):
    """The large-problem balanced choice scores candidates from per-round counts: the same (start, shift) as scoring
    each candidate's full matrix, on random clusters, loads, partition ranges and racks."""
    ids = sorted(data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n, unique=True)))
    racks = {b: data.draw(st.sampled_from("abcd")) for b in ids} if aware else {}
    rf = data.draw(st.integers(1, n))
    parts = data.draw(st.integers(1, 150))
    start_pid = data.draw(st.sampled_from([-1, 0, 1, 5, 13, 29, 40]))
    base_r = {b: data.draw(st.integers(0, 40)) for b in ids}
    base_l = {b: data.draw(st.integers(0, 15)) for b in ids}
    rows, start, shift = balanced._choose_vectorised(ids, racks, aware, base_r, base_l, parts, rf, start_pid)
    assert (start, shift) == _choose_by_matrices(ids, racks, base_r, base_l, parts, rf, start_pid)
    place = kafka.place_aware if aware else kafka.place_unaware
    assert rows == place(racks if aware else ids, parts, rf, start, shift, start_pid)


def test_balanced_choice_at_a_million_partitions_on_six_brokers():
    brokers = [(b, f"r{b % 3}") for b in range(1, 7)]
    cluster = Cluster(brokers=tuple(Broker(b, rack=r) for b, r in brokers), topics=(make_topic("x", {0: [1, 2, 3]}),))
    rows, start, shift = balanced.choose_start(cluster, brokers, 1_000_000, 3)
    assert (start, shift) == (2, 1)  # what scoring the 24 candidates' whole matrices chose (10 s of CPU)
    assert isinstance(rows, bulk.Rows) and rows.matrix.shape == (1_000_000, 3)
    counts = Counter(rows.matrix.ravel().tolist())
    counts.update([1, 2, 3])
    assert sorted(counts.values()) == [500_000, 500_000, 500_000, 500_001, 500_001, 500_001]


def test_rows_mapping_reads_like_the_dict_it_replaces():
    matrix = bulk.unaware_matrix([1, 2, 3], 4, 2, 0, 0, 5)
    rows = bulk.Rows(matrix, 5)
    expected = {5: [3, 1], 6: [1, 3], 7: [2, 1], 8: [3, 2]}  # Kafka's loop (place_unaware)
    assert rows == expected and expected == rows
    assert list(rows) == [5, 6, 7, 8] and len(rows) == 4
    assert list(rows.items()) == list(expected.items()) and list(rows.values()) == list(expected.values())
    assert rows == kafka.place_unaware([1, 2, 3], 4, 2, 0, 0, 5)
    assert rows[7] == [2, 1] and 4 not in rows and 9 not in rows
    with pytest.raises(KeyError):
        rows[9]
    assert repr(rows) == "Rows(4 partitions from 5)"
