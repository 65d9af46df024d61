"""The NLTK-book regular expression with its quirks fixed (on lowercased ASCII text)."""

from __future__ import annotations

import re

import pytest

from sumpipe.text.tokenize import split_possessive, tokenize, tokenize_lines

# The pattern exactly as printed in the NLTK book, ch. 3.7, to show what was wrong with it.
NLTK_BOOK = re.compile(r"""(?x)
    (?:[A-Z]\.)+
  | \w+(?:-\w+)*
  | \$?\d+(?:\.\d+)?%?
  | \.\.\.
  | [][.,;"'?():-_`]
""")


@pytest.mark.parametrize(("text", "book", "fixed"), [
    ("u.s.a.", ["u", ".", "s", ".", "a", "."], ["u.s.a."]),
    ("12.40", ["12", ".", "40"], ["12.40"]),
    ("82%", ["82"], ["82", "%"]),
    ("$41.1", ["$41.1"], ["$", "41.1"]),
    ("wow!", ["wow"], ["wow", "!"]),
    ("(reuters) --", ["(", "reuters", ")"], ["reuters"]),
])
def test_book_quirks_and_their_fixes(text: str, book: list[str], fixed: list[str]) -> None:
    assert NLTK_BOOK.findall(text) == book
    assert tokenize(text) == fixed


@pytest.mark.parametrize(("text", "tokens"), [
    ("poster-print and analyst/personality", ["poster-print", "and", "analyst/personality"]),
    ("o'neill's don't", ["o'neill's", "don't"]),                 # inner apostrophes stay
    ("editor 's note", ["editor", "'s", "note"]),
    ("he said ... then", ["he", "said", "...", "then"]),
    ("1,000,000 at 10:30 ; #.# and ##-year-old", ["1,000,000", "at", "10:30", ";", "#.#", "and", "##-year-old"]),
    ("# 20 million", ["#", "20", "million"]),
    ("mr. smith and george w. bush met sen. kerry jr.", ["mr.", "smith", "and", "george", "w.", "bush",
                                                          "met", "sen.", "kerry", "jr", "."]),
    ("time inc. , which", ["time", "inc.", ",", "which"]),
    ("u.s.-led anti-u.s. then-sen. obama", ["u.s.-led", "anti-u.s.", "then-sen.", "obama"]),
    ("see ew.com or cnn.com/video .", ["see", "ew.com", "or", "cnn.com/video", "."]),
    ("go to http://www.cnn.com/2008/us/index.html .", ["go", "to", "http://www.cnn.com/2008/us/index.html", "."]),
    ('he said "hi" (loudly) [sic] -- ok', ["he", "said", "hi", "loudly", "sic", "ok"]),
    ("a .45 caliber", ["a", ".45", "caliber"]),
    ("", []),
])
def test_tokens(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_tokenize_lines_joins_tokens_and_drops_empty_lines() -> None:
    assert tokenize_lines("hello ,world!\n -- \n( bye )") == "hello , world !\nbye"


@pytest.mark.parametrize(("text", "expected"), [
    ("amy's", "amy 's"),
    ("amy\u2019s", "amy 's"),
    ("it's bush's", "it 's bush 's"),
    ("'s alone", "'s alone"),      # nothing before the apostrophe: not a possessive
    ("amy'sx", "amy'sx"),
])
def test_split_possessive(text: str, expected: str) -> None:
    assert split_possessive(text) == expected
