"""Matrix products that run in OpenBLAS (through NumPy) instead of MKL: Linear layers and attention's.

    x (..., in) ──► x·Wᵀ (OpenBLAS sgemm) ──► + b (ATen) ──► y (..., out)
    backward:  ∂x = g·W,  ∂W = gᵀ·x  (OpenBLAS sgemm),  ∂b = Σ g (ATen)

    a (..., N, K) · b (..., K, M) ──► (..., N, M)   one sgemm per matrix of the batch
    backward:  ∂a = g·bᵀ,  ∂b = aᵀ·g

Why: every family's matrix products are its Linear layers, its output projection and its attention
(scores q·kᵀ and the context weights·v), and on the CPU they are most of an update. torch multiplies
with MKL, and the same bytes on every x86-64 CPU (`train.numerics: portable`) need MKL's COMPATIBLE
branch, SSE2 code at 30-37 GFLOP/s on one core at the default model's shapes. OpenBLAS, the BLAS
NumPy ships, runs a CPU kind's kernels by name (`OPENBLAS_CORETYPE`): its Haswell kernels (AVX2 +
FMA, fixed blocking) run the same instructions in the same order on every AVX2 CPU, at 100-107
GFLOP/s there, so portable pins them (`sumpipe.numerics`) and takes this path. Under `native` the
products stay in MKL: on an AVX-512 CPU OpenBLAS's own AVX-512 kernels trained M1 1.09 times as fast
as MKL, but PG-cov 0.88 and BERT2S 0.81 times (docs/benchmarks.md), and MKL is at its best on Intel
CPUs.

Only float32 CPU tensors of a portable process take this path (`openblas_path`); CUDA, bfloat16,
anything inside `torch.compile` and anything under a dispatch mode (FLOP counters, fake tensors) use
`F.linear` and `torch.matmul`. The result is the same product rounded by another kernel: a model
trains other bytes than it did through MKL, and the same bytes on every run. The bias and its
gradient stay in ATen: NumPy's own sums choose SIMD code by CPU at run time.
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


class _OpenBlasMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        return torch.from_numpy(np.matmul(a.detach().numpy(), b.detach().numpy()))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        a, b = ctx.saved_tensors
        g = grad.detach().numpy()
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:  # NumPy hands a transposed operand to sgemm as transposed: no copy
            grad_a = torch.from_numpy(np.matmul(g, b.detach().numpy().swapaxes(-1, -2)))
        if ctx.needs_input_grad[1]:
            grad_b = torch.from_numpy(np.matmul(a.detach().numpy().swapaxes(-1, -2), g))
        return grad_a, grad_b


@functools.cache
def _portable() -> bool:
    """Whether this process loaded the portable kernels (`sumpipe.numerics.pin_numerics`): fixed when torch
    and NumPy load, so read once."""
    return all(os.environ.get(name) == value for name, value in PORTABLE.items())


def openblas_path(*tensors: torch.Tensor) -> bool:
    """Whether products of `tensors` run in OpenBLAS: float32 CPU tensors of a portable process, outside
    autocast, `torch.compile` and dispatch modes (torch's FLOP counter and fake tensors see only ATen calls)."""
    return (_portable() and all(t.device.type == "cpu" and t.dtype == torch.float32 for t in tensors)
            and not torch.is_autocast_enabled("cpu") and not torch.compiler.is_compiling()
            and _get_current_dispatch_mode() is None)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x (..., in) · weight (out, in)ᵀ + bias (out,): `F.linear`, in OpenBLAS on a float32 CPU tensor of a
    process that runs the portable kernels."""
    if openblas_path(x, weight):
        return _OpenBlasLinear.apply(x, weight, bias)
    return F.linear(x, weight, bias)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a (..., N, K) · b (..., K, M) -> (..., N, M): `torch.matmul`, in OpenBLAS (one sgemm per matrix)
    on float32 CPU tensors of a portable process whose batch dimensions match (no broadcasting)."""
    if a.dim() >= 2 and a.shape[:-2] == b.shape[:-2] and openblas_path(a, b):
        return _OpenBlasMatmul.apply(a, b)
    return torch.matmul(a, b)


class Linear(nn.Linear):
    """`nn.Linear` (same parameters, initialisation and state dict) whose product is `linear`'s."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)
