"""How a model family's vocabulary is made for training, stored in a model directory and read back.

A family names its `VocabularyKind` (`sumpipe.models.registry.Family.vocabulary`); the trainer calls
`for_training`, `sumpipe.models.io.save_pretrained` / `load_pretrained` call `save` / `load`. The word
families (transformer, rnn) share `WORD_VOCABULARY`: the vocab stage's `vocab.parquet`, cut to the
arch's `vocab_size`, stored under the same name in the model directory (`vocab_table`). An arch with
`oov_rarity: count` (M2's rarity of a word outside the vocabulary by its own train count) keeps the
rows after the cut as `Vocabulary.oov_counts`, and its model directory stores them after the
vocabulary's rows; a directory without them reads every such word at the unknown score.

Here, below both the registry and the model-directory code, so that neither has to import the other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sumpipe.errors import SumpipeError
from sumpipe.models.card import VOCAB_FILE
from sumpipe.vocab.vocabulary import VOCAB_FILE as VOCAB_STAGE_FILE
from sumpipe.vocab.vocabulary import Vocabulary


@dataclass(frozen=True)
class VocabularyKind:
    """How a family's vocabulary is made for training, and stored in / read from a model directory.

    `for_training(vocab_dir, arch)` -> (vocabulary, arch with its vocabulary size set);
    `save(vocab, model_dir, arch)`; `load(model_dir, arch)` -> vocabulary (one-line errors)."""

    for_training: Callable[[Path, Any], tuple[Any, Any]]
    save: Callable[[Any, Path, Any], None]
    load: Callable[[Path, Any], Any]


def vocab_table(vocab: Any, size: int) -> pa.Table:
    """The first `size` entries of a vocabulary as the `vocab.parquet` table of the data contract, and
    after them the train counts of the words outside it (`Vocabulary.oov_counts`) when it has exactly
    `size` entries and keeps such counts."""
    if hasattr(vocab, "to_table"):
        table = vocab.to_table()
        return table if len(vocab) == size else table.slice(0, size)
    counts = getattr(vocab, "counts", None)
    return pa.table({
        "id": pa.array(np.arange(size, dtype=np.int32)),
        "token": pa.array(list(vocab.itos[:size]), type=pa.string()),
        "count": pa.array(np.zeros(size, np.int64) if counts is None else np.asarray(counts[:size], np.int64)),
        "rarity": pa.array(np.asarray(vocab.rarity[:size], np.float64)),
    })


# how an arch scores the rarity of a word outside its vocabulary (its `oov_rarity`): by the word's own
# train count, or every such word at the unknown score
OOV_RARITIES = ("count", "unknown")


def _keeps_oov_counts(arch: Any) -> bool:
    return getattr(arch, "oov_rarity", "unknown") == "count"


def _word_vocab_for_training(vocab_dir: Path, arch: Any) -> tuple[Any, Any]:
    vocab = Vocabulary.load(Path(vocab_dir) / VOCAB_STAGE_FILE, size=arch.vocab_size,
                            keep_tail=_keeps_oov_counts(arch))
    return vocab, dataclasses.replace(arch, vocab_size=len(vocab))  # a small corpus may have fewer words


def _word_vocab_save(vocab: Any, model_dir: Path, arch: Any) -> None:
    from sumpipe.io.atomic import write_parquet

    if len(vocab) < arch.vocab_size:
        raise ValueError(f"vocabulary has {len(vocab)} entries, the model needs {arch.vocab_size}")
    write_parquet(vocab_table(vocab, arch.vocab_size), model_dir / VOCAB_FILE)


def _word_vocab_load(model_dir: Path, arch: Any) -> Any:
    if _keeps_oov_counts(arch):  # the vocabulary's rows, then the counts of the words after them
        vocab = Vocabulary.load(model_dir / VOCAB_FILE, size=arch.vocab_size, keep_tail=True)
    else:  # exactly the vocabulary's rows
        vocab = Vocabulary.load(model_dir / VOCAB_FILE)
    if len(vocab) != arch.vocab_size:
        raise SumpipeError(f"{model_dir / VOCAB_FILE}: has {len(vocab)} entries, config.json says {arch.vocab_size}")
    return vocab


# The word vocabulary of the vocab stage (`<paths.vocab>/vocab.parquet`, first `arch.vocab_size` words),
# stored as the model directory's vocab.parquet. Needs an arch field `vocab_size`.
WORD_VOCABULARY = VocabularyKind(_word_vocab_for_training, _word_vocab_save, _word_vocab_load)
