"""Products in OpenBLAS: Linear's and matmul's values, gradients and thread count are torch's."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from sumpipe.device import openblas, torch_threads
from sumpipe.models.linear import Linear, linear, matmul, openblas_path


def _inputs(bias: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=generator, requires_grad=True)
    weight = torch.randn(6, 8, generator=generator, requires_grad=True)
    b = torch.randn(6, generator=generator, requires_grad=True) if bias else None
    return x, weight, b


@pytest.mark.parametrize("bias", [True, False])
def test_product_and_gradients_are_f_linear_s(bias: bool) -> None:
    x, weight, b = _inputs(bias)
    ours = linear(x, weight, b)
    reference = F.linear(x, weight, b)
    assert ours.shape == (3, 5, 6)
    torch.testing.assert_close(ours, reference, rtol=1e-6, atol=1e-6)
    upstream = torch.linspace(-1, 1, 90).view(3, 5, 6)
    mine = torch.autograd.grad(ours, [t for t in (x, weight, b) if t is not None], upstream)
    theirs = torch.autograd.grad(reference, [t for t in (x, weight, b) if t is not None], upstream)
    for got, want in zip(mine, theirs, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_a_hand_computed_product() -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    weight = torch.tensor([[1.0, 0.0], [1.0, -1.0], [0.5, 0.5]])
    assert linear(x, weight, torch.tensor([0.0, 1.0, -1.0])).tolist() == [[1.0, 0.0, 0.5], [3.0, 0.0, 2.5]]


def test_only_input_gradients_when_the_weights_are_frozen() -> None:
    x, weight, b = _inputs(True)
    weight.requires_grad_(False)
    assert b is not None
    b.requires_grad_(False)
    (grad_x,) = torch.autograd.grad(linear(x, weight, b).sum(), [x])
    torch.testing.assert_close(grad_x, weight.sum(0).expand(3, 5, 8), rtol=1e-6, atol=1e-6)


def test_bfloat16_goes_through_f_linear_unchanged() -> None:
    x, weight, b = (t.detach().bfloat16() if t is not None else None for t in _inputs(True))
    assert torch.equal(linear(x, weight, b), F.linear(x, weight, b))


def test_the_layer_is_an_nn_linear_with_the_same_state_and_initialisation() -> None:
    torch.manual_seed(3)
    ours = Linear(4, 2)
    torch.manual_seed(3)
    theirs = nn.Linear(4, 2)
    assert isinstance(ours, nn.Linear) and list(ours.state_dict()) == ["weight", "bias"]
    assert torch.equal(ours.weight, theirs.weight) and torch.equal(ours.bias, theirs.bias)


def test_openblas_follows_torch_s_thread_count() -> None:
    library = openblas()
    if library is None:
        pytest.skip("this NumPy does not use OpenBLAS")
    getter = library.scipy_openblas_get_num_threads64_
    before = getter()
    with torch_threads(1):
        assert getter() == 1
    assert getter() == before


def test_matmul_hand_computed_batch() -> None:
    a = torch.tensor([[[1.0, 2.0]], [[0.0, -1.0]]])  # (2, 1, 2)
    b = torch.tensor([[[3.0], [4.0]], [[5.0], [6.0]]])  # (2, 2, 1)
    assert openblas_path(a, b)
    assert matmul(a, b).tolist() == [[[11.0]], [[-6.0]]]


def test_matmul_values_and_gradients_are_torch_s_with_a_transposed_operand() -> None:
    """Attention's q·kᵀ: the second operand a transposed view, as MultiHeadAttention passes it."""
    generator = torch.Generator().manual_seed(1)
    a = torch.randn(2, 3, 4, 8, generator=generator, requires_grad=True)
    b = torch.randn(2, 3, 5, 8, generator=generator, requires_grad=True)
    ours, reference = matmul(a, b.transpose(-2, -1)), torch.matmul(a, b.transpose(-2, -1))
    assert ours.shape == (2, 3, 4, 5)
    torch.testing.assert_close(ours, reference, rtol=1e-6, atol=1e-6)
    upstream = torch.linspace(-1, 1, 120).view(2, 3, 4, 5)
    for got, want in zip(torch.autograd.grad(ours, [a, b], upstream), torch.autograd.grad(reference, [a, b], upstream),
                         strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_matmul_broadcasting_and_bfloat16_go_through_torch_matmul() -> None:
    a, b = torch.randn(2, 3, 4), torch.randn(4, 5)
    torch.testing.assert_close(matmul(a, b), torch.matmul(a, b), rtol=0, atol=0)
    assert torch.equal(matmul(a.bfloat16(), b.bfloat16()), torch.matmul(a.bfloat16(), b.bfloat16()))
    assert not openblas_path(a.bfloat16())
