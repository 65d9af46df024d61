"""LSA: the Gram-matrix SVD against numpy's, Steinberger & Jezek and Gong & Liu on small documents."""

import numpy as np

from sumpipe.extractive.methods import Analyzer, CorpusStats, Limit, fit_corpus
from sumpipe.extractive.methods.lsa import (
    LsaGongLiu,
    LsaSteinbergerJezek,
    concepts,
    gong_liu,
    log_entropy,
    sentence_entropy,
    steinberger_jezek,
)


def test_concepts_equal_numpys_svd():
    rng = np.random.default_rng(0)
    a = rng.random((5, 12)) * (rng.random((5, 12)) < 0.5)
    u, sigma = concepts(a)
    u_np, sigma_np, _ = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(sigma, sigma_np, atol=1e-10)
    np.testing.assert_allclose(np.abs(u), np.abs(u_np), atol=1e-8)   # singular vectors up to sign


def test_steinberger_jezek_by_hand():
    u = np.array([[0.6, 0.8], [0.8, -0.6]])
    sigma = np.array([2.0, 1.5])
    np.testing.assert_allclose(steinberger_jezek(u, sigma, 1), [1.2, 1.6])
    np.testing.assert_allclose(steinberger_jezek(u, sigma, 2), np.sqrt([(1.2**2 + 1.2**2), (1.6**2 + 0.9**2)]))
    np.testing.assert_allclose(steinberger_jezek(u, sigma, 0), steinberger_jezek(u, sigma, 2))  # 1.5 >= 2/2


def test_sentence_entropy_weights():
    counts = np.array([[1.0, 1.0], [0.0, 1.0]])
    # term 0 in one sentence -> 1; term 1 evenly in both -> 0
    np.testing.assert_allclose(sentence_entropy(counts), [1.0, 0.0])
    np.testing.assert_allclose(sentence_entropy(counts[:1]), [1.0, 1.0])


def test_log_entropy_uses_the_corpus_weights_when_fitted():
    a = Analyzer()
    doc = a.parse("cat cat dog\ndog")
    unfitted = log_entropy(doc, CorpusStats())
    np.testing.assert_allclose(unfitted, [[np.log(3) * 1.0, np.log(2) * sentence_entropy(doc.counts)[1]],
                                          [0.0, np.log(2) * sentence_entropy(doc.counts)[1]]])
    corpus = fit_corpus(a.parse(t) for t in ["cat", "cat", "cat dog"])
    np.testing.assert_allclose(log_entropy(doc, corpus)[0], np.log1p(doc.counts[0]) * corpus.entropy_vector(doc.terms))


TWO_TOPICS = """goal striker scored goal
the striker scored the winning goal again
senate vote passed budget
budget vote in the senate passed
weather"""


def test_gong_liu_takes_one_sentence_per_concept():
    doc = Analyzer().parse(TWO_TOPICS)
    u, sigma = concepts(log_entropy(doc, CorpusStats()))
    first_two = gong_liu(u, sigma)[:2]
    assert {i // 2 for i in first_two} == {0, 1}          # one football sentence, one senate sentence
    chosen = LsaGongLiu().select(doc, Limit(sentences=2))
    assert {i // 2 for i in chosen} == {0, 1}


def test_steinberger_jezek_prefers_the_main_topic():
    doc = Analyzer().parse(TWO_TOPICS)
    chosen = LsaSteinbergerJezek(dimensions=1).select(doc, Limit(sentences=1))
    assert chosen[0] in (0, 1, 2, 3) and chosen != [4]
