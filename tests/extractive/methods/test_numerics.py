"""Kernel-independent arithmetic: hand-computed values of settle, quantize, matmul and eigen."""

from __future__ import annotations

import numpy as np

from sumpipe.extractive.methods.numerics import eigen, matmul, norm, quantize, row_norms, settle


def test_settle_rounds_to_30_significant_bits_and_zeroes_noise():
    # 1 + 2^-40 and 1 - 2^-40 (two kernels' last bits) both settle to 1; 2^-35 is noise next to 1
    values = np.array([1.0 + 2.0**-40, 1.0 - 2.0**-40, 2.0**-35, 0.75])
    assert settle(values).tolist() == [1.0, 1.0, 0.0, 0.75]
    # alone, a small value is its own scale: kept (rounded), not zeroed
    assert settle(np.array([3.0 * 2.0**-35])).tolist() == [3.0 * 2.0**-35]
    # 1 + 2^-30 is representable in 30 bits? no: 1 = 0.5 * 2^1, so the last kept bit is 2^-29
    assert settle(np.array([1.0 + 2.0**-29])).tolist() == [1.0 + 2.0**-29]
    assert settle(np.array([1.0 + 2.0**-30])).tolist() == [1.0]  # half-way: to even


def test_quantize_is_an_absolute_grid():
    assert quantize(np.array([0.1, -2.0**-21, 3 * 2.0**-21]), 20).tolist() == [
        round(0.1 * 2**20) / 2**20, -0.0, 2 * 2.0**-20]


def test_matmul_matches_the_product():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert matmul(a, b).tolist() == [[4.0, 5.0], [10.0, 11.0]]
    assert matmul(a, np.array([1.0, 1.0, 1.0])).tolist() == [6.0, 15.0]
    assert matmul(np.array([1.0, 2.0]), a).tolist() == [9.0, 12.0, 15.0]
    assert norm(np.array([3.0, 4.0])) == 5.0
    assert row_norms(np.array([[3.0, 4.0], [0.0, 2.0]])).tolist() == [5.0, 2.0]


def test_eigen_sorts_decreasing_and_fixes_signs():
    # [[2, 1], [1, 2]]: eigenvalues 3 (vector (1, 1)/sqrt 2) and 1 ((1, -1)/sqrt 2)
    values, vectors = eigen(np.array([[2.0, 1.0], [1.0, 2.0]]))
    assert values.tolist() == [3.0, 1.0]
    half = float(settle(np.sqrt(0.5)))
    assert vectors[:, 0].tolist() == [half, half]
    assert vectors[:, 1].tolist() == [half, -half]  # the first of the equal-magnitude entries is positive
    _, flipped = eigen(np.array([[1.0, 0.0], [0.0, 5.0]]))
    assert flipped.tolist() == [[0.0, 1.0], [1.0, 0.0]]
