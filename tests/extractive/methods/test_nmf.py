"""NMF: start and iterates equal scikit-learn's; generic relevance by hand; topics found."""

import warnings

import numpy as np
from sklearn.decomposition import non_negative_factorization
from sklearn.decomposition._nmf import _initialize_nmf

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.nmf import NmfRelevance, generic_relevance, multiplicative_updates, nndsvda_start

RNG = np.random.default_rng(3)
A = RNG.random((6, 15)) * (RNG.random((6, 15)) < 0.5)


def test_nndsvda_start_equals_scikit_learns():
    w, h = nndsvda_start(A, 3)
    w_sk, h_sk = _initialize_nmf(A, 3, init="nndsvda")
    np.testing.assert_allclose(w, w_sk, atol=1e-10)
    np.testing.assert_allclose(h, h_sk, atol=1e-10)


def test_multiplicative_updates_equal_scikit_learns_mu_solver():
    w0, h0 = nndsvda_start(A, 3)
    w, h = multiplicative_updates(A, w0, h0, iterations=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w_sk, h_sk, n = non_negative_factorization(A, W=w0.copy(), H=h0.copy(), n_components=3, init="custom",
                                                   solver="mu", max_iter=7, tol=0.0)
    assert n == 7
    np.testing.assert_allclose(w, w_sk, rtol=1e-9)
    np.testing.assert_allclose(h, h_sk, rtol=1e-9)
    assert np.linalg.norm(A - w @ h) < np.linalg.norm(A - w0 @ h0)


def test_generic_relevance_by_hand():
    w = np.array([[1.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
    # topic weights: (2, 4) / 6
    np.testing.assert_allclose(generic_relevance(w), [2 / 6, 12 / 6, 6 / 6])
    np.testing.assert_allclose(generic_relevance(np.zeros((2, 1))), [0.0, 0.0])


def test_the_main_topic_wins():
    doc = Analyzer().parse("budget vote senate\nbudget senate passed vote\nsenate budget debate\nweather sunny")
    assert NmfRelevance(topics=2).select(doc, Limit(sentences=1)) != [3]
    assert 3 not in NmfRelevance(topics=2).select(doc, Limit(sentences=2))
