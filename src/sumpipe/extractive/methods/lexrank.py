"""LexRank (Erkan & Radev 2004): PageRank over the sentences' idf-modified cosine similarities.

Sentences are tf-idf vectors (raw counts x the idf fitted on the training documents, as Erkan &
Radev take idf from a background corpus); similarity is their cosine, self-similarity included.
- `lexrank` keeps the edges with cosine > `threshold` (their 0.1) as unweighted links: a sentence's
  prestige comes from how many sentences resemble it;
- `lexrank_continuous` keeps every cosine as the edge weight.
Both are ranked by PageRank with damping 0.85 (their jump probability d = 0.15).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.corpus import CorpusStats, tfidf_matrix
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import matmul
from sumpipe.extractive.methods.pagerank import DampingOptions, check_damping, pagerank
from sumpipe.validation import require


def cosine_graph(doc: Document, corpus: CorpusStats) -> np.ndarray:
    """(S, S) cosine similarities of the sentences' tf-idf vectors."""
    vectors = tfidf_matrix(doc, corpus)
    return matmul(vectors, vectors.T)


@dataclass(frozen=True)
class LexRankOptions:
    threshold: float | None = 0.1
    damping: float = 0.85

    def check(self, key: str) -> None:
        require(self.threshold is None or 0.0 <= self.threshold <= 1.0, "threshold",
                "must be in [0, 1] (a cosine similarity) or null")
        check_damping(self.damping, "damping")


@register
class LexRank(ScoringMethod):
    """LexRank (Erkan & Radev 2004): PageRank over the tf-idf cosine graph, edges below `threshold`
    (0.1) dropped."""

    name = "lexrank"
    uses_corpus = True
    Options: ClassVar[type[Any]] = LexRankOptions

    def __init__(self, corpus: CorpusStats | None = None, threshold: float | None = 0.1, damping: float = 0.85) -> None:
        self.corpus = corpus or CorpusStats()
        self.threshold = threshold
        self.damping = damping

    def scores(self, doc: Document) -> np.ndarray:
        graph = cosine_graph(doc, self.corpus)
        if self.threshold is not None:
            graph = (graph > self.threshold).astype(np.float64)
        return pagerank(graph, self.damping)


@register
class ContinuousLexRank(LexRank):
    """Continuous LexRank (Erkan & Radev 2004): PageRank over the tf-idf cosine graph, every cosine
    an edge weight."""

    name = "lexrank_continuous"
    Options = DampingOptions

    def __init__(self, corpus: CorpusStats | None = None, damping: float = 0.85) -> None:
        super().__init__(corpus, threshold=None, damping=damping)
