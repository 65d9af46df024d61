"""Layers shared by every summarization model: attention, the pointer-generator mix, positions.

Read top to bottom:

1. `MultiHeadAttention` — scaled dot-product attention over H heads. The common path calls
   `torch.nn.functional.scaled_dot_product_attention` (a fused kernel on GPU; a portable CPU process
   multiplies q·kᵀ and weights·v in OpenBLAS instead, `sumpipe.models.linear`); callers pass an
   optional additive float `bias` (padding = -inf, M2's rarity term = log of a positive scale) and
   may hand in pre-projected keys/values (`kv`) or a decoding cache (`past_kv`). With
   `need_weights=True` the weights are computed explicitly (the pointer head needs them).
2. `key_padding_bias` — a (B, S) keep-mask as an additive (B, 1, 1, S) bias.
3. `FeedForward`, `SinusoidalPositions` — the position-wise block and Vaswani et al.'s encoding.
4. `pointer_mix` — Eqn 2.18 of Morozovskii 2022 (See et al. Eqn 9): the final distribution over the
   extended vocabulary from P_vocab, p_gen and a copy distribution, in probability space.
5. `PointerGeneratorHead` — Morozovskii 2022 §2.3.1 for a transformer: an extra multi-head attention
   (Q = normalised decoder output s, K = V = encoder output) gives the context h and the copy
   distribution a; p_gen = σ(w_h·h + w_s·s + w_x·x + b) (Eqn 2.17).
6. `AdditiveAttention` — Bahdanau attention with See et al.'s optional coverage, for the RNN
   models (Hansen & Petersen 2019 Eqn 3-4), and `coverage_loss`.
7. `OOVSlots`, `OOVSpelling`, `embed_words` — per-document placeholders for the words outside the
   vocabulary, and what such a word looks like, shared by the word families.

Shapes: B batch, T target (query) positions, S source (key) positions, D model width, H heads,
Dh = D / H, V fixed vocabulary, X = V + n_oov the extended vocabulary.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from sumpipe.models.linear import Linear, matmul, openblas_path
from sumpipe.names import UNK

# The attention kernels SDPA may pick. cuDNN's is left out: PyTorch 2.11 prefers it on Hopper
# GPUs, and there it spent about 2 ms of host time per call (forward and backward alike) on our
# ever-changing (B, T, S) shapes, which made training host-bound: M1 in the paper configuration,
# batch 32, went from 279 to 82 ms per update on an H100 without it (bench/bench_train.py; docs/gpu.md).
# Flash (no mask) and memory-efficient (additive mask) kernels need no per-shape set-up.
SDPA_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]

# Probabilities are clamped to this before the log: extended-vocabulary columns that no source
# position fills have probability exactly 0, and log(0) would poison the loss and its gradient.
MIN_PROB = 1e-12


# --------------------------------------------------------------------------------------------
# Multi-head attention
# --------------------------------------------------------------------------------------------
class AttentionOutput(NamedTuple):
    out: torch.Tensor  # (B, T, D)
    weights: torch.Tensor | None  # (B, H, T, S), only when need_weights=True
    kv: tuple[torch.Tensor, torch.Tensor]  # the (k, v) attended over, each (B, H, S, Dh): a cache


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.2).

    `forward(query, key_value)` projects both; for decoding, `kv=` passes keys/values projected
    once (cross-attention over a fixed encoder output) and `past_kv=` the keys/values of earlier
    decoder steps, to which this step's are appended (the returned `kv` is the new cache).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        assert d_model % n_heads == 0, "n_heads must divide d_model"
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.dropout = dropout
        self.q_proj = Linear(d_model, d_model)
        self.k_proj = Linear(d_model, d_model)
        self.v_proj = Linear(d_model, d_model)
        self.out_proj = Linear(d_model, d_model)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        """(B, L, D) -> (B, H, L, Dh)"""
        b, length, _ = x.shape
        return x.view(b, length, self.n_heads, self.d_head).transpose(1, 2)

    def project_kv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of `x` (B, S, D), each (B, H, S, Dh); compute once, reuse every step."""
        return self._split(self.k_proj(x)), self._split(self.v_proj(x))

    def forward(
        self,
        query: torch.Tensor,
        key_value: torch.Tensor | None = None,
        *,
        kv: tuple[torch.Tensor, torch.Tensor] | None = None,
        past_kv: tuple[torch.Tensor, torch.Tensor] | None = None,
        bias: torch.Tensor | None = None,
        key_bias: torch.Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
    ) -> AttentionOutput:
        """Attend from `query` (B, T, D) to `key_value` (B, S, D) (default: `query` itself).

        bias: additive float, broadcastable to (B, H, T, S); -inf hides a key.
        key_bias: (B, H, S), a learned per-head, per-key term added to every query's logits (M2's
            rarity); unlike `bias` it may need a gradient, see `_attend_with_key_bias`.
        causal: the T queries are the last T of the S key positions and each sees only keys up
            to its own position (teacher-forced decoder self-attention, T == S, or T new positions
            on top of a `past_kv` cache). A single decoding step needs no mask.
        """
        q = self._split(self.q_proj(query))
        if kv is None:
            kv = self.project_kv(query if key_value is None else key_value)
        k, v = kv
        if past_kv is not None:
            k = torch.cat([past_kv[0], k], dim=2)
            v = torch.cat([past_kv[1], v], dim=2)
        t, s = q.shape[-2], k.shape[-2]
        if causal and (bias is not None or key_bias is not None or need_weights or t != s):
            # SDPA's is_causal aligns the mask top-left, which is only right for T == S and no bias.
            future = _causal_bias(t, s, q.device)
            bias = future if bias is None else bias + future
            causal = False
        if bias is not None:
            bias = bias.to(q.dtype)  # SDPA wants the mask in the query's dtype (bf16 under autocast)
        p_drop = self.dropout if self.training else 0.0
        weights = None
        if openblas_path(q, k, v):
            context, weights = _attend_in_openblas(q, k, v, bias, key_bias, causal, p_drop)
            b, _, t, _ = context.shape
            out = self.out_proj(context.transpose(1, 2).reshape(b, t, self.n_heads * self.d_head))
            return AttentionOutput(out, weights if need_weights else None, (k, v))
        if key_bias is not None and not need_weights and not _needs_grad(key_bias):
            # No gradient (inference): an ordinary additive mask, so M2 with w = 0 is M1 bit for bit.
            per_key = key_bias[:, :, None, :].to(q.dtype)
            bias, key_bias = (per_key if bias is None else bias + per_key), None
        if need_weights:
            scores = (q @ k.transpose(-2, -1)).float() * (1.0 / math.sqrt(self.d_head))
            if bias is not None:
                scores = scores + bias.float()
            if key_bias is not None:
                scores = scores + key_bias[:, :, None, :].float()
            weights = torch.softmax(scores, dim=-1)
            context = F.dropout(weights, p_drop, self.training).to(v.dtype) @ v
        elif key_bias is not None:
            context = _attend_with_key_bias(q, k, v, key_bias, bias, p_drop)
        else:
            with sdpa_kernel(SDPA_BACKENDS):
                context = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p_drop,
                                                         is_causal=causal)
        b, _, t, _ = context.shape
        out = self.out_proj(context.transpose(1, 2).reshape(b, t, self.n_heads * self.d_head))
        return AttentionOutput(out, weights, (k, v))


def _attend_in_openblas(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None, key_bias: torch.Tensor | None,
    causal: bool, p_drop: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q·kᵀ/√Dh + bias + key_bias) · v with both products in OpenBLAS (`sumpipe.models.linear`):
    the portable path, where SDPA's products would run in MKL's slow COMPATIBLE branch (×2.2-2.6 the
    time of this, forward and backward, at M1's shapes). key_bias needs no trick here: its gradient is
    the scores' summed over the queries. q (B, H, T, Dh), k and v (B, H, S, Dh) -> context (B, H, T, Dh)
    and the weights (B, H, T, S)."""
    t, s = q.shape[-2], k.shape[-2]
    scores = matmul(q * (1.0 / math.sqrt(q.shape[-1])), k.transpose(-2, -1))
    if causal:
        scores = scores + _causal_bias(t, s, q.device)
    if bias is not None:
        scores = scores + bias
    if key_bias is not None:
        scores = scores + key_bias[:, :, None, :]
    weights = torch.softmax(scores, dim=-1)
    return matmul(F.dropout(weights, p_drop) if p_drop else weights, v), weights


def _needs_grad(x: torch.Tensor) -> bool:
    return x.requires_grad and torch.is_grad_enabled()


def _attend_with_key_bias(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_bias: torch.Tensor, bias: torch.Tensor | None, p_drop: float
) -> torch.Tensor:
    """SDPA with a per-key logit term that needs a gradient, as one more head dimension.

    Handing SDPA a mask that needs a gradient sends it (on CPU) to its math kernel, which builds the
    (B, H, T, S) gradient of the mask: that made M2 train 2.4 times slower than M1 on 400-token
    inputs. Instead q gains a column of √Dh and k a column of key_bias, so that with the scale
    kept at 1/√Dh, q'·k'ᵀ/√Dh = q·kᵀ/√Dh + key_bias: the fused kernel runs and the gradient
    reaches key_bias through k'. Zero columns pad the head to a multiple of 8 (v too: the fused
    kernels want one width), which the kernels need to stay fast.
    q (B, H, T, Dh), k and v (B, H, S, Dh), key_bias (B, H, S) -> context (B, H, T, Dh).
    """
    b, h, t, d_head = q.shape
    s = k.shape[2]
    width = -(-(d_head + 1) // 8) * 8
    pad = width - d_head - 1
    q = torch.cat([q, q.new_full((b, h, t, 1), math.sqrt(d_head)), q.new_zeros(b, h, t, pad)], dim=-1)
    k = torch.cat([k, key_bias[..., None].to(k.dtype), k.new_zeros(b, h, s, pad)], dim=-1)
    v = torch.cat([v, v.new_zeros(b, h, s, pad + 1)], dim=-1)
    with sdpa_kernel(SDPA_BACKENDS):
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p_drop,
                                                 scale=1.0 / math.sqrt(d_head))
    return context[..., :d_head]


def _causal_bias(t: int, s: int, device: torch.device) -> torch.Tensor:
    """(T, S) additive bias hiding future keys; the T queries are the last T of the S positions."""
    future = torch.ones(t, s, dtype=torch.bool, device=device).triu(s - t + 1)
    return torch.zeros(t, s, device=device).masked_fill(future, float("-inf"))


def key_padding_bias(keep: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(B, S) bool, True at real tokens -> (B, 1, 1, S) additive bias: 0 where kept, -inf at padding."""
    bias = torch.zeros(keep.shape, dtype=dtype, device=keep.device).masked_fill(~keep, float("-inf"))
    return bias[:, None, None, :]


# --------------------------------------------------------------------------------------------
# Feed-forward block and positional encoding
# --------------------------------------------------------------------------------------------
class FeedForward(nn.Module):
    """Position-wise Linear(D, F) -> ReLU -> dropout -> Linear(F, D) (Vaswani et al. §3.3).

    `activation="gelu"` is BERT's (Devlin et al. 2019; Roy Choudhury 2020 §9.8.3: the exact, erf-based GELU).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu") -> None:
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.fc1 = Linear(d_model, d_ff)
        self.fc2 = Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = F.gelu if activation == "gelu" else F.relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.dropout(self.activation(self.fc1(x))))


def sinusoidal_table(n_positions: int, d_model: int) -> torch.Tensor:
    """(n_positions, D): PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(same)."""
    if torch.get_default_device().type == "meta":  # a model built for its shapes (models.io): no values
        return torch.empty(n_positions, d_model)
    position = torch.arange(n_positions, dtype=torch.float32)[:, None]
    inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(n_positions, d_model)
    table[:, 0::2] = torch.sin(position * inv_freq)
    table[:, 1::2] = torch.cos(position * inv_freq)[:, : d_model // 2]
    return table


class SinusoidalPositions(nn.Module):
    """Adds the sinusoidal encoding of positions `offset..offset+L-1` to (B, L, D) inputs.

    The table is a non-persistent buffer (not saved; it is a pure function of D) that grows on
    demand, so decoding may run past the training summary length.
    """

    table: torch.Tensor  # (n_positions, D), the buffer registered in __init__

    def __init__(self, d_model: int, n_positions: int = 512) -> None:
        super().__init__()
        self.d_model = d_model
        self.register_buffer("table", sinusoidal_table(n_positions, d_model), persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        end = offset + x.shape[1]
        if end > self.table.shape[0]:
            self.table = sinusoidal_table(max(end, 2 * self.table.shape[0]), self.d_model).to(self.table.device)
        return x + self.table[offset:end].to(x.dtype)


# --------------------------------------------------------------------------------------------
# Pointer-generator
# --------------------------------------------------------------------------------------------
def pointer_mix(
    vocab_logits: torch.Tensor,
    p_gen: torch.Tensor,
    copy_attn: torch.Tensor,
    src_ext: torch.Tensor,
    n_oov: int,
) -> torch.Tensor:
    """Eqn 2.18: log P(w) = log[p_gen·P_vocab(w) + (1 − p_gen)·Σ_{i: src_ext_i = w} a_i].

    vocab_logits (..., V), p_gen (...,), copy_attn (..., S) summing to 1 over real positions
    (0 at padding), src_ext (B, S) extended source ids; the leading dims of the others are
    (B,) or (B, T). Returns float32 log-probabilities (..., V + n_oov) that sum (in probability) to 1.
    Computed in probability space in float32 and clamped at MIN_PROB before the log.
    """
    p_vocab = torch.softmax(vocab_logits.float(), dim=-1)
    p_gen = p_gen.float().unsqueeze(-1)
    mixed = F.pad(p_gen * p_vocab, (0, n_oov))  # (..., V + n_oov); OOV columns start at 0
    copy = (1.0 - p_gen) * copy_attn.float()
    index = src_ext if copy.dim() == 2 else src_ext[:, None, :].expand_as(copy)
    mixed.scatter_add_(-1, index, copy)  # in place: the padded tensor is fresh and autograd-safe
    return mixed.clamp_min(MIN_PROB).log()


class PointerOutput(NamedTuple):
    context: torch.Tensor  # h (..., D)
    copy_attn: torch.Tensor  # a (..., S), the heads' weights averaged
    p_gen: torch.Tensor  # (...,)
    head_attn: torch.Tensor | None = None  # (B, T, H, S): each head's weights, before the average


class PointerGeneratorHead(nn.Module):
    """Context vector h, copy distribution a and p_gen for a transformer decoder (Eqn 2.17).

    The copy attention is a multi-head attention (Q = decoder output s, K = V = encoder output)
    whose weights are computed explicitly: the copy distribution a is the *average of the heads'*
    weights, which keeps a a proper distribution over source positions while each head may look
    at something else (an average is what one single-head pointer would be trained towards, and it
    keeps the layer identical in shape to the decoder's cross-attention). It uses no dropout: a
    dropped-out copy distribution would no longer sum to 1.
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.attention = MultiHeadAttention(d_model, n_heads, dropout=0.0)
        # One Linear over [h; s; x] is w_h·h + w_s·s + w_x·x + b_ptr.
        self.gate = Linear(3 * d_model, 1)

    def forward(
        self,
        s: torch.Tensor,
        x: torch.Tensor,
        memory_kv: tuple[torch.Tensor, torch.Tensor],
        memory_bias: torch.Tensor | None,
    ) -> PointerOutput:
        """s (B, T, D) normalised decoder output, x (B, T, D) decoder input after positions,
        memory_kv = self.attention.project_kv(encoder output), memory_bias (B, 1, 1, S)."""
        att = self.attention(s, kv=memory_kv, bias=memory_bias, need_weights=True)
        copy_attn = att.weights.mean(dim=1)  # (B, H, T, S) -> (B, T, S)
        p_gen = torch.sigmoid(self.gate(torch.cat([att.out, s, x], dim=-1))).squeeze(-1)
        return PointerOutput(att.out, copy_attn, p_gen, att.weights.transpose(1, 2))


# --------------------------------------------------------------------------------------------
# Additive (Bahdanau) attention with coverage, for the RNN models
# --------------------------------------------------------------------------------------------
class AdditiveAttention(nn.Module):
    """e_i = vᵀ tanh(W_h h_i + W_s s_t + w_c c_i + b_attn); a = softmax(e); context = Σ a_i h_i.

    Hansen & Petersen 2019 Eqn 3-4 (See et al. Eqn 1-2); with `coverage=True`, c is the sum of the earlier steps'
    attention (See et al. Eqn 11). Project the encoder states once with `project_keys` and pass
    them to every step.
    """

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, coverage: bool = False) -> None:
        super().__init__()
        self.key_proj = Linear(key_dim, attn_dim, bias=False)  # W_h
        self.query_proj = Linear(query_dim, attn_dim)  # W_s and b_attn
        self.coverage_proj = Linear(1, attn_dim, bias=False) if coverage else None  # w_c
        self.v = Linear(attn_dim, 1, bias=False)

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """keys (B, S, Dk) -> W_h h (B, S, A)"""
        return self.key_proj(keys)

    def forward(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        key_mask: torch.Tensor,
        projected_keys: torch.Tensor | None = None,
        coverage: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, Dq) — or (B, T, Dq), T decoder positions at once —, keys (B, S, Dk), key_mask
        (B, S) True at real tokens, coverage (B, S) (or (B, T, S)). Returns context (B, Dk) and
        weights (B, S) (0 at padding), or (B, T, Dk) and (B, T, S). T positions at once cost a
        (B, T, S, A) intermediate: callers chunk T to bound memory."""
        single = query.dim() == 2
        if single:
            query = query[:, None]
            coverage = None if coverage is None else coverage[:, None]
        if projected_keys is None:
            projected_keys = self.project_keys(keys)
        features = projected_keys[:, None] + self.query_proj(query)[:, :, None]  # (B, T, S, A)
        if self.coverage_proj is not None:
            if coverage is None:
                coverage = torch.zeros(features.shape[:3], dtype=features.dtype, device=features.device)
            features = features + self.coverage_proj(coverage[..., None].to(features.dtype))
        scores = self.v(torch.tanh(features)).squeeze(-1).masked_fill(~key_mask[:, None], float("-inf"))
        weights = torch.softmax(scores.float(), dim=-1).to(keys.dtype)  # (B, T, S)
        context = matmul(weights, keys)  # (B, T, Dk)
        return (context[:, 0], weights[:, 0]) if single else (context, weights)


def coverage_loss(weights: torch.Tensor, coverage: torch.Tensor) -> torch.Tensor:
    """See et al. Eqn 12: Σ_i min(a_i, c_i) per step; weights, coverage (..., S) -> (...)."""
    return torch.minimum(weights, coverage).sum(dim=-1)


# --------------------------------------------------------------------------------------------
# Bilinear copy attention with a copy gate (Roy Choudhury 2020 Eqn 10.4-10.6)
# --------------------------------------------------------------------------------------------
class CopyOutput(NamedTuple):
    copy_attn: torch.Tensor  # a (..., S), 0 at padding
    copy_gate: torch.Tensor  # g (...,), the probability of copying
    context: torch.Tensor  # c = Σ_j a_j h_j (..., D)


class BilinearCopyGate(nn.Module):
    """u_t^j = o_t W_c h_j, a_t = softmax_j(u_t) (Eqn 10.4-10.5), and the copy gate
    g_t = σ(w_g·[o_t; c_t] + b_g) with c_t = Σ_j a_t^j h_j (Roy Choudhury 2020 leaves g's inputs open; the
    decoder state and what it would copy from are what See et al.'s p_gen reads too).

    The final distribution P(w) = (1 − g)·P_vocab(w) + g·Σ_{i: x_i = w} a_i is `pointer_mix` with
    p_gen = 1 − g. Project the encoder states once with `project_keys` (W_c h, (B, S, D)).
    """

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.w_c = Linear(d_model, d_model, bias=False)
        self.gate = Linear(2 * d_model, 1)

    def project_keys(self, memory: torch.Tensor) -> torch.Tensor:
        """h (B, S, D) -> W_c h (B, S, D)"""
        return self.w_c(memory)

    def forward(
        self, o: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor, memory_bias: torch.Tensor
    ) -> CopyOutput:
        """o (B, T, D) decoder outputs, memory h (B, S, D), keys = project_keys(memory),
        memory_bias (B, 1, 1, S) additive (-inf at padding)."""
        scores = matmul(o, keys.transpose(1, 2)).float() + memory_bias[:, 0].float()  # (B, T, S)
        attn = torch.softmax(scores, dim=-1)
        context = matmul(attn.to(memory.dtype), memory)
        gate = torch.sigmoid(self.gate(torch.cat([o, context], dim=-1))).squeeze(-1)
        return CopyOutput(attn, gate, context)


# --------------------------------------------------------------------------------------------
# Per-document placeholders for out-of-vocabulary words
# --------------------------------------------------------------------------------------------
class OOVSlots(nn.Module):
    """K learned placeholder vectors: slot j stands for the j-th distinct word outside the vocabulary
    of *this* document's source (the order of first occurrence, `batching.encode_example`'s extended
    id V + j), in the encoder's input and, after the pointer copies that word, in the decoder's.

    Without them every OOV word enters as the one `<unk>` vector, so neither attention nor M2's rarity
    can tell "fahrenheit" from "celsius" in "degrees fahrenheit to degrees celsius", and the decoder
    cannot tell which of them it has copied already. The slot is *added* to `<unk>`'s vector: the
    model still reads "a word outside the vocabulary", now "the j-th such word". The j-th OOV word of
    a document says nothing about its meaning (that is what the vocabulary is for), only which
    positions hold the same word: the copy attention can point at one of them. Words beyond the K-th
    read `<unk>` alone. Initialised like the word embeddings, N(0, 1/dim).
    """

    def __init__(self, slots: int, dim: int) -> None:
        super().__init__()
        self.vectors = nn.Embedding(slots, dim)
        nn.init.normal_(self.vectors.weight, std=dim**-0.5)

    def forward(self, slot: torch.Tensor) -> torch.Tensor:
        """slot (B, L) long, j >= 0 for the j-th OOV word, -1 elsewhere -> (B, L, dim), 0 where no slot."""
        k = self.vectors.num_embeddings
        has = (slot >= 0) & (slot < k)
        return self.vectors(slot.clamp(0, k - 1)) * has[..., None].to(self.vectors.weight.dtype)


class OOVSpelling(nn.Module):
    """What a word outside the vocabulary looks like: the mean of K hashed character-3-gram vectors
    (fastText's subword vectors, Bojanowski et al. 2017; `batching.spelling_hashes` gives the 3-grams'
    CRC-32 values, bucket = value mod K).

    A slot tells the j-th OOV word of a document from the others, not what it is: "celsius" and
    "x_min" are the same kind of thing to the encoder, so the pointer cannot learn which kind of
    word a reference keeps. A word's 3-grams carry its shape (a capital, digits, an underscore, a
    suffix) and, for a word training saw, something of the word itself; they are shared by every
    word that has them, so a word seen once or never still gets a vector trained on others.
    Initialised like the word embeddings, N(0, 1/dim); bucket collisions are the price of a fixed size.
    """

    def __init__(self, buckets: int, dim: int) -> None:
        super().__init__()
        self.vectors = nn.Embedding(buckets, dim)
        nn.init.normal_(self.vectors.weight, std=dim**-0.5)

    def forward(self, hashes: torch.Tensor) -> torch.Tensor:
        """hashes (B, J, G) long CRC-32 values, -1 padding (`Batch.oov_spelling`) -> (B, J, dim), the
        mean over each word's 3-grams (0 for a row without any)."""
        real = hashes >= 0
        vectors = self.vectors(hashes.clamp(min=0) % self.vectors.num_embeddings)
        total = (vectors * real[..., None].to(vectors.dtype)).sum(dim=2)
        return total / real.sum(dim=2, keepdim=True).clamp(min=1).to(vectors.dtype)


def embed_words(embed: nn.Embedding, slots: OOVSlots | None, tokens: torch.Tensor, vocab_size: int,
                spelled: torch.Tensor | None = None) -> torch.Tensor:
    """tokens (B, L) extended ids -> (B, L, E): a vocabulary word (id < V) its own row; the extended
    id V + j of a document's j-th OOV word `<unk>`'s row, plus slot j's vector when the model has
    `slots` (j < K), plus row j of `spelled` (B, J, E), that word's `OOVSpelling`, when given."""
    vectors = embed(tokens.masked_fill(tokens >= vocab_size, UNK))
    oov = torch.where(tokens >= vocab_size, tokens - vocab_size, -1)
    if slots is not None:
        vectors = vectors + slots(oov).to(vectors.dtype)
    if spelled is not None and spelled.shape[1]:
        rows = oov.clamp(0, spelled.shape[1] - 1)
        picked = spelled.gather(1, rows[..., None].expand(-1, -1, spelled.shape[2]))
        vectors = vectors + picked.to(vectors.dtype) * (oov >= 0)[..., None].to(vectors.dtype)
    return vectors
