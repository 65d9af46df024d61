"""Latent semantic analysis (Sokol 2022 §2.1.1): log-entropy weighting, SVD, two ways to pick sentences.

The sentence-term matrix A (S, T) of one document is weighted log-entropy, Sokol 2022's "common local
and global weighting": local log(1 + tf_ij); global g_t = 1 + sum_j p_tj log p_tj / log n with
p_tj = tf_tj / gf_t over the n documents of the collection, as Sokol 2022 defines it (`CorpusStats`,
fitted on the training documents: "said" weighs 0.06, "obama" 0.26 on CNN stories, a term seen in one
document 1). Without fitted state (raw text, no training corpus) the document's own sentences are the
collection. The global weight matters: with sentence-level entropy every term unique to a sentence
weighs 1 and LSA picks the longest sentences (ROUGE-1 24.5 against 26.7 on CNN validation stories).

A = U Sigma V^T is computed from the eigendecomposition of the S x S Gram matrix A A^T = U Sigma^2 U^T
(scipy.linalg.eigh): the same U and Sigma as an SVD of A (the tests check it against numpy's), a few
times cheaper because a document has far fewer sentences than terms, and exact, not a randomised
truncation. The rows of U are the sentences in concept space.

- `lsa` (Steinberger & Jezek 2004): a sentence's score is its length in the space of the first
  `dimensions` concepts, sqrt(sum_{r<k} sigma_r^2 u_jr^2). Default 1, chosen on the CNN validation
  stories (ROUGE-1 26.7; 26.1 with 2, 26.0 with 3, 24.9 keeping every concept with sigma_r >= sigma_1/2);
  `dimensions: 0` keeps the concepts with sigma_r >= sigma_1 / 2. A concept whose sigma equals the last
  kept one's is kept too: the singular vectors of a repeated singular value are any rotation of each
  other (LAPACK's choice differs between CPUs), the space they span is not.
- `lsa_gongliu` (Gong & Liu 2001): for concept r = 1, 2, ... take the sentence with the largest
  |u_jr| not yet taken (one sentence per concept, the sign of a singular vector being arbitrary); when
  the concepts run out, the rest follow by the Steinberger & Jezek score.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import MAX_TOPICS, RankingMethod, ScoringMethod, order_by_scores
from sumpipe.extractive.methods.corpus import CorpusStats
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import eigen, matmul, settle
from sumpipe.validation import require
from sumpipe.vocab.exact import exact_ln


def sentence_entropy(counts: np.ndarray) -> np.ndarray:
    """(T,) entropy global weights with the document's S sentences as the collection (1 when S < 2)."""
    n = counts.shape[0]
    if n < 2:
        return np.ones(counts.shape[1])
    totals = counts.sum(axis=0)
    p = counts / np.where(totals > 0, totals, 1.0)
    plogp = np.where(p > 0, p * exact_ln(np.where(p > 0, p, 1.0)), 0.0)
    return 1.0 + plogp.sum(axis=0) / float(exact_ln(float(n)))


def log_entropy(doc: Document, corpus: CorpusStats) -> np.ndarray:
    """(S, T) log(1 + tf) x g_t, g from the corpus when fitted, else from the document's sentences."""
    weights = corpus.entropy_vector(doc.terms) if corpus.fitted else sentence_entropy(doc.counts)
    return exact_ln(1.0 + doc.counts) * weights


def concepts(weighted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U (S, S), sigma (S,)) of A (S, T): A = U diag(sigma) V^T, sigma decreasing; settled, the signs
    fixed (`numerics.eigen`)."""
    eigenvalues, u = eigen(matmul(weighted, weighted.T))
    return u, settle(np.sqrt(np.clip(eigenvalues, 0.0, None)))


def steinberger_jezek(u: np.ndarray, sigma: np.ndarray, dimensions: int) -> np.ndarray:
    """(S,) sqrt(sum_{r<k} sigma_r^2 u_jr^2): k = `dimensions`, or with 0 the concepts with sigma_r >= sigma_1/2."""
    if sigma.size == 0 or sigma[0] <= 0:
        return np.zeros(u.shape[0])
    k = dimensions if dimensions > 0 else int(np.count_nonzero(sigma >= sigma[0] / 2))
    while k < sigma.size and sigma[k] == sigma[k - 1] > 0:  # a repeated sigma: its concepts are one
        k += 1
    return np.sqrt(matmul(u[:, :k] ** 2, sigma[:k] ** 2))


def gong_liu(u: np.ndarray, sigma: np.ndarray) -> list[int]:
    """One sentence per concept, strongest concept first: argmax_j |u_jr| among sentences left."""
    taken: list[int] = []
    free = np.ones(u.shape[0], dtype=bool)
    for r in range(sigma.size):
        if sigma[r] <= 0 or not free.any():
            break
        j = int(np.argmax(np.where(free, settle(np.abs(u[:, r])), -1.0)))
        taken.append(j)
        free[j] = False
    return taken


@dataclass(frozen=True)
class LsaOptions:
    dimensions: int = 1

    def check(self, key: str) -> None:
        require(0 <= self.dimensions <= MAX_TOPICS, "dimensions",
                f"must be in [0, {MAX_TOPICS}] (0: sigma >= sigma_1 / 2)")


@register
class LsaSteinbergerJezek(ScoringMethod):
    """LSA after Steinberger & Jezek: log-entropy weights, SVD; a sentence scores its length in the
    space of the first `dimensions` concepts."""

    name = "lsa"
    uses_corpus = True
    Options = LsaOptions

    def __init__(self, corpus: CorpusStats | None = None, dimensions: int = 1) -> None:
        self.corpus = corpus or CorpusStats()
        self.dimensions = dimensions

    def scores(self, doc: Document) -> np.ndarray:
        return steinberger_jezek(*concepts(log_entropy(doc, self.corpus)), self.dimensions)


@register
class LsaGongLiu(RankingMethod):
    """LSA after Gong & Liu: log-entropy weights, SVD; one sentence per concept, the strongest concept
    first."""

    name = "lsa_gongliu"
    uses_corpus = True
    Options = LsaOptions

    def __init__(self, corpus: CorpusStats | None = None, dimensions: int = 1) -> None:
        self.corpus = corpus or CorpusStats()
        self.dimensions = dimensions

    def rank(self, doc: Document) -> Iterable[int]:
        u, sigma = concepts(log_entropy(doc, self.corpus))
        first = gong_liu(u, sigma)
        taken = set(first)
        rest = [int(i) for i in order_by_scores(steinberger_jezek(u, sigma, self.dimensions)) if i not in taken]
        return first + rest
