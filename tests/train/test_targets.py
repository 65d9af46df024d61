"""Training targets with sentence boundaries (`sumpipe.train.targets`)."""

from __future__ import annotations

import pandas as pd
import pytest

from sumpipe.evaluate.read_quality import split_sentences
from sumpipe.train.targets import end_sentences, with_sentence_ends


@pytest.mark.parametrize("text, expected", [
    # CNN highlights: lines without a final period each get one
    ("police arrest three men\nthe men are 20 , 22 and 31", "police arrest three men .\nthe men are 20 , 22 and 31 ."),
    # a line that ends a sentence already is kept; "?" and "!" end one too
    ("he won .\nwhy ?\nwow !\nno end", "he won .\nwhy ?\nwow !\nno end ."),
    # an empty line stays empty, trailing spaces are dropped before the "."
    ("a b  \n\nc", "a b .\n\nc ."),
    ("", ""),
])
def test_every_line_ends_a_sentence(text: str, expected: str) -> None:
    assert end_sentences(text) == expected


def test_the_model_target_holds_the_boundaries_read_quality_counts() -> None:
    # the target is the tokens of every line in one sequence: without the "." the three highlights are one
    # run of 9 tokens; with it the boundaries are tokens, and read quality counts the same 3 sentences in
    # the one line (summary_text's line breaks aside) as in the three lines of the reference
    reference = "a b c\nd e f\ng h i"
    target = end_sentences(reference).split()
    assert target == ["a", "b", "c", ".", "d", "e", "f", ".", "g", "h", "i", "."]
    assert len(split_sentences(" ".join(target))) == len(split_sentences(reference)) == 3
    assert len(split_sentences(" ".join(reference.split()))) == 1


def test_with_sentence_ends_changes_the_reference_column_only_in_a_copy() -> None:
    frame = pd.DataFrame({"id": ["1", "2"], "source": ["x y\nz", "w"], "reference": ["a b\nc", "d ."]})
    out = with_sentence_ends(frame)
    assert out["reference"].tolist() == ["a b .\nc .", "d ."]
    assert out["source"].tolist() == ["x y\nz", "w"]
    assert frame["reference"].tolist() == ["a b\nc", "d ."]
