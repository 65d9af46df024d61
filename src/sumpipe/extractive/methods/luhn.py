"""Luhn (1958): sentences ranked by their densest cluster of significant words.

Significant words are the document's content terms that occur more than once (Luhn's frequency
cut, as sumy). Walking a sentence's words (punctuation and numbers left out, stop words kept as
insignificant words), a cluster starts at a significant word and ends after `max_gap` insignificant
words in a row (Luhn's 4); trailing insignificant words are not part of it. A cluster with s
significant words among n words rates s^2 / n, a cluster with a single significant word 0; the
sentence scores its best cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.validation import require


def best_cluster(significant: list[bool], max_gap: int) -> float:
    """max over clusters of (significant words)^2 / (cluster length); 0 when no cluster has two."""
    best = 0.0
    start = -1          # index of the cluster's first word, -1 outside a cluster
    last = -1           # index of its last significant word
    hits = 0
    for i, sig in enumerate(significant + [False] * (max_gap + 1)):  # the padding closes the last cluster
        if sig:
            if start < 0:
                start, hits = i, 0
            last, hits = i, hits + 1
        elif start >= 0 and i - last >= max_gap:
            if hits > 1:
                best = max(best, hits * hits / (last - start + 1))
            start = -1
    return best


@dataclass(frozen=True)
class LuhnOptions:
    max_gap: int = 4

    def check(self, key: str) -> None:
        require(1 <= self.max_gap <= 1000, "max_gap", "must be in [1, 1000]")


@register
class Luhn(ScoringMethod):
    name = "luhn"
    Options = LuhnOptions

    def __init__(self, max_gap: int = 4) -> None:
        self.max_gap = max_gap

    def scores(self, doc: Document) -> np.ndarray:
        significant = doc.counts.sum(axis=0) > 1
        return np.array([best_cluster([j >= 0 and bool(significant[j]) for j in words], self.max_gap)
                         for words in doc.words])
