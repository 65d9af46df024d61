"""Reduction (sumy's `ReductionSummarizer`): the TextRank graph without the random walk.

A sentence scores the sum of its TextRank edge weights (`overlap_similarity`), i.e. its weighted
degree: how much of the rest of the document it overlaps.
"""

from __future__ import annotations

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.textrank import overlap_similarity


@register
class Reduction(ScoringMethod):
    name = "reduction"

    def scores(self, doc: Document) -> np.ndarray:
        return overlap_similarity(doc.counts).sum(axis=1)
