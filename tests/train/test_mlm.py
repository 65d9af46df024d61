"""Masked-LM pre-training: BERT's 15 % / 80-10-10 masking, and a tiny encoder that learns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sumpipe.config import EncoderConfig, TrainConfig
from sumpipe.models.bert import BertForMaskedLM
from sumpipe.names import BOS, EOS, PAD
from sumpipe.subword.pieces import MASK, N_SPECIAL_PIECES
from sumpipe.train.engine import fit, seed_everything
from sumpipe.train.mlm import MLMTask, mlm_mask, source_windows

V = 40


def special_mask() -> torch.Tensor:
    special = torch.zeros(V, dtype=torch.bool)
    special[:N_SPECIAL_PIECES] = True
    return special


def test_masking_proportions_on_a_large_sample() -> None:
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(N_SPECIAL_PIECES, V, (400, 500), generator=g)
    ids[:, 0], ids[:, -1], ids[:, 250] = BOS, EOS, PAD  # specials sprinkled in
    inputs, chosen = mlm_mask(ids, special_mask(), generator=g)
    plain = ~special_mask()[ids]
    n_plain = int(plain.sum())
    assert not chosen[~plain].any()  # never a special piece
    assert torch.equal(inputs[~plain], ids[~plain])
    assert int(chosen.sum()) / n_plain == pytest.approx(0.15, abs=0.003)
    n_chosen = int(chosen.sum())
    masked = chosen & (inputs == MASK)
    changed = chosen & (inputs != MASK) & (inputs != ids)
    # a random replacement draws the original piece again 1 time in 35 (35 non-special pieces)
    assert int(masked.sum()) / n_chosen == pytest.approx(0.80, abs=0.01)
    assert int(changed.sum()) / n_chosen == pytest.approx(0.10 * 34 / 35, abs=0.008)
    assert int((chosen & (inputs == ids)).sum()) / n_chosen == pytest.approx(0.10 + 0.10 / 35, abs=0.008)
    assert not special_mask()[inputs[changed]].any()  # random pieces are never specials either
    assert torch.equal(inputs[~chosen], ids[~chosen])


def test_masking_follows_the_generator() -> None:
    ids = torch.randint(N_SPECIAL_PIECES, V, (4, 50), generator=torch.Generator().manual_seed(1))
    a = mlm_mask(ids, special_mask(), generator=torch.Generator().manual_seed(5))
    b = mlm_mask(ids, special_mask(), generator=torch.Generator().manual_seed(5))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_source_windows_wrap_each_window() -> None:
    windows = source_windows([[5, 6, 7, 8, 9], [10]], max_tokens=5)
    assert [w.tolist() for w in windows] == [[BOS, 5, 6, 7, EOS], [BOS, 8, 9, EOS], [BOS, 10, EOS]]


def pattern_task(batch_size: int = 8) -> MLMTask:
    """Each sequence repeats one random piece: the unmasked neighbours tell what a gap holds, and
    nothing but context can (every piece is equally frequent)."""
    rng = np.random.default_rng(0)

    def sequences(n: int) -> list[np.ndarray]:
        out = []
        for _ in range(n):
            piece = N_SPECIAL_PIECES + int(rng.integers(0, V - N_SPECIAL_PIECES))
            out.append(np.array([BOS, *[piece] * 14, EOS]))
        return out

    special = np.zeros(V, dtype=bool)
    special[:N_SPECIAL_PIECES] = True
    return MLMTask(sequences(96), sequences(16), special, batch_size=batch_size, seed=3, mask_prob=0.15,
                   mask_token_prob=0.8, random_token_prob=0.1)


def test_a_tiny_encoders_mlm_loss_falls() -> None:
    seed_everything(0)
    model = BertForMaskedLM(EncoderConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, max_positions=32), V)
    task = pattern_task()
    cfg = TrainConfig(lr=1e-2, warmup_steps=100, batch_size=8, epochs=12, log_every=12, device="cpu", threads=1,
                      label_smoothing=0.0, patience=None)
    result = fit(model, task, cfg, None, progress=False)
    losses = [r["loss"] for r in result.log_rows]
    assert losses[0] > 2.5  # ~ln(35) before learning
    assert losses[-1] < 0.5 * losses[0]
    valid = [r["valid_loss"] for r in result.log_rows if r["valid_loss"] is not None]
    assert result.position.best_valid_loss < 0.7 * valid[0]  # 34 validation targets: a noisy curve
