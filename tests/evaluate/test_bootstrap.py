"""Bootstrap intervals and the paired bootstrap test."""

from __future__ import annotations

import numpy as np
import pytest

from sumpipe.evaluate.bootstrap import (
    confidence_intervals,
    paired_bootstrap,
    paired_bootstraps,
    percentile_p_value,
    resample_means,
    two_level_bootstrap,
    two_level_means,
)


def test_resampled_means_are_means_of_resamples() -> None:
    # Chunked, column-wise gathering must equal drawing the indices and averaging.
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    means = resample_means(x, samples=5, seed=3)
    rng = np.random.Generator(np.random.PCG64(3))
    draws = rng.integers(0, 5, size=(5, 5))
    assert means == pytest.approx(x[draws].mean(axis=1), abs=1e-12)


def test_intervals_are_deterministic_for_a_seed() -> None:
    x = np.random.default_rng(0).random((200, 3))
    a = confidence_intervals(x, samples=300, confidence=0.95, seed=11)
    b = confidence_intervals(x, samples=300, confidence=0.95, seed=11)
    c = confidence_intervals(x, samples=300, confidence=0.95, seed=12)
    assert a == b
    assert a != c
    for ci, column in zip(a, x.T):
        assert ci.mean == pytest.approx(column.mean())
        assert ci.low < ci.mean < ci.high


def test_interval_width_matches_the_standard_error() -> None:
    # For a mean of n iid values the 95% interval is about +-1.96 sd / sqrt(n).
    x = np.random.default_rng(1).normal(10.0, 2.0, size=2000)
    (ci,) = confidence_intervals(x, samples=2000, confidence=0.95, seed=5)
    half = (ci.high - ci.low) / 2
    assert half == pytest.approx(1.96 * x.std() / np.sqrt(x.size), rel=0.15)


def test_a_constant_has_a_point_interval() -> None:
    (ci,) = confidence_intervals(np.full(50, 0.25), samples=100, confidence=0.9, seed=0)
    assert ci.low == pytest.approx(0.25) and ci.high == pytest.approx(0.25)


def test_paired_test_finds_a_planted_difference() -> None:
    rng = np.random.default_rng(2)
    b = rng.random(400)
    a = b + 0.02 + rng.normal(0.0, 0.1, size=400)  # A better by 0.02 on average, noisy per example
    test = paired_bootstrap(a, b, samples=1000, seed=7)
    assert test.delta == pytest.approx(float(np.mean(a - b)))
    assert test.p_value < 0.05
    assert test.win_rate > 0.95
    # and the reverse direction is not significant
    assert paired_bootstrap(b, a, samples=1000, seed=7).p_value > 0.5


def test_paired_test_does_not_find_a_null_difference() -> None:
    rng = np.random.default_rng(3)
    b = rng.random(400)
    a = b + rng.normal(0.0, 0.1, size=400)  # same system up to noise
    a = a - np.mean(a - b)  # exactly zero mean difference
    assert paired_bootstrap(a, b, samples=1000, seed=7).p_value > 0.3
    assert paired_bootstrap(b, b, samples=200, seed=7).p_value == 1.0


def test_paired_test_is_deterministic_and_checks_shapes() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.random(50), rng.random(50)
    assert paired_bootstrap(a, b, 300, 9) == paired_bootstrap(a, b, 300, 9)
    with pytest.raises(ValueError, match="one length"):
        paired_bootstrap(a, b[:10], 10, 0)
    with pytest.raises(ValueError, match="empty"):
        resample_means(np.array([]), 10, 0)


def test_resampled_means_of_many_columns_and_chunks() -> None:
    # 150 resamples span three chunks of 64; every column uses the same draws.
    x = np.random.default_rng(6).random((37, 3))
    means = resample_means(x, samples=150, seed=4)
    draws = np.random.Generator(np.random.PCG64(4)).integers(0, 37, size=(150, 37))
    assert means.shape == (150, 3)
    assert means == pytest.approx(x[draws].mean(axis=1), abs=1e-12)


def test_paired_tests_of_several_columns_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(8)
    b = rng.random((300, 3))
    a = b + np.array([0.05, 0.0, -0.05]) + rng.normal(0.0, 0.1, size=(300, 3))
    tests = paired_bootstraps(a, b, samples=500, seed=7)
    for k, test in enumerate(tests):
        alone = paired_bootstrap(a[:, k], b[:, k], samples=500, seed=7)
        assert test.delta == pytest.approx(alone.delta, abs=1e-15) and test.win_rate == alone.win_rate
        assert test.p_value == alone.p_value
    assert tests[0].p_value < 0.05 and tests[2].p_value > 0.5


# ---- the two-level bootstrap (several training seeds) ------------------------------------------
def test_two_level_test_matches_the_exact_distribution_of_a_small_case() -> None:
    # One seed, two documents: A = [1, 0] against B = [0, 0], delta 0.5. The resampled documents are
    # (0,0), (0,1), (1,0), (1,1), each with probability 1/4, giving deltas 1, 0.5, 0.5, 0: at least 0.5
    # away from 0.5 with probability 1/2 (by hand), so p = 0.5 and the 95 % interval is [0, 1].
    test = two_level_bootstrap(np.array([[1.0, 0.0]]), np.array([[0.0, 0.0]]), 20_000, 0.95, seed=5)
    assert test.delta == 0.5
    assert test.p_value == pytest.approx(0.5, abs=0.015)
    assert (test.low, test.high) == (0.0, 1.0)


def test_a_difference_made_by_one_lucky_seed_is_not_called_real() -> None:
    # A's two seeds score 1 and 0 on every document; B's one seed 0. delta = 0.5, but by hand the seed
    # resamples (s0,s0), (s0,s1), (s1,s0), (s1,s1) give 1, 0.5, 0.5, 0: p = 1/2, interval [0, 1]. A test over
    # documents alone sees a constant gain of 0.5 per document and calls it certain (p = 0).
    a = np.array([[1.0] * 6, [0.0] * 6])
    b = np.zeros((1, 6))
    test = two_level_bootstrap(a, b, 20_000, 0.95, seed=5)
    assert test.delta == 0.5
    assert test.p_value == pytest.approx(0.5, abs=0.015)
    assert (test.low, test.high) == (0.0, 1.0)
    assert paired_bootstrap(a.mean(axis=0), b[0], 2000, seed=5).p_value == 0.0


def test_two_copies_of_a_system_are_not_called_different() -> None:
    rng = np.random.default_rng(1)
    a = rng.random((3, 40))
    test = two_level_bootstrap(a, a.copy(), 2000, 0.95, seed=7)
    assert test.delta == 0.0
    assert test.p_value == 1.0
    assert test.low < 0.0 < test.high


def test_a_system_shifted_by_a_fixed_amount_is_called_different() -> None:
    # Documents differ a lot, seeds little (as trained models do): shifting every score of every seed
    # by 0.05 is a real difference, and the test says so with an interval around it.
    rng = np.random.default_rng(2)
    difficulty = rng.random(300)
    a = difficulty + rng.normal(0.0, 0.005, size=(3, 300))
    b = difficulty + rng.normal(0.0, 0.005, size=(3, 300)) + 0.05
    test = two_level_bootstrap(b, a, 2000, 0.95, seed=7)
    assert test.delta == pytest.approx(0.05, abs=0.01)
    assert test.p_value < 0.01
    assert 0.0 < test.low < 0.05 < test.high
    reverse = two_level_bootstrap(a, b, 2000, 0.95, seed=7)
    assert reverse.delta == pytest.approx(-test.delta) and reverse.p_value < 0.01


def test_with_one_seed_each_it_is_the_paired_document_bootstrap() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random((1, 50)), rng.random((1, 50))
    assert two_level_means(a, b, 300, seed=9) == pytest.approx(resample_means((a - b)[0], 300, seed=9), abs=1e-12)
    assert two_level_means(a, np.zeros((1, 50)), 300, seed=9) == pytest.approx(resample_means(a[0], 300, seed=9))


def test_two_level_test_refuses_systems_of_other_examples() -> None:
    with pytest.raises(ValueError, match="same examples"):
        two_level_bootstrap(np.zeros((2, 3)), np.zeros((1, 4)), 10, 0.95, seed=1)


def test_the_p_value_is_read_off_the_percentiles_the_interval_uses() -> None:
    # Sorted resamples -1, 0, 1, ..., 9 (B = 11, quantile positions t = i / 10): q(t) <= 0 up to t = 0.1 (the
    # value 0), so the low end q(alpha / 2) is above 0 once alpha > 0.2: p = 0.2. The 80 % interval
    # [q(0.1), q(0.9)] = [0, 8] just holds 0.
    assert percentile_p_value(np.arange(-1.0, 10.0)) == pytest.approx(0.2)
    # Between two resamples: -3, -1, 1, 3 (t = 0, 1/3, 2/3, 1) cross 0 half-way, at t = 1/2: p = 1.
    assert percentile_p_value(np.array([3.0, -1.0, 1.0, -3.0])) == pytest.approx(1.0)
    # -1, 1, 2, 3, 4: q crosses 0 at t = (0 + 1/2) / 4 = 1/8, p = 1/4; all above 0: p = 0; all 0: p = 1.
    assert percentile_p_value(np.array([-1.0, 1.0, 2.0, 3.0, 4.0])) == pytest.approx(0.25)
    assert percentile_p_value(np.array([0.5, 1.0, 2.0])) == 0.0
    assert percentile_p_value(np.zeros(7)) == 1.0
    assert percentile_p_value(-np.arange(-1.0, 10.0)) == pytest.approx(0.2)   # the other side alike


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_verdict_and_the_interval_never_disagree(confidence: float) -> None:
    # Skewed per-document differences with three noisy seeds, near the edge of significance: before, p (the
    # share of resamples |delta| away from delta) called differences "real" whose interval held 0.
    rng = np.random.default_rng(3)
    for trial in range(60):
        n = int(rng.integers(20, 80))
        base = rng.exponential(1.0, size=n)
        a = base + rng.normal(0.0, 0.2, size=(3, n)) + rng.exponential(0.15, size=(3, 1))
        b = base + rng.normal(0.0, 0.2, size=(3, n))
        test = two_level_bootstrap(a, b, 400, confidence, seed=trial)
        excludes_zero = test.low > 0 or test.high < 0
        assert excludes_zero == (test.p_value < 1 - confidence), (trial, test)
