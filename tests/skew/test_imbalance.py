"""Skew metrics (max/mean, CV, Gini) and the sweep recommendation: exact values and properties."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.model import PlannerError
from planner.skew.imbalance import coefficient_of_variation, gini, max_over_mean, skew
from planner.skew.sweep import evaluate_sweep, parse_sweep


def test_metrics_exact_values():
    s = skew([1, 2, 3, 4])
    assert (s.n, s.total, s.minimum, s.maximum, s.mean) == (4, 10, 1, 4, 2.5)
    assert s.max_over_mean == pytest.approx(1.6, abs=1e-15)
    assert s.cv == pytest.approx(1 / math.sqrt(5), abs=1e-15)
    assert s.gini == pytest.approx(0.25, abs=1e-15)


def test_metrics_everything_on_one_partition():
    assert max_over_mean([0, 0, 0, 10]) == 4.0
    assert gini([0, 0, 0, 10]) == 0.75  # (n-1)/n, the maximum for n loads
    assert coefficient_of_variation([0, 0, 0, 10]) == pytest.approx(math.sqrt(3), abs=1e-15)


def test_metrics_even_and_empty():
    assert (max_over_mean([5, 5, 5]), coefficient_of_variation([5, 5, 5]), gini([5, 5, 5])) == (1.0, 0.0, 0.0)
    s = skew([0, 0])
    assert (s.max_over_mean, s.cv, s.gini, s.total, s.mean) == (None, None, None, 0, 0.0)
    assert skew([]).as_dict() == {
        "n": 0,
        "total": 0,
        "min": 0,
        "max": 0,
        "mean": 0.0,
        "max_over_mean": None,
        "cv": None,
        "gini": None,
    }


loads = st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=40).filter(lambda x: sum(x) > 0)


@settings(max_examples=200, deadline=None)
@given(loads)
def test_gini_is_the_mean_absolute_difference_definition(xs):
    n, total = len(xs), sum(xs)
    pairwise = sum(abs(a - b) for a in xs for b in xs) / (2 * n * total)
    assert gini(xs) == pytest.approx(pairwise, rel=1e-12, abs=1e-12)
    assert 0.0 <= gini(xs) <= (n - 1) / n + 1e-12


@settings(max_examples=200, deadline=None)
@given(loads, st.integers(min_value=1, max_value=1000), st.randoms(use_true_random=False))
def test_metrics_scale_and_order_invariant(xs, k, rnd):
    import numpy as np

    shuffled = list(xs)
    rnd.shuffle(shuffled)
    scaled = [k * x for x in shuffled]
    for f in (max_over_mean, coefficient_of_variation, gini):
        assert f(scaled) == pytest.approx(f(xs), rel=1e-9, abs=1e-12)
    assert max_over_mean(xs) >= 1.0
    assert coefficient_of_variation(xs) == pytest.approx(float(np.std(xs) / np.mean(xs)), rel=1e-9, abs=1e-12)


def test_parse_sweep():
    assert parse_sweep("24, 6,12,6") == (6, 12, 24)
    assert parse_sweep(None) == ()
    with pytest.raises(PlannerError, match=r"--sweep '6,x': 'x' is not a partition count"):
        parse_sweep("6,x")
    with pytest.raises(PlannerError, match="must be positive, got 0"):
        parse_sweep("0,6")


def test_sweep_recommends_the_smallest_count_within_max_skew():
    records = {2: [6, 4], 3: [4, 3, 3], 4: [3, 3, 2, 2]}
    result = evaluate_sweep(records, records, max_skew=1.2)
    assert [(r.partitions, r.records.max_over_mean, r.within) for r in result.rows] == [
        (2, 1.2, True),
        (3, 1.2, True),
        (4, 1.2, True),
    ]
    assert result.recommended == 2
    strict = evaluate_sweep(records, records, max_skew=1.1)
    assert strict.recommended is None
    assert (
        evaluate_sweep({4: [10, 0, 0, 0], 8: [3, 3, 2, 2, 2, 2, 3, 3]}, {4: [0] * 4, 8: [0] * 8}, 1.2).recommended == 8
    )
    with pytest.raises(PlannerError, match="never below 1.0"):
        evaluate_sweep(records, records, max_skew=0.9)


def test_hot_key_limit_is_the_largest_count_a_key_of_that_share_allows():
    from planner.skew.sweep import hot_key_limit

    # 505 of 2955 keyed records: max/mean >= 505 * n / 2955, which is <= 1.2 up to n = 7 (7.02...)
    assert hot_key_limit(505, 2955, 1.2) == 7
    assert 505 * 7 / 2955 <= 1.2 < 505 * 8 / 2955
    assert hot_key_limit(2, 10, 1.2) == 6  # exactly 1.2 at 6 partitions still qualifies (the float test of `within`)
    assert hot_key_limit(10, 10, 1.2) == 1 and hot_key_limit(10, 10, 1.0) == 1
    assert hot_key_limit(7, 10, 1.2) == 1  # 0.7 * 2 = 1.4
    assert hot_key_limit(0, 10, 1.2) is None and hot_key_limit(3, 0, 1.2) is None


def test_sweep_reports_the_lowest_count_and_the_hot_key_limit():
    records = {3: [1392, 776, 787], 6: [374, 994, 389, 402, 398, 398]}
    result = evaluate_sweep(records, records, 1.2, top_key_records=505)
    assert (result.recommended, result.lowest, result.hot_key_limit) == (None, 3, 7)
    assert evaluate_sweep(records, records, 1.2).hot_key_limit is None
    tie = evaluate_sweep({2: [5, 5], 4: [3, 3, 2, 2]}, {2: [0, 0], 4: [0] * 4}, 1.5)
    assert (tie.recommended, tie.lowest) == (2, 2)
