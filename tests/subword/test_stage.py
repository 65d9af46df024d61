"""The subword stage: a deterministic sentencepiece model with the project's special ids."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sumpipe.config import SubwordConfig
from sumpipe.errors import SumpipeError
from sumpipe.names import BOS, EOS, PAD, UNK
from sumpipe.subword.pieces import MASK, SubwordVocab
from sumpipe.subword.stage import train_subword

WORDS = ("the returns array arrays returned value values compute computes computed string strings "
         "index indexes indexed sort sorted sorting").split()


def write_processed(root: Path) -> Path:
    rows = []
    for i in range(60):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12)]
        rows.append({"id": str(i), "source": " ".join(words[:6]) + " .\n" + " ".join(words[6:]) + " .",
                     "reference": " ".join(words[:4])})
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(root / "train.parquet")
    return root


def test_model_has_the_special_ids_and_round_trips_text(tmp_path: Path) -> None:
    stats = train_subword(write_processed(tmp_path / "processed"), tmp_path / "subword", SubwordConfig(size=60))
    vocab = SubwordVocab.load(tmp_path / "subword")
    assert (UNK, PAD, BOS, EOS, MASK) == (0, 1, 2, 3, 4)
    assert vocab.itos[:5] == ["<unk>", "<pad>", "<s>", "</s>", "<mask>"]
    assert stats["pieces"] == len(vocab) <= 60 and stats["train_examples"] == 60
    text = "the sorted arrays .\ncompute the index"
    ids = vocab.encode(text)
    assert min(ids) >= 5  # text never encodes to a special, <mask> included
    assert vocab.decode(ids) == "the sorted arrays . compute the index"  # sentence breaks are not pieces
    assert vocab.decode([BOS, *ids, EOS, PAD]) == vocab.decode(ids)
    assert vocab.encode("<mask>") != [MASK]  # a control symbol: the literal text is ordinary characters
    assert (tmp_path / "subword/subword.vocab").read_text().splitlines()[4].startswith("<mask>\t")


def test_training_is_deterministic(tmp_path: Path) -> None:
    processed = write_processed(tmp_path / "processed")
    for name in ("a", "b"):
        train_subword(processed, tmp_path / name, SubwordConfig(size=60, model_type="unigram", max_sentences=150))
    assert (tmp_path / "a/subword.model").read_bytes() == (tmp_path / "b/subword.model").read_bytes()


def test_missing_or_foreign_model_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SumpipeError, match="no such subword model"):
        SubwordVocab.load(tmp_path)
    (tmp_path / "subword.model").write_bytes(b"not a model")
    with pytest.raises(SumpipeError, match="not a sentencepiece model"):
        SubwordVocab.load(tmp_path)
