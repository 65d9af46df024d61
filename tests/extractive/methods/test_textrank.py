"""TextRank: Mihalcea & Tarau's overlap similarity and the ranking against networkx."""

import math

import networkx as nx
import numpy as np

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.textrank import TextRank, overlap_similarity


def test_overlap_similarity_by_hand():
    counts = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 0.0, 1.0]])
    sim = overlap_similarity(counts)
    assert sim[0, 0] == 0.0
    assert math.isclose(sim[0, 1], 1 / (math.log(2) + math.log(3)))
    assert math.isclose(sim[1, 2], 1 / (math.log(3) + math.log(1)))
    assert sim[0, 2] == 0.0
    # two one-word sentences: the logarithms sum to 0 and the overlap is the weight
    assert overlap_similarity(np.array([[1.0], [1.0]]))[0, 1] == 1.0


def test_ranking_equals_networkx_pagerank_and_the_hub_wins():
    doc = Analyzer().parse("storm hit coast\nstorm flooded town\ncoast town storm damage\nmarket rallied")
    scores = TextRank().scores(doc)
    graph = nx.from_numpy_array(overlap_similarity(doc.counts))
    expected = nx.pagerank(graph, alpha=0.85, weight="weight", tol=1e-10)
    np.testing.assert_allclose(scores, [expected[i] for i in range(4)], atol=1e-5)
    assert TextRank().select(doc, Limit(sentences=1)) == [2]
