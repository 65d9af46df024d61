"""The word families' vocabulary kind: the vocab stage's table cut for training, stored in and read
back from a model directory; and the module sits below the registry and the model-directory code."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import sumpipe.models.card
import sumpipe.models.io
import sumpipe.models.registry
import sumpipe.models.vocabulary
from sumpipe.errors import SumpipeError
from sumpipe.models.vocabulary import WORD_VOCABULARY, vocab_table
from sumpipe.names import SPECIAL_TOKENS
from sumpipe.vocab.vocabulary import Vocabulary


@dataclasses.dataclass(frozen=True)
class Arch:
    vocab_size: int


@dataclasses.dataclass(frozen=True)
class CountingArch:
    vocab_size: int
    oov_rarity: str = "count"


COUNTS = {"the": 9, "array": 5, "axis": 3, "sorted": 2, "copy": 1}


def imported_modules(module) -> set[str]:
    """Every sumpipe module `module` imports, at the top or inside a function."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith("sumpipe")}


def test_no_import_circle_between_registry_card_and_model_io():
    # vocabulary reads the model directory's file names from the card, which imports no model module
    assert {m for m in imported_modules(sumpipe.models.vocabulary) if m.startswith("sumpipe.models")} == {
        "sumpipe.models.card"}
    assert not {m for m in imported_modules(sumpipe.models.card) if m.startswith("sumpipe.models")}
    assert "sumpipe.models.io" not in imported_modules(sumpipe.models.registry)
    assert "sumpipe.models.vocabulary" in imported_modules(sumpipe.models.registry)
    assert "sumpipe.models.vocabulary" not in imported_modules(sumpipe.models.io)  # it goes through the family


def test_word_vocabulary_round_trip(tmp_path: Path):
    Vocabulary.from_counts(COUNTS, size=9).save(tmp_path / "vocab.parquet")
    vocab, arch = WORD_VOCABULARY.for_training(tmp_path, Arch(vocab_size=7))
    assert vocab.itos == [*SPECIAL_TOKENS, "the", "array", "axis"] and arch == Arch(7)
    small, arch = WORD_VOCABULARY.for_training(tmp_path, Arch(vocab_size=50))  # fewer words than asked for
    assert len(small) == 9 and arch == Arch(9)

    model_dir = tmp_path / "model"
    model_dir.mkdir()
    WORD_VOCABULARY.save(small, model_dir, Arch(6))  # the first 6 entries
    assert pq.read_table(model_dir / "vocab.parquet").column("token").to_pylist() == [*SPECIAL_TOKENS, "the", "array"]
    assert WORD_VOCABULARY.load(model_dir, Arch(6)).itos == [*SPECIAL_TOKENS, "the", "array"]
    with pytest.raises(SumpipeError, match=r"model/vocab.parquet: has 6 entries, config.json says 7"):
        WORD_VOCABULARY.load(model_dir, Arch(7))
    with pytest.raises(ValueError, match="vocabulary has 9 entries, the model needs 10"):
        WORD_VOCABULARY.save(small, model_dir, Arch(10))


def test_an_arch_with_oov_rarity_count_keeps_the_counts_after_the_cut(tmp_path: Path):
    Vocabulary.from_counts(COUNTS, size=9).save(tmp_path / "vocab.parquet")
    vocab, _ = WORD_VOCABULARY.for_training(tmp_path, CountingArch(vocab_size=6))
    assert vocab.oov_counts == {"axis": 3, "sorted": 2, "copy": 1}
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    WORD_VOCABULARY.save(vocab, model_dir, CountingArch(6))  # the 6 entries, then the 3 counted words
    assert pq.read_table(model_dir / "vocab.parquet").column("token").to_pylist()[4:] == [
        "the", "array", "axis", "sorted", "copy"]
    loaded = WORD_VOCABULARY.load(model_dir, CountingArch(6))
    assert loaded.itos == vocab.itos and loaded.oov_rarity("axis") == vocab.oov_rarity("axis")
    assert loaded.oov_rarity("axis") < loaded.oov_rarity("copy") == np.float32(loaded.unknown_rarity)
    # an arch at the unknown score reads exactly its vocabulary's rows: more is a damaged folder
    with pytest.raises(SumpipeError, match=r"model/vocab.parquet: has 9 entries, config.json says 6"):
        WORD_VOCABULARY.load(model_dir, CountingArch(6, "unknown"))
    with pytest.raises(SumpipeError, match=r"has 9 entries, config.json says 6"):
        WORD_VOCABULARY.load(model_dir, Arch(6))


def test_vocab_table_of_a_duck_typed_vocabulary():
    class Words:
        itos = [*SPECIAL_TOKENS, "x", "y"]
        rarity = np.array([2.0, 0.0, 1.0, 1.0, 0.5, 0.25], np.float32)

    table = vocab_table(Words(), 5)
    assert table.column_names == ["id", "token", "count", "rarity"]
    assert table.column("token").to_pylist() == [*SPECIAL_TOKENS, "x"]
    assert table.column("count").to_pylist() == [0] * 5
    assert table.column("rarity").to_pylist() == [2.0, 0.0, 1.0, 1.0, 0.5]
