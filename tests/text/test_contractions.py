"""The hand-written contraction dictionary, on tokenized text."""

from __future__ import annotations

import pytest

from sumpipe.text.contractions import CONTRACTIONS, expand_contractions


@pytest.mark.parametrize(("text", "expected"), [
    ("i don't know", "i do not know"),
    ("i do n't know", "i do not know"),               # Penn Treebank split
    ("it won't , it wo n't", "it will not , it will not"),
    ("ca n't and can't", "can not and can not"),
    ("i'll go and i 'll go", "i will go and i will go"),
    ("it 's been such a great ride", "it is been such a great ride"),   # thesis Table A.2
    ("let 's go", "let us go"),
    ("they're here\nwe've won", "they are here\nwe have won"),
    ("y'all", "you all"),
])
def test_expands_joined_and_split_forms(text: str, expected: str) -> None:
    assert expand_contractions(text) == expected


@pytest.mark.parametrize("text", [
    "u.s.a. and u.s.a and u.s. troops",     # the `contractions` package makes "you.s.a" of these
    "editor 's note",                       # a possessive, not "editor is"
    "o'neill 's rock'n'roll",
    "don'tx and xdon't",                    # not whole tokens
    "'s alone",
    "no apostrophe here",
])
def test_leaves_everything_else_alone(text: str) -> None:
    assert expand_contractions(text) == text


def test_dictionary_is_lowercase_and_expansions_have_no_apostrophes() -> None:
    assert all(key == key.lower() and "'" in key for key in CONTRACTIONS)
    assert all("'" not in value for value in CONTRACTIONS.values())
    assert "u" not in CONTRACTIONS and not any(key.startswith("u.") for key in CONTRACTIONS)
