"""Shared layers: the pointer-generator mix by hand, attention masks and caches, Bahdanau + coverage."""

from __future__ import annotations

import math

import pytest
import torch

from sumpipe.models import layers
from sumpipe.models.layers import (
    MIN_PROB,
    AdditiveAttention,
    MultiHeadAttention,
    PointerGeneratorHead,
    SinusoidalPositions,
    coverage_loss,
    key_padding_bias,
    pointer_mix,
)

# --------------------------------------------------------------------------------------------
# pointer_mix (Eqn 2.18)
# --------------------------------------------------------------------------------------------
P_VOCAB = [0.1, 0.2, 0.3, 0.15, 0.25]  # V = 5
P_GEN = 0.75
# source: word 2, the OOV with extended id 5 twice, the OOV 6, then padding (<pad> = 1)
SRC_EXT = [2, 5, 5, 6, 1]
ATTN = [0.4, 0.1, 0.2, 0.3, 0.0]


def _mix(n_oov: int = 3) -> torch.Tensor:
    logits = torch.tensor([P_VOCAB]).log()  # softmax(log p) = p
    return pointer_mix(logits, torch.tensor([P_GEN]), torch.tensor([ATTN]), torch.tensor([SRC_EXT]), n_oov)


def test_pointer_mix_by_hand() -> None:
    p = _mix().exp()[0]
    assert p.shape == (8,)  # V + n_oov; id 7 is another example's OOV slot
    # a vocabulary word not in the source: p_gen · P_vocab
    assert p[0].item() == pytest.approx(0.75 * 0.1, rel=1e-6)
    # the padding position has zero attention, so <pad> only gets its generation share
    assert p[1].item() == pytest.approx(0.75 * 0.2, rel=1e-6)
    # a vocabulary word in the source: p_gen · P_vocab + (1 − p_gen) · a
    assert p[2].item() == pytest.approx(0.75 * 0.3 + 0.25 * 0.4, rel=1e-6)
    # an OOV source word gets exactly (1 − p_gen) · Σ a over its positions
    assert p[5].item() == pytest.approx(0.25 * (0.1 + 0.2), rel=1e-6)
    assert p[6].item() == pytest.approx(0.25 * 0.3, rel=1e-6)
    # an extended slot this example does not have: probability 0, clamped before the log
    assert p[7].item() == pytest.approx(MIN_PROB, rel=1e-5)
    assert p.sum().item() == pytest.approx(1.0 + MIN_PROB, abs=1e-6)  # a distribution (+ the clamp)


def test_pointer_mix_with_time_dimension_and_gradients() -> None:
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 5, requires_grad=True)
    p_gen = torch.rand(2, 3, requires_grad=True)
    attn = torch.softmax(torch.randn(2, 3, 4), dim=-1).requires_grad_()
    src_ext = torch.tensor([[2, 5, 5, 6], [0, 1, 4, 4]])
    log_p = pointer_mix(logits, p_gen, attn, src_ext, n_oov=2)
    assert log_p.shape == (2, 3, 7) and log_p.dtype == torch.float32
    # row 1 has no OOVs: its extended columns hold only the clamp, everything else sums to 1
    torch.testing.assert_close(log_p[0].exp().sum(-1), torch.ones(3))
    torch.testing.assert_close(log_p[1, :, :5].exp().sum(-1), torch.ones(3))
    # both duplicates of word 4 in row 1 are summed
    expected = p_gen[1] * torch.softmax(logits[1], -1)[:, 4] + (1 - p_gen[1]) * (attn[1, :, 2] + attn[1, :, 3])
    torch.testing.assert_close(log_p[1, :, 4].exp(), expected)
    log_p[:, :, 5].sum().backward()
    assert p_gen.grad.abs().sum() > 0 and attn.grad.abs().sum() > 0


# --------------------------------------------------------------------------------------------
# Multi-head attention
# --------------------------------------------------------------------------------------------
def test_explicit_weights_match_fused_path_and_padding_gets_no_weight() -> None:
    torch.manual_seed(1)
    mha = MultiHeadAttention(16, 4).eval()
    q, kv = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    keep = torch.tensor([[True] * 5, [True, True, True, False, False]])
    bias = key_padding_bias(keep)
    fused = mha(q, kv, bias=bias)
    explicit = mha(q, kv, bias=bias, need_weights=True)
    torch.testing.assert_close(fused.out, explicit.out)
    assert explicit.weights.shape == (2, 4, 3, 5)
    torch.testing.assert_close(explicit.weights.sum(-1), torch.ones(2, 4, 3))
    assert torch.all(explicit.weights[1, :, :, 3:] == 0)
    # changing a padded key cannot change the output
    kv2 = kv.clone()
    kv2[1, 3:] = 100.0
    torch.testing.assert_close(mha(q, kv2, bias=bias).out[1], fused.out[1])


@pytest.mark.parametrize("d_model", [16, 28])  # heads of 4 (padded to 8) and 7 (exactly 8 with the extra column)
def test_key_bias_with_a_gradient_matches_the_explicit_softmax_values_and_gradients(d_model: int) -> None:
    """The extra-head-dimension path equals softmax(q·kᵀ/√Dh + bias + key_bias), gradients included."""
    torch.manual_seed(3)
    mha = MultiHeadAttention(d_model, 4).eval()
    x = torch.randn(2, 5, d_model)
    keep = torch.tensor([[True] * 5, [True, True, True, False, False]])
    grads = []
    for need_weights in (False, True):
        key_bias = torch.tensor([[0.5, -1.0, 2.0, 0.0, 1.0]]).repeat(2, 4, 1).requires_grad_()
        out = mha(x, bias=key_padding_bias(keep), key_bias=key_bias, need_weights=need_weights).out
        (out * torch.arange(d_model)).sum().backward()
        grads.append((out.detach(), key_bias.grad))
    torch.testing.assert_close(grads[0][0], grads[1][0])
    torch.testing.assert_close(grads[0][1], grads[1][1])
    assert torch.all(grads[0][1][1, :, 3:] == 0)  # padded keys take no weight, so no gradient
    assert grads[0][1].abs().sum() > 0


def test_key_bias_without_a_gradient_is_an_ordinary_mask() -> None:
    torch.manual_seed(4)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(1, 3, 16)
    key_bias = torch.tensor([[[1.0, 0.0, -2.0]]]).repeat(1, 4, 1)
    with torch.no_grad():
        torch.testing.assert_close(mha(x, key_bias=key_bias).out, mha(x, bias=key_bias[:, :, None, :]).out)


def test_causal_attention_ignores_the_future_and_cache_matches() -> None:
    torch.manual_seed(2)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 4, 8)
    full = mha(x, causal=True).out
    y = x.clone()
    y[0, 3] = 50.0
    torch.testing.assert_close(mha(y, causal=True).out[0, :3], full[0, :3])
    # explicit-weights causal path == fused causal path
    torch.testing.assert_close(mha(x, causal=True, need_weights=True).out, full)
    # step by step with a key/value cache == teacher-forced causal attention
    past = None
    for t in range(4):
        att = mha(x[:, t : t + 1], past_kv=past)
        past = att.kv
        torch.testing.assert_close(att.out[0, 0], full[0, t], atol=1e-6, rtol=1e-5)
    assert past[0].shape == (1, 2, 4, 4)
    # two new positions on top of a cache of two: causal mask aligned to the end
    first = mha(x[:, :2], causal=True)
    torch.testing.assert_close(mha(x[:, 2:], past_kv=first.kv, causal=True).out, full[:, 2:], atol=1e-6, rtol=1e-5)


def test_sinusoidal_positions_values_and_growth() -> None:
    pe = SinusoidalPositions(4, n_positions=2)
    out = pe(torch.zeros(1, 3, 4), offset=1)  # positions 1..3, beyond the initial table
    assert out[0, 0].tolist() == pytest.approx([math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], rel=1e-5)
    assert out[0, 2, 0].item() == pytest.approx(math.sin(3), rel=1e-5)


# --------------------------------------------------------------------------------------------
# Pointer-generator head (Eqn 2.17)
# --------------------------------------------------------------------------------------------
def test_pointer_head_by_hand() -> None:
    torch.manual_seed(3)
    head = PointerGeneratorHead(8, 2).eval()
    with torch.no_grad():
        head.attention.q_proj.weight.zero_()  # every query scores every key alike: uniform attention
        head.attention.q_proj.bias.zero_()
        head.gate.weight.zero_()
        head.gate.bias.fill_(math.log(3.0))  # σ(ln 3) = 0.75
    memory = torch.randn(2, 4, 8)
    keep = torch.tensor([[True] * 4, [True, True, False, False]])
    s, x = torch.randn(2, 3, 8), torch.randn(2, 3, 8)
    out = head(s, x, head.attention.project_kv(memory), key_padding_bias(keep))
    assert out.copy_attn.shape == (2, 3, 4) and out.p_gen.shape == (2, 3) and out.context.shape == (2, 3, 8)
    torch.testing.assert_close(out.copy_attn[0], torch.full((3, 4), 0.25))
    torch.testing.assert_close(out.copy_attn[1], torch.tensor([[0.5, 0.5, 0.0, 0.0]] * 3))
    torch.testing.assert_close(out.p_gen, torch.full((2, 3), 0.75))
    # h = out_proj(mean of the values over the attended positions)
    values = head.attention.v_proj(memory[1, :2]).mean(0)
    torch.testing.assert_close(out.context[1, 0], head.attention.out_proj(values))
    # p_gen reacts to each of h, s and x
    with torch.no_grad():
        head.gate.weight.normal_()
    p1 = head(s, x, head.attention.project_kv(memory), key_padding_bias(keep)).p_gen
    p2 = head(s, x + 1.0, head.attention.project_kv(memory), key_padding_bias(keep)).p_gen
    assert not torch.allclose(p1, p2)


# --------------------------------------------------------------------------------------------
# Additive attention with coverage (for the RNN models)
# --------------------------------------------------------------------------------------------
def test_additive_attention_uniform_when_v_is_zero() -> None:
    torch.manual_seed(4)
    attn = AdditiveAttention(query_dim=3, key_dim=5, attn_dim=6)
    with torch.no_grad():
        attn.v.weight.zero_()
    keys = torch.randn(2, 4, 5)
    keep = torch.tensor([[True] * 4, [True, True, True, False]])
    context, weights = attn(torch.randn(2, 3), keys, keep)
    torch.testing.assert_close(weights[1], torch.tensor([1 / 3, 1 / 3, 1 / 3, 0.0]))
    torch.testing.assert_close(context[1], keys[1, :3].mean(0))


def test_additive_attention_coverage_shifts_weights_and_loss() -> None:
    torch.manual_seed(5)
    attn = AdditiveAttention(query_dim=3, key_dim=5, attn_dim=6, coverage=True)
    with torch.no_grad():
        attn.key_proj.weight.zero_()
        attn.query_proj.weight.zero_()
        attn.query_proj.bias.zero_()
        attn.coverage_proj.weight.fill_(-1.0)  # covered positions score lower
        attn.v.weight.fill_(1.0)
    keys, query, keep = torch.randn(1, 3, 5), torch.randn(1, 3), torch.ones(1, 3, dtype=torch.bool)
    _, w0 = attn(query, keys, keep)  # no coverage yet: uniform
    torch.testing.assert_close(w0, torch.full((1, 3), 1 / 3))
    coverage = torch.tensor([[1.0, 0.0, 0.0]])
    _, w1 = attn(query, keys, keep, coverage=coverage)
    # e_i = 6·tanh(−c_i): position 0 gets exp(6·tanh(−1)) relative weight
    e = torch.tensor([6 * math.tanh(-1.0), 0.0, 0.0])
    torch.testing.assert_close(w1[0], torch.softmax(e, 0))
    assert coverage_loss(torch.tensor([[0.5, 0.3, 0.2]]), torch.tensor([[0.2, 0.6, 0.0]])).item() == pytest.approx(0.5)


def _attention_and_gradients(mha: MultiHeadAttention, case: str) -> list[torch.Tensor]:
    """The output of `mha` on fixed inputs of `case` and the gradients of a weighted sum of it."""
    generator = torch.Generator().manual_seed(5)
    q = torch.randn(2, 3, 16, generator=generator, requires_grad=True)
    kv = torch.randn(2, 5, 16, generator=generator, requires_grad=True)
    key_bias = torch.randn(2, 4, 5, generator=generator, requires_grad=True)
    bias = key_padding_bias(torch.tensor([[True] * 5, [True, True, True, False, False]]))
    if case == "padding":
        out = mha(q, kv, bias=bias).out
    elif case == "causal":
        out = mha(kv, causal=True).out
    else:  # M2's rarity term, which needs its gradient
        out = mha(q, kv, bias=bias, key_bias=key_bias).out
    grads = torch.autograd.grad((out * torch.linspace(-1, 1, 16)).sum(), [q, kv, key_bias], allow_unused=True)
    return [out.detach()] + [g for g in grads if g is not None]


@pytest.mark.parametrize("case", ["padding", "causal", "key_bias"])
def test_openblas_attention_is_sdpa_s_values_and_gradients(monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The portable path (both products in OpenBLAS) computes what SDPA computes, to rounding."""
    torch.manual_seed(6)
    mha = MultiHeadAttention(16, 4).eval()
    ours = _attention_and_gradients(mha, case)
    monkeypatch.setattr(layers, "openblas_path", lambda *tensors: False)
    theirs = _attention_and_gradients(mha, case)
    assert len(ours) == len(theirs) == {"padding": 3, "causal": 2, "key_bias": 4}[case]
    for got, want in zip(ours, theirs, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_fused_attention_never_offers_sdpa_the_cudnn_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuDNN attention re-plans for every new shape (~2 ms of host time per call on an H100, which
    made training host-bound), so the fused path runs with it switched off, and restores it after."""
    seen = []
    fused = torch.nn.functional.scaled_dot_product_attention

    def spy(*args, **kwargs):
        seen.append((torch.backends.cuda.cudnn_sdp_enabled(), torch.backends.cuda.mem_efficient_sdp_enabled(),
                     torch.backends.cuda.flash_sdp_enabled()))
        return fused(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
    monkeypatch.setattr(layers, "openblas_path", lambda *tensors: False)  # the fused path: all but portable CPU
    before = torch.backends.cuda.cudnn_sdp_enabled()
    attention = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    attention(x, bias=key_padding_bias(torch.tensor([[True] * 5, [True] * 3 + [False] * 2])))
    attention(x, causal=True)
    assert seen == [(False, True, True)] * 2
    assert torch.backends.cuda.cudnn_sdp_enabled() == before


def test_embed_words_adds_each_oov_word_its_slot_by_hand() -> None:
    from sumpipe.models.layers import OOVSlots, embed_words

    v = 6
    embed = torch.nn.Embedding(v, 2)
    slots = OOVSlots(2, 2)
    with torch.no_grad():
        embed.weight.copy_(torch.arange(12.0).view(6, 2))  # row i = [2i, 2i + 1]; <unk> = row 0 = [0, 1]
        slots.vectors.weight.copy_(torch.tensor([[10.0, 20.0], [30.0, 40.0]]))
    tokens = torch.tensor([[4, v, v + 1, v, v + 2]])  # a word; OOV 0, 1, 0 again; OOV 2 (past the 2 slots)
    expected = [[8.0, 9.0], [10.0, 21.0], [30.0, 41.0], [10.0, 21.0], [0.0, 1.0]]
    assert embed_words(embed, slots, tokens, v).tolist() == [expected]
    assert embed_words(embed, None, tokens, v).tolist() == [[[8.0, 9.0]] + [[0.0, 1.0]] * 4]  # one <unk>


def test_oov_spelling_is_the_mean_of_the_words_3gram_buckets_by_hand() -> None:
    from sumpipe.models.layers import OOVSpelling, embed_words

    spelling = OOVSpelling(8, 2)
    with torch.no_grad():
        spelling.vectors.weight.copy_(torch.arange(16.0).view(8, 2))  # bucket k = [2k, 2k + 1]
    # word 0 "ab": "<ab" 225091444 (bucket 4), "ab>" 553544843 (bucket 3); word 1 "x": "<x>" (bucket 3);
    # example 2 has no OOV word in the second row (all padding)
    hashes = torch.tensor([[[225091444, 553544843], [zlib_crc("<x>"), -1]], [[-1, -1], [-1, -1]]])
    spelled = spelling(hashes)
    assert spelled.tolist() == [[[7.0, 8.0], [6.0, 7.0]], [[0.0, 0.0], [0.0, 0.0]]]  # mean of [8, 9], [6, 7]
    v = 6
    embed = torch.nn.Embedding(v, 2)
    with torch.no_grad():
        embed.weight.copy_(torch.arange(12.0).view(6, 2))  # <unk> = row 0 = [0, 1]
    tokens = torch.tensor([[4, v, v + 1], [5, 5, 5]])
    out = embed_words(embed, None, tokens, v, spelled)
    assert out.tolist() == [[[8.0, 9.0], [7.0, 9.0], [6.0, 8.0]], [[10.0, 11.0]] * 3]  # only OOV ids add it


def zlib_crc(text: str) -> int:
    import zlib

    return zlib.crc32(text.encode("utf-8"))
