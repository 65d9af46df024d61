"""The domain note of `sumpipe.decode.domain`: the input's share of words outside the model's vocabulary
against the training texts' own, the threshold, and what the line says to do instead."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sumpipe.decode.domain import MARGIN, DomainCheck, corpus_share, count_outside, train_tokens, what_instead


class _Vocab:
    def __init__(self, words: list[str], counts: list[int]) -> None:
        self.stoi = {w: i for i, w in enumerate(words)}
        self.counts = np.asarray(counts, np.int64)


def test_count_outside_counts_tokens_not_types() -> None:
    vocab = _Vocab(["<pad>", "the", "cat", "."], [0, 10, 3, 5])
    assert count_outside([["the", "cat", "."], ["the", "zebra", "zebra"]], vocab) == (2, 6)


def test_corpus_share_is_the_train_tokens_outside_the_vocabulary() -> None:
    vocab = _Vocab(["<pad>", "the", "cat"], [0, 60, 28])
    assert corpus_share(vocab, 100) == pytest.approx(0.12)
    assert corpus_share(vocab, None) is None
    assert corpus_share(vocab, 50) is None            # more counted than the total: another corpus's figure


def test_train_tokens_reads_the_vocab_stage_statistics(tmp_path: Path) -> None:
    assert train_tokens(tmp_path) is None                                  # no metrics/vocab.json
    (tmp_path / "vocab.json").write_text(json.dumps({"train_tokens": 496635, "vocab_size": 20736}))
    assert train_tokens(tmp_path) == 496635
    for broken in ("{", json.dumps({"train_tokens": "many"}), json.dumps([1])):
        (tmp_path / "vocab.json").write_text(broken)
        assert train_tokens(tmp_path) is None                              # optional: never an error


def test_the_threshold_is_twenty_points_above_the_training_share() -> None:
    def check(outside: int, tokens: int = 400, corpus: float | None = 0.123) -> DomainCheck:
        return DomainCheck("M2", "pydoc", outside, tokens, corpus)

    # the measured cases (module docstring): a CNN story 161/400, a click docstring 48/400 (12 %)
    assert check(161).unlike_training and not check(48).unlike_training
    assert MARGIN == 0.20
    assert not check(int(400 * 0.32)).unlike_training and check(int(400 * 0.33)).unlike_training
    assert not check(130, corpus=None).unlike_training and check(140, corpus=None).unlike_training  # 35 %
    assert not check(9, tokens=9).unlike_training                          # too few words to say
    assert check(48).note() is None


def test_the_note_names_the_shares_the_corpus_and_what_to_train_instead() -> None:
    note = DomainCheck("M2", "pydoc", 161, 400, 0.123).note()
    assert note == ("note: the input has 40 % of its words outside M2's vocabulary (its training texts: 12 %): "
                    "M2 was trained on Python docstrings (pydoc), expect a poor summary; for news, train "
                    "experiments/cnn (docs/realtext.md) and add --project experiments/cnn; for other text, train "
                    "on it with data.dataset: local (docs/datasets.md)")
    unknown = DomainCheck("M1", "local", 200, 400, None).note()
    assert unknown is not None and "(its training texts: unknown)" in unknown
    assert "local data set of its data.path (local)" in unknown


def test_what_instead_leaves_out_the_kind_the_model_already_is() -> None:
    assert "experiments/cnn" in what_instead("pydoc") and "docstrings" not in what_instead("pydoc")
    news = what_instead("cnn_dailymail")
    assert "experiments/cnn" not in news and news.startswith("for Python docstrings, use the main project's")
