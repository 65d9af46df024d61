"""Random: seeded, per-document, a permutation."""

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.random import RandomOrder

TEXT = "\n".join(f"sentence number{i} here" for i in range(20))


def test_seeded_and_independent_of_other_documents():
    a = Analyzer()
    doc = a.parse(TEXT, key="doc-7")
    first = RandomOrder(seed=1).rank(doc)
    assert sorted(first) == list(range(20))
    RandomOrder(seed=1).rank(a.parse(TEXT, key="other"))
    assert RandomOrder(seed=1).rank(doc) == first
    assert RandomOrder(seed=2).rank(doc) != first
    assert RandomOrder(seed=1).rank(a.parse(TEXT, key="doc-8")) != first
    assert len(RandomOrder(seed=1).select(doc, Limit(sentences=3))) == 3
