"""Linear layers whose CPU matrix products run in OpenBLAS (through NumPy) instead of MKL.

    x (..., in) ──► x·Wᵀ (OpenBLAS sgemm) ──► + b (ATen) ──► y (..., out)
    backward:  ∂x = g·W,  ∂W = gᵀ·x  (OpenBLAS sgemm),  ∂b = Σ g (ATen)

Why: every family's matrix products are its Linear layers and its output projection, and on the CPU
they are half of an update. torch multiplies with MKL, and the same bytes on every x86-64 CPU
(`train.numerics: portable`) need MKL's COMPATIBLE branch, SSE2 code at 30-37 GFLOP/s on one core
at the default model's shapes. OpenBLAS, the BLAS NumPy ships, runs a CPU kind's kernels by name
(`OPENBLAS_CORETYPE`): its Haswell kernels (AVX2 + FMA, fixed blocking) run the same instructions
in the same order on every AVX2 CPU, at 100-107 GFLOP/s there, so portable pins them
(`sumpipe.numerics`) and takes this path. Under `native` the products stay in MKL: on an AMD EPYC
OpenBLAS's own AVX-512 kernels trained M1 1.09 times as fast as MKL, but PG-cov 0.88 and BERT2S
0.81 times (docs/benchmarks.md), and MKL is at its best on Intel CPUs.

Only float32 CPU tensors of a portable process take this path; CUDA, bfloat16, anything inside `torch.compile` and
anything under a dispatch mode (FLOP counters, fake tensors) use `F.linear`. The result is the
same product rounded by another kernel: a model trains other bytes than it did through MKL, and the
same bytes on every run. The bias and its gradient stay in ATen: NumPy's own sums choose SIMD code
by CPU at run time.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import _get_current_dispatch_mode

from sumpipe.numerics import PORTABLE


def _product(a: torch.Tensor, b: np.ndarray) -> torch.Tensor:
    """a (N, K) · b (K, M) in OpenBLAS, as a new float32 tensor (N, M)."""
    return torch.from_numpy(np.matmul(a.detach().numpy(), b))


class _OpenBlasLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = _product(x.reshape(-1, x.shape[-1]), weight.detach().numpy().T)
        if bias is not None:
            y += bias.detach()
        return y.view(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight = ctx.saved_tensors
        g = grad.reshape(-1, grad.shape[-1])
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = _product(g, weight.detach().numpy()).view(x.shape)
        if ctx.needs_input_grad[1]:
            grad_w = _product(g.t(), x.detach().reshape(-1, x.shape[-1]).numpy())
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = g.sum(0)
        return grad_x, grad_w, grad_b


@functools.cache
def _portable() -> bool:
    """Whether this process loaded the portable kernels (`sumpipe.numerics.pin_numerics`): fixed when torch
    and NumPy load, so read once."""
    return all(os.environ.get(name) == value for name, value in PORTABLE.items())


def _takes_openblas(x: torch.Tensor, weight: torch.Tensor) -> bool:
    # a dispatch mode (torch's FLOP counter, fake tensors) sees only ATen calls: it gets F.linear
    return (_portable() and x.device.type == "cpu" and x.dtype == torch.float32 and weight.dtype == torch.float32
            and not torch.is_autocast_enabled("cpu") and not torch.compiler.is_compiling()
            and _get_current_dispatch_mode() is None)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x (..., in) · weight (out, in)ᵀ + bias (out,): `F.linear`, in OpenBLAS on a float32 CPU tensor of a
    process that runs the portable kernels."""
    if _takes_openblas(x, weight):
        return _OpenBlasLinear.apply(x, weight, bias)
    return F.linear(x, weight, bias)


class Linear(nn.Linear):
    """`nn.Linear` (same parameters, initialisation and state dict) whose product is `linear`'s."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)
