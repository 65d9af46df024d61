"""Morozovskii 2022's Alg. 1 as a summarizer: the first `first_k` sentences, then the best mean-3-gram sentences.

The ranking is that of the `ngram` input selection (`sumpipe.selection.select`): a sentence scores the
mean of its content-word 3-grams' scores in the vocab stage's table (`<paths.vocab>/ngrams.parquet`,
counted on the training sources; score 1 / log10(count), so rarer 3-grams weigh more and unknown ones
get the table's maximum); a sentence without a 3-gram scores 0; ties keep document order. The lead
sentences come first, then the rest by decreasing score; `take` keeps the best that fit the budget.

`first_k` defaults to 1 (the lead sentence): the thesis keeps tokens // 40 leading sentences of a 200-
or 400-token model input (5 or 10), which for a summary of a few sentences would be the lead alone.
One difference from the selection: a token budget the lead sentences overflow skips them here (a
summary never exceeds its budget), where the selection keeps and cuts them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sumpipe.errors import SumpipeError
from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import MAX_TOPICS, RankingMethod, order_by_scores
from sumpipe.extractive.methods.document import Document
from sumpipe.validation import require


@dataclass(frozen=True)
class NgramOptions:
    first_k: int = 1

    def check(self, key: str) -> None:
        require(0 <= self.first_k <= MAX_TOPICS, "first_k", f"must be in [0, {MAX_TOPICS}] (lead sentences kept first)")


@register
class NgramAlg1(RankingMethod):
    name = "ngram"
    needs = "ngrams"
    Options = NgramOptions

    def __init__(self, ngrams: Any = None, first_k: int = 1) -> None:
        if first_k < 0:
            raise SumpipeError(f"first_k must be >= 0, got {first_k}")
        self.ngrams, self.first_k = ngrams, first_k

    def rank(self, doc: Document) -> Iterable[int]:
        if self.ngrams is None:
            raise SumpipeError("the ngram method needs the vocab stage's 3-gram table (ngrams.parquet)")
        lead = list(range(min(self.first_k, doc.n_sentences)))
        scores = np.asarray(self.ngrams.sentence_scores(doc.sentences), dtype=np.float64)[len(lead):]
        return lead + [len(lead) + int(i) for i in order_by_scores(scores)]
