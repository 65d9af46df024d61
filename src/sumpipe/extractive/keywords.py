"""Keyword extraction with NMF (Sokol 2022 §4.2): the topics of a corpus's references and their top words.

Sokol 2022 factorised the TF-IDF matrix of 1.1 M news headlines into 10 topics with scikit-learn's
NMF and read off each topic's highest-weighted words ("crash, car, dies, killed, fatal, ...") and
each headline's most probable topic (the largest entry of its row of W). Here the "headlines" are the
corpus's references: TF-IDF (scikit-learn, smooth idf, L2 rows) over their content words (stop
words, punctuation and numbers dropped, words left unstemmed so the table reads as words), NMF
(Frobenius loss, NNDSVD start, seeded) fitted on the train references, then every split's
references are assigned their most probable topic (-1 when a reference has no known word).

The same table on every CPU: the idf's logarithm is correctly rounded, NMF runs all its
iterations (no float stopping test), and its weights and loadings, which BLAS computes in a
CPU-dependent order, are settled to 24 significant bits before words are ranked and topics chosen.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from sumpipe.extractive.methods import Analyzer
from sumpipe.extractive.methods.corpus import smooth_idf
from sumpipe.extractive.methods.numerics import settle

STORED_BITS = 24  # significant bits kept of the NMF weights and loadings (~7 digits)


def extract_keywords(references: dict[str, tuple[list[str], list[str]]], analyzer: Analyzer, topics: int,
                     words: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(keywords: topic, rank, word, weight; topics: split, id, topic) from {split: (ids, references)}."""
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    def content(text: str) -> list[str]:
        return [t for t in text.split() if analyzer.term(t)]

    train = references.get("train", ([], []))[1]
    empty_keywords = pd.DataFrame({"topic": pd.Series([], dtype="int32"), "rank": pd.Series([], dtype="int32"),
                                   "word": pd.Series([], dtype="str"), "weight": pd.Series([], dtype="float64")})
    vectorizer = TfidfVectorizer(analyzer=content, smooth_idf=True)
    try:
        counts = CountVectorizer(analyzer=content).fit(train)
        vectorizer.fit(train)
        # the same idf with a correctly rounded log (numpy's SIMD log differs between CPUs)
        vectorizer.idf_ = smooth_idf(counts.transform(train))
        matrix = vectorizer.transform(train)
    except ValueError:  # no content word in any reference
        matrix = None
    if matrix is None or matrix.nnz == 0:
        rows = [(s, i, -1) for s, (ids, _) in references.items() for i in ids]
        return empty_keywords, pd.DataFrame(rows, columns=["split", "id", "topic"]).astype({"topic": "int32"})
    k = min(topics, *matrix.shape)
    model = NMF(n_components=k, init="nndsvd", random_state=0, max_iter=400, tol=0.0)  # every iteration: the
    # stopping test compares a float with tol, so the iteration count could differ between CPUs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(matrix)
    vocabulary = vectorizer.get_feature_names_out()
    keyword_rows = []
    components = settle(model.components_, STORED_BITS)  # BLAS inside NMF: settled (module docstring)
    for topic, row in enumerate(components):
        for rank, j in enumerate(np.argsort(-row, kind="stable")[:words]):
            keyword_rows.append((topic, rank, str(vocabulary[j]), float(row[j])))
    keywords = pd.DataFrame(keyword_rows, columns=["topic", "rank", "word", "weight"]).astype(
        {"topic": "int32", "rank": "int32"})
    topic_rows = []
    for split, (ids, texts) in references.items():
        if not ids:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            loadings = settle(model.transform(vectorizer.transform(texts)), STORED_BITS)
        best = np.where(loadings.max(axis=1) > 0, loadings.argmax(axis=1), -1)
        topic_rows += [(split, i, int(t)) for i, t in zip(ids, best)]
    topics_frame = pd.DataFrame(topic_rows, columns=["split", "id", "topic"]).astype({"topic": "int32"})
    return keywords, topics_frame
