"""Checkpoints for exact resume: everything a killed run needs to continue bit for bit.

A checkpoint directory holds two files, each written atomically (temporary file + rename, so a
kill leaves either the old or the new file, never half of one):

- ``state.pt`` — `torch.save` of a dict of tensors and plain Python values only: model, optimizer
  and scheduler state dicts; the weight average of `train.ema_decay` when there is one; RNG
  states (Python `random`, NumPy, torch CPU, every CUDA device; one set per DDP rank); the data
  position (epoch, next batch index within it, optimizer steps done); the best validation loss so
  far and its step; the training-log rows so far; a fingerprint of the run's configuration and
  inputs; and whether training finished. It is read back only with
  ``torch.load(weights_only=True)``, which refuses anything but tensors and primitives.
- ``best.safetensors`` — the weights with the lowest validation loss so far (safetensors).

The batch order is a pure function of (seed, epoch), so the data position is two integers: a
resumed run rebuilds the epoch's batch list and skips to the saved index.
"""

from __future__ import annotations

import json
import pickle
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import atomic_path
from sumpipe.io.bookkeeping import check_replaceable, remove, require_folder
from sumpipe.io.native import native_write_errors
from sumpipe.io.weights import read_weights, write_weights

STATE_FILE = "state.pt"
BEST_FILE = "best.safetensors"
FORMAT_VERSION = 1
# what each file holds, for the one-line errors of `sumpipe.io.bookkeeping`
_WHAT = {STATE_FILE: "the resume checkpoint", BEST_FILE: "the best weights so far (resume checkpoint)"}


@dataclass
class Position:
    """Where training stands: `step` updates done; the next batch is `batch` of epoch `epoch` (0-based)."""

    step: int = 0
    epoch: int = 0
    batch: int = 0
    best_valid_loss: float | None = None
    best_step: int | None = None
    best_valid_accuracy: float | None = None  # with train.early_stopping_metric: accuracy
    done: bool = False
    stale_epochs: int = 0  # epochs since the early-stopping metric last improved
    log_rows: list[dict[str, Any]] = field(default_factory=list)
    interval: list[float] = field(default_factory=list)  # the open logging interval's running sums


# --------------------------------------------------------------------------------------------
# RNG states
# --------------------------------------------------------------------------------------------
def capture_rng() -> dict[str, Any]:
    """Every random-number generator a training step can touch, as tensors and primitives."""
    state = np.random.get_state()  # legacy form: a tuple for np.random's global MT19937 generator
    assert isinstance(state, tuple), "np.random's global generator is not MT19937"
    kind, keys, pos, has_gauss, cached = state
    return {
        "python": random.getstate(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def restore_rng(state: dict[str, Any]) -> None:
    """Inverse of `capture_rng`."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    np_state = state["numpy"]
    np.random.set_state((np_state["kind"], np_state["keys"].numpy().astype(np.uint32), np_state["pos"],
                         np_state["has_gauss"], np_state["cached_gaussian"]))
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# --------------------------------------------------------------------------------------------
# Save / load
# --------------------------------------------------------------------------------------------
def save_checkpoint(
    directory: Path,
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    position: Position,
    rng_states: list[dict[str, Any]],
    fingerprint: str,
    average: torch.nn.Module | None = None,
) -> Path:
    """Write `directory/state.pt` atomically; `rng_states` has one entry per rank (rank 0 first);
    `average` is the running weight average (`train.ema_decay`), when training keeps one."""
    state = {
        "format": FORMAT_VERSION,
        "fingerprint": fingerprint,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": rng_states,
        "position": _canonical(asdict(position)),
    }
    if average is not None:
        state["average"] = average.state_dict()
    path = Path(directory) / STATE_FILE
    with atomic_path(path) as tmp, native_write_errors(), open(tmp, "wb") as f:
        # a file object, not the path: given a path, torch.save names the zip's top folder after the
        # file (here a random temporary name), so equal states would give different bytes and the
        # checkpoint folder's hash in dvc.lock would change on every rerun
        torch.save(state, f)
    return path


def _canonical(value: dict[str, Any]) -> dict[str, Any]:
    """`value` rebuilt from JSON, so that equal positions pickle to equal bytes: pickle writes a string
    once per distinct object, and a resumed run's log rows (unpickled from the checkpoint, one key
    object per row) would otherwise be written differently from a straight run's (shared literals)."""
    return json.loads(json.dumps(value))


def load_checkpoint(directory: Path, fingerprint: str) -> dict[str, Any] | None:
    """The saved state when `directory` holds one for this exact run (same fingerprint), else None."""
    path = Path(directory) / STATE_FILE
    if not path.is_file():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, pickle.UnpicklingError, EOFError, OSError) as exc:  # truncated, foreign, unsafe
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SumpipeError(f"{path}: unreadable checkpoint ({reason}); delete it, or train with --no-resume") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT_VERSION or state.get("fingerprint") != fingerprint:
        return None
    return state


def restore_checkpoint(
    state: dict[str, Any],
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    average: torch.nn.Module | None = None,
    rank: int = 0,
) -> Position:
    """Load a `load_checkpoint` result into live objects; return the data position to continue from."""
    model.load_state_dict(state["model"])
    if average is not None:  # the fingerprint covers train.ema_decay: a run with an average saved one
        average.load_state_dict(state["average"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    rng = state["rng"]
    if rank < len(rng):
        restore_rng(rng[rank])
    return Position(**state["position"])


def save_best(directory: Path, model: torch.nn.Module) -> Path:
    """Write the current weights as `directory/best.safetensors` (atomic)."""
    return write_weights(model, Path(directory) / BEST_FILE)


def load_best(directory: Path, model: torch.nn.Module) -> bool:
    """Load `best.safetensors` into `model` when present, in place (whatever the device and the layout of
    its tensors: `read_weights`); return whether it was."""
    path = Path(directory) / BEST_FILE
    if not path.is_file():
        return False
    try:
        read_weights(model, path)
    except (SafetensorError, RuntimeError) as exc:  # a damaged file, or another run's shapes
        raise SumpipeError(f"{path}: cannot be loaded ({(str(exc).splitlines() or [''])[0]}); delete {directory} "
                           "to train afresh") from None
    return True


def check_checkpoint_dir(directory: Path) -> Path:
    """Before training: `directory` can hold a checkpoint (it exists or can be created, takes a file, and
    neither file's path is a folder); one-line errors (`sumpipe.io.bookkeeping`)."""
    directory = require_folder(directory, "the resume checkpoint folder")
    for name, what in _WHAT.items():
        check_replaceable(directory / name, what)
    return directory


def clear_checkpoint(directory: Path) -> None:
    """Remove a stale checkpoint (another configuration or input) before starting afresh; a link is
    removed, not what it leads to, and a folder in a file's place is refused, never deleted."""
    for name, what in _WHAT.items():
        remove(Path(directory) / name, what)
