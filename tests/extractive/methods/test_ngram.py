"""Morozovskii 2022's Alg. 1 as a summarizer: the lead sentences, then the best mean-3-gram sentences."""

import pytest

from sumpipe.errors import SumpipeError
from sumpipe.extractive.methods import Analyzer, Limit, build_method
from sumpipe.selection.select import select_ngram


@pytest.fixture(scope="module")
def ngram_text(ngram_doc: list[list[str]]) -> str:
    """The n-gram document as raw text, one sentence a line."""
    return "\n".join(" ".join(s) for s in ngram_doc)


def test_lead_then_the_best_3gram_sentences(ngram_table, ngram_text):
    doc = Analyzer().parse(ngram_text)
    method = build_method("ngram", {}, None, ngram_table)
    # lead (0), then the rare-orchid sentence (2), then "man charged murder" (1), "police arrested man" (3)
    assert list(method.rank(doc)) == [0, 2, 1, 3, 4]
    assert method.select(doc, Limit(sentences=2)) == [0, 2]
    assert method.select(doc, Limit(sentences=3)) == [0, 1, 2]
    assert build_method("ngram", {"first_k": 0}, None, ngram_table).select(doc, Limit(sentences=1)) == [2]


def test_a_token_budget_gives_alg_1s_selection(ngram_doc, ngram_table, ngram_text):
    doc = Analyzer().parse(ngram_text)
    for tokens in (14, 20, 26):
        assert build_method("ngram", {}, None, ngram_table).select(doc, Limit(tokens=tokens)) == \
               select_ngram(ngram_doc, ngram_table, tokens=tokens, first_k=1)


def test_without_a_table_it_says_what_it_needs(ngram_text):
    with pytest.raises(SumpipeError, match="3-gram table"):
        build_method("ngram").select(Analyzer().parse(ngram_text), Limit(sentences=1))
    with pytest.raises(SumpipeError, match=r"first_k: must be in \[0, 1000\]"):
        build_method("ngram", {"first_k": -1})
