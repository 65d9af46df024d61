"""The model card: a model directory's config.json as a typed, validated object (and the encoder
card, its counterpart in the pretrain stage's folder).

    {"format": "sumpipe-model/2", "family": "transformer", "arch": {...}, "vocab_size": 5000,
     "weights_sha256": "...", "name": "M2-200", "seed": 2,
     "input": "ngram200", "spec": {"family", "input", "rarity", "arch"},
     "selection": {"method": "ngram", "tokens": 200, "first_k": 5, "options": {}},
     "dataset": "pydoc", "training": {...}, "family_info": {...}}

`parse_card` validates it like params.yaml (unknown or mistyped keys are one-line errors naming the
key); `arch` stays a mapping here (enough to prepare input text before torch loads), and
`sumpipe.models.io.load_pretrained`, which loads the family anyway, turns it into the family's arch
type. Every consumer (decode, evaluate, report) reads the card, never the raw JSON. A config.json
of another format (an older sumpipe) is a one-line error that says to retrain.

The pretrain stage's folder has a card of its own, `EncoderCard` (`write_encoder_card` /
`read_encoder_card`), validated the same way: what `encoder.safetensors` holds and how it was made.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sumpipe.config import Budget, EncoderConfig, ModelSpec
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.inputs import loads_json, read_capped
from sumpipe.validation import MAX_VOCAB, child_key, from_dict, require

CARD_FORMAT = "sumpipe-model/2"

# The files of a model directory (its layout: `sumpipe.models.io`; the training log's name is
# `sumpipe.names.TRAIN_LOG_FILE`), named here, in a module without torch, so that light readers
# (`sumpipe decode INPUT` before it loads a model) share them.
CARD_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
MANIFEST_FILE = "SHA256SUMS"
MAX_CARD_BYTES = 16 << 20  # a card is a few KB (a pretrained encoder's, with its vocabulary facts, more)
VOCAB_FILE = "vocab.parquet"  # the vocabulary, in the format its family's VocabularyKind writes


@dataclass(frozen=True)
class ModelCard:
    """What a trained model is: family, architecture (the family's arch type), vocabulary size, its
    name and training seed, the input selection it reads (`selection`, None = the whole preprocessed
    text), data set, training summary, and the family's own section. `weights_sha256` is set by
    `save_pretrained`."""

    family: str
    arch: Any
    vocab_size: int
    format: str = CARD_FORMAT
    weights_sha256: str = ""
    name: str = ""
    seed: int | None = None  # the training seed (train.seeds); None: a folder made without one
    input: str = ""  # the extract selection it reads (`ngram200`); "" = the whole text
    spec: ModelSpec = field(default_factory=ModelSpec)
    selection: Budget | None = None
    dataset: str = ""
    training: dict[str, Any] = field(default_factory=dict)
    family_info: dict[str, Any] = field(default_factory=dict)

    @property
    def max_summary_tokens(self) -> int:
        return int(self.arch.max_summary_tokens)

    def check(self, key: str) -> None:
        """The top-level keys that restate the architecture agree with it: `vocab_size` with
        `arch.vocab_size` (where the arch has one; the weights' shapes are checked against the arch),
        `seed` a seed (>= 0; `read_card` holds it to a `seed-<s>` folder's name). Such a card was read
        as valid and its top-level key simply trusted."""
        require(self.vocab_size >= 1, child_key(key, "vocab_size"), "must be >= 1")  # its upper bound: the arch's
        arch_vocab = (self.arch.get("vocab_size") if isinstance(self.arch, dict)
                      else getattr(self.arch, "vocab_size", None))
        require(arch_vocab is None or arch_vocab == self.vocab_size, child_key(key, "vocab_size"),
                f"is {self.vocab_size}, but arch.vocab_size is {arch_vocab}")
        require(self.seed is None or self.seed >= 0, child_key(key, "seed"), "must be >= 0")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def parse_card(data: Any) -> ModelCard:
    """A config.json mapping -> ModelCard (`arch` a mapping); raises a one-line ConfigError."""
    _check_format(data, CARD_FORMAT, "an old or foreign model directory: retrain it, e.g. `dvc repro`")
    return from_dict(ModelCard, data)


def read_card(model_dir: str | os.PathLike) -> ModelCard:
    """The validated card of a model directory (no weights read, `arch` a mapping); a one-line
    SumpipeError naming the file otherwise."""
    from sumpipe.names import folder_seed

    path = Path(model_dir) / CARD_FILE
    card = _read_card_file(path, parse_card, "train the model first, e.g. `dvc repro`")
    named = folder_seed(Path(model_dir).name)  # a seed folder (`seed-2`) holds that seed's run
    if named is not None and card.seed is not None and card.seed != named:
        raise SumpipeError(f"{path}: seed is {card.seed}, but the folder is {Path(model_dir).name}")
    return card


# --------------------------------------------------------------------------------------------
# The encoder card: the pretrain stage's <pretrain>/config.json
# --------------------------------------------------------------------------------------------
ENCODER_FORMAT = "sumpipe-bert-encoder/1"


@dataclass(frozen=True)
class EncoderCard:
    """What the pretrain stage's `encoder.safetensors` holds (the BERT encoder and its MLM head) and how
    it was made.

    `encoder` (the `pretrain.encoder` section it was built with) and `vocab_size` (pieces) rebuild it;
    `weights_sha256` vouches for the weights file; `subword_sha256` is the SHA-256 of the subword model
    it was trained on (bert2stage's warm start refuses another); `init` says where it started (null:
    random weights; else `pretrain.init_from` and `sumpipe.models.hf_bert.load_hf_bert`'s counts);
    `mask_prob`, `max_tokens` and `training` (the engine's training summary) describe the run.
    """

    encoder: EncoderConfig
    vocab_size: int
    subword_sha256: str
    mask_prob: float
    max_tokens: int
    weights_sha256: str = ""  # set by `sumpipe.models.bert.save_encoder`
    init: dict[str, Any] | None = None
    training: dict[str, Any] = field(default_factory=dict)
    format: str = ENCODER_FORMAT

    def check(self, key: str) -> None:
        require(1 <= self.vocab_size <= MAX_VOCAB, child_key(key, "vocab_size"), f"must be in [1, {MAX_VOCAB:,}]")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def write_encoder_card(card: EncoderCard, folder: str | os.PathLike) -> Path:
    """`<folder>/config.json` (atomic, key-sorted JSON)."""
    from sumpipe.io.atomic import write_json

    return write_json(card.to_json(), Path(folder) / CARD_FILE)


def read_encoder_card(folder: str | os.PathLike) -> EncoderCard:
    """The validated encoder card of a pretrain folder; a one-line SumpipeError naming the file otherwise."""

    def parse(data: Any) -> EncoderCard:
        _check_format(data, ENCODER_FORMAT, "an old or foreign encoder folder: run `sumpipe pretrain`")
        return from_dict(EncoderCard, data)

    return _read_card_file(Path(folder) / CARD_FILE, parse, "run `sumpipe pretrain`")


# --------------------------------------------------------------------------------------------
# Shared by both cards
# --------------------------------------------------------------------------------------------
Card = TypeVar("Card")


def _check_format(data: Any, expected: str, why: str) -> None:
    """A one-line ConfigError unless `data` is a mapping of format `expected`; `why` says what to do."""
    if not isinstance(data, dict) or data.get("format") != expected:
        found = data.get("format") if isinstance(data, dict) else None
        raise ConfigError(f"format {found!r} is not {expected!r} ({why})")


def _read_card_file(path: Path, parse: Callable[[Any], Card], missing: str) -> Card:
    """The JSON at `path` through `parse`. A missing file (`missing` says what to run), invalid JSON or
    a ConfigError of `parse` is a one-line SumpipeError naming the file."""
    if not path.is_file():
        raise SumpipeError(f"{path}: no such file ({missing})")
    data = loads_json(read_capped(path, MAX_CARD_BYTES, "a card"), str(path))  # bounded, any nesting: one line
    try:
        return parse(data)
    except ConfigError as exc:
        raise SumpipeError(f"{path}: {exc}") from None
