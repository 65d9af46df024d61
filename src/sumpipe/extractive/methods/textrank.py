"""TextRank (Mihalcea & Tarau 2004): sentences ranked by PageRank over a word-overlap graph.

Two sentences are joined by an edge weighted by how many content terms they share, normalised by
their lengths: sim(i, j) = |{t in S_i and S_j}| / (log |S_i| + log |S_j|), |S| counting the
sentence's content words. No self-loops. When both sentences have a single word the logarithms sum
to 0 and the overlap itself is the weight (sumy's convention). Ranked by weighted PageRank,
damping 0.85.
"""

from __future__ import annotations

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import matmul
from sumpipe.extractive.methods.pagerank import DampingOptions, pagerank
from sumpipe.vocab.exact import exact_ln


def overlap_similarity(counts: np.ndarray) -> np.ndarray:
    """(S, S) Mihalcea & Tarau's similarity from term counts (S, T); zero diagonal."""
    present = (counts > 0).astype(np.float64)
    shared = matmul(present, present.T)
    log_len = exact_ln(np.maximum(counts.sum(axis=1), 1.0))
    norm = log_len[:, None] + log_len[None, :]
    sim = np.where(norm > 0, shared / np.where(norm > 0, norm, 1.0), shared)
    np.fill_diagonal(sim, 0.0)
    return sim


@register
class TextRank(ScoringMethod):
    name = "textrank"
    Options = DampingOptions

    def __init__(self, damping: float = 0.85) -> None:
        self.damping = damping

    def scores(self, doc: Document) -> np.ndarray:
        return pagerank(overlap_similarity(doc.counts), self.damping)
