"""Abstractiveness and redundancy figures, by hand."""

import pytest

from sumpipe.evaluate.abstractiveness import abstractiveness, novel_ngrams


def test_an_extract_has_no_novel_ngrams():
    source = "the storm hit the coast .\nthousands lost power ."
    out = abstractiveness(["the storm hit the coast ."], [source])
    assert out["novel_1gram"] == out["novel_2gram"] == out["novel_4gram"] == 0.0
    assert out["mean_length"] == 6.0 and out["compression"] == pytest.approx(10 / 6, abs=0.01)


def test_novel_and_repeated_ngrams_by_hand():
    source = "a b c d"
    out = abstractiveness(["a b x a b x"], [source])
    # 1-grams: a b x a b x -> x twice novel of 6; 2-grams: ab bx xa ab bx -> only "a b" is in the source
    assert out["novel_1gram"] == pytest.approx(100 * 2 / 6, abs=0.01)
    assert out["novel_2gram"] == pytest.approx(100 * 3 / 5, abs=0.01)
    # 3-grams: abx bxa xab abx -> one repeat of 4
    assert out["repeated_3gram"] == 25.0


def test_p_gen_when_present():
    out = abstractiveness(["a"], ["a"], p_gen=[[0.2, 0.4], None, 0.9])
    assert out["mean_p_gen"] == pytest.approx((0.3 + 0.9) / 2)
    assert "mean_p_gen" not in abstractiveness(["a"], ["a"])


def test_empty_summaries():
    out = abstractiveness(["", ""], ["a b", "c"])
    assert out["mean_length"] == 0.0 and out["compression"] == 0.0 and out["novel_1gram"] == 0.0


def test_degeneracy_distinct_and_words_repeated_back_to_back():
    summaries = ["return the the index .", "return the index .", "return the index .", "a . . b"]
    out = abstractiveness(summaries, [""] * 4)
    # distinct: "return the index ." appears twice, so 2 of 4 summaries are unique
    assert out["distinct"] == 50.0
    # "the the" repeats a word; ". ." repeats punctuation, which does not count
    assert out["adjacent_repeat"] == 25.0


def test_length_in_words_leaves_punctuation_out():
    figures = abstractiveness(["return the list .", "a , b ( c ) ."], ["", ""])
    assert (figures["mean_length"], figures["mean_words"]) == (5.5, 3.0)   # (4 + 7) / 2 tokens, (3 + 3) / 2 words


def test_one_summary_s_novel_ngrams_by_hand():
    # 1-grams a b c: c is new; 2-grams (a b), (b c): (b c) is new; lines split n-grams on both sides
    assert novel_ngrams("a b c", "a b .", 1) == (1, 3)
    assert novel_ngrams("a b c", "a b .", 2) == (1, 2)
    assert novel_ngrams("a b\nc", "b c", 2) == (1, 1)      # "b c" across the summary's line break is no 2-gram
    assert novel_ngrams("b c", "a b\nc d", 2) == (1, 1)    # nor across the source's
    assert novel_ngrams("", "a", 1) == (0, 0)
