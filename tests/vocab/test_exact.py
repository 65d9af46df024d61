"""Machine-independent scores of counts: correctly rounded values, per-count evaluation, exact means."""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest

from sumpipe.vocab.exact import exact_ln, exact_mean, inverse_ln1p, inverse_log10, per_count


def test_known_values():
    assert inverse_ln1p(1) == 1.4426950408889634  # 1/ln 2
    assert inverse_log10(10) == 1.0
    assert inverse_log10(100) == 0.5
    assert inverse_log10(1000) == 0.3333333333333333  # the float nearest 1/3
    assert inverse_ln1p(0) == math.inf and inverse_log10(1) == math.inf  # as 1/0 in numpy


def _reference(count: int, log: str) -> float:
    """1/log(count) at 60 digits, rounded once to float64."""
    with decimal.localcontext(decimal.Context(prec=60)):
        return float(1 / getattr(decimal.Decimal(count), log)())


@pytest.mark.parametrize("count", [2, 3, 7, 45, 170, 504, 999, 65_536, 11_896_156, 2**32 - 1])
def test_correctly_rounded(count):
    """The float64 nearest the true value, not merely within an ulp of it: one answer for every machine."""
    assert inverse_ln1p(count) == _reference(count + 1, "ln")
    assert inverse_log10(count) == _reference(count, "log10")


def test_per_count_keeps_shape_and_order():
    counts = np.array([[45, 6, 45], [504, 6, 1_000]])
    scores = per_count(inverse_log10, counts)
    assert scores.shape == (2, 3) and scores.dtype == np.float64
    assert scores.tolist() == [[inverse_log10(45), inverse_log10(6), inverse_log10(45)],
                               [inverse_log10(504), inverse_log10(6), 1 / 3]]
    assert per_count(inverse_ln1p, np.array([], dtype=np.int64)).shape == (0,)


def test_exact_mean_is_order_free():
    values = np.array([1e16, 1.0, -1e16, 2.0])
    assert exact_mean(values) == 0.75  # a left-to-right float sum loses the 1.0: 0.5
    rng = np.random.default_rng(0)
    x = rng.random(10_001) * 10.0 ** rng.integers(-8, 8, 10_001)
    assert len({exact_mean(rng.permutation(x)) for _ in range(5)}) == 1


def test_exact_ln_is_correctly_rounded_per_value():
    values = np.array([[1.0, 2.0], [2.0, 0.0]])
    out = exact_ln(values)
    assert out[0, 0] == 0.0 and out[1, 1] == -math.inf
    assert out[0, 1] == out[1, 0] == 0.6931471805599453  # ln 2 to 17 digits: 0.69314718055994530942
    assert float(exact_ln(10.0)) == 2.302585092994046
