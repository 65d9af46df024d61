"""LexRank: thresholded and continuous cosine graphs, against networkx."""

import networkx as nx
import numpy as np

from sumpipe.extractive.methods import Analyzer, CorpusStats, Limit
from sumpipe.extractive.methods.lexrank import ContinuousLexRank, LexRank, cosine_graph

DOC = "storm hit coast\nstorm flooded town\ncoast town storm damage\nmarket rallied"


def test_cosine_graph_has_unit_diagonal_and_symmetry():
    graph = cosine_graph(Analyzer().parse(DOC), CorpusStats())
    np.testing.assert_allclose(np.diag(graph), 1.0)
    np.testing.assert_allclose(graph, graph.T)
    assert graph[0, 3] == 0.0


def test_thresholded_lexrank_equals_networkx_on_the_degree_graph():
    doc = Analyzer().parse(DOC)
    links = (cosine_graph(doc, CorpusStats()) > 0.1).astype(float)
    expected = nx.pagerank(nx.from_numpy_array(links, create_using=nx.DiGraph), alpha=0.85, tol=1e-10)
    np.testing.assert_allclose(LexRank().scores(doc), [expected[i] for i in range(4)], atol=1e-5)
    # the three storm sentences all link to each other: equal prestige, document order breaks the tie
    assert LexRank().select(doc, Limit(sentences=1)) == [0]
    assert 3 not in LexRank().select(doc, Limit(sentences=3))


def test_continuous_lexrank_weights_edges_by_cosine():
    doc = Analyzer().parse(DOC)
    graph = cosine_graph(doc, CorpusStats())
    expected = nx.pagerank(nx.from_numpy_array(graph, create_using=nx.DiGraph), alpha=0.85, weight="weight",
                           tol=1e-10)
    np.testing.assert_allclose(ContinuousLexRank().scores(doc), [expected[i] for i in range(4)], atol=1e-5)
    assert LexRank(threshold=0.99).select(doc, Limit(sentences=1)) == [0]   # no links: all equal, document order
