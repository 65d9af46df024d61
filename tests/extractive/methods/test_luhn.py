"""Luhn: clusters of significant words."""

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.luhn import Luhn, best_cluster


def test_best_cluster_by_hand():
    T, F = True, False
    assert best_cluster([T, F, T, F, F, T], max_gap=4) == 9 / 6        # one cluster: 3 significant of 6
    assert best_cluster([T, F, F, F, F, T, T], max_gap=4) == 4 / 2     # 4 insignificant words split it
    assert best_cluster([T, F, F], max_gap=4) == 0.0                   # a single significant word
    assert best_cluster([], max_gap=4) == 0.0


def test_the_sentence_with_the_densest_cluster_wins():
    doc = Analyzer().parse("storm coast storm\nthe storm was far from any coast today really\ncoast\nnothing here")
    # storm and coast occur more than once: significant
    assert Luhn().select(doc, Limit(sentences=1)) == [0]
