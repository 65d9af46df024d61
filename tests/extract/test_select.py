"""Sentence selection: seed 001 Alg. 1 (`select_ngram`) and first-N (`select_first`)."""

from __future__ import annotations

import numpy as np
import pytest

from sumpipe.extract.select import choose_sentences, cut, render, select_first, select_ngram
from sumpipe.vocab.ngrams import NgramTable, pack_ngrams


def make_table(grams: dict[str, int]) -> NgramTable:
    """A table from {"w1 w2 w3": count}."""
    triples = [g.split() for g in grams]
    words = sorted({w for t in triples for w in t})
    ids = {w: i for i, w in enumerate(words)}
    keys = pack_ngrams(np.array([[ids[w] for w in t] for t in triples]))
    order = np.argsort(keys)
    return NgramTable(n=3, keys=keys[order], counts=np.array(list(grams.values()), np.uint32)[order], words=words)


TABLE = make_table({"police arrested man": 500, "man charged murder": 400, "rare orchid bloomed": 2,
                    "orchid bloomed kew": 3})
DOC = [
    "police arrested a man on monday .".split(),  # 0: the lead (one known and one unknown 3-gram)
    "the man was charged with murder .".split(),  # 1: (man charged murder) 400 -> 0.384
    "a rare orchid bloomed at kew .".split(),  # 2: rare grams -> (3.32 + 2.10) / 2
    "police arrested the man .".split(),  # 3: (police arrested man) 500 -> 0.370
    "it was .".split(),  # 4: no 3-gram -> 0
]


def test_higher_scoring_sentence_chosen():
    # Budget for the lead plus one 7-token sentence: the rare-orchid sentence wins over 1 and 3.
    assert select_ngram(DOC, TABLE, tokens=14, first_k=1) == [0, 2]
    scores = TABLE.sentence_scores(DOC)
    assert scores[2] > scores[1] > scores[3] > scores[4] == 0.0


def test_first_k_kept_budget_respected_document_order():
    for tokens in range(1, 40):
        for first_k in range(0, 4):
            chosen = select_ngram(DOC, TABLE, tokens, first_k)
            assert chosen == sorted(chosen)
            kept = cut(DOC, chosen, tokens)
            assert sum(map(len, kept)) <= tokens
            lead = select_first(DOC[:first_k], tokens)
            assert set(lead) <= set(chosen)  # the first k (as far as the budget reaches) always


def test_overflowing_sentence_skipped_shorter_one_tried():
    # After the lead (7), 10 tokens left: sentence 2 (7) fits; of the 3 left, sentences 1 (7) and
    # 3 (5) would overflow, "it was ." (3) fits.
    assert select_ngram(DOC, TABLE, tokens=17, first_k=1) == [0, 2, 4]


def test_first_k_larger_than_budget_degrades_to_first_n():
    chosen = select_ngram(DOC, TABLE, tokens=10, first_k=3)
    assert chosen == [0, 1]
    assert render(cut(DOC, chosen, 10)) == "police arrested a man on monday .\nthe man was"


def test_choose_sentences_ties_keep_document_order():
    assert choose_sentences([2, 2, 2, 2], [0.0, 1.0, 1.0, 1.0], tokens=4, first_k=0) == [1, 2]
    assert choose_sentences([0, 3, 2], [9.0, 0.0, 0.0], tokens=5, first_k=1) == [1, 2]  # empty never chosen
    assert choose_sentences([], [], tokens=5, first_k=2) == []


def test_select_first_exact():
    sentences = [["a"] * 3, ["b"] * 4, ["c"] * 5]
    assert select_first(sentences, 5) == [0, 1]
    assert cut(sentences, [0, 1], 5) == [["a"] * 3, ["b"] * 2]
    assert select_first(sentences, 7) == [0, 1]
    assert select_first(sentences, 8) == [0, 1, 2]
    assert select_first(sentences, 100) == [0, 1, 2]


def test_unknown_ngrams_get_the_maximum():
    doc = [["x"] * 3, "police arrested man".split(), "brand new words".split()]
    assert TABLE.max_score == pytest.approx(1 / np.log10(2))
    assert select_ngram(doc, TABLE, tokens=6, first_k=1) == [0, 2]
