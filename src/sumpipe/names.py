"""Names every package shares, written down once.

- The special tokens that open every word vocabulary, with their ids: `<unk>` = 0 (every word
  outside the vocabulary), `<pad>` = 1, `<s>` = 2 (the decoder's first input), `</s>` = 3 (end of
  summary). The vocab stage writes them first; batching, the models and the decoders use the ids.
- The data splits, in the order stages process and report them.
- The training log's file name (`train.engine.write_log`: step, epoch, loss, valid_loss, lr): the
  train stage writes it into each model directory, the numerals experiment into each run; the report
  and `dvc plots` read it.
- The folder of one training seed of a model: `models/M1/seed-2/` holds the model M1 trained with
  seed 2 (run M1-2 of dvc.yaml's train stage), `predictions/M1/seed-2/` its summaries, `checkpoints/M1/seed-2/`
  its resume state.
- The tokens that end a sentence of the text convention (".", "!", "?"): the decoders break the line
  after them and their minimum-length rule counts a sentence end as an end, and evaluate's
  read-quality measures split a summary into sentences at them.
- The file of the summaries decoded without `decode.block_adjacent_repeat` (the decode stage writes it
  beside the predictions when the rule is on; evaluate and the report show both).
- The tokens that end a sentence of the text convention: the decoders break the line after them, and
  evaluate's read-quality measures split a summary into sentences at them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal, get_args

SPECIAL_TOKENS = ("<unk>", "<pad>", "<s>", "</s>")
UNK, PAD, BOS, EOS = range(len(SPECIAL_TOKENS))
N_SPECIALS = len(SPECIAL_TOKENS)

Split = Literal["train", "valid", "test"]  # the type of a split name, for config fields
SPLITS: tuple[Split, ...] = get_args(Split)

TRAIN_LOG_FILE = "train_log.csv"

SENTENCE_END = frozenset({".", "!", "?"})

SEED_PREFIX = "seed-"


def seed_folder(seed: int) -> str:
    """The folder name of training seed `seed`: "seed-2"."""
    return f"{SEED_PREFIX}{seed}"


# A model's training seeds: {model: seeds} (`Params.seeds_by_model`), or one list every model shares
Seeds = Mapping[str, Sequence[int]] | Sequence[int]


def seeds_for(seeds: Seeds, name: str) -> list[int]:
    """Model `name`'s training seeds: from a {model: seeds} mapping (`Params.seeds_by_model`: a model may
    have seeds of its own), or one list that every model shares."""
    return list(seeds.get(name, ())) if isinstance(seeds, Mapping) else list(seeds)


def folder_seed(name: str) -> int | None:
    """The seed a folder name `seed_folder` made holds ("seed-2" -> 2), else None."""
    digits = name.removeprefix(SEED_PREFIX)
    return int(digits) if name.startswith(SEED_PREFIX) and re.fullmatch(r"0|[1-9][0-9]{0,18}", digits) else None


def without_rule_file(split: str) -> str:
    """"test.without-adjacent-block.parquet": split `split` decoded without the adjacent-repeat rule."""
    return f"{split}.without-adjacent-block.parquet"
