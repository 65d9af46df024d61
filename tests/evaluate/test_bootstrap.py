"""Bootstrap intervals and the paired bootstrap test."""

from __future__ import annotations

import numpy as np
import pytest

from sumpipe.evaluate.bootstrap import confidence_intervals, paired_bootstrap, paired_bootstraps, resample_means


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
