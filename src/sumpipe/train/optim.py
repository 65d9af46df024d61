"""Optimisers and learning-rate schedules of the thesis (§2.1.5, SEEDS.md §1.7).

Four recipes, picked by `train.optimizer`:

- ``adagrad`` — See et al. (2017): AdaGrad with a constant learning rate (`train.lr`, 0.15 in the
  paper) and every accumulator started at `train.adagrad_initial_accumulator` (0.1). No schedule.
- ``adam`` — Vaswani et al. (2017): Adam(β1 0.9, β2 0.98, ε 1e-9) with a linear warm-up followed by
  inverse-square-root decay. Vaswani's formula is
  ``lr(step) = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)``, which peaks at step = warmup with
  ``d_model^-0.5 · warmup^-0.5``. We write it as ``peak · min(step / warmup, sqrt(warmup / step))``
  so that `train.lr` *is* the peak: the two are identical when
  ``train.lr = (d_model · warmup)^-0.5`` (e.g. 7.0e-4 for d_model 512, warm-up 4000).

- ``sgd`` — Hansen & Petersen 2019: plain stochastic gradient descent (lr 0.01, batch 5), optional `train.momentum`.
  Constant rate.
- ``rmsprop`` — Sokol 2022 (Keras): RMSProp with Keras's decay ρ = 0.9 and ε = 1e-7 (torch's defaults are
  0.99 and 1e-8), optional `train.momentum`. Constant rate (Keras's default lr is 0.001).

Steps count from 1 (the first optimizer update uses ``lr(1)``). Gradients are clipped to a global
L2 norm of `train.grad_clip` (0 switches clipping off).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch

from sumpipe.config import TrainConfig

ADAM_BETAS = (0.9, 0.98)
ADAM_EPS = 1e-9
RMSPROP_ALPHA = 0.9  # Keras's rho
RMSPROP_EPS = 1e-7  # Keras's epsilon


def warmup_inverse_sqrt(step: int, warmup_steps: int) -> float:
    """Multiplier of the peak learning rate at optimizer step `step` (1-based).

    Rises linearly to 1 at `warmup_steps`, then decays as sqrt(warmup / step).
    """
    step = max(step, 1)
    warmup_steps = max(warmup_steps, 1)
    return min(step / warmup_steps, math.sqrt(warmup_steps / step))


def build_optimizer(
    parameters: Iterable[torch.nn.Parameter], cfg: TrainConfig
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """The optimizer named by `cfg.optimizer` and its per-step scheduler (call `.step()` after each update)."""
    params = [p for p in parameters if p.requires_grad]
    if cfg.optimizer == "adagrad":
        optimizer: torch.optim.Optimizer = torch.optim.Adagrad(
            params, lr=cfg.lr, initial_accumulator_value=cfg.adagrad_initial_accumulator,
            fused=True if cfg.fused_optimizer else None)
        multiplier = _constant
    elif cfg.optimizer == "sgd":
        optimizer = torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum)
        multiplier = _constant
    elif cfg.optimizer == "rmsprop":
        optimizer = torch.optim.RMSprop(params, lr=cfg.lr, alpha=RMSPROP_ALPHA, eps=RMSPROP_EPS,
                                        momentum=cfg.momentum)
        multiplier = _constant
    else:
        # fused: one kernel over all parameters instead of ~10 per tensor (on CPU, 14 -> 4 ms per update
        # of the default M1, which has 183 mostly small tensors); same update rule
        optimizer = torch.optim.Adam(params, lr=cfg.lr, betas=ADAM_BETAS, eps=ADAM_EPS,
                                     fused=all(p.device.type in ("cpu", "cuda") for p in params))
        multiplier = _WarmupInverseSqrt(cfg.warmup_steps)
    # LambdaLR calls the multiplier with the number of updates done so far (0 before the first),
    # so `+ 1` inside makes update n use lr(n).
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, multiplier)
    return optimizer, scheduler


def _constant(done: int) -> float:
    return 1.0


class _WarmupInverseSqrt:
    """A callable object, not a lambda: LambdaLR.state_dict() then saves its plain attributes."""

    def __init__(self, warmup_steps: int) -> None:
        self.warmup_steps = warmup_steps

    def __call__(self, done: int) -> float:
        return warmup_inverse_sqrt(done + 1, self.warmup_steps)


def clip_gradients(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor | None:
    """Clip the global gradient L2 norm to `max_norm` (0 = off); return the norm before clipping.

    Returns a 0-d tensor (no host sync on a GPU) or None when clipping is off.
    """
    params = [p for p in parameters if p.grad is not None]
    if max_norm <= 0 or not params:
        return None
    return torch.nn.utils.clip_grad_norm_(params, max_norm)
