"""PageRank of a small weighted sentence graph by power iteration (numpy; the same fixed point as
networkx.pagerank, checked in the tests, at a fraction of its per-graph cost).

With W (S, S) non-negative edge weights, the walk moves from i to j with probability W_ij / sum_j W_ij;
a sentence with no edges (a dangling node) jumps uniformly; with probability 1 - damping any step
jumps uniformly. r = (1 - d)/S + d (P^T r + dangling mass / S), iterated from the uniform vector until
the L1 change is below S x tol (networkx's stopping rule). Products and sums in a fixed order
(`numerics.matmul`), so the same iterations and bits on every CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sumpipe.extractive.methods.numerics import matmul
from sumpipe.validation import require


def check_damping(value: float, key: str) -> None:
    require(0.0 < value < 1.0, key, "must be in (0, 1) (PageRank's damping)")


@dataclass(frozen=True)
class DampingOptions:
    """The options of a method ranked by PageRank (`textrank`, `lexrank_continuous`)."""

    damping: float = 0.85

    def check(self, key: str) -> None:
        check_damping(self.damping, "damping")


def pagerank(weights: np.ndarray, damping: float = 0.85, tol: float = 1e-6, max_iter: int = 100) -> np.ndarray:
    """(S,) stationary probabilities of the weighted graph `weights` (S, S); sums to 1."""
    n = weights.shape[0]
    if n == 0:
        return np.zeros(0)
    out = weights.sum(axis=1)
    dangling = out <= 0
    transition = weights / np.where(dangling, 1.0, out)[:, None]
    rank = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        previous = rank
        rank = damping * (matmul(rank, transition) + rank[dangling].sum() / n) + (1.0 - damping) / n
        if np.abs(rank - previous).sum() < n * tol:
            break
    return rank
