"""Weighted word frequency, after Text Summarizing (blog, 2023).

Drop stop words, punctuation and numbers, Porter-stem (the `Document`'s content terms); a term's
weight is its count in the document divided by the count of the most frequent term; a sentence's
score is the sum of its words' weights, every occurrence counted. Long sentences score high: that is
the blog post's method (its worked example sums, it does not average).

The blog post's worked example (Peter and Elizabeth) prints 3.97 for sentence 3, counting "stay" at 0.33
although its own table gives 0.67 (stay + stayed): done right, sentence 3 scores 4.33 with the
post's word list and is the best sentence, not sentence 1 (tests/extractive/methods/test_wordfreq.py).
"""

from __future__ import annotations

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import matmul


def term_weights(counts: np.ndarray) -> np.ndarray:
    """(T,) count of each term in the document / the largest such count. `counts`: (S, T)."""
    totals = counts.sum(axis=0)
    return totals / totals.max()


@register
class WordFrequency(ScoringMethod):
    name = "wordfreq"

    def scores(self, doc: Document) -> np.ndarray:
        return matmul(doc.counts, term_weights(doc.counts))
