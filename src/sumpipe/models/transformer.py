"""M1 and M2: an encoder-decoder transformer with a pointer-generator layer (Morozovskii 2022 §2.3).

    src ──embed·√D + PE──► N × EncoderLayer ──LayerNorm──► memory (B, S, D)
    trg_inp ─embed·√D + PE─► x ─► N × DecoderLayer(memory) ─LayerNorm─► s (B, T, D)
    s ─► logits = s·Eᵀ (tied) ─► P_vocab
    (s, x, memory) ─► PointerGeneratorHead ─► h, a, p_gen
    P(w) = p_gen·P_vocab(w) + (1 − p_gen)·Σ_{i: src_ext_i = w} a_i   (Eqn 2.18, `layers.pointer_mix`)

Choices the thesis leaves open, made here:
- **Pre-norm** layers (x + Sublayer(LayerNorm(x)), a final LayerNorm on each stack): stable to
  train at 8 layers without a long warm-up, and the final norm's output is exactly the
  "decoder's normalised output" the pointer attention takes as its query (§2.3.1).
- **Embeddings**: source and target share one embedding matrix (one vocabulary for both, as See
  et al.); `tie_embeddings` also uses it as the output projection (Press & Wolf 2017). Embeddings
  are scaled by √D and initialised N(0, 1/D) so the scaled input has unit variance.
- P_vocab comes from s alone (the decoder output has already attended to the source through the
  cross-attention); h feeds p_gen, as in Eqn 2.17.
- **M2** (`rarity=True`, Eqn 2.19, attn_freq = attn ∗ Wᵀ s_freq(k)): in every encoder layer and for
  every head h, the self-attention weight on key k is multiplied by scale_h(k) = exp(w_h·s_freq(k))
  and the row is **renormalised** — implemented as adding w_h·s_freq(k) to the attention logits
  before the softmax. Per head (w is (n_heads,) per layer): heads
  can learn to boost rare words, ignore rarity or damp it. The scale is positive by construction
  (exp of a learned linear function of the rarity); the linear layer's bias would be a constant
  per row and cancels in the renormalisation, so it is left out. w starts at 0 (neutral), where M2
  equals M1 exactly: same weights -> bit-identical outputs in inference (in training the term rides
  in an extra head dimension so that the fused kernel still runs, `layers.MultiHeadAttention`'s
  `key_bias`, and outputs agree to float rounding). Training moves w only if rarity helps.
  Without renormalisation the rows would no longer be distributions and the output scale would
  drift with the document's rarity mix.

The module is the `transformer` family of `sumpipe.models.registry` (arch: `ArchConfig`, the
`model:` section; option `rarity`; word vocabulary; `SummarizationTask`).

Decoding implements `sumpipe.models.protocol`: `start_decoding` runs the encoder once and projects
the cross-attention and pointer keys/values once; `decode_step` feeds one token per row, appending
its keys/values to a per-layer self-attention cache, so a step costs O(1) decoder positions.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Any, cast

import torch
from torch import nn

from sumpipe.config import ModelSpec, Params
from sumpipe.models.batching import Batch, WordCodec, decoder_input, encode_examples
from sumpipe.models.layers import (
    FeedForward,
    MultiHeadAttention,
    OOVSlots,
    OOVSpelling,
    PointerGeneratorHead,
    SinusoidalPositions,
    embed_words,
    key_padding_bias,
    pointer_mix,
)
from sumpipe.models.length import (
    LENGTH_CONTROLS,
    LengthControl,
    LengthState,
    RemainingLength,
    check_budget,
    check_length_dropout,
    remaining_lengths,
)
from sumpipe.models.linear import Linear, linear
from sumpipe.models.registry import Family, TaskData, register_family
from sumpipe.models.task import SummarizationTask
from sumpipe.models.vocabulary import OOV_RARITIES
from sumpipe.names import PAD
from sumpipe.validation import (
    MAX_FF_WIDTH,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_POSITIONS,
    MAX_VOCAB,
    MAX_WIDTH,
    child_key,
    from_dict,
    require,
    require_at_most,
    require_fits_in_memory,
)

KV = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class ArchConfig:
    """Transformer hyper-parameters shared by every model unless a model overrides them: the `model:`
    section of params.yaml (validated when a model is resolved, errors naming `model.<key>`), with
    `models.<name>.arch` on top (errors naming `models.<name>.arch.<key>`).

    `dropout` is Vaswani et al.'s residual dropout (each sub-layer's output, the embeddings + PE, and
    the feed-forward hidden layer); `attention_dropout` drops attention weights, off by default as in
    the paper (and because it forces the unfused attention kernel on CPU). `vocab_size` is V, the
    fixed vocabulary (the trainer sets it to the real vocabulary length when that is smaller).
    `max_source_tokens` / `max_summary_tokens` cut inputs and training targets. `oov_slots`: K
    per-document placeholders for the words outside the vocabulary (`layers.OOVSlots`: the j-th
    distinct OOV word of a source reads `<unk>` + slot j in the encoder, and in the decoder after the
    pointer copied it; 0: every OOV word is the one `<unk>`, as in the thesis). `oov_rarity`: M2's
    rarity score of an OOV word, `unknown` the score of a word seen once for every one of them, as in
    the thesis's Appendix A.1, or `count` by its own train count (`Vocabulary.oov_rarity`; only a word
    training never saw at the unknown score). `count` lost on validation (docs/models.md);
    M1 reads no rarity. `oov_spelling`: K buckets of hashed character 3-grams that say what an OOV
    word looks like, added to its vector in the encoder (`layers.OOVSpelling`; 0: none).
    `length_control`: `words` or `bytes` adds the remaining length of the summary to the decoder input
    at each position (`sumpipe.models.length`), so the model writes to a budget; `none`: no such
    input, the model as before. `length_dropout`: the share of training summaries given no budget, so the model
    also decodes without one.
    """

    d_model: int = 64
    d_ff: int = 256
    n_layers: int = 2
    n_heads: int = 4
    dropout: float = 0.0
    attention_dropout: float = 0.0
    vocab_size: int = 2000
    max_source_tokens: int = 400
    max_summary_tokens: int = 60
    tie_embeddings: bool = True
    oov_slots: int = 32
    oov_rarity: str = "unknown"
    oov_spelling: int = 0
    length_control: LengthControl = "none"
    length_dropout: float = 0.0

    def check(self, key: str) -> None:
        require(self.length_control in LENGTH_CONTROLS, child_key(key, "length_control"),
                f"must be one of {', '.join(LENGTH_CONTROLS)}")
        check_length_dropout(self.length_control, self.length_dropout, child_key(key, "length_dropout"))
        for name in ("d_model", "d_ff", "n_layers", "n_heads", "vocab_size", "max_source_tokens",
                     "max_summary_tokens"):
            require(getattr(self, name) >= 1, child_key(key, name), "must be >= 1")
        require(0 <= self.oov_slots <= MAX_POSITIONS, child_key(key, "oov_slots"),
                f"must be in [0, {MAX_POSITIONS}] (0: no placeholders)")
        require(0 <= self.oov_spelling <= MAX_VOCAB, child_key(key, "oov_spelling"),
                f"must be in [0, {MAX_VOCAB:,}] (0: no spelling vectors)")
        require(self.oov_rarity in OOV_RARITIES, child_key(key, "oov_rarity"),
                f"must be one of {', '.join(OOV_RARITIES)}")
        for name, limit in (("d_model", MAX_WIDTH), ("d_ff", MAX_FF_WIDTH), ("n_layers", MAX_LAYERS),
                            ("n_heads", MAX_HEADS), ("vocab_size", MAX_VOCAB),
                            ("max_source_tokens", MAX_POSITIONS), ("max_summary_tokens", MAX_POSITIONS)):
            require_at_most(getattr(self, name), limit, child_key(key, name))
        require(self.d_model % self.n_heads == 0, child_key(key, "n_heads"), "must divide d_model")
        require(0.0 <= self.dropout < 1.0, child_key(key, "dropout"), "must be in [0, 1)")
        require(0.0 <= self.attention_dropout < 1.0, child_key(key, "attention_dropout"), "must be in [0, 1)")
        require(self.vocab_size > 4, child_key(key, "vocab_size"), "must be > 4 (four special tokens plus words)")
        require_fits_in_memory(self.parameters, child_key(key, "d_model"))

    @property
    def parameters(self) -> int:
        """About how many weights the encoder-decoder has (embeddings twice, the worst case untied)."""
        d, ff = self.d_model, self.d_ff
        per_layer = 4 * d * d + 2 * d * ff  # attention projections + feed-forward
        return (2 * self.vocab_size + self.oov_spelling) * d + self.n_layers * 3 * per_layer


class EncoderLayer(nn.Module):
    """Pre-norm self-attention + feed-forward; with `rarity`, M2's per-head rarity term."""

    def __init__(self, arch: ArchConfig, rarity: bool) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(arch.d_model)
        self.self_attn = MultiHeadAttention(arch.d_model, arch.n_heads, arch.attention_dropout)
        self.norm2 = nn.LayerNorm(arch.d_model)
        self.ff = FeedForward(arch.d_model, arch.d_ff, arch.dropout)
        self.dropout = nn.Dropout(arch.dropout)
        # w_h of Eqn 2.19 in log space, one per head; 0 = neutral (M1).
        self.rarity_weight = nn.Parameter(torch.zeros(arch.n_heads)) if rarity else None

    def forward(self, x: torch.Tensor, pad_bias: torch.Tensor | None, src_freq: torch.Tensor) -> torch.Tensor:
        """x (B, S, D), pad_bias (B, 1, 1, S), src_freq (B, S) -> (B, S, D)"""
        rarity = None
        if self.rarity_weight is not None:
            # log scale_h(k) = w_h · s_freq(k): (H,) x (B, S) -> (B, H, S)
            rarity = self.rarity_weight[None, :, None] * src_freq[:, None, :].to(self.rarity_weight.dtype)
        x = x + self.dropout(self.self_attn(self.norm1(x), bias=pad_bias, key_bias=rarity).out)
        return x + self.dropout(self.ff(self.norm2(x)))


class DecoderLayer(nn.Module):
    """Pre-norm causal self-attention (with an optional step cache), cross-attention, feed-forward."""

    def __init__(self, arch: ArchConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(arch.d_model)
        self.self_attn = MultiHeadAttention(arch.d_model, arch.n_heads, arch.attention_dropout)
        self.norm2 = nn.LayerNorm(arch.d_model)
        self.cross_attn = MultiHeadAttention(arch.d_model, arch.n_heads, arch.attention_dropout)
        self.norm3 = nn.LayerNorm(arch.d_model)
        self.ff = FeedForward(arch.d_model, arch.d_ff, arch.dropout)
        self.dropout = nn.Dropout(arch.dropout)

    def forward(
        self,
        y: torch.Tensor,
        memory_kv: KV,
        memory_bias: torch.Tensor | None,
        past_kv: KV | None = None,
    ) -> tuple[torch.Tensor, KV]:
        """y (B, T, D); memory_kv = cross_attn.project_kv(memory); past_kv: the keys/values of
        the earlier positions (decoding, T = 1) or None (teacher forcing, causal over T).
        Returns the new y and this layer's self-attention (k, v) over all positions so far."""
        att = self.self_attn(self.norm1(y), past_kv=past_kv, causal=past_kv is None)
        y = y + self.dropout(att.out)
        y = y + self.dropout(self.cross_attn(self.norm2(y), kv=memory_kv, bias=memory_bias).out)
        return y + self.dropout(self.ff(self.norm3(y))), att.kv


@dataclass
class TransformerDecoderState:
    """Decoding state for N rows. Each cache is a list over decoder layers of (k, v), (N, H, L, Dh)."""

    src_ext: torch.Tensor  # (N, S)
    memory_bias: torch.Tensor  # (N, 1, 1, S)
    cross_kv: list[KV]  # L = S, fixed
    pointer_kv: KV  # L = S, fixed
    self_kv: list[KV]  # L = number of tokens fed so far
    n_oov: int
    step: int
    doc: torch.Tensor  # (N,) the document whose encoder output row i's fixed caches hold
    length: LengthState | None = None  # decoding to a budget (length control)

    def index_select(self, idx: torch.Tensor) -> TransformerDecoderState:
        """Row i of the result is row idx[i] of this state, caches included."""
        idx = idx.to(self.src_ext.device)
        if self.length is not None:
            return replace(replace(self, length=None).index_select(idx), length=self.length.index_select(idx))

        def pick(kv: KV) -> KV:
            return kv[0].index_select(0, idx), kv[1].index_select(0, idx)

        doc = self.doc.index_select(0, idx)
        if torch.equal(doc, self.doc):
            # Beams reordered within their documents: the encoder-side caches are the same for every
            # beam of a document, so only the self-attention cache moves (a third of decode time).
            return replace(self, self_kv=[pick(kv) for kv in self.self_kv])
        return replace(
            self,
            doc=doc,
            src_ext=self.src_ext.index_select(0, idx),
            memory_bias=self.memory_bias.index_select(0, idx),
            cross_kv=[pick(kv) for kv in self.cross_kv],
            pointer_kv=pick(self.pointer_kv),
            self_kv=[pick(kv) for kv in self.self_kv],
        )


class PointerGeneratorTransformer(nn.Module):
    """M1 (`rarity=False`) and M2 (`rarity=True`); see the module docstring.

    V = `arch.vocab_size`, the fixed vocabulary; outputs cover V + n_oov extended ids.
    """

    def __init__(self, arch: ArchConfig, rarity: bool = False) -> None:
        super().__init__()
        self.arch = arch
        self.rarity = rarity
        self.vocab_size = arch.vocab_size
        d = arch.d_model
        self.embed = nn.Embedding(self.vocab_size, d, padding_idx=PAD)
        self.positions = SinusoidalPositions(d, max(arch.max_source_tokens, arch.max_summary_tokens + 1, 1024))
        self.dropout = nn.Dropout(arch.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(arch, rarity) for _ in range(arch.n_layers))
        self.encoder_norm = nn.LayerNorm(d)
        self.decoder_layers = nn.ModuleList(DecoderLayer(arch) for _ in range(arch.n_layers))
        self.decoder_norm = nn.LayerNorm(d)
        self.generator = None if arch.tie_embeddings else Linear(d, self.vocab_size, bias=False)
        self.pointer = PointerGeneratorHead(d, arch.n_heads)
        self.oov_slots = OOVSlots(arch.oov_slots, d) if arch.oov_slots else None
        self.oov_spelling = OOVSpelling(arch.oov_spelling, d) if arch.oov_spelling else None
        nn.init.normal_(self.embed.weight, std=d**-0.5)
        with torch.no_grad():
            self.embed.weight[PAD].zero_()
        # last, so every other weight draws what it drew before length control existed
        self.length = RemainingLength(d) if arch.length_control != "none" else None

    # ---- pieces ------------------------------------------------------------------------------
    def _embed(self, tokens: torch.Tensor, offset: int = 0, spelled: torch.Tensor | None = None) -> torch.Tensor:
        """tokens (B, L) extended ids -> embedding·√D + PE (B, L, D); ids >= V (OOV words) read as
        <unk>, plus their placeholder slot when the model has `oov_slots` and their spelling vector
        `spelled` (B, J, D) when given (`layers.embed_words`)."""
        vectors = embed_words(self.embed, self.oov_slots, tokens, self.vocab_size, spelled)
        return self.positions(vectors * math.sqrt(self.arch.d_model), offset)

    def encode(
        self, src: torch.Tensor, src_freq: torch.Tensor, src_mask: torch.Tensor,
        oov_spelling: torch.Tensor | None = None, unpadded: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """src (B, S) extended ids (`Batch.src_ext`), src_freq (B, S), src_mask (B, S), oov_spelling
        (B, J, G) (`Batch.oov_spelling`, read when the model has `oov_spelling`) -> memory (B, S, D),
        memory_bias (B, 1, 1, S); None with `unpadded` (`Batch.src_unpadded`: no source position is
        padding, so a mask of zeros would only keep SDPA off its flash kernel)."""
        pad_bias = None if unpadded else key_padding_bias(src_mask)
        spelled = None
        if self.oov_spelling is not None and oov_spelling is not None:
            spelled = self.oov_spelling(oov_spelling)
        h = self.dropout(self._embed(src, spelled=spelled))
        for layer in self.encoder_layers:
            h = layer(h, pad_bias, src_freq)
        return self.encoder_norm(h), pad_bias

    def vocab_logits(self, s: torch.Tensor) -> torch.Tensor:
        """s (..., D) -> logits over the fixed vocabulary (..., V)."""
        weight = self.embed.weight if self.generator is None else self.generator.weight
        return linear(s, weight)

    def _decode(
        self,
        x: torch.Tensor,
        memory_kvs: list[KV],
        pointer_kv: KV,
        memory_bias: torch.Tensor | None,
        src_ext: torch.Tensor,
        n_oov: int,
        past_kvs: list[KV] | None,
        positions: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor], list[KV]]:
        """x (B, T, D) decoder input after PE -> log P (B, T, V + n_oov), info, new self-attn caches.

        positions (N,): flat indices b·T + t; the output layer (vocabulary projection, pointer mix)
        then runs at those N positions only and log P and info are (N, ...). In training that skips
        the padding, which on short references is most of the (B, T, V) work.
        """
        y = self.dropout(x)
        new_kvs = []
        for i, layer in enumerate(self.decoder_layers):
            y, kv = layer(y, memory_kvs[i], memory_bias, None if past_kvs is None else past_kvs[i])
            new_kvs.append(kv)
        s = self.decoder_norm(y)
        ptr = self.pointer(s, x, pointer_kv, memory_bias)
        p_gen, copy_attn = ptr.p_gen, ptr.copy_attn
        if positions is not None:
            t = s.shape[1]
            s, p_gen, copy_attn = (z.flatten(0, 1).index_select(0, positions) for z in (s, p_gen, copy_attn))
            src_ext = src_ext.index_select(0, positions // t)  # (N, S): each position's own source
        log_probs = pointer_mix(self.vocab_logits(s), p_gen, copy_attn, src_ext, n_oov)
        info = {"p_gen": p_gen.float(), "attn": copy_attn.float()}
        if positions is None:  # per-head copy attention (B, T, H, S), a view: for heat maps, not training
            info["head_attn"] = ptr.head_attn
        return log_probs, info, new_kvs

    # ---- teacher forcing ---------------------------------------------------------------------
    def forward_with_info(
        self, batch: Batch, targets_only: bool = False
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """log P (B, T, V + n_oov) float32, and info {"p_gen": (B, T), "attn": (B, T, S)};
        `targets_only`: at the N real target positions only (`batch.trg_positions`), (N, ...)."""
        memory, memory_bias = self.encode(batch.src_ext, batch.src_freq, batch.src_mask, batch.oov_spelling,
                                          unpadded=batch.src_unpadded)
        memory_kvs = [cast(DecoderLayer, layer).cross_attn.project_kv(memory) for layer in self.decoder_layers]
        pointer_kv = self.pointer.attention.project_kv(memory)
        x = self._embed(decoder_input(batch.trg_inp, batch.trg_ext))
        if self.length is not None:
            assert batch.trg_fed_bytes is not None, "collate fills trg_fed_bytes"
            remaining = remaining_lengths(batch.trg_fed_bytes, batch.trg_mask, self.arch.length_control)
            x = x + self.length(remaining, self.arch.length_dropout)
        log_probs, info, _ = self._decode(
            x, memory_kvs, pointer_kv, memory_bias, batch.src_ext, batch.n_oov, None,
            batch.trg_positions if targets_only else None,
        )
        return log_probs, info

    def forward(self, batch: Batch, targets_only: bool = False,
                with_info: bool = False) -> torch.Tensor | tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Teacher-forced log P(w) over the extended vocabulary, (B, T, V + n_oov) float32; with
        `targets_only`, (N, V + n_oov) at the real target positions (the training loss needs no more);
        `with_info`: (log P, info) as `forward_with_info` (the copy-attention loss reads info["attn"])."""
        log_probs, info = self.forward_with_info(batch, targets_only)
        return (log_probs, info) if with_info else log_probs

    # ---- incremental decoding (sumpipe.models.protocol) -------------------------------------
    def start_decoding(self, batch: Batch) -> TransformerDecoderState:
        """Run the encoder once for the batch's B rows; caches start empty."""
        device = self.embed.weight.device
        batch = batch.to(device)
        memory, memory_bias = self.encode(batch.src_ext, batch.src_freq, batch.src_mask, batch.oov_spelling)
        assert memory_bias is not None, "decoding keeps the mask: beams of documents of other lengths share caches"
        n = memory.shape[0]
        empty = memory.new_zeros(n, self.arch.n_heads, 0, self.arch.d_model // self.arch.n_heads)
        budget = batch.length_budget
        check_budget(self.arch.length_control, getattr(budget, "total", None),
                     getattr(budget, "unit", self.arch.length_control), optional=self.arch.length_dropout > 0)
        length = None if self.length is None or budget is None else LengthState.start(budget, batch.oov_words, device)
        return TransformerDecoderState(
            src_ext=batch.src_ext,
            memory_bias=memory_bias,
            cross_kv=[cast(DecoderLayer, layer).cross_attn.project_kv(memory) for layer in self.decoder_layers],
            pointer_kv=self.pointer.attention.project_kv(memory),
            self_kv=[(empty, empty) for _ in self.decoder_layers],
            n_oov=batch.n_oov,
            step=0,
            doc=torch.arange(n, device=device),
            length=length,
        )

    def decode_step(
        self, state: TransformerDecoderState, prev_tokens: torch.Tensor
    ) -> tuple[torch.Tensor, TransformerDecoderState, dict[str, torch.Tensor]]:
        """prev_tokens (N,) extended ids -> log P (N, V + n_oov), the advanced state, info
        {"p_gen": (N,), "attn": (N, S) (the heads' mean), "head_attn": (N, H, S) (each copy head)}."""
        prev_tokens = prev_tokens.to(state.src_ext.device)
        x = self._embed(prev_tokens[:, None], offset=state.step)
        length = state.length
        if self.length is not None and length is not None:
            remaining, length = length.feed(prev_tokens)
            x = x + self.length(remaining[:, None])
        log_probs, info, kvs = self._decode(
            x, state.cross_kv, state.pointer_kv, state.memory_bias, state.src_ext, state.n_oov, state.self_kv
        )
        new_state = replace(state, self_kv=kvs, step=state.step + 1, length=length)
        return log_probs[:, 0], new_state, {"p_gen": info["p_gen"][:, 0], "attn": info["attn"][:, 0],
                                            "head_attn": info["head_attn"][:, 0]}


# --------------------------------------------------------------------------------------------
# The family (sumpipe.models.registry)
# --------------------------------------------------------------------------------------------
def build(arch: ArchConfig, spec: ModelSpec) -> PointerGeneratorTransformer:
    """M1, or M2 when the spec asks for `rarity` (the family's one option); `arch` is fully resolved."""
    return PointerGeneratorTransformer(arch, rarity=spec.rarity)


def make_task(data: TaskData) -> SummarizationTask:
    """Table 4.4 encoding of the train/valid frames, length-bucketed batches, label-smoothed NLL."""
    arch, cfg = data.arch, data.cfg

    def encode(df: Any) -> list:
        return encode_examples(df, data.vocab, arch.max_source_tokens, arch.max_summary_tokens)

    return SummarizationTask(encode(data.train), encode(data.valid), batch_size=cfg.batch_size, seed=cfg.seed,
                             label_smoothing=cfg.label_smoothing, vocab_size=len(data.vocab),
                             unk_target_weight=cfg.unk_target_weight,
                             copy_attention_weight=cfg.copy_attention_weight,
                             flash_unpadded=cfg.flash_unpadded,
                             copy_target_weight=cfg.copy_target_weight)


def shared_arch(params: Params) -> ArchConfig:
    """The family's shared architecture: params.yaml's `model:` section, validated (errors name
    `model.<key>`); a model's `arch` overrides go on top (`sumpipe.models.registry.resolve_model`)."""
    return from_dict(ArchConfig, params.model, "model")


def arch_defaults(params: Params) -> dict[str, Any]:
    return dataclasses.asdict(shared_arch(params))


FAMILY = register_family(Family(
    name="transformer",
    arch_type=ArchConfig,
    build=build,
    make_task=make_task,
    codec=lambda vocab, arch: WordCodec(vocab, arch.max_source_tokens),
    options=("rarity",),
    # arch keys older cards lack: models trained before the OOV placeholders read every OOV word as the
    # one <unk>, at the one unknown rarity, without its spelling; before length control, without it
    legacy_arch={"oov_slots": 0, "oov_rarity": "unknown", "oov_spelling": 0, "length_control": "none",
                 "length_dropout": 0.0},
    arch_defaults=arch_defaults,
))
