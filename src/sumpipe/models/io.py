"""Self-contained model directories: weights, architecture and vocabulary, never pickled.

    <model_dir>/model.safetensors   the weights (safetensors; tied tensors stored once)
    <model_dir>/vocab.parquet       the model's vocabulary (a word-vocabulary family: id, token,
                                    count, rarity; another family stores its own, see
                                    `sumpipe.models.registry.VocabularyKind`)
    <model_dir>/config.json         the model card (`sumpipe.models.card.ModelCard`): family,
                                    architecture, input selection, data set, training summary,
                                    and the SHA-256 of the weights file

Each file is written atomically (temp file + rename) and config.json last, carrying the weights'
hash: a directory whose writer died half-way either has the previous complete set or a config
whose hash does not match the weights, which `load_pretrained` reports instead of loading a
mismatched model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch
from safetensors import SafetensorError
from safetensors.torch import load_model

from sumpipe.errors import SumpipeError
from sumpipe.io import write_json, write_weights
from sumpipe.models.card import CARD_FILE, CARD_FORMAT, ModelCard, read_card
from sumpipe.models.registry import get_family

WEIGHTS = "model.safetensors"
CONFIG = CARD_FILE
VOCAB = "vocab.parquet"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def vocab_table(vocab: Any, size: int) -> pa.Table:
    """The first `size` entries of a vocabulary as the `vocab.parquet` table of the data contract."""
    if hasattr(vocab, "to_table"):
        return vocab.to_table().slice(0, size)
    counts = getattr(vocab, "counts", None)
    return pa.table({
        "id": pa.array(np.arange(size, dtype=np.int32)),
        "token": pa.array(list(vocab.itos[:size]), type=pa.string()),
        "count": pa.array(np.zeros(size, np.int64) if counts is None else np.asarray(counts[:size], np.int64)),
        "rarity": pa.array(np.asarray(vocab.rarity[:size], np.float64)),
    })


def save_pretrained(model: torch.nn.Module, model_dir: str | os.PathLike, vocab: Any, card: ModelCard) -> Path:
    """Write weights, vocabulary (the family's `VocabularyKind.save`) and the card into `model_dir`
    (see the module docstring); the card's `weights_sha256` is filled in here."""
    family = get_family(card.family)
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    write_weights(model, model_dir / WEIGHTS, format=CARD_FORMAT)
    family.vocabulary.save(vocab, model_dir, card.arch)
    card = dataclasses.replace(card, weights_sha256=_sha256(model_dir / WEIGHTS))
    write_json(card.to_json(), model_dir / CONFIG)
    return model_dir


def load_pretrained(model_dir: str | os.PathLike, device: str | torch.device = "cpu") -> tuple[Any, Any, ModelCard]:
    """(model in eval mode on `device`, its vocabulary, its ModelCard).

    Every problem (missing directory or file, an old or corrupt config.json, mismatched files) is a
    one-line SumpipeError naming the file.
    """
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise SumpipeError(f"{model_dir}: no such model directory (train it first, e.g. `dvc repro`)")
    for name in (CONFIG, WEIGHTS):
        if not (model_dir / name).is_file():
            raise SumpipeError(f"{model_dir}: incomplete model directory, {name} is missing")
    card = read_card(model_dir)
    if card.weights_sha256 != _sha256(model_dir / WEIGHTS):
        raise SumpipeError(f"{model_dir / WEIGHTS}: does not match config.json (corrupt or half-written)")
    family = get_family(card.family)
    model = family.build(card.arch, card.spec)
    misfit = f"{model_dir / WEIGHTS}: does not fit the architecture in config.json"
    try:
        # Into the CPU model, then one move: loading onto `device` would copy GPU -> CPU -> GPU. The
        # file normally is the one save_pretrained wrote (its hash matched), so its shapes can be wrong;
        # a file that is no safetensors at all (hash rewritten by hand) is never unpickled, only refused.
        missing, unexpected = load_model(model, str(model_dir / WEIGHTS), strict=False)
    except SafetensorError as exc:  # a file whose hash config.json vouches for, yet no safetensors
        raise SumpipeError(f"{model_dir / WEIGHTS}: not a readable safetensors file ({exc})") from None
    except RuntimeError as exc:  # load_state_dict: tensors of the wrong shape
        details = [line.strip() for line in str(exc).splitlines() if "size mismatch" in line]
        raise SumpipeError(f"{misfit} ({details[0] if details else 'shape mismatch'})") from None
    if missing or unexpected:
        raise SumpipeError(f"{misfit} (missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})")
    vocab = family.vocabulary.load(model_dir, card.arch)
    return model.to(device).eval(), vocab, card
