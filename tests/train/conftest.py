"""Fixtures of the training tests: a tiny extracted selection, vocabulary and params file to train on, and a
kill of a training process once it has checkpointed."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from sumpipe.vocab.vocabulary import Vocabulary

WORDS = "the a cat dog sat on mat ran fast slow red blue big small house tree river bird".split()


def _tiny_split(n: int, seed: int) -> pd.DataFrame:
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(n):
        ids = torch.randint(0, len(WORDS), (int(torch.randint(6, 14, (1,), generator=g)),), generator=g).tolist()
        source = " ".join(WORDS[j] for j in ids) + " zyzzyva"  # one OOV word per source: the pointer's job
        rows.append({"id": f"{seed}-{i}", "source": source, "reference": " ".join(source.split()[:4]),
                     "n_tokens": len(ids) + 1, "selected": [0]})
    return pd.DataFrame(rows)


def _write_fixture(root: Path, **train: object) -> Path:
    """Extracted selection `ngram20`, a vocabulary and a params file, all under `root`."""
    for split, n, seed in (("train", 24, 1), ("valid", 6, 2)):
        path = root / "data/extracted/ngram20" / f"{split}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        _tiny_split(n, seed).to_parquet(path)
    counts = {w: 100 - i for i, w in enumerate(WORDS)}
    (root / "data/vocab").mkdir(parents=True, exist_ok=True)
    Vocabulary.from_counts(counts, 20).save(root / "data/vocab/vocab.parquet")
    params = {
        "paths": {k: str(root / v) for k, v in {"extracted": "data/extracted", "vocab": "data/vocab",
                                                 "models": "models", "checkpoints": "checkpoints",
                                                 "timings": "timings", "dvclive": "dvclive"}.items()},
        "extract": {"budgets": [{"method": "ngram", "tokens": 20, "first_k": 1}]},
        "model": {"d_model": 16, "d_ff": 32, "n_layers": 1, "n_heads": 2, "dropout": 0.1, "vocab_size": 16,
                  "max_source_tokens": 20, "max_summary_tokens": 6},
        "models": {"T1": {"input": "ngram20", "rarity": False},
                   "T2": {"input": "ngram20", "rarity": True, "arch": {"max_source_tokens": 10}}},
        "train": {"batch_size": 4, "epochs": 2, "log_every": 2, "checkpoint_every": 4, "device": "cpu",
                  "lr": 0.01, "warmup_steps": 3, "threads": 1, "seeds": [1], **train},
    }
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def _kill_at_checkpoint(proc: subprocess.Popen, state: Path, sig: int = signal.SIGKILL) -> dict:
    """Wait (at most 240 s) until the training process `proc` has written the checkpoint `state` (or has ended),
    send it `sig` and wait for it; return the checkpoint's position (step, done, ...)."""
    deadline = time.monotonic() + 240
    while not state.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.send_signal(sig)
    proc.wait()
    return torch.load(state, weights_only=True)["position"]


@pytest.fixture(scope="session")
def write_fixture() -> Callable[..., Path]:
    """`write_fixture(root, **train)`: extracted selection `ngram20` (24 train, 6 valid examples), a vocabulary
    and params.yaml (models T1, T2, trained with seed 1; `train` overrides its train section) under `root`;
    returns the params path."""
    return _write_fixture


@pytest.fixture(scope="session")
def kill_at_checkpoint() -> Callable[..., dict]:
    """`kill_at_checkpoint(proc, state, sig=signal.SIGKILL)`: the kill lands mid-run, as soon as the first
    checkpoint `state` exists (a killed `dvc repro`, a scheduler stopping a job); returns its position."""
    return _kill_at_checkpoint
