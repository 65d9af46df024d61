"""TF-IDF centroid scoring."""

import numpy as np

from sumpipe.extractive.methods import Analyzer, Limit, fit_corpus
from sumpipe.extractive.methods.tfidf import TfidfCentroid


def test_the_sentence_covering_the_documents_words_wins():
    doc = Analyzer().parse("rain fell\nwind blew\nrain and wind hit the coast\nthe coast")
    method = TfidfCentroid()
    scores = method.scores(doc)
    assert int(np.argmax(scores)) == 2
    assert method.select(doc, Limit(sentences=1)) == [2]


def test_rare_words_weigh_more_with_fitted_idf():
    a = Analyzer()
    corpus = fit_corpus(a.parse(t) for t in [f"storm report{i}" for i in range(9)] + ["volcano"])
    doc = a.parse("storm storm\nvolcano storm")
    # uniform idf: sentence 1 is the centroid's direction; fitted idf: rare "volcano" lifts sentence 2
    assert TfidfCentroid().select(doc, Limit(sentences=1)) == [0]
    assert TfidfCentroid(corpus).select(doc, Limit(sentences=1)) == [1]
