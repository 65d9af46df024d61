"""Edmundson (1969): a weighted sum of four sentence features.

score = cue_weight x cue + key_weight x key + title_weight x title + location_weight x location
- cue: occurrences of bonus words minus occurrences of stigma words (both lists from params,
  stemmed like the text; Edmundson's own dictionaries were built from his corpus);
- key: occurrences of the document's key words, the content terms whose count is more than
  `key_ratio` of the most frequent term's (Edmundson's high-frequency words);
- title: occurrences of title words. The corpora here have no titles, so the first sentence stands
  in for one (it scores its own words too: a headline-like lead is what the feature rewards);
- location: 1 for the first and for the last sentence (Edmundson's heading/position feature, on a
  document without headings or paragraphs, as sumy applies it to a single paragraph).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import MAX_WEIGHT, ScoringMethod
from sumpipe.extractive.methods.document import Analyzer, Document
from sumpipe.extractive.methods.numerics import matmul
from sumpipe.validation import require

DEFAULT_BONUS_WORDS = ("important", "significant", "main", "major", "key", "first", "new", "announced",
                       "found", "conclude")
DEFAULT_STIGMA_WORDS = ("hardly", "perhaps", "maybe", "might", "reportedly", "apparently", "impossible",
                        "meanwhile")


@dataclass(frozen=True)
class EdmundsonOptions:
    bonus_words: list[str] = field(default_factory=list)
    stigma_words: list[str] = field(default_factory=list)
    cue_weight: float = 1.0
    key_weight: float = 1.0
    title_weight: float = 1.0
    location_weight: float = 1.0
    key_ratio: float = 0.5

    def check(self, key: str) -> None:
        for name in ("cue_weight", "key_weight", "title_weight", "location_weight"):
            require(-MAX_WEIGHT <= getattr(self, name) <= MAX_WEIGHT, name,
                    f"must be a finite number in [-{MAX_WEIGHT:g}, {MAX_WEIGHT:g}]")
        require(0.0 < self.key_ratio <= 1.0, "key_ratio", "must be in (0, 1]")


@register
class Edmundson(ScoringMethod):
    name = "edmundson"
    Options = EdmundsonOptions

    def __init__(self, bonus_words: Sequence[str] = DEFAULT_BONUS_WORDS,
                 stigma_words: Sequence[str] = DEFAULT_STIGMA_WORDS, cue_weight: float = 1.0,
                 key_weight: float = 1.0, title_weight: float = 1.0, location_weight: float = 1.0,
                 key_ratio: float = 0.5, analyzer: Analyzer | None = None) -> None:
        analyzer = analyzer or Analyzer()
        self.bonus = frozenset(analyzer.terms([w.lower() for w in bonus_words]))
        self.stigma = frozenset(analyzer.terms([w.lower() for w in stigma_words]))
        self.weights = np.array([cue_weight, key_weight, title_weight, location_weight])
        self.key_ratio = key_ratio

    def features(self, doc: Document) -> np.ndarray:
        """(S, 4) cue, key, title and location features."""
        cue_of_term = np.array([(t in self.bonus) - (t in self.stigma) for t in doc.terms], dtype=np.float64)
        totals = doc.counts.sum(axis=0)
        key_terms = (totals > self.key_ratio * totals.max()).astype(np.float64)
        title_terms = (doc.counts[0] > 0).astype(np.float64)
        location = np.zeros(doc.n_sentences)
        location[[0, -1]] = 1.0
        return np.column_stack([matmul(doc.counts, cue_of_term), matmul(doc.counts, key_terms),
                                matmul(doc.counts, title_terms), location])

    def scores(self, doc: Document) -> np.ndarray:
        return matmul(self.features(doc), self.weights)
