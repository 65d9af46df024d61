"""The aligned pairs: each highlight's story sentence by ROUGE-L recall, hand-computed."""

from __future__ import annotations

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.evaluate.rouge import FastRouge
from sumpipe.rewrite.align import align_frame, align_split, best_sentences, lines, recall_matrix

STORY = "the cat sat on the mat .\nthe dog barked loudly .\n\nthe cat and the dog played ."
SENTENCES = lines(STORY)


@pytest.fixture(scope="module")
def scorer() -> FastRouge:
    return FastRouge(["rougeL"], use_stemmer=True)


def test_lines_keep_empty_ones_so_indices_are_line_numbers() -> None:
    assert lines(" a b \n\nc") == ["a b", "", "c"]
    assert lines("") == [""]


def test_recall_is_lcs_over_the_highlight_length(scorer: FastRouge) -> None:
    # "the cat and dog" (4 tokens): LCS "the cat" with sentence 0 (2/4), "the dog" with sentence 1 (2/4),
    # nothing with the empty line, the whole of it with sentence 3 ("the cat and ... dog": 4/4)
    recall = recall_matrix(SENTENCES, ["the cat and dog"], scorer)
    assert recall.tolist() == [[0.5, 0.5, 0.0, 1.0]]
    assert recall_matrix([], ["a"], scorer).shape == (1, 0)


def test_best_sentence_per_highlight(scorer: FastRouge) -> None:
    best = best_sentences(SENTENCES, ["dog barked", "cat sat", "the cat and dog", "the", "zebra", ""], scorer)
    assert best == [(1, 1.0),   # sentence 1 holds both words; sentence 3 only "dog" (1/2)
                    (0, 1.0),
                    (3, 1.0),
                    (0, 1.0),   # "the" is in sentences 0, 1 and 3: a tie goes to the earliest
                    None,       # no story sentence shares a word
                    None]       # an empty highlight has nothing to align


def test_the_stemmer_matches_word_forms() -> None:
    # "barking" and "barked" share the stem "bark" only with the stemmer: 2/2 against "dog" alone (1/2)
    assert best_sentences(SENTENCES, ["dog barking"], FastRouge(["rougeL"], use_stemmer=True)) == [(1, 1.0)]
    assert best_sentences(SENTENCES, ["dog barking"], FastRouge(["rougeL"], use_stemmer=False)) == [(1, 0.5)]


def test_align_frame_writes_one_row_per_aligned_highlight() -> None:
    frame = pd.DataFrame({"id": ["s1", "s2"], "source": [STORY, "a zebra ran ."],
                          "reference": ["cat sat\nzebra\ndog barked", "zebra ran"]})
    pairs = align_frame(frame)
    assert pairs["id"].tolist() == ["s1#0", "s1#2", "s2#0"]   # s1's "zebra" (highlight 1) has no pair
    assert pairs["source"].tolist() == [SENTENCES[0], SENTENCES[1], "a zebra ran ."]
    assert pairs["reference"].tolist() == ["cat sat", "dog barked", "zebra ran"]
    assert pairs["sentence"].tolist() == [0, 1, 0]
    assert pairs["recall"].tolist() == [1.0, 1.0, 1.0]


def test_align_frame_names_a_missing_column() -> None:
    with pytest.raises(SumpipeError, match="lacks column"):
        align_frame(pd.DataFrame({"id": ["a"], "source": ["b"]}))


def test_align_split_round_trips_through_parquet(tmp_path) -> None:
    pd.DataFrame({"id": ["s1"], "source": [STORY], "reference": ["the cat and dog"]}).to_parquet(
        tmp_path / "valid.parquet")
    path = align_split(tmp_path, tmp_path / "aligned", "valid")
    written = pd.read_parquet(path)
    assert path == tmp_path / "aligned" / "valid.parquet"
    assert written[["id", "sentence", "recall"]].values.tolist() == [["s1#0", 3, 1.0]]
