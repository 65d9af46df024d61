"""Punkt sentence splitting, offline, with the additions for news text."""

from __future__ import annotations

from sumpipe.text.sentences import known_abbreviations, split_sentences


def test_three_sentences_with_abbreviations() -> None:
    paragraph = "Mr. Smith went to the U.S. last week. He met Dr. Jones there. They talked for hours."
    assert split_sentences(paragraph) == [
        "Mr. Smith went to the U.S. last week.", "He met Dr. Jones there.", "They talked for hours."]


def test_titles_initials_and_numbers_do_not_end_sentences() -> None:
    text = "Gov. Anthony Garotinho met O.J. Simpson and Rev. Jesse Jackson. He is No. 2 now."
    assert split_sentences(text) == [
        "Gov. Anthony Garotinho met O.J. Simpson and Rev. Jesse Jackson.", "He is No. 2 now."]


def test_line_breaks() -> None:
    text = "First line has no period\nSecond line. Still second?\n\n  Third  "
    assert split_sentences(text) == ["First line has no period", "Second line.", "Still second?", "Third"]
    assert split_sentences(text, "paragraph") == [
        "First line has no period Second line.", "Still second?", "Third"]
    assert split_sentences(text, "ignore") == ["First line has no period Second line.", "Still second?", "Third"]


def test_empty() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n \n") == []


def test_known_abbreviations_are_lowercase_words() -> None:
    abbreviations = known_abbreviations()
    assert {"mr", "dr", "gov", "sen", "rev", "calif", "no", "w"} <= abbreviations
    assert all(a.isalpha() and a == a.lower() for a in abbreviations)
