"""Extract-then-rewrite's rows and summaries, on hand-made stories."""

from __future__ import annotations

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.rewrite.compose import compose, lead, parse_row_id, sentence_rows, words

STORIES = pd.DataFrame({"id": ["a", "b"],
                        "source": ["first one .\n\nsecond one .\nthird one .\nfourth one .", "only one ."],
                        "reference": ["ref a", "ref b"]})


def test_lead_skips_empty_lines() -> None:
    assert lead(STORIES["source"][0], 3) == [0, 2, 3]
    assert lead("only one .", 3) == [0]
    assert lead("", 3) == []


def test_lead_can_skip_short_lines() -> None:
    source = "how ?\nfirst real one .\nfair enough .\n2 , 3 .\nsecond real one ."
    assert words("2 , 3 .") == 2 and words(". ,") == 0
    assert lead(source, 2, min_words=3) == [1, 4]   # "how ?", "fair enough ." and "2 , 3 ." have 1-2 words
    assert lead(source, 2) == [0, 1]


def test_sentence_rows_one_per_selected_sentence_in_story_order() -> None:
    rows = sentence_rows(STORIES, {"a": [3, 0, 1, 9, 3], "b": [0]})   # 1 is empty, 9 outside: dropped
    assert rows.values.tolist() == [["a#0", "first one .", "ref a"], ["a#3", "third one .", "ref a"],
                                    ["b#0", "only one .", "ref b"]]
    assert sentence_rows(STORIES, {}).columns.tolist() == ["id", "source", "reference"]


def test_parse_row_id_takes_the_last_separator() -> None:
    assert parse_row_id("cnn#7#12") == ("cnn#7", 12)
    with pytest.raises(SumpipeError, match="not <story id>#<sentence index>"):
        parse_row_id("cnn-7")


def test_compose_joins_rewrites_in_story_order() -> None:
    rewrites = pd.DataFrame({"id": ["a#10", "a#2", "b#0", "a#3"],
                             "prediction": ["tenth  rewrite .", "second rewrite .", ". ,", None]})
    # a#10 after a#2 (numeric order), the word-less "b#0" and the missing a#3 left out, "c" has none
    assert compose(["a", "b", "c"], rewrites) == ["second rewrite .\ntenth rewrite .", "", ""]
