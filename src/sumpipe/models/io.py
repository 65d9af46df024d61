"""Self-contained model directories: weights, architecture and vocabulary, never pickled.

    <model_dir>/model.safetensors   the weights (safetensors; tied tensors stored once)
    <model_dir>/vocab.parquet       the model's vocabulary slice (id, token, count, rarity)
    <model_dir>/config.json         architecture + rarity flag + whatever the trainer adds
                                    (spec, data set, input selection, training summary) and the
                                    SHA-256 of the weights file

Each file is written atomically (temp file + rename) and config.json last, carrying the weights'
hash: a directory whose writer died half-way either has the previous complete set or a config
whose hash does not match the weights, which `load_pretrained` reports instead of loading a
mismatched model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch
from safetensors import SafetensorError
from safetensors.torch import load_model, save_model

from sumpipe.config import ArchConfig, from_dict
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.io import atomic_path, read_json, write_json, write_parquet
from sumpipe.models.transformer import PointerGeneratorTransformer

WEIGHTS = "model.safetensors"
CONFIG = "config.json"
VOCAB = "vocab.parquet"
FORMAT = "sumpipe-pointer-generator-transformer/1"
_RESERVED = ("format", "arch", "rarity", "vocab_size", "weights_sha256")


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


def save_pretrained(
    model: PointerGeneratorTransformer,
    model_dir: str | os.PathLike,
    vocab: Any,
    extra_config: dict[str, Any] | None = None,
) -> Path:
    """Write weights, vocabulary and config.json into `model_dir` (see the module docstring).

    `extra_config` is merged into config.json at the top level (keys `format`, `arch`, `rarity`,
    `vocab_size` and `weights_sha256` are reserved). The vocabulary must have at least
    `model.vocab_size` entries; only that many are written.
    """
    extra = dict(extra_config or {})
    clash = sorted(set(extra) & set(_RESERVED))
    if clash:
        raise ValueError(f"extra_config may not set reserved keys {clash}")
    if len(vocab) < model.vocab_size:
        raise ValueError(f"vocabulary has {len(vocab)} entries, the model needs {model.vocab_size}")
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(model_dir / WEIGHTS) as tmp:
        save_model(model, str(tmp), metadata={"format": FORMAT})
    write_parquet(vocab_table(vocab, model.vocab_size), model_dir / VOCAB)
    config = {
        "format": FORMAT,
        "arch": dataclasses.asdict(model.arch),
        "rarity": model.rarity,
        "vocab_size": model.vocab_size,
        "weights_sha256": _sha256(model_dir / WEIGHTS),
        **extra,
    }
    write_json(config, model_dir / CONFIG)
    return model_dir


def model_from_config(config: dict[str, Any]) -> PointerGeneratorTransformer:
    """An untrained model with the architecture a config.json describes."""
    arch = from_dict(ArchConfig, config.get("arch"), "arch")
    return PointerGeneratorTransformer(arch, rarity=bool(config.get("rarity", False)))


def load_pretrained(
    model_dir: str | os.PathLike, device: str | torch.device = "cpu"
) -> tuple[PointerGeneratorTransformer, Any, dict[str, Any]]:
    """(model in eval mode on `device`, its Vocabulary, the config.json dict).

    Every problem (missing directory or file, unreadable or mismatched files) is a one-line
    SumpipeError naming the directory.
    """
    from sumpipe.vocab.vocabulary import Vocabulary

    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise SumpipeError(f"{model_dir}: no such model directory (train it first, e.g. `dvc repro`)")
    for name in (CONFIG, WEIGHTS, VOCAB):
        if not (model_dir / name).is_file():
            raise SumpipeError(f"{model_dir}: incomplete model directory, {name} is missing")
    try:
        config = read_json(model_dir / CONFIG)
    except json.JSONDecodeError:
        raise SumpipeError(f"{model_dir / CONFIG}: not valid JSON") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise SumpipeError(f"{model_dir / CONFIG}: not a sumpipe model config (expected format {FORMAT})")
    if config.get("weights_sha256") != _sha256(model_dir / WEIGHTS):
        raise SumpipeError(f"{model_dir / WEIGHTS}: does not match config.json (corrupt or half-written)")
    try:
        model = model_from_config(config)
    except ConfigError as exc:
        raise SumpipeError(f"{model_dir / CONFIG}: {exc}") from None
    misfit = f"{model_dir / WEIGHTS}: does not fit the architecture in config.json"
    try:
        # into the CPU model, then one move: loading onto `device` would copy GPU -> CPU -> GPU
        missing, unexpected = load_model(model, str(model_dir / WEIGHTS), strict=False)
    except (SafetensorError, OSError) as exc:
        raise SumpipeError(f"{model_dir / WEIGHTS}: cannot be read ({str(exc).splitlines()[0]})") from None
    except RuntimeError as exc:  # load_state_dict: tensors of the wrong shape
        details = [line.strip() for line in str(exc).splitlines() if "size mismatch" in line]
        raise SumpipeError(f"{misfit} ({details[0] if details else 'shape mismatch'})") from None
    if missing or unexpected:
        raise SumpipeError(f"{misfit} (missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})")
    vocab = Vocabulary.load(model_dir / VOCAB)
    if len(vocab) != model.vocab_size:
        raise SumpipeError(f"{model_dir / VOCAB}: has {len(vocab)} entries, config.json says {model.vocab_size}")
    return model.to(device).eval(), vocab, config
