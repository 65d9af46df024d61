"""Names every package shares, written down once.

- The special tokens that open every word vocabulary, with their ids: `<unk>` = 0 (every word
  outside the vocabulary), `<pad>` = 1, `<s>` = 2 (the decoder's first input), `</s>` = 3 (end of
  summary). The vocab stage writes them first; batching, the models and the decoders use the ids.
- The data splits, in the order stages process and report them.
- The training log's file name (`train.engine.write_log`: step, epoch, loss, valid_loss, lr): the
  train stage writes it into each model directory, the numerals experiment into each run; the report
  and `dvc plots` read it.
"""

from __future__ import annotations

from typing import Literal, get_args

SPECIAL_TOKENS = ("<unk>", "<pad>", "<s>", "</s>")
UNK, PAD, BOS, EOS = range(len(SPECIAL_TOKENS))
N_SPECIALS = len(SPECIAL_TOKENS)

Split = Literal["train", "valid", "test"]  # the type of a split name, for config fields
SPLITS: tuple[Split, ...] = get_args(Split)

TRAIN_LOG_FILE = "train_log.csv"
