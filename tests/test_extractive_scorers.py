"""Every method: the catalogue, budgets and document order, degenerate documents."""

import pytest

from sumpipe.errors import SumpipeError
from sumpipe.extractive.scorers import METHODS, Analyzer, Limit, build_method, fit_corpus

STORY = """the storm hit the coast on monday .
thousands of homes lost power as the storm moved inland .
officials said the damage would take weeks to repair .
the storm is the strongest to hit the region in a decade .
markets were calm .
schools will reopen on thursday , officials said ."""

DEGENERATE = {
    "empty": "",
    "one sentence": "the storm hit the coast .",
    "no content words": "the , of .\nand 12 3 .\n--",
    "repeated sentence": "storm storm\nstorm storm\nstorm storm",
}


def _state(needs, a):
    """The fitted state a method `needs`: an empty 3-gram table, or the LSA space of the three texts."""
    import numpy as np

    from sumpipe.extractive.scorers.lsa_collection import LsaSpace, term_stream
    from sumpipe.vocab.ngrams import NgramTable

    if needs == "ngrams":
        return NgramTable(n=3, keys=np.zeros(0, np.uint64), counts=np.zeros(0, np.uint32), words=[])
    if needs == "space":
        return LsaSpace.fit([term_stream(a.parse(t)) for t in [STORY, "markets rose", "storm news"]])
    return None


def _fitted(name):
    a = Analyzer()
    return a, build_method(name, corpus=fit_corpus(a.parse(t) for t in [STORY, "markets rose", "storm news"]),
                           state=_state(METHODS[name].needs, a))


@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("limit", [Limit(sentences=3), Limit(tokens=20), Limit(sentences=2, tokens=25)])
def test_budgets_and_document_order(name, limit):
    a, method = _fitted(name)
    doc = a.parse(STORY, reference="storm cuts power to thousands", key="x")
    chosen = method.select(doc, limit)
    assert chosen == sorted(set(chosen)) and chosen
    if limit.sentences:
        assert len(chosen) <= limit.sentences
    if limit.tokens:
        assert sum(doc.lengths[i] for i in chosen) <= limit.tokens


@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_degenerate_documents_never_crash(name, case):
    a, method = _fitted(name)
    doc = a.parse(DEGENERATE[case], reference="storm", key="x")
    chosen = method.select(doc, Limit(sentences=2))
    assert chosen == sorted(chosen) and all(0 <= i < doc.n_sentences for i in chosen)
    if name == "oracle":  # stops when another sentence would not raise ROUGE
        assert (len(chosen) >= 1) == (doc.n_sentences >= 1) and len(chosen) <= 2
    else:
        assert len(chosen) == min(2, doc.n_sentences)
    if case == "no content words" and name != "oracle":
        assert chosen == [0, 1]                                  # no terms: the lead sentences


def test_unknown_method_and_bad_option_are_one_line_errors():
    with pytest.raises(SumpipeError, match="unknown extractive method 'lsa2'"):
        build_method("lsa2")
    with pytest.raises(SumpipeError, match="bad option"):
        build_method("lexrank", {"treshold": 0.2})
