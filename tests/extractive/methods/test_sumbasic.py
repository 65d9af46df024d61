"""SumBasic: mean word probability with squared updates."""

import itertools

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.sumbasic import SumBasic, sumbasic_order


def test_order_by_hand():
    doc = Analyzer().parse("storm storm\nstorm coast\ncoast town\nthe of")
    # p: storm 3/6, coast 2/6, town 1/6. Step 1: top term storm; means 0.5, 0.417 -> sentence 0.
    # storm -> 1/4. Step 2: top term coast (1/3); candidates 1 (mean (1/4+1/3)/2), 2 ((1/3+1/6)/2) -> 1.
    # Then sentence 2; the wordless sentence 3 comes last.
    assert list(sumbasic_order(doc.counts)) == [0, 1, 2, 3]
    assert SumBasic().select(doc, Limit(sentences=2)) == [0, 1]


def test_a_lazy_order():
    doc = Analyzer().parse("\n".join(f"word{i} common" for i in range(50)))
    assert len(list(itertools.islice(SumBasic().rank(doc), 3))) == 3
