"""Optimisers and schedules: hand-computed learning rates, AdaGrad as See et al., clipping."""

from __future__ import annotations

import math

import pytest
import torch

from sumpipe.config import TrainConfig
from sumpipe.train.optim import build_optimizer, clip_gradients, warmup_inverse_sqrt


def lrs_of_updates(cfg: TrainConfig, n: int) -> list[float]:
    """The learning rate each of the first n updates uses."""
    p = torch.nn.Parameter(torch.zeros(2))
    optimizer, scheduler = build_optimizer([p], cfg)
    out = []
    for _ in range(n):
        out.append(optimizer.param_groups[0]["lr"])
        p.grad = torch.ones(2)
        optimizer.step()
        scheduler.step()
    return out


def test_adam_warmup_then_inverse_sqrt_peaks_at_train_lr() -> None:
    cfg = TrainConfig(optimizer="adam", lr=1e-3, warmup_steps=4)
    lrs = lrs_of_updates(cfg, 16)
    # step/warmup · peak while warming up: 1/4, 2/4, 3/4, 1 of 1e-3; then sqrt(4/step) · 1e-3
    assert lrs[:4] == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3])
    assert lrs[7] == pytest.approx(1e-3 * math.sqrt(4 / 8))  # update 8: 7.0711e-4
    assert lrs[15] == pytest.approx(5e-4)  # update 16: sqrt(4/16) = 1/2
    assert max(lrs) == pytest.approx(1e-3)


def vaswani_lr(step: int, d_model: int, warmup_steps: int) -> float:
    """Vaswani et al.'s formula as printed: d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    return d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def test_peak_form_equals_vaswani_formula() -> None:
    # peak (d · warmup)^-0.5
    d_model, warmup = 512, 4000
    peak = (d_model * warmup) ** -0.5
    assert peak == pytest.approx(6.9877e-4, rel=1e-4)
    for step in (1, 100, 3999, 4000, 4001, 20000, 100000):
        assert peak * warmup_inverse_sqrt(step, warmup) == pytest.approx(vaswani_lr(step, d_model, warmup))
    assert vaswani_lr(4000, 512, 4000) == pytest.approx(512 ** -0.5 * 4000 ** -0.5)


def test_adam_uses_vaswani_betas() -> None:
    optimizer, _ = build_optimizer([torch.nn.Parameter(torch.zeros(1))], TrainConfig(optimizer="adam"))
    assert isinstance(optimizer, torch.optim.Adam)
    assert optimizer.param_groups[0]["betas"] == (0.9, 0.98)
    assert optimizer.param_groups[0]["eps"] == 1e-9


def test_adagrad_as_see_et_al() -> None:
    cfg = TrainConfig(optimizer="adagrad", lr=0.15, adagrad_initial_accumulator=0.1)
    p = torch.nn.Parameter(torch.zeros(1))
    optimizer, scheduler = build_optimizer([p], cfg)
    assert isinstance(optimizer, torch.optim.Adagrad)
    assert optimizer.param_groups[0]["initial_accumulator_value"] == 0.1
    assert lrs_of_updates(cfg, 5) == pytest.approx([0.15] * 5)  # constant: no schedule
    # one update by hand: accumulator 0.1 + g² = 0.1 + 4 = 4.1; step = 0.15 · 2 / (√4.1 + 1e-10)
    p.grad = torch.tensor([2.0])
    optimizer.step()
    scheduler.step()
    assert p.item() == pytest.approx(-0.15 * 2 / math.sqrt(4.1), rel=1e-6)


def test_gradient_clipping_caps_the_global_norm() -> None:
    a, b = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(1))
    a.grad, b.grad = torch.tensor([3.0, 0.0]), torch.tensor([4.0])  # global norm 5
    norm = clip_gradients([a, b], 1.0)
    assert norm.item() == pytest.approx(5.0)
    assert torch.allclose(torch.cat([a.grad, b.grad]), torch.tensor([0.6, 0.0, 0.8]), atol=1e-6)
    a.grad = torch.tensor([3.0, 0.0])
    assert clip_gradients([a], 0.0) is None and a.grad[0].item() == 3.0  # 0 switches clipping off


def test_scheduler_state_dict_is_plain_data() -> None:
    _, scheduler = build_optimizer([torch.nn.Parameter(torch.zeros(1))], TrainConfig(optimizer="adam",
                                                                                         warmup_steps=7))
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"warmup_steps": 7}]


def one_update(cfg: TrainConfig, grads: list[list[float]]) -> torch.Tensor:
    """The parameter (started at 0) after one update per gradient in `grads`."""
    p = torch.nn.Parameter(torch.zeros(2))
    optimizer, scheduler = build_optimizer([p], cfg)
    for g in grads:
        p.grad = torch.tensor(g)
        optimizer.step()
        scheduler.step()
    return p.detach()


def test_sgd_is_plain_gradient_descent_at_a_constant_rate() -> None:
    # Hansen & Petersen 2019: SGD, lr 0.01; two updates: -0.01·(1 + 3) and -0.01·(-2 + 0)
    p = one_update(TrainConfig(optimizer="sgd", lr=0.01), [[1.0, -2.0], [3.0, 0.0]])
    torch.testing.assert_close(p, torch.tensor([-0.04, 0.02]))
    with_momentum = one_update(TrainConfig(optimizer="sgd", lr=0.01, momentum=0.5), [[1.0, 0.0], [1.0, 0.0]])
    assert with_momentum[0].item() == pytest.approx(-0.01 - 0.01 * 1.5)  # buffer 1, then 0.5·1 + 1


def test_rmsprop_uses_keras_decay_and_epsilon() -> None:
    # v = 0.9·v + 0.1·g²; p -= lr·g / (sqrt(v) + 1e-7). First update: v = 0.1·g², step = lr / sqrt(0.1)
    p = one_update(TrainConfig(optimizer="rmsprop", lr=0.001), [[2.0, -0.5]])
    step = 0.001 * 2.0 / (math.sqrt(0.1 * 4.0) + 1e-7)
    torch.testing.assert_close(p, torch.tensor([-step, step]))
    # second update with g = 0: v = 0.9·0.1·g1², p moves 0
    p2 = one_update(TrainConfig(optimizer="rmsprop", lr=0.001), [[2.0, -0.5], [0.0, 0.0]])
    torch.testing.assert_close(p2, p)
    assert lrs_of_updates(TrainConfig(optimizer="rmsprop", lr=0.001), 3) == [0.001] * 3


def test_fused_adagrad_trains_to_the_same_losses_as_the_per_tensor_loop() -> None:
    # train.fused_optimizer swaps the kernel, not the rule; a small regression in float32
    def losses(fused: bool) -> list[float]:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
        x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
        cfg = TrainConfig(optimizer="adagrad", lr=0.15, fused_optimizer=fused)
        optimizer, _ = build_optimizer(model.parameters(), cfg)
        assert optimizer.param_groups[0]["fused"] is (True if fused else None)
        out = []
        for _ in range(20):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            out.append(loss.item())
        return out

    plain, fused = losses(False), losses(True)
    assert plain[-1] < plain[0] - 0.25  # it learns (1.056 -> 0.779)
    assert fused == pytest.approx(plain, abs=1e-5)
