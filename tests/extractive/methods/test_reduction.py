"""Reduction: weighted degree in the TextRank graph."""

import numpy as np

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.reduction import Reduction
from sumpipe.extractive.methods.textrank import overlap_similarity


def test_scores_are_row_sums_of_the_overlap_graph():
    doc = Analyzer().parse("storm hit coast\nstorm flooded town\ncoast town storm damage\nmarket rallied")
    np.testing.assert_allclose(Reduction().scores(doc), overlap_similarity(doc.counts).sum(axis=1))
    assert Reduction().select(doc, Limit(sentences=1)) == [2]
