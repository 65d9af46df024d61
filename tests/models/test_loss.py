"""Label-smoothed NLL over the extended vocabulary, on hand-computed numbers."""

from __future__ import annotations

import math

import pytest
import torch

from sumpipe.models.loss import label_smoothed_nll, target_weights
from sumpipe.names import UNK


def _log_probs() -> torch.Tensor:
    # one sequence, two real positions and one padded one; 4 columns (3 words + 1 extended OOV)
    probs = torch.tensor([[[0.5, 0.25, 0.125, 0.125],
                           [0.1, 0.2, 0.3, 0.4],
                           [0.25, 0.25, 0.25, 0.25]]])
    return probs.log()


TARGET = torch.tensor([[0, 3, 99]])  # the padded position's id is garbage on purpose
MASK = torch.tensor([[True, True, False]])


def test_plain_nll_is_the_mean_over_real_tokens() -> None:
    loss, n = label_smoothed_nll(_log_probs(), TARGET, MASK, smoothing=0.0)
    assert n.item() == 2
    assert loss.item() == pytest.approx((-math.log(0.5) - math.log(0.4)) / 2, rel=1e-6)


def test_smoothing_over_all_columns() -> None:
    eps = 0.1
    loss, _ = label_smoothed_nll(_log_probs(), TARGET, MASK, smoothing=eps)
    row0 = (1 - eps) * -math.log(0.5) + eps * -(math.log(0.5) + math.log(0.25) + 2 * math.log(0.125)) / 4
    row1 = (1 - eps) * -math.log(0.4) + eps * -(math.log(0.1) + math.log(0.2) + math.log(0.3) + math.log(0.4)) / 4
    assert loss.item() == pytest.approx((row0 + row1) / 2, rel=1e-6)


def test_smoothing_over_the_fixed_vocabulary_only() -> None:
    eps = 0.2
    loss, _ = label_smoothed_nll(_log_probs(), TARGET, MASK, smoothing=eps, n_smooth=3)
    # the gold extended id (3) keeps its 1 - eps; the smoothing mass covers columns 0..2
    row0 = (1 - eps) * -math.log(0.5) + eps * -(math.log(0.5) + math.log(0.25) + math.log(0.125)) / 3
    row1 = (1 - eps) * -math.log(0.4) + eps * -(math.log(0.1) + math.log(0.2) + math.log(0.3)) / 3
    assert loss.item() == pytest.approx((row0 + row1) / 2, rel=1e-6)


def test_padding_gets_no_gradient_and_bad_smoothing_is_rejected() -> None:
    log_probs = _log_probs().requires_grad_()
    loss, _ = label_smoothed_nll(log_probs, TARGET, MASK, smoothing=0.1)
    loss.backward()
    assert torch.all(log_probs.grad[0, 2] == 0)
    assert torch.all(log_probs.grad[0, 0] != 0)
    with pytest.raises(ValueError):
        label_smoothed_nll(log_probs, TARGET, MASK, smoothing=1.0)


def test_unk_targets_weighted_by_hand() -> None:
    # position 0's target is <unk> (id 0): weight 0 leaves only position 1, weight 0.5 counts it half
    assert UNK == 0
    weight = target_weights(TARGET, 0.0)
    assert weight is not None and weight.tolist() == [[0.0, 1.0, 1.0]]
    loss, n = label_smoothed_nll(_log_probs(), TARGET, MASK, weight=weight)
    assert n.item() == 1.0
    assert loss.item() == pytest.approx(-math.log(0.4), rel=1e-6)
    loss, n = label_smoothed_nll(_log_probs(), TARGET, MASK, weight=target_weights(TARGET, 0.5))
    assert n.item() == 1.5
    assert loss.item() == pytest.approx((0.5 * -math.log(0.5) - math.log(0.4)) / 1.5, rel=1e-6)


def test_unk_weight_one_is_the_plain_loss() -> None:
    assert target_weights(TARGET, 1.0) is None
    ones = torch.ones(TARGET.shape)
    plain, n_plain = label_smoothed_nll(_log_probs(), TARGET, MASK, smoothing=0.1)
    weighted, n_weighted = label_smoothed_nll(_log_probs(), TARGET, MASK, smoothing=0.1, weight=ones)
    assert weighted.item() == pytest.approx(plain.item(), rel=1e-6) and n_weighted.item() == n_plain.item() == 2


def test_copied_targets_weighted_by_hand() -> None:
    # 3 vocabulary columns: position 1's target (id 3) is an extended id, a word only the pointer can copy
    weight = target_weights(TARGET, 1.0, copy_weight=4.0, vocab_size=3)
    assert weight is not None and weight.tolist() == [[1.0, 4.0, 4.0]]  # padding's garbage id 99 is masked below
    loss, n = label_smoothed_nll(_log_probs(), TARGET, MASK, weight=weight)
    assert n.item() == 5.0
    assert loss.item() == pytest.approx((-math.log(0.5) - 4 * math.log(0.4)) / 5, rel=1e-6)
    both = target_weights(TARGET, 0.0, copy_weight=4.0, vocab_size=3)  # <unk> dropped, the copy kept at 4
    assert both is not None and both.tolist()[0][:2] == [0.0, 4.0]
    assert target_weights(TARGET, 1.0, copy_weight=1.0, vocab_size=3) is None
    with pytest.raises(ValueError, match="vocab_size"):
        target_weights(TARGET, 1.0, copy_weight=4.0)


def test_copy_attention_nll_by_hand() -> None:
    from sumpipe.models.loss import copy_attention_nll

    # one source of 4 positions (the last one padding): ids 5, 9, 5, pad; three target positions
    src_ext = torch.tensor([[5, 9, 5, 1]])
    src_mask = torch.tensor([[True, True, True, False]])
    attn = torch.tensor([[0.2, 0.5, 0.3, 0.0], [0.1, 0.1, 0.8, 0.0], [0.25, 0.25, 0.5, 0.0]])
    target = torch.tensor([5, 9, 7])  # 5 is at positions 0 and 2, 9 at 1, 7 nowhere (not counted)
    total, n = copy_attention_nll(attn, src_ext, src_mask, target, torch.ones(3, dtype=torch.bool))
    assert n.item() == 2
    assert total.item() == pytest.approx(-math.log(0.2 + 0.3) - math.log(0.1), rel=1e-6)
    masked, n_masked = copy_attention_nll(attn, src_ext, src_mask, target, torch.tensor([False, True, True]))
    assert n_masked.item() == 1 and masked.item() == pytest.approx(-math.log(0.1), rel=1e-6)
