"""Sentence selection: Morozovskii 2022 Alg. 1 (`select_ngram`) and first-N (`select_first`)."""

from __future__ import annotations

import numpy as np
import pytest

from sumpipe.selection.select import choose_sentences, cut, render, select_first, select_ngram


def test_higher_scoring_sentence_chosen(ngram_doc, ngram_table):
    # Budget for the lead plus one 7-token sentence: the rare-orchid sentence wins over 1 and 3.
    assert select_ngram(ngram_doc, ngram_table, tokens=14, first_k=1) == [0, 2]
    scores = ngram_table.sentence_scores(ngram_doc)
    assert scores[2] > scores[1] > scores[3] > scores[4] == 0.0


def test_first_k_kept_budget_respected_document_order(ngram_doc, ngram_table):
    for tokens in range(1, 40):
        for first_k in range(0, 4):
            chosen = select_ngram(ngram_doc, ngram_table, tokens, first_k)
            assert chosen == sorted(chosen)
            kept = cut(ngram_doc, chosen, tokens)
            assert sum(map(len, kept)) <= tokens
            lead = select_first(ngram_doc[:first_k], tokens)
            assert set(lead) <= set(chosen)  # the first k (as far as the budget reaches) always


def test_overflowing_sentence_skipped_shorter_one_tried(ngram_doc, ngram_table):
    # After the lead (7), 10 tokens left: sentence 2 (7) fits; of the 3 left, sentences 1 (7) and
    # 3 (5) would overflow, "it was ." (3) fits.
    assert select_ngram(ngram_doc, ngram_table, tokens=17, first_k=1) == [0, 2, 4]


def test_first_k_larger_than_budget_degrades_to_first_n(ngram_doc, ngram_table):
    chosen = select_ngram(ngram_doc, ngram_table, tokens=10, first_k=3)
    assert chosen == [0, 1]
    assert render(cut(ngram_doc, chosen, 10)) == "police arrested a man on monday .\nthe man was"


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


def test_unknown_ngrams_get_the_maximum(ngram_table):
    doc = [["x"] * 3, "police arrested man".split(), "brand new words".split()]
    assert ngram_table.max_score == pytest.approx(1 / np.log10(2))
    assert select_ngram(doc, ngram_table, tokens=6, first_k=1) == [0, 2]
