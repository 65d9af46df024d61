"""Lead: the first sentences."""

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.lead import Lead


def test_lead_three_and_a_token_budget():
    doc = Analyzer().parse("a b c\nd e\nf g h i\nj")
    assert Lead().select(doc, Limit(sentences=3)) == [0, 1, 2]
    assert Lead().select(doc, Limit(tokens=6)) == [0, 1, 3]   # sentence 2 would overflow; "j" still fits
