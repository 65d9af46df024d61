"""Training the recurrent family: its loss (NLL + λ·coverage) and See et al.'s coverage phase.

Loss per target token t (See et al. Eqn 13): −log P(w*_t) + λ·Σ_i min(a^t_i, c^t_i), the first term
label-smoothed like every family's (`train.label_smoothing`, 0 in See et al.), padding ignored. A model
without the pointer cannot produce a copied word, so its targets read extended ids as `<unk>`.

The coverage phase (`arch.coverage_phase_steps`): See et al. train the pointer-generator without
coverage (230k updates), then switch coverage on for a short final phase (3k updates) because coverage
from the start "did not help". `fit_rnn` runs the two phases as two `engine.fit` calls with their own
checkpoint folders (`<checkpoint_dir>/main`, `<checkpoint_dir>/coverage`), so a kill in either phase
resumes exactly: a finished first phase is recognised from its checkpoint and only its best weights are
loaded back. The coverage phase starts from those weights with a fresh optimizer, runs
`coverage_phase_steps` updates (epochs as needed) and keeps its own best-validation weights (the
validation loss then includes the coverage term).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

import torch

from sumpipe.config import TrainConfig
from sumpipe.models.loss import label_smoothed_nll
from sumpipe.models.protocol import UNK
from sumpipe.models.rnn import RNNSummarizer
from sumpipe.train.engine import FitResult, fit
from sumpipe.train.task import SummarizationTask

MAIN_PHASE, COVERAGE_PHASE = "main", "coverage"


class RNNSummarizationTask(SummarizationTask):
    """`SummarizationTask` whose loss adds See et al.'s coverage term when the model's coverage is on."""

    def __init__(self, *args: Any, pointer: bool, coverage_weight: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pointer, self.coverage_weight = pointer, coverage_weight

    def loss(self, model: torch.nn.Module, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(Σ over target tokens of the label-smoothed NLL + λ·covloss, target-token count)."""
        out = model(batch, steps=True)  # through __call__, so a DDP wrapper syncs the gradients
        target = batch.trg_ext if self.pointer else batch.trg_ext.masked_fill(batch.trg_ext >= self.vocab_size, UNK)
        mean, n_tokens = label_smoothed_nll(out.log_probs, target, batch.trg_mask,
                                            smoothing=self.label_smoothing, n_smooth=self.vocab_size)
        total = mean * n_tokens
        if out.coverage_loss is not None and self.coverage_weight > 0:
            total = total + self.coverage_weight * torch.where(batch.trg_mask, out.coverage_loss.float(), 0.0).sum()
        return total, n_tokens


def fit_rnn(
    model: RNNSummarizer,
    task: RNNSummarizationTask,
    cfg: TrainConfig,
    checkpoint_dir: Path | None,
    *,
    fingerprint: str = "",
    resume: bool = True,
    should_stop: Callable[[Any], bool] | None = None,
    **fit_kwargs: Any,
) -> list[FitResult]:
    """Train per `cfg`, then the coverage phase when `model.arch.coverage_phase_steps` is set.

    Returns one FitResult per phase run. `should_stop` (tests: simulated kills) applies to both.
    """
    steps = model.arch.coverage_phase_steps
    if steps is None:
        return [fit(model, task, cfg, checkpoint_dir, fingerprint=fingerprint, resume=resume,
                    should_stop=should_stop, **fit_kwargs)]
    sub = (lambda name: None) if checkpoint_dir is None else (lambda name: Path(checkpoint_dir) / name)
    model.set_coverage(False)
    main = fit(model, task, cfg, sub(MAIN_PHASE), fingerprint=f"{fingerprint}/{MAIN_PHASE}", resume=resume,
               should_stop=should_stop, **fit_kwargs)
    if main.stopped_early:
        return [main]
    model.set_coverage(True)
    phase_cfg = dataclasses.replace(cfg, max_steps=steps, epochs=max(cfg.epochs, _epochs_for(task, steps)),
                                    patience=None)
    coverage = fit(model, task, phase_cfg, sub(COVERAGE_PHASE), fingerprint=f"{fingerprint}/{COVERAGE_PHASE}",
                   resume=resume, should_stop=should_stop, **fit_kwargs)
    return [main, coverage]


def _epochs_for(task: RNNSummarizationTask, steps: int) -> int:
    """Epochs that hold at least `steps` updates."""
    per_epoch = max(len(task.epoch_batches(0)), 1)
    return -(-steps // per_epoch)
