"""Corpus statistics: scikit-learn's smooth idf and the log-entropy global weight."""

import math

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from sumpipe.extractive.methods import Analyzer, CorpusStats, fit_corpus
from sumpipe.extractive.methods.corpus import tfidf_matrix

DOCS = ["cat sat mat\ncat ran", "dog sat\ndog dog barked", "cat dog"]


def test_idf_is_scikit_learns_smooth_idf():
    a = Analyzer()
    stats = fit_corpus(a.parse(d) for d in DOCS)
    vectorizer = TfidfVectorizer(analyzer=lambda text: a.terms(text.split()), smooth_idf=True).fit(DOCS)
    expected = dict(zip(vectorizer.get_feature_names_out(), vectorizer.idf_))
    assert stats.idf.keys() == expected.keys()
    for term, idf in expected.items():
        assert math.isclose(stats.idf[term], idf)
    assert math.isclose(stats.idf["cat"], math.log(4 / 3) + 1)          # df 2 of n = 3
    assert math.isclose(stats.idf_vector(["unseen"])[0], math.log(4) + 1)  # df 0


def test_entropy_weight_by_hand():
    stats = fit_corpus(Analyzer().parse(d) for d in DOCS)
    # "dog": counts 3 (doc 2) and 1 (doc 3), gf 4 -> 1 + (3/4 ln 3/4 + 1/4 ln 1/4) / ln 3
    expected = 1 + (0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(3)
    assert math.isclose(stats.entropy["dog"], expected)
    assert math.isclose(stats.entropy["mat"], 1.0)       # in one document only
    assert stats.entropy_vector(["unseen"])[0] == 1.0


def test_round_trip_through_columns():
    stats = fit_corpus(Analyzer().parse(d) for d in DOCS)
    cols = stats.to_columns()
    assert CorpusStats.from_columns(cols["term"], cols["idf"], cols["entropy"]) == stats


def test_tfidf_matrix_matches_scikit_learn_transform():
    a = Analyzer()
    stats = fit_corpus(a.parse(d) for d in DOCS)
    doc = a.parse("cat sat cat\ndog barked loudly")
    vectorizer = TfidfVectorizer(analyzer=lambda text: a.terms(text.split()), smooth_idf=True).fit(DOCS)
    ours = tfidf_matrix(doc, stats)
    index = {t: i for i, t in enumerate(vectorizer.get_feature_names_out())}
    theirs = vectorizer.transform(["cat sat cat", "dog barked loudly"]).toarray()
    seen = [j for j, t in enumerate(doc.terms) if t in index]   # "loudli" is unseen: sklearn drops it
    unseen_norm = tfidf_matrix(doc, stats)[1]
    assert unseen_norm[doc.terms.index("loudli")] > 0
    np.testing.assert_allclose(ours[0, seen], theirs[0, [index[doc.terms[j]] for j in seen]])
