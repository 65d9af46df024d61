"""Term statistics fitted once on the training documents, shared by the methods that need corpus state.

- idf (Sokol 2022 §4: scikit-learn's smooth idf), idf(t) = ln((1 + n) / (1 + df(t))) + 1 over the n
  training documents, as scikit-learn's `TfidfTransformer(smooth_idf=True)` computes it; used by `tfidf`,
  `lexrank`, `lexrank_continuous` and `nmf`;
- the entropy global weight of LSA's log-entropy weighting (Sokol 2022 §2.1.1), over the same documents:
  g(t) = 1 + sum_j p_tj log p_tj / log n, p_tj = tf_tj / gf_t, gf_t the count of t in the whole
  collection. A term spread evenly over every document weighs 0, a term found in one document 1.
  Used by `lsa` and `lsa_gongliu`.
Both are computed from one scikit-learn `CountVectorizer` matrix of the documents' content stems (the
`Analyzer`'s terms, so fitting and scoring see the same words). A term never seen in training gets
the weights of the rarest possible term: idf ln(1 + n) + 1, entropy weight 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import row_norms
from sumpipe.vocab.exact import exact_ln


@dataclass(frozen=True)
class CorpusStats:
    """Term -> idf and term -> entropy weight (module docstring); `documents` = n."""

    idf: dict[str, float] = field(default_factory=dict)
    entropy: dict[str, float] = field(default_factory=dict)
    documents: int = 0
    idf_unseen: float = 1.0

    @classmethod
    def fit(cls, documents: Iterable[Document]) -> CorpusStats:
        """Fit on documents (their content stems, every occurrence)."""
        from sklearn.feature_extraction.text import CountVectorizer

        streams = [[t for row in doc.words for j in row if j >= 0 for t in (doc.terms[j],)] for doc in documents]
        n = len(streams)
        if not any(streams):
            return cls(documents=n, idf_unseen=unseen_idf(n))
        counts = CountVectorizer(analyzer=lambda terms: terms, lowercase=False).fit(streams)
        matrix = counts.transform(streams).tocsc().astype(np.float64)          # (n, V) term counts
        names = counts.get_feature_names_out().tolist()
        idf = smooth_idf(matrix)
        return cls(dict(zip(names, idf.tolist())), dict(zip(names, entropy_weights(matrix).tolist())), n,
                   unseen_idf(n))

    def idf_vector(self, terms: list[str]) -> np.ndarray:
        """(T,) idf of each term (1 for every term when nothing was fitted)."""
        get, unseen = self.idf.get, self.idf_unseen
        return np.fromiter((get(t, unseen) for t in terms), dtype=np.float64, count=len(terms))

    def entropy_vector(self, terms: list[str]) -> np.ndarray:
        """(T,) entropy global weight of each term (1 when unseen)."""
        get = self.entropy.get
        return np.fromiter((get(t, 1.0) for t in terms), dtype=np.float64, count=len(terms))

    @property
    def fitted(self) -> bool:
        return self.documents > 0

    def to_columns(self) -> dict[str, list]:
        """Columns for a Parquet table: term, idf, entropy (sorted by term); row "" holds n and the unseen idf."""
        terms = sorted(self.idf)
        return {"term": [""] + terms, "idf": [self.idf_unseen] + [self.idf[t] for t in terms],
                "entropy": [float(self.documents)] + [self.entropy[t] for t in terms]}

    @classmethod
    def from_columns(cls, terms: list[str], idf: list[float], entropy: list[float]) -> CorpusStats:
        idf_values, entropy_values = dict(zip(terms, idf)), dict(zip(terms, entropy))
        unseen = idf_values.pop("", 1.0)
        documents = int(entropy_values.pop("", 0.0))
        return cls(idf_values, entropy_values, documents, unseen)


def smooth_idf(matrix: Any) -> np.ndarray:
    """(V,) ln((1 + n) / (1 + df)) + 1 for a (n, V) sparse count matrix: scikit-learn's
    `TfidfTransformer(smooth_idf=True).idf_`, with the logarithm correctly rounded (`exact_ln`: numpy's
    SIMD `log` differs in the last bit between CPUs; here at most 1 ulp from scikit-learn's value)."""
    n = matrix.shape[0]
    df = np.bincount(matrix.nonzero()[1], minlength=matrix.shape[1]).astype(np.float64)
    return exact_ln((1.0 + n) / (1.0 + df)) + 1.0


def unseen_idf(n: int) -> float:
    """The idf of a term no training document has: ln(1 + n) + 1."""
    return float(exact_ln(1.0 + n)) + 1.0


def entropy_weights(matrix: Any) -> np.ndarray:
    """(V,) 1 + sum_j p log p / log n for a (n, V) sparse count matrix; with n < 2 every weight is 1.

    sum_j p log p = (sum_j tf log tf) / gf - log gf, so only the non-zero counts are visited."""
    n = matrix.shape[0]
    if n < 2:
        return np.ones(matrix.shape[1])
    gf = np.asarray(matrix.sum(axis=0)).ravel()
    tf_log_tf = matrix.tocsc(copy=True)
    tf_log_tf.data = tf_log_tf.data * exact_ln(tf_log_tf.data)
    tf_log_tf.sort_indices()  # column sums add each column's rows in row order: the same on every CPU
    plogp = np.asarray(tf_log_tf.sum(axis=0)).ravel() / gf - exact_ln(gf)
    return 1.0 + plogp / float(exact_ln(float(n)))


def tfidf_matrix(doc: Document, corpus: CorpusStats) -> np.ndarray:
    """(S, T) sentence tf-idf vectors, rows L2-normalised (TfidfVectorizer's tf x idf, norm="l2")."""
    weighted = doc.counts * corpus.idf_vector(doc.terms)
    norms = row_norms(weighted)
    return weighted / np.where(norms > 0, norms, 1.0)[:, None]
