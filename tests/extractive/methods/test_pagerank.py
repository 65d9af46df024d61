"""PageRank by power iteration against networkx."""

import networkx as nx
import numpy as np

from sumpipe.extractive.methods.pagerank import pagerank


def _networkx(weights: np.ndarray) -> np.ndarray:
    graph = nx.from_numpy_array(weights, create_using=nx.DiGraph)
    ranks = nx.pagerank(graph, alpha=0.85, weight="weight", tol=1e-10)
    return np.array([ranks[i] for i in range(len(weights))])


def test_equals_networkx_on_a_weighted_graph():
    rng = np.random.default_rng(1)
    w = rng.random((7, 7)) * (rng.random((7, 7)) < 0.6)
    np.fill_diagonal(w, 0)
    np.testing.assert_allclose(pagerank(w, tol=1e-12, max_iter=1000), _networkx(w), atol=1e-8)


def test_dangling_nodes_jump_uniformly_like_networkx():
    w = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    np.testing.assert_allclose(pagerank(w, tol=1e-12, max_iter=1000), _networkx(w), atol=1e-8)
    assert pagerank(np.zeros((0, 0))).shape == (0,)
