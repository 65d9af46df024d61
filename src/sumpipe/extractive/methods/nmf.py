"""Non-negative matrix factorization of a document's sentences (Sokol 2022 §2.2), after Lee et al. (2009).

The document's sentence tf-idf matrix A (S, T) (idf fitted on the training documents, rows L2
normalised) is factorised A ~ W H, W (S, k) and H (k, T) >= 0, k = min(`topics`, S, T), minimising the
Frobenius loss with Sokol 2022's "Hadamard" multiplicative updates (Lee & Seung 2001):

    W <- W * (A H^T) / (W H H^T),    H <- H * (W^T A) / (W^T W H)

`iterations` times from scikit-learn's deterministic NNDSVDa start, as its `solver="mu"` iterates (the
tests compare both the start and the iterates with scikit-learn's; denominators are floored at
float32's epsilon where scikit-learn only replaces exact zeros, so a collapsing topic cannot
overflow). The updates are written out here rather than called through scikit-learn because its
per-call validation costs ~30x the arithmetic on a 30 x 400 matrix, and this runs once per document.

W says how much of each topic a sentence carries. Lee et al.'s generic relevance weights each topic
by its share of the document, w_r = sum_j W_jr / sum W, and scores sentence j by sum_r W_jr w_r:
sentences strong in the document's main topics come first.

Sokol 2022's own use of NMF, topics and keywords over a whole corpus, is `sumpipe.extractive.keywords`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import MAX_ITERATIONS, MAX_TOPICS, ScoringMethod
from sumpipe.extractive.methods.corpus import CorpusStats, tfidf_matrix
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import eigen, matmul, norm, settle
from sumpipe.validation import require

EPSILON = float(np.finfo(np.float32).eps)  # scikit-learn's value for a zero denominator


def nndsvda_start(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's `init="nndsvda"` (Boutsidis & Gallopoulos 2008): W (S, k), H (k, T) from the k
    leading singular triplets, each split into its positive or negative part (the larger), zeros
    then filled with mean(A) so that multiplicative updates can move them. Deterministic; the
    eigenvectors settled and their signs fixed (`numerics.eigen`), and W and H settled, so the start is
    the same on every CPU."""
    eigenvalues, vectors = eigen(matmul(matrix, matrix.T))
    sigma = settle(np.sqrt(np.clip(eigenvalues[:k], 0.0, None)))
    u = vectors[:, :k]
    v = (matmul(matrix.T, u) / np.where(sigma > 0, sigma, 1.0)).T    # (k, T) right singular vectors
    w, h = np.zeros((matrix.shape[0], k)), np.zeros((k, matrix.shape[1]))
    for j in range(k):
        x, y = u[:, j], v[j]
        if j == 0:
            parts = [(np.abs(x), np.abs(y))]
        else:
            parts = [(np.maximum(x, 0), np.maximum(y, 0)), (np.maximum(-x, 0), np.maximum(-y, 0))]
        x_part, y_part = max(parts, key=lambda p: float(settle(norm(p[0]) * norm(p[1]))))
        nx, ny = norm(x_part), norm(y_part)
        if nx == 0 or ny == 0:
            continue
        scale = np.sqrt(sigma[j] * nx * ny) if j else np.sqrt(sigma[j])
        w[:, j] = scale * x_part / (nx if j else 1.0)
        h[j] = scale * y_part / (ny if j else 1.0)
    mean = matrix.mean()
    w[w < 1e-6] = mean
    h[h < 1e-6] = mean
    return settle(w), settle(h)


def multiplicative_updates(matrix: np.ndarray, w: np.ndarray, h: np.ndarray,
                           iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """`iterations` Frobenius multiplicative updates of W then H (module docstring); returns (W, H)."""
    w, h = w.copy(), h.copy()
    for _ in range(iterations):
        w *= matmul(matrix, h.T) / np.maximum(matmul(w, matmul(h, h.T)), EPSILON)
        h *= matmul(w.T, matrix) / np.maximum(matmul(matmul(w.T, w), h), EPSILON)
    return w, h


def topic_loadings(matrix: np.ndarray, topics: int, iterations: int = 30) -> np.ndarray:
    """W (S, k) of A ~ W H, k = min(topics, S, T); zeros when A is all zero."""
    k = min(topics, *matrix.shape)
    if k == 0 or not matrix.any():
        return np.zeros((matrix.shape[0], max(k, 1)))
    w, _ = multiplicative_updates(matrix, *nndsvda_start(matrix, k), iterations)
    return w


def generic_relevance(w: np.ndarray) -> np.ndarray:
    """(S,) sum_r W_jr x (sum_j W_jr / sum W): Lee et al.'s generic relevance of each sentence."""
    total = w.sum()
    if total <= 0:
        return np.zeros(w.shape[0])
    return matmul(w, w.sum(axis=0) / total)


@dataclass(frozen=True)
class NmfOptions:
    topics: int = 3
    iterations: int = 30

    def check(self, key: str) -> None:
        require(1 <= self.topics <= MAX_TOPICS, "topics", f"must be in [1, {MAX_TOPICS}]")
        require(1 <= self.iterations <= MAX_ITERATIONS, "iterations", f"must be in [1, {MAX_ITERATIONS}]")


@register
class NmfRelevance(ScoringMethod):
    name = "nmf"
    uses_corpus = True
    Options = NmfOptions

    def __init__(self, corpus: CorpusStats | None = None, topics: int = 3, iterations: int = 30) -> None:
        self.corpus = corpus or CorpusStats()
        self.topics, self.iterations = topics, iterations

    def scores(self, doc: Document) -> np.ndarray:
        loadings = topic_loadings(tfidf_matrix(doc, self.corpus), self.topics, self.iterations)
        return generic_relevance(loadings)
