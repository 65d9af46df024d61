"""The recurrent family (`family: rnn`): GRU/LSTM seq2seq with Bahdanau attention, the
pointer-generator and coverage (Hansen & Petersen 2019 after See et al. 2017; Sokol 2022 §4.3's BiLSTM).

    src ─embed─► BiGRU/BiLSTM × layers ─► h_i (B, S, 2H)                 (padding never read)
                       └─ final fwd/bwd states of the top layer ─bridge─► decoder initial state
    trg_inp ─embed─► GRU/LSTM decoder ─► s_t (B, T, H)
    s_t, h_i, c^t ─AdditiveAttention─► a^t (Eqn 3), context h*_t = Σ a^t_i h_i (Eqn 4)
    P_vocab = softmax(V'(V[s_t, h*_t] + b) + b')                            (Eqn 5)
    p_gen = σ(w_h·h*_t + w_s·s_t + w_x·x_t + b_ptr)                         (Eqn 1)
    P(w) = p_gen·P_vocab(w) + (1 − p_gen)·Σ_{i: w_i = w} a^t_i              (Eqn 2, `layers.pointer_mix`)

Choices, and why:
- **Attention after the recurrence** (Hansen & Petersen 2019 §3.2, Fig. 4: "the attention mechanism is then applied
  to the output of the GRU"): the decoder input is the previous word's embedding only, without See
  et al.'s input feeding of the previous context. So in teacher forcing the decoder RNN runs over all T
  positions in one fused call, and only the attention (cheap next to the RNN) steps through time,
  which is what makes this family affordable on a CPU. The attention query is the decoder output
  s_t (for an LSTM its h, not c).
- **Bridge** (See et al.'s "reduce states"): the top encoder layer's final forward and backward
  states, concatenated, through Linear(2H, H) + ReLU give the decoder's initial h (and, for an LSTM,
  a second bridge of the same final h gives c: See et al. reduce the cells' c, which the unpacked
  encoder does not keep at each sequence's end). This final state is all a decoder with `attention: none` ever sees of
  the source (Hansen & Petersen 2019's non-attentional model).
- **Coverage** (See et al. Eqns 10-13): c^t = Σ_{t'<t} a^{t'} enters the attention through w_c
  (`AdditiveAttention(coverage=True)`) and each step adds covloss_t = Σ_i min(a^t_i, c^t_i)
  (`layers.coverage_loss`), weighted by λ in the task's loss. `coverage_active` switches the
  mechanism on and off at run time, for See et al.'s recipe of a final coverage phase: with it off
  the model computes exactly what a model without coverage would (w_c is unused).
- **Embeddings** are shared by encoder and decoder (one vocabulary, as See et al.); ids >= V (copied
  OOV words) are read as `<unk>`. Without the pointer the extended columns of the output hold -inf.
- `dropout` (0 in See et al.) applies to the embeddings and to the encoder and decoder outputs.

Decoding implements `sumpipe.models.protocol`: `start_decoding` runs the encoder once and projects
the attention keys W_h h_i once; the state carries the decoder's recurrent state (h, and c for an
LSTM) and the coverage vector per row, and `index_select` reorders them with the beams.

Shapes: B batch, S source, T target positions, E embedding, H hidden (per direction in the encoder),
A attention width, V vocabulary, X = V + n_oov.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import nn

from sumpipe.config import TrainConfig
from sumpipe.models.batching import Batch, WordCodec, decoder_input, encode_examples
from sumpipe.models.layers import AdditiveAttention, OOVSlots, OOVSpelling, coverage_loss, embed_words, pointer_mix
from sumpipe.models.length import (
    LENGTH_CONTROLS,
    LengthControl,
    LengthState,
    RemainingLength,
    check_budget,
    check_length_dropout,
    remaining_lengths,
)
from sumpipe.models.linear import Linear
from sumpipe.models.loss import copy_attention_nll, label_smoothed_nll
from sumpipe.models.registry import Family, TaskData, TrainPhase, register_family
from sumpipe.models.task import SummarizationTask
from sumpipe.names import PAD, UNK
from sumpipe.validation import (
    MAX_LAYERS,
    MAX_POSITIONS,
    MAX_VOCAB,
    MAX_WIDTH,
    child_key,
    from_dict,
    require,
    require_at_most,
)


@dataclass(frozen=True)
class RNNArch:
    """Hyper-parameters of one recurrent model (`models.<name>.arch` of a `family: rnn` model).

    See et al. 2017: embedding 128, hidden 256, one BiLSTM layer, vocabulary 50k, inputs 400 and
    summaries 100 tokens, pointer and coverage with λ = 1. Hansen & Petersen 2019: GRU cells, no pointer/coverage.
    Sokol 2022: three BiLSTM encoder layers. `attn_dim` is the width A of the additive attention
    (null: H). `coverage_phase_steps` (with `coverage: true`): train without coverage first, then
    this many updates with it (See et al.: 3,000 after 230,000); null: coverage from the start.
    `oov_slots`: K per-document placeholders for the words outside the vocabulary, as the transformer's
    (`layers.OOVSlots`; 0: every OOV word is the one `<unk>`). `oov_spelling`: K buckets of hashed
    character 3-grams added to an OOV word's vector in the encoder, as the transformer's
    (`layers.OOVSpelling`; 0: none). `length_control`: `words` or `bytes` adds the summary's remaining
    length to the decoder input at each step (Kikuchi et al. 2016's LenEmb;
    `sumpipe.models.length`); `none`: the model as before. `length_dropout`: the share of training summaries
    given no budget, so the model also decodes without one.
    """

    cell: Literal["gru", "lstm"] = "lstm"
    embedding_dim: int = 64
    hidden_dim: int = 64
    layers: int = 1
    attention: Literal["bahdanau", "none"] = "bahdanau"
    attn_dim: int | None = None
    pointer: bool = True
    coverage: bool = False
    coverage_weight: float = 1.0
    coverage_phase_steps: int | None = None
    dropout: float = 0.0
    vocab_size: int = 2000
    max_source_tokens: int = 400
    max_summary_tokens: int = 60
    oov_slots: int = 32
    oov_spelling: int = 0
    length_control: LengthControl = "none"
    length_dropout: float = 0.0

    def check(self, key: str) -> None:
        def k(name: str) -> str:
            return child_key(key, name)

        require(self.length_control in LENGTH_CONTROLS, k("length_control"),
                f"must be one of {', '.join(LENGTH_CONTROLS)}")
        check_length_dropout(self.length_control, self.length_dropout, k("length_dropout"))

        require(0 <= self.oov_slots <= MAX_POSITIONS, k("oov_slots"),
                f"must be in [0, {MAX_POSITIONS}] (0: no placeholders)")
        require(0 <= self.oov_spelling <= MAX_VOCAB, k("oov_spelling"),
                f"must be in [0, {MAX_VOCAB:,}] (0: no spelling vectors)")

        for name in ("embedding_dim", "hidden_dim", "layers", "max_source_tokens", "max_summary_tokens"):
            require(getattr(self, name) >= 1, k(name), "must be >= 1")
        require(self.attn_dim is None or self.attn_dim >= 1, k("attn_dim"), "must be >= 1 (or null)")
        for name, limit in (("embedding_dim", MAX_WIDTH), ("hidden_dim", MAX_WIDTH), ("attn_dim", MAX_WIDTH),
                            ("layers", MAX_LAYERS), ("vocab_size", MAX_VOCAB), ("max_source_tokens", MAX_POSITIONS),
                            ("max_summary_tokens", MAX_POSITIONS)):
            require_at_most(getattr(self, name), limit, k(name))
        require(self.vocab_size > 4, k("vocab_size"), "must be > 4 (four special tokens plus words)")
        require(0.0 <= self.dropout < 1.0, k("dropout"), "must be in [0, 1)")
        require(self.coverage_weight >= 0, k("coverage_weight"), "must be >= 0")
        require(not self.pointer or self.attention != "none", k("pointer"),
                "the pointer copies through the attention: needs attention: bahdanau")
        require(not self.coverage or self.attention != "none", k("coverage"),
                "coverage sums attention weights: needs attention: bahdanau")
        require(self.coverage_phase_steps is None or (self.coverage and self.coverage_phase_steps >= 1),
                k("coverage_phase_steps"), "must be >= 1, and needs coverage: true (or null)")

    @classmethod
    def from_dict(cls, data: dict[str, Any], key: str = "arch") -> RNNArch:
        """Validated like params.yaml: an unknown key or a bad value is a one-line ConfigError."""
        return from_dict(cls, data, key)


# Positions attended at once without coverage: t such that the (B, t, S, A) tanh input stays ~32 MB.
ATTENTION_CHUNK_ELEMENTS = 1 << 23


class BidirectionalEncoder(nn.Module):
    """`layers` bidirectional GRU/LSTM layers over right-padded input, without packing.

    Packed sequences force PyTorch's per-step CPU kernels (a BiLSTM 64/64 over 32 × 88 tokens: 205 ms
    forward + backward packed, 54 ms unpacked on one core, where the fused oneDNN LSTM runs), so each
    direction is a plain unidirectional RNN: the forward one reads the padded batch as is (padding comes
    after every real token, so it never reaches a real position), the backward one reads each sequence
    reversed *within its length* (`reverse_within`), which again leaves the padding at the end. Outputs at
    padding positions are set to 0. The final state of a direction is its output at the last real
    position (forward: position len−1; backward: position 0), i.e. the state after the whole sequence and
    nothing else.
    """

    def __init__(self, rnn: type, input_dim: int, hidden_dim: int, layers: int, dropout: float) -> None:
        super().__init__()
        self.forward_rnns = nn.ModuleList(rnn(input_dim if i == 0 else 2 * hidden_dim, hidden_dim, batch_first=True)
                                          for i in range(layers))
        self.backward_rnns = nn.ModuleList(rnn(input_dim if i == 0 else 2 * hidden_dim, hidden_dim, batch_first=True)
                                           for i in range(layers))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, S, E), mask (B, S) True at real tokens (a prefix) -> outputs (B, S, 2H), final (B, 2H)."""
        lengths = mask.sum(dim=1)
        reverse = reverse_within(lengths, x.shape[1])  # (B, S) gather index; its own inverse
        keep = mask[..., None].to(x.dtype)
        for i, (fwd, bwd) in enumerate(zip(self.forward_rnns, self.backward_rnns)):
            if i:
                x = self.dropout(x)
            ahead, _ = fwd(x)
            behind, _ = bwd(_gather_time(x, reverse))
            x = torch.cat([ahead, _gather_time(behind, reverse)], dim=-1) * keep
        rows = torch.arange(x.shape[0], device=x.device)
        hidden = x.shape[-1] // 2
        final = torch.cat([x[rows, lengths - 1, :hidden], x[:, 0, hidden:]], dim=-1)
        return x, final


def reverse_within(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """(B, width) time index that reverses positions 0..len−1 of each row and keeps the padding after them."""
    t = torch.arange(width, device=lengths.device)[None, :]
    return torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)


def _gather_time(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x (B, S, D), index (B, S) -> x[b, index[b, t]]."""
    return x.gather(1, index[..., None].expand(-1, -1, x.shape[-1]))


RecurrentState = torch.Tensor | tuple[torch.Tensor, torch.Tensor]  # GRU: h (1, N, H); LSTM: (h, c)


def _select_state(state: RecurrentState, idx: torch.Tensor) -> RecurrentState:
    if isinstance(state, tuple):
        return state[0].index_select(1, idx), state[1].index_select(1, idx)
    return state.index_select(1, idx)


@dataclass
class RNNDecoderState:
    """Decoding state for N rows: the recurrent state and coverage move with the beams; the encoder
    side (memory, keys, masks) is per document and moves only when rows change documents."""

    recurrent: RecurrentState  # (1, N, H), or (h, c) for an LSTM
    coverage: torch.Tensor | None  # (N, S) Σ of earlier attention, when coverage is active
    memory: torch.Tensor  # (N, S, 2H) encoder outputs h_i
    keys: torch.Tensor | None  # (N, S, A) W_h h_i, projected once (None without attention)
    src_mask: torch.Tensor  # (N, S)
    src_ext: torch.Tensor  # (N, S)
    n_oov: int
    step: int
    doc: torch.Tensor  # (N,) the document whose encoder output row i holds
    length: LengthState | None = None  # decoding to a budget (length control)

    def index_select(self, idx: torch.Tensor) -> RNNDecoderState:
        """Row i of the result is row idx[i] of this state."""
        idx = idx.to(self.src_mask.device)
        moved = replace(
            self,
            recurrent=_select_state(self.recurrent, idx),
            coverage=None if self.coverage is None else self.coverage.index_select(0, idx),
            length=None if self.length is None else self.length.index_select(idx),
        )
        doc = self.doc.index_select(0, idx)
        if torch.equal(doc, self.doc):  # beams reordered within their documents: encoder side unchanged
            return moved
        return replace(
            moved,
            doc=doc,
            memory=self.memory.index_select(0, idx),
            keys=None if self.keys is None else self.keys.index_select(0, idx),
            src_mask=self.src_mask.index_select(0, idx),
            src_ext=self.src_ext.index_select(0, idx),
        )


@dataclass
class StepsOutput:
    """What the decoder computes for T positions: log P (B, T, X) float32 and the per-position
    diagnostics (each (B, T[, S]) or None when the model has no such thing)."""

    log_probs: torch.Tensor
    p_gen: torch.Tensor | None
    attn: torch.Tensor | None
    coverage_loss: torch.Tensor | None


class RNNSummarizer(nn.Module):
    """Encoder-decoder RNN with optional Bahdanau attention, pointer and coverage (module docstring)."""

    def __init__(self, arch: RNNArch) -> None:
        super().__init__()
        self.arch = arch
        self.vocab_size = arch.vocab_size
        self.pointer = arch.pointer
        self.coverage_active = arch.coverage  # a coverage phase switches it off for the main phase
        e, h = arch.embedding_dim, arch.hidden_dim
        rnn = nn.GRU if arch.cell == "gru" else nn.LSTM
        self.embed = nn.Embedding(arch.vocab_size, e, padding_idx=PAD)
        self.oov_slots = OOVSlots(arch.oov_slots, e) if arch.oov_slots else None
        self.oov_spelling = OOVSpelling(arch.oov_spelling, e) if arch.oov_spelling else None
        self.dropout = nn.Dropout(arch.dropout)
        self.encoder = BidirectionalEncoder(rnn, e, h, arch.layers, arch.dropout)
        self.bridge_h = Linear(2 * h, h)
        self.bridge_c = Linear(2 * h, h) if arch.cell == "lstm" else None
        self.decoder = rnn(e, h, batch_first=True)
        self.attention = (AdditiveAttention(h, 2 * h, arch.attn_dim or h, coverage=arch.coverage)
                          if arch.attention == "bahdanau" else None)
        context_dim = 2 * h if self.attention is not None else 0
        self.out_hidden = Linear(h + context_dim, h)  # V[s_t, h*_t] + b
        self.out_vocab = Linear(h, arch.vocab_size)  # V'(·) + b'
        self.gate = Linear(context_dim + h + e, 1) if arch.pointer else None  # w_h, w_s, w_x, b_ptr
        # last, so every other weight draws what it drew before length control existed
        self.length = RemainingLength(e) if arch.length_control != "none" else None

    # ---- pieces ------------------------------------------------------------------------------
    def _embed(self, tokens: torch.Tensor, spelled: torch.Tensor | None = None) -> torch.Tensor:
        """(B, L) extended ids -> (B, L, E); OOV ids read as <unk> (+ their slot, + their spelling vector
        `spelled` (B, J, E) when given: `layers.embed_words`)."""
        return self.dropout(embed_words(self.embed, self.oov_slots, tokens, self.vocab_size, spelled))

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor,
               oov_spelling: torch.Tensor | None = None) -> tuple[torch.Tensor, RecurrentState]:
        """src (B, S) extended ids (`Batch.src_ext`), src_mask (B, S), oov_spelling (B, J, G)
        (`Batch.oov_spelling`, read when the model has `oov_spelling`) -> memory h_i (B, S, 2H) (0 at
        padding), decoder initial state."""
        spelled = None
        if self.oov_spelling is not None and oov_spelling is not None:
            spelled = self.oov_spelling(oov_spelling)
        memory, final = self.encoder(self._embed(src, spelled), src_mask)
        return self.dropout(memory), self._bridge(final)

    def _bridge(self, final: torch.Tensor) -> RecurrentState:
        """The top layer's final [forward; backward] state (B, 2H) -> decoder state (1, B, H) (an LSTM's
        c too, from the same final h: the encoder does not keep the cells' c at each sequence's end)."""
        h = F.relu(self.bridge_h(final))[None]
        return h if self.bridge_c is None else (h, F.relu(self.bridge_c(final))[None])

    def set_coverage(self, active: bool) -> None:
        """Switch the coverage mechanism on or off (See et al.'s final coverage phase)."""
        if active and not self.arch.coverage:
            raise ValueError("this model has no coverage parameters (arch.coverage is false)")
        self.coverage_active = active

    def _steps(
        self,
        s: torch.Tensor,
        x: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        src_mask: torch.Tensor,
        src_ext: torch.Tensor,
        n_oov: int,
        coverage: torch.Tensor | None,
    ) -> tuple[StepsOutput, torch.Tensor | None]:
        """Decoder outputs s (B, T, H) and inputs x (B, T, E) -> StepsOutput and the coverage after
        the last position. Attention steps through T (coverage depends on the earlier steps); the
        output layers then run over all T positions at once."""
        if self.attention is None:
            logits = self.out_vocab(self.out_hidden(s))
            log_probs = F.pad(torch.log_softmax(logits.float(), dim=-1), (0, n_oov), value=float("-inf"))
            return StepsOutput(log_probs, None, None, None), None
        contexts, weights, cov_losses = [], [], []
        if self.coverage_active:  # c^t depends on the earlier steps' attention: one step at a time
            assert coverage is not None, "coverage_active: the caller passes the running coverage (_zero_coverage)"
            for t in range(s.shape[1]):
                context, a = self.attention(s[:, t], memory, src_mask, keys, coverage)
                cov_losses.append(coverage_loss(a, coverage))
                coverage = coverage + a
                contexts.append(context)
                weights.append(a)
            context, attn = torch.stack(contexts, dim=1), torch.stack(weights, dim=1)  # (B, T, 2H), (B, T, S)
        else:  # positions are independent: chunks of T at once, the (B, t, S, A) intermediate bounded
            assert keys is not None, "a model with attention projects its keys (project_keys)"
            chunk = max(1, ATTENTION_CHUNK_ELEMENTS // max(1, keys.shape[0] * keys.shape[1] * keys.shape[2]))
            for start in range(0, s.shape[1], chunk):
                context, a = self.attention(s[:, start : start + chunk], memory, src_mask, keys)
                contexts.append(context)
                weights.append(a)
            context, attn = torch.cat(contexts, dim=1), torch.cat(weights, dim=1)
        hidden = self.dropout(self.out_hidden(torch.cat([s, context], dim=-1)))
        logits = self.out_vocab(hidden)
        cov = torch.stack(cov_losses, dim=1) if cov_losses else None
        if self.gate is None:
            log_probs = F.pad(torch.log_softmax(logits.float(), dim=-1), (0, n_oov), value=float("-inf"))
            return StepsOutput(log_probs, None, attn, cov), coverage
        p_gen = torch.sigmoid(self.gate(torch.cat([context, s, x], dim=-1))).squeeze(-1)
        log_probs = pointer_mix(logits, p_gen, attn, src_ext, n_oov)
        return StepsOutput(log_probs, p_gen, attn, cov), coverage

    def _zero_coverage(self, memory: torch.Tensor) -> torch.Tensor | None:
        return memory.new_zeros(memory.shape[:2]) if self.coverage_active else None

    # ---- teacher forcing ---------------------------------------------------------------------
    def forward_steps(self, batch: Batch) -> StepsOutput:
        """Teacher forcing over the whole target: log P (B, T, X) and the diagnostics."""
        memory, init = self.encode(batch.src_ext, batch.src_mask, batch.oov_spelling)
        keys = self.attention.project_keys(memory) if self.attention is not None else None
        x = self._embed(decoder_input(batch.trg_inp, batch.trg_ext))
        if self.length is not None:
            assert batch.trg_fed_bytes is not None, "collate fills trg_fed_bytes"
            remaining = remaining_lengths(batch.trg_fed_bytes, batch.trg_mask, self.arch.length_control)
            x = x + self.length(remaining, self.arch.length_dropout)
        s, _ = self.decoder(x, init)
        out, _ = self._steps(self.dropout(s), x, memory, keys, batch.src_mask, batch.src_ext, batch.n_oov,
                             self._zero_coverage(memory))
        return out

    def forward_with_info(self, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """log P (B, T, X) float32 and info {"p_gen": (B, T), "attn": (B, T, S)} (those the model has)."""
        out = self.forward_steps(batch)
        info = {k: v.float() for k, v in (("p_gen", out.p_gen), ("attn", out.attn)) if v is not None}
        return out.log_probs, info

    def forward(self, batch: Batch, steps: bool = False) -> torch.Tensor | StepsOutput:
        """Teacher-forced log P(w) over the extended vocabulary, (B, T, V + n_oov) float32; with
        `steps=True` the whole StepsOutput (the training loss needs the coverage term)."""
        out = self.forward_steps(batch)
        return out if steps else out.log_probs

    # ---- incremental decoding (sumpipe.models.protocol) -------------------------------------
    def start_decoding(self, batch: Batch) -> RNNDecoderState:
        """Run the encoder once for the batch's B rows."""
        device = self.embed.weight.device
        batch = batch.to(device)
        memory, init = self.encode(batch.src_ext, batch.src_mask, batch.oov_spelling)
        budget = batch.length_budget
        check_budget(self.arch.length_control, getattr(budget, "total", None),
                     getattr(budget, "unit", self.arch.length_control), optional=self.arch.length_dropout > 0)
        length = None if self.length is None or budget is None else LengthState.start(budget, batch.oov_words, device)
        return RNNDecoderState(
            recurrent=init,
            coverage=self._zero_coverage(memory),
            memory=memory,
            keys=self.attention.project_keys(memory) if self.attention is not None else None,
            src_mask=batch.src_mask,
            src_ext=batch.src_ext,
            n_oov=batch.n_oov,
            step=0,
            doc=torch.arange(memory.shape[0], device=device),
            length=length,
        )

    def decode_step(
        self, state: RNNDecoderState, prev_tokens: torch.Tensor
    ) -> tuple[torch.Tensor, RNNDecoderState, dict[str, torch.Tensor]]:
        """prev_tokens (N,) extended ids -> log P (N, X), the advanced state, info {"p_gen": (N,),
        "attn": (N, S)} (those the model has)."""
        prev_tokens = prev_tokens.to(state.src_mask.device)
        x = self._embed(prev_tokens[:, None])  # (N, 1, E)
        length = state.length
        if self.length is not None and length is not None:
            remaining, length = length.feed(prev_tokens)
            x = x + self.length(remaining[:, None])
        s, recurrent = self.decoder(x, state.recurrent)
        out, coverage = self._steps(self.dropout(s), x, state.memory, state.keys, state.src_mask,
                                    state.src_ext, state.n_oov, state.coverage)
        info = {k: v[:, 0].float() for k, v in (("p_gen", out.p_gen), ("attn", out.attn)) if v is not None}
        new_state = replace(state, recurrent=recurrent, coverage=coverage, step=state.step + 1, length=length)
        return out.log_probs[:, 0], new_state, info


def build_rnn(arch: RNNArch, *, vocab_size: int | None = None) -> RNNSummarizer:
    """The model `arch` describes; `vocab_size` overrides `arch.vocab_size` (a small corpus may have
    fewer words than asked for)."""
    if vocab_size is not None:
        arch = dataclasses.replace(arch, vocab_size=vocab_size)
    return RNNSummarizer(arch)


# --------------------------------------------------------------------------------------------
# Training: the loss and the coverage phase
# --------------------------------------------------------------------------------------------
class RNNSummarizationTask(SummarizationTask):
    """Table 4.4 batches; loss per target token (See et al. Eqn 13) −log P(w*_t) + λ·Σ_i min(a^t_i, c^t_i).

    The NLL is label-smoothed like every family's (`train.label_smoothing`; See et al. use none), padding
    ignored, `<unk>` targets weighted by `train.unk_target_weight`, plus λ·the copy-attention term
    (`train.copy_attention_weight`, `loss.copy_attention_nll`) with the pointer; the coverage term counts
    while the model's coverage is on. A model without the pointer cannot produce a copied word, so its
    targets read extended ids as `<unk>`.
    """

    def __init__(self, *args: Any, pointer: bool, coverage_weight: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pointer, self.coverage_weight = pointer, coverage_weight

    def loss(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(Σ over target tokens of the label-smoothed NLL + λ·covloss, target-token count)."""
        out = model(batch, steps=True)  # through __call__, so a DDP wrapper syncs the gradients
        target = batch.trg_ext if self.pointer else batch.trg_ext.masked_fill(batch.trg_ext >= self.vocab_size, UNK)
        mean, n_tokens = label_smoothed_nll(out.log_probs, target, batch.trg_mask,
                                            smoothing=self.label_smoothing, n_smooth=self.vocab_size,
                                            weight=self.target_weights(target))
        total = mean * n_tokens
        if self.copy_attention_weight > 0 and out.attn is not None and self.pointer:
            aux, _ = copy_attention_nll(out.attn, batch.src_ext[:, None], batch.src_mask[:, None], target,
                                        batch.trg_mask)
            total = total + self.copy_attention_weight * aux
        if out.coverage_loss is not None and self.coverage_weight > 0:
            total = total + self.coverage_weight * torch.where(batch.trg_mask, out.coverage_loss.float(), 0.0).sum()
        return total, n_tokens

    def token_accuracy(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(right argmax predictions under teacher forcing, target tokens); padding ignored."""
        out = model(batch, steps=True)
        target = batch.trg_ext if self.pointer else batch.trg_ext.masked_fill(batch.trg_ext >= self.vocab_size, UNK)
        right = (out.log_probs.argmax(-1) == target) & batch.trg_mask
        return right.sum(), batch.trg_mask.sum()


def make_task(data: TaskData) -> RNNSummarizationTask:
    arch, cfg = data.arch, data.cfg

    def encode(df: Any) -> list:
        return encode_examples(df, data.vocab, arch.max_source_tokens, arch.max_summary_tokens)

    return RNNSummarizationTask(encode(data.train), encode(data.valid), batch_size=cfg.batch_size, seed=cfg.seed,
                                label_smoothing=cfg.label_smoothing, vocab_size=len(data.vocab),
                                unk_target_weight=cfg.unk_target_weight,
                                copy_attention_weight=cfg.copy_attention_weight,
                                copy_target_weight=cfg.copy_target_weight,
                                pointer=arch.pointer, coverage_weight=arch.coverage_weight)


def training_phases(arch: RNNArch, cfg: TrainConfig, n_batches: int) -> list[TrainPhase]:
    """See et al.'s recipe when `coverage_phase_steps` is set: the `train:` run without coverage, then
    that many updates with it (a fresh optimizer, epochs as needed, no early stopping; the best
    checkpoint of the phase is its best validation loss, which now includes the coverage term).
    See et al. trained 230k updates without coverage, then 3k with it: coverage from the start "did
    not help". Without `coverage_phase_steps`: one phase, the model as built."""
    if arch.coverage_phase_steps is None:
        return [TrainPhase("main", cfg, lambda model: None)]
    steps = arch.coverage_phase_steps
    coverage_cfg = dataclasses.replace(cfg, max_steps=steps, epochs=-(-steps // max(n_batches, 1)), patience=None)
    return [TrainPhase("main", cfg, lambda model: model.set_coverage(False)),
            TrainPhase("coverage", coverage_cfg, lambda model: model.set_coverage(True))]


def _card_section(model: RNNSummarizer) -> dict[str, Any]:
    return {"parameters": sum(p.numel() for p in model.parameters()),
            "recurrent": f"bi{model.arch.cell} x{model.arch.layers} -> {model.arch.cell}"}


FAMILY = register_family(Family(
    name="rnn",
    arch_type=RNNArch,
    build=lambda arch, spec: RNNSummarizer(arch),
    make_task=make_task,
    codec=lambda vocab, arch: WordCodec(vocab, arch.max_source_tokens),
    card_section=_card_section,
    phases=training_phases,
    # arch keys older cards lack: models trained before the OOV placeholders read every OOV word as the one <unk>,
    # without its spelling
    legacy_arch={"oov_slots": 0, "oov_spelling": 0, "length_control": "none",
                 "length_dropout": 0.0},
))
