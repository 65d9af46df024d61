"""Rare-word recall, by hand."""

import math

import numpy as np

from sumpipe.evaluate.rare_words import rare_word_recall, rare_words

COUNTS = {"return": 300, "the": 900, "index": 40, "maximum": 3, "value": 12, "walrus": 1, "of": 500}


def test_rare_words_are_content_words_at_most_max_count_or_unseen():
    # "maximum" (3) and "walrus" (1) are rare; "zebra" is unseen (count 0): rare; "the"/"of" are stop words
    assert rare_words("the maximum of the walrus zebra index .", COUNTS, max_count=5) == {"maximum", "walrus", "zebra"}
    assert rare_words("the maximum value", COUNTS, max_count=20) == {"maximum", "value"}


def test_recall_per_document_and_nan_without_rare_words():
    recall = rare_word_recall(
        ["return the maximum index .", "the walrus", "the index"],
        ["return the index of maximum zebra .", "the walrus index", "the index of the"],
        COUNTS, max_count=5)
    # doc 1: rare {maximum, zebra}, summary has maximum -> 1/2; doc 2: {walrus} -> 1; doc 3: none -> NaN
    assert recall[0] == 0.5 and recall[1] == 1.0 and math.isnan(recall[2])
    assert np.nanmean(recall) == 0.75
