"""The summarization task's loss: `<unk>` targets' weight and the copy-attention term, on planted outputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sumpipe.models.batching import Example, collate
from sumpipe.models.task import SummarizationTask
from sumpipe.names import BOS, EOS, UNK

V = 6


def _example() -> Example:
    # source: word 4, OOV "zeta" (extended id V), word 5; summary: "zeta", an OOV the source lacks, word 4
    src_ext = np.array([4, V, 5])
    return Example("a", np.array([4, UNK, 5]), src_ext, np.zeros(3, np.float32), np.array([BOS, UNK, UNK, 4]),
                   np.array([V, UNK, 4, EOS]), ["zeta"])


class Planted(torch.nn.Module):
    """Uniform log P over the V + 1 extended columns; copy attention [0.5, 0.25, 0.25] at every position."""

    def forward(self, batch, targets_only: bool = False, with_info: bool = False):
        n = int(batch.trg_positions.numel())
        log_probs = torch.full((n, V + 1), -math.log(V + 1))
        info = {"attn": torch.tensor([[0.5, 0.25, 0.25]]).expand(n, 3)}
        return (log_probs, info) if with_info else log_probs


def _task(unk: float, copy: float, copy_target: float = 1.0) -> SummarizationTask:
    return SummarizationTask([], [], batch_size=1, seed=1, label_smoothing=0.0, vocab_size=V,
                             unk_target_weight=unk, copy_attention_weight=copy, copy_target_weight=copy_target)


def test_the_loss_by_hand() -> None:
    batch = collate([_example()])
    nll = math.log(V + 1)  # every target's −log P
    total, n = _task(1.0, 0.0).loss(Planted(), batch)
    assert n.item() == 4 and total.item() == pytest.approx(4 * nll, rel=1e-6)
    total, n = _task(0.0, 0.0).loss(Planted(), batch)  # the <unk> target drops out
    assert n.item() == 3 and total.item() == pytest.approx(3 * nll, rel=1e-6)
    # + λ·(−log a at "zeta"'s position 1 − log a at word 4's position 0); <unk> and </s> are not in the source
    total, n = _task(0.0, 2.0).loss(Planted(), batch)
    assert n.item() == 3
    assert total.item() == pytest.approx(3 * nll + 2.0 * (-math.log(0.25) - math.log(0.5)), rel=1e-6)


def test_copied_targets_weighted() -> None:
    # "zeta" (extended id V) counts 3 times: total 3 + 1 + 1 (+ the <unk> target at weight 1)
    batch = collate([_example()])
    nll = math.log(V + 1)
    total, n = _task(1.0, 0.0, copy_target=3.0).loss(Planted(), batch)
    assert n.item() == pytest.approx(6.0) and total.item() == pytest.approx(6 * nll, rel=1e-6)
    total, n = _task(0.0, 0.0, copy_target=3.0).loss(Planted(), batch)
    assert n.item() == pytest.approx(5.0) and total.item() == pytest.approx(5 * nll, rel=1e-6)
