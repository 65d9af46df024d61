"""The model card: a model directory's config.json as a typed, validated object.

    {"format": "sumpipe-model/2", "family": "transformer", "arch": {...}, "vocab_size": 5000,
     "weights_sha256": "...", "name": "M2-200", "input": "ngram200", "spec": {"family", "input", "rarity", "arch"},
     "selection": {"method": "ngram", "tokens": 200, "first_k": 5, "options": {}},
     "dataset": "pydoc", "training": {...}, "family_info": {...}}

`parse_card` validates it like params.yaml (unknown or mistyped keys are one-line errors naming the
key) and turns `arch` into the family's arch type; every consumer (decode, evaluate, report) reads
the card, never the raw JSON. A config.json of another format (an older sumpipe) is a one-line
error that says to retrain.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sumpipe.config import Budget, ModelSpec, from_dict
from sumpipe.errors import ConfigError, SumpipeError

CARD_FORMAT = "sumpipe-model/2"

# The files of a model directory (its layout: `sumpipe.models.io`), named here, in a module without
# torch, so that light readers (`sumpipe decode INPUT` before it loads a model, the report) share them.
CARD_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
MANIFEST_FILE = "SHA256SUMS"
TRAIN_LOG_FILE = "train_log.csv"  # the training log (step, epoch, loss, valid_loss, lr): `train.engine.write_log`


@dataclass(frozen=True)
class ModelCard:
    """What a trained model is: family, architecture (the family's arch type), vocabulary size, the
    input selection it reads (`selection`, None = the whole preprocessed text), data set, training
    summary, and the family's own section. `weights_sha256` is set by `save_pretrained`."""

    family: str
    arch: Any
    vocab_size: int
    format: str = CARD_FORMAT
    weights_sha256: str = ""
    name: str = ""
    input: str = ""  # the extract selection it reads (`ngram200`); "" = the whole preprocessed text
    spec: ModelSpec = field(default_factory=ModelSpec)
    selection: Budget | None = None
    dataset: str = ""
    training: dict[str, Any] = field(default_factory=dict)
    family_info: dict[str, Any] = field(default_factory=dict)

    @property
    def max_summary_tokens(self) -> int:
        return int(self.arch.max_summary_tokens)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def parse_card(data: Any, with_family: bool = True) -> ModelCard:
    """A config.json mapping -> ModelCard; raises a one-line ConfigError. With `with_family`, `arch`
    becomes the family's arch type (this imports the family, torch included); without, it stays a
    mapping (enough to prepare input text before torch loads)."""
    if not isinstance(data, dict) or data.get("format") != CARD_FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ConfigError(f"format {found!r} is not {CARD_FORMAT!r} (an old or foreign model directory: "
                          "retrain it, e.g. `dvc repro`)")
    card = from_dict(ModelCard, data)
    if not with_family:
        return card
    from sumpipe.models.registry import get_family

    family = get_family(card.family)
    return dataclasses.replace(card, arch=family.arch_from(card.arch, "arch"))


def read_card(model_dir: str | os.PathLike, with_family: bool = True) -> ModelCard:
    """The validated card of a model directory (no weights read); a one-line SumpipeError otherwise."""
    path = Path(model_dir) / CARD_FILE
    if not path.is_file():
        raise SumpipeError(f"{path}: no such file (train the model first, e.g. `dvc repro`)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise SumpipeError(f"{path}: not valid JSON") from None
    try:
        return parse_card(data, with_family)
    except ConfigError as exc:
        raise SumpipeError(f"{path}: {exc}") from None
