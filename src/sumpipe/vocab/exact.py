"""Scores of integer counts that are bit-identical on every machine (rarity, Table 2.7; 3-grams, Table 2.8).

Why not numpy: `np.log1p` / `np.log10` on float64 run SIMD kernels chosen when numpy starts (the AVX-512
SVML kernels where the CPU has them, other polynomials elsewhere), and glibc's libm picks FMA variants at
load time too. Their results may differ in the last bit between two x86-64 machines running the same
pinned packages, and one such bit in a rarity score changes `vocab.parquet`, hence every model.

What instead: a score is computed once per *distinct* count with Python's `decimal` (libmpdec, integer
arithmetic; `ln` and `log10` are correctly rounded to the context precision by specification, so every
correct implementation returns the same digits), at `PRECISION` significant digits, then rounded once to
the nearest float64. A vocabulary has a few thousand distinct counts, so this costs milliseconds. Means
are taken with `math.fsum` (the correctly rounded sum, independent of order and of SIMD summation).
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable

import numpy as np

# significant digits: float64 needs 17; the margin leaves the final float64 rounding as the only one that matters
PRECISION = 25

_CONTEXT = decimal.Context(prec=PRECISION, rounding=decimal.ROUND_HALF_EVEN,
                           traps=[decimal.InvalidOperation])  # 1/0 -> Infinity, like numpy


def inverse_ln1p(count: int) -> float:
    """1 / ln(1 + count) as the float64 nearest to its 25-digit value (inf for count 0)."""
    return float(_CONTEXT.divide(1, _CONTEXT.ln(decimal.Decimal(count + 1))))


def inverse_log10(count: int) -> float:
    """1 / log10(count) as the float64 nearest to its 25-digit value (inf for count 1)."""
    return float(_CONTEXT.divide(1, _CONTEXT.log10(decimal.Decimal(count))))


def per_count(score: Callable[[int], float], counts: np.ndarray) -> np.ndarray:
    """`score` of every element of the integer array `counts`, float64, same shape, evaluated once
    per distinct count."""
    counts = np.asarray(counts, dtype=np.int64)
    distinct, inverse = np.unique(counts, return_inverse=True)
    values = np.array([score(int(c)) for c in distinct.tolist()], dtype=np.float64)
    return values[inverse].reshape(counts.shape)


def exact_mean(values: np.ndarray) -> float:
    """The mean of float64 `values`: correctly rounded sum (`math.fsum`), then one division."""
    values = np.asarray(values, dtype=np.float64).ravel()
    return math.fsum(values.tolist()) / len(values)


def exact_ln(values: np.ndarray | float) -> np.ndarray:
    """ln of every element of the float64 array `values` (any values >= 0; -inf at 0), each the float64
    nearest to its 25-digit value, evaluated once per distinct value: the same bits on every machine
    where `np.log` is not (module docstring). For arrays with few distinct values (counts, ratios of
    counts), as the extractive methods' term weights are."""
    array = np.asarray(values, dtype=np.float64)
    distinct, inverse = np.unique(array, return_inverse=True)
    logs = np.array([float(_CONTEXT.ln(decimal.Decimal(v))) if v > 0 else -math.inf
                     for v in distinct.tolist()], dtype=np.float64)
    return logs[inverse].reshape(array.shape)
