"""TF-IDF centroid scoring (Sokol 2022 §2, §4.1; after Radev et al.'s centroid summarizer).

Each sentence is its tf-idf vector (raw counts x the idf fitted on the training documents, L2
normalised, as scikit-learn's TfidfVectorizer); the document is the sum of its sentences' count
vectors weighted the same way (its centroid). A sentence scores its cosine with the centroid: the
sentences that best cover the document's weighted vocabulary come first.
"""

from __future__ import annotations

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.corpus import CorpusStats, tfidf_matrix
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import matmul, norm


@register
class TfidfCentroid(ScoringMethod):
    name = "tfidf"
    uses_corpus = True

    def __init__(self, corpus: CorpusStats | None = None) -> None:
        self.corpus = corpus or CorpusStats()

    def scores(self, doc: Document) -> np.ndarray:
        sentences = tfidf_matrix(doc, self.corpus)
        centroid = doc.counts.sum(axis=0) * self.corpus.idf_vector(doc.terms)
        length = norm(centroid)
        return matmul(sentences, centroid / length) if length > 0 else np.zeros(doc.n_sentences)
