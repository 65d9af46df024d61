"""Collection-level LSA, as Sokol 2022 §2.1.1 describes it: one concept space for the whole collection.

`lsa` and `lsa_gongliu` (`sumpipe.extractive.methods.lsa`) decompose each document's own sentence-term
matrix. Sokol 2022's LSA is built over the collection instead:

- the document-term matrix A (n, V) of the n training documents, log-entropy weighted (local
  log(1 + tf), global g_t = 1 + sum_j p_tj log p_tj / log n, `corpus.entropy_weights`);
- its truncated SVD A ~ U_k Sigma_k V_k^T, k = `DIMENSIONS` = 100 (Sokol 2022: "between 100 and 300" for
  large collections; capped at n - 1 and V - 1 on small ones), by scikit-learn's `TruncatedSVD`
  (randomized, a fixed seed: the same space on every run; the loadings rounded to multiples of 2^-20,
  so the same on every CPU). `extractive-fit` fits it on the train
  split and writes it to `<paths.extractive>/lsa_collection.parquet` (term, entropy, its k loadings);
- a document's sentences and the document itself are weighted the same way and mapped into the space
  (x -> x V_k, scikit-learn's `transform`; terms the collection never saw have no coordinates), and
  "compared by cosine similarity": a sentence scores the cosine between its vector and the document's
  (a sentence without a known term scores 0). The best-scoring sentences make the summary.

Without a fitted space (raw text and no `dvc repro` output) the document's sentences are the
collection: the space is fitted on them (k <= S - 1), as `lsa` falls back to sentence entropy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import ScoringMethod
from sumpipe.extractive.methods.corpus import entropy_weights
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import matmul, norm, quantize, row_norms
from sumpipe.vocab.exact import exact_ln

DIMENSIONS = 100  # k (Sokol 2022: 100-300)
STEP_BITS = 20  # the stored loadings are multiples of 2^-20 ~ 1e-6 (`numerics.quantize`)
SEED = 0
SPACE_FILE = "lsa_collection.parquet"


@dataclass(frozen=True)
class LsaSpace:
    """The collection's concept space: `terms` (V,) sorted, their entropy weights (V,), and the term
    loadings `components` (k, V) (V_k^T)."""

    terms: list[str]
    entropy: np.ndarray
    components: np.ndarray

    @classmethod
    def fit(cls, streams: list[list[str]], dimensions: int = DIMENSIONS, seed: int = SEED) -> LsaSpace:
        """Fit on documents given as lists of content terms (every occurrence)."""
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import CountVectorizer

        if not any(streams):
            return cls([], np.zeros(0), np.zeros((0, 0)))
        vectorizer = CountVectorizer(analyzer=lambda terms: terms, lowercase=False).fit(streams)
        counts = vectorizer.transform(streams).tocsc().astype(np.float64)          # (n, V)
        terms = vectorizer.get_feature_names_out().tolist()
        entropy = entropy_weights(counts)
        k = min(dimensions, counts.shape[0] - 1, counts.shape[1] - 1)
        if k < 1:
            return cls(terms, entropy, np.zeros((0, len(terms))))
        weighted = counts.log1p().multiply(entropy[None, :]).tocsr()
        svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=7, random_state=seed).fit(weighted)
        # BLAS inside the SVD: the loadings differ by ~1e-14 between CPUs; on a grid of 2^-STEP_BITS (unit
        # rows) they are the same bytes everywhere
        return cls(terms, entropy, quantize(svd.components_, STEP_BITS))

    @property
    def dimensions(self) -> int:
        return self.components.shape[0]

    def project(self, counts: np.ndarray, terms: list[str]) -> np.ndarray:
        """(R, k) coordinates of R rows of term counts (R, T) over `terms`; unknown terms are dropped."""
        index = {t: i for i, t in enumerate(self.terms)}
        known = [(j, index[t]) for j, t in enumerate(terms) if t in index]
        if not known or self.dimensions == 0:
            return np.zeros((counts.shape[0], self.dimensions))
        cols, ids = (np.array(x) for x in zip(*known))
        return matmul(exact_ln(1.0 + counts[:, cols]) * self.entropy[ids], self.components[:, ids].T)

    def to_columns(self) -> dict[str, list[Any]]:
        return {"term": self.terms, "entropy": self.entropy.tolist(), "loadings": self.components.T.tolist()}

    @classmethod
    def from_columns(cls, terms: list[str], entropy: list[float], loadings: list[Any]) -> LsaSpace:
        components = np.array([list(v) for v in loadings], dtype=np.float64).reshape(len(terms), -1).T
        return cls(list(terms), np.asarray(entropy, dtype=np.float64), components)


def term_stream(doc: Document) -> list[str]:
    """A document's content terms, every occurrence, in order (what the space is fitted on)."""
    return [doc.terms[j] for row in doc.words for j in row if j >= 0]


def cosine_to(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(R,) cosine of each row with `target`; 0 where either has norm 0."""
    norms = row_norms(rows) * norm(target)
    return np.where(norms > 0, matmul(rows, target) / np.where(norms > 0, norms, 1.0), 0.0)


@register
class LsaCollection(ScoringMethod):
    name = "lsa_collection"
    needs = "space"

    def __init__(self, space: LsaSpace | None = None) -> None:
        self.space = space

    def scores(self, doc: Document) -> np.ndarray:
        space = self.space
        if space is None:  # the document's sentences are the collection
            space = LsaSpace.fit([[doc.terms[j] for j in row if j >= 0] for row in doc.words])
        sentences = space.project(doc.counts, doc.terms)
        document = space.project(doc.counts.sum(axis=0, keepdims=True), doc.terms)[0]
        return cosine_to(sentences, document)
