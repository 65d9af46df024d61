"""SumBasic (Nenkova & Vanderwende 2005): pick by mean word probability, then discount what was said.

p(t) = count of term t / number of content words in the document. Repeatedly: take the sentence with
the highest mean p over its content words among the sentences that contain the currently most
probable term (their step 3; when none is left, among all), then square p(t) for every term of the
chosen sentence, so later picks favour words not yet covered. Sentences without content words come
last, in document order.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import RankingMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import matmul, settle


def sumbasic_order(counts: np.ndarray) -> Iterator[int]:
    """Sentence indices in SumBasic's order of selection (lazy: one step per index)."""
    n_words = counts.sum(axis=1)
    prob = counts.sum(axis=0) / counts.sum()
    present = counts > 0
    left = n_words > 0
    mean_of = np.where(n_words > 0, n_words, 1.0)
    while left.any():
        top_term = int(np.argmax(np.where(present[left].any(axis=0), settle(prob), -1.0)))
        candidates = left & present[:, top_term]
        mean = settle(matmul(counts, prob) / mean_of)
        best = int(np.argmax(np.where(candidates, mean, -1.0)))
        yield best
        left[best] = False
        chosen = present[best]
        prob[chosen] = prob[chosen] ** 2
    yield from np.flatnonzero(n_words == 0).tolist()


@register
class SumBasic(RankingMethod):
    name = "sumbasic"

    def rank(self, doc: Document) -> Iterator[int]:
        return sumbasic_order(doc.counts)
