"""BERT encoder with a two-stage decoder and a copy gate (Roy Choudhury 2020 ch. 10, after Zhang et al. 2019).

    x = <s> x_1 … x_m </s> ──BERT──► H (B, S, D)                                          (Eqn 10.1)
    stage 1 (draft):  <s> a_<t ─BERT embeddings─► N × causal decoder layer (H) ─► o_t ─► P(a_t | a_<t, H)
    stage 2 (refine): <s> a_1 … [MASK]_t … a_L </s> ─BERT─► N × decoder layer (H) ─► o_t ─► P(y_t | a_≠t, H)
    both stages:      u_t^j = o_t W_c h_j, a = softmax(u), g_t = σ(w_g·[o_t; Σ a h])
                      P_t(w) = (1 − g_t)·P_vocab(w) + g_t·Σ_{i: x_i = w} a_t^i     (Eqn 10.4-10.6)
    L = L_dec1 + L_dec2 (Eqn 10.7), both teacher forced: in training the draft is the reference.

Choices Roy Choudhury 2020 leaves open, made here:
- **Post-LN decoder layers** like the BERT encoder (Roy Choudhury 2020 §9.8.5: "followed in the decoder side as
  well"), GELU feed-forward, the shared attention/feed-forward layers of `sumpipe.models.layers`.
- **Embeddings**: both decoders read BERT's embedding layer (word + learned position + LayerNorm)
  and predict through its word embeddings, transposed (tied), plus an output bias; `<mask>` is never
  predicted.
- **One BERT for the source and the draft**: stage 2 encodes the masked draft with the same encoder,
  the same weights, that read the source (`self.encoder` in both). The thesis's "processed through another
  BERT model" (§10.2) reads either as a second BERT or as another pass of the one; this is the second
  reading (no option: a second copy would double the encoder's 110 M parameters).
- **The refine decoder** reads BERT's contextual vectors of the masked draft with bidirectional
  self-attention (the masked position hides the word, the other words are all visible: a_≠t) and
  cross-attends to H; its output at the masked position predicts y_t.
- **Batched masking**: the L masked variants of a draft are one (B·L, L + 2) batch through BERT and
  the refine decoder's self-attention; its cross-attention sees them as one (B, L·(L + 2)) query
  sequence per document, so H is never copied L times, and its last layer computes only the masked
  position of each variant. Training may mask k sampled positions per summary instead of all L
  (`refine_positions`; the thesis masks all).
- **Refining at inference** masks each draft position against the same draft (as in training) and
  takes the best non-special piece at every position at once: one batched pass, deterministic.
- Sources enter as `<s>` pieces `</s>` (BERT's [CLS] … [SEP]); the copy vocabulary is the piece
  vocabulary itself, so there are no out-of-vocabulary extended ids (`n_oov` = 0).

Decoding the draft implements `sumpipe.models.protocol.Decodable` (beam, greedy, sampling of
`sumpipe.decode.search`); `refine(batch, drafts)` then rewrites the drafts.

Length control (`length_control: words | bytes`, `length_dropout`, as the word families'
`sumpipe.models.length`): the draft decoder's input embeddings get the vector of the remaining length
(`RemainingLength`), counted over pieces exactly as the detokenised text (`sumpipe.models.piece_length`),
so the draft is written to a budget (`decode.target_length`). The refine stage reads no length: it keeps
the draft's pieces count, but a rewritten piece may change the bytes. `none` builds the model as before.

Shapes: B batch, S source pieces, T summary positions, L draft words, D width, V pieces.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from sumpipe.config import EncoderConfig, Params, PathsConfig
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.models.batching import Batch, Example, collate
from sumpipe.models.bert import BertEncoder, init_bert_weights
from sumpipe.models.card import VOCAB_FILE
from sumpipe.models.known_words import KnownWords, PieceTrie, first_pieces
from sumpipe.models.layers import BilinearCopyGate, FeedForward, MultiHeadAttention, key_padding_bias, pointer_mix
from sumpipe.models.length import LENGTH_CONTROLS, LengthControl, RemainingLength, check_budget, check_length_dropout
from sumpipe.models.linear import linear
from sumpipe.models.loss import label_smoothed_nll
from sumpipe.models.piece_length import PieceLengthState, piece_costs, piece_remaining_lengths
from sumpipe.models.registry import Family, TaskData, register_family
from sumpipe.models.task import SummarizationTask
from sumpipe.models.vocabulary import VocabularyKind
from sumpipe.names import BOS, EOS, PAD, SENTENCE_END, UNK
from sumpipe.subword.pieces import MASK, MODEL_FILE, N_SPECIAL_PIECES, SubwordVocab
from sumpipe.validation import MAX_LAYERS, MAX_VOCAB, from_dict, require, require_at_most
from sumpipe.vocab.ngrams import WORDS_FILE

KV = tuple[torch.Tensor, torch.Tensor]
NEG_INF = float("-inf")
KNOWN_WORDS_KEY = b"known_words"  # vocab.parquet's metadata key of the training words (`PieceVocabulary`)


@dataclass(frozen=True)
class Bert2StageArch:
    """The family's architecture: `families.bert2stage` in params.yaml, with `encoder` (the
    `pretrain.encoder` section) and the two folders training reads (`paths.subword`, `paths.pretrain`:
    recorded in the model card, never read when decoding) filled in from params.

    Roy Choudhury 2020: 12 decoder layers in each stage (as many as BERT-base's encoder), dropout 0.1.
    `max_source_tokens` / `max_summary_tokens` count pieces, the source's `<s>`/`</s>` included;
    `vocab_size` is set from the subword model at training. `pretrained: false` starts the encoder
    from random weights (an ablation); `refine: false` decodes the draft only. `refine_positions` = k
    trains stage 2 on k random positions per summary instead of all L (a cheaper, unbiased estimate of
    L_dec2; null = all, as the thesis). `length_control` (`none` | `words` | `bytes`) and `length_dropout`:
    the draft decoder reads the summary's remaining length (module doc), as the word families.
    """

    n_decoder_layers: int = 1
    dropout: float = 0.0
    max_source_tokens: int = 128
    max_summary_tokens: int = 24
    refine: bool = True
    refine_positions: int | None = 4  # stage-2 positions per summary in training (null: all, as the thesis)
    pretrained: bool = True
    vocab_size: int = 0
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    subword_dir: str = PathsConfig.subword  # paths.subword
    encoder_dir: str = PathsConfig.pretrain  # paths.pretrain
    length_control: LengthControl = "none"
    length_dropout: float = 0.0

    def check(self, key: str) -> None:
        require(self.n_decoder_layers >= 1, f"{key}.n_decoder_layers", "must be >= 1")
        require_at_most(self.n_decoder_layers, MAX_LAYERS, f"{key}.n_decoder_layers")
        require_at_most(self.vocab_size, MAX_VOCAB, f"{key}.vocab_size")
        require(0.0 <= self.dropout < 1.0, f"{key}.dropout", "must be in [0, 1)")
        require(self.max_source_tokens >= 3, f"{key}.max_source_tokens", "must be >= 3")
        require(self.max_source_tokens <= self.encoder.max_positions, f"{key}.max_source_tokens",
                f"must be <= the encoder's max_positions ({self.encoder.max_positions})")
        require(self.max_summary_tokens >= 1, f"{key}.max_summary_tokens", "must be >= 1")
        require(self.refine_positions is None or self.refine_positions >= 1, f"{key}.refine_positions",
                "must be >= 1 (or null: every position)")
        require(self.max_summary_tokens + 2 <= self.encoder.max_positions, f"{key}.max_summary_tokens",
                f"must be <= the encoder's max_positions - 2 ({self.encoder.max_positions - 2})")
        require(self.length_control in LENGTH_CONTROLS, f"{key}.length_control",
                f"must be one of {', '.join(LENGTH_CONTROLS)}")
        check_length_dropout(self.length_control, self.length_dropout, f"{key}.length_dropout")


# --------------------------------------------------------------------------------------------
# Pieces -> examples
# --------------------------------------------------------------------------------------------
def encode_pieces_example(example_id: str, source_ids: Sequence[int], summary_ids: Sequence[int],
                          max_source_tokens: int, max_summary_tokens: int) -> Example:
    """A `Batch`-compatible example over pieces: src = `<s>` pieces `</s>` (cut to max_source_tokens),
    trg_inp = `<s>` summary, trg_ext = summary `</s>` (summary cut to max_summary_tokens pieces);
    src_ext = src (copying needs no extended ids), src_freq = 0, no OOV words."""
    src = np.array([BOS, *list(source_ids)[: max_source_tokens - 2], EOS], dtype=np.int64)
    trg = np.asarray(list(summary_ids)[:max_summary_tokens], dtype=np.int64)
    return Example(id=example_id, src=src, src_ext=src, src_freq=np.zeros(len(src), np.float32),
                   trg_inp=np.concatenate([[BOS], trg]).astype(np.int64),
                   trg_ext=np.concatenate([trg, [EOS]]).astype(np.int64), oov_words=[])


# --------------------------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------------------------
class PostLNDecoderLayer(nn.Module):
    """y = LN(y + SelfAttn(y)); y = LN(y + CrossAttn(y, H)); y = LN(y + FF(y)).

    `variants` > 1: y holds B·variants rows whose cross-attention goes to the same document's H
    (B rows of memory): they are folded into one longer query sequence per document.
    `query_index` (N,): compute only that position of each row (its keys and values still come
    from every position): the refine decoder's last layer needs just the masked position.
    """

    def __init__(self, cfg: EncoderConfig, dropout: float) -> None:
        super().__init__()
        d = cfg.d_model
        self.self_attn = MultiHeadAttention(d, cfg.n_heads)
        self.norm1 = nn.LayerNorm(d, eps=cfg.layer_norm_eps)
        self.cross_attn = MultiHeadAttention(d, cfg.n_heads)
        self.norm2 = nn.LayerNorm(d, eps=cfg.layer_norm_eps)
        self.ff = FeedForward(d, cfg.d_ff, activation="gelu")
        self.norm3 = nn.LayerNorm(d, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y: torch.Tensor, memory_kv: KV, memory_bias: torch.Tensor, *, causal: bool,
                self_bias: torch.Tensor | None = None, past_kv: KV | None = None,
                variants: int = 1, query_index: torch.Tensor | None = None) -> tuple[torch.Tensor, KV]:
        query = y if query_index is None else y[torch.arange(y.shape[0], device=y.device), query_index][:, None]
        att = self.self_attn(query, y, past_kv=past_kv, bias=self_bias, causal=causal and past_kv is None)
        y = self.norm1(query + self.dropout(att.out))
        n, t, d = y.shape
        folded = y.reshape(n // variants, variants * t, d)
        cross = self.cross_attn(folded, kv=memory_kv, bias=memory_bias).out.reshape(n, t, d)
        y = self.norm2(y + self.dropout(cross))
        return self.norm3(y + self.dropout(self.ff(y))), att.kv


@dataclass
class Bert2StageState:
    """Draft-decoding state for N rows; caches are per decoder layer, (N, H, L, Dh)."""

    src: torch.Tensor  # (N, S) piece ids (the copy vocabulary)
    memory: torch.Tensor  # H (N, S, D)
    memory_bias: torch.Tensor  # (N, 1, 1, S)
    cross_kv: list[KV]
    copy_keys: torch.Tensor  # W_c H (N, S, D)
    self_kv: list[KV]
    step: int
    doc: torch.Tensor  # (N,) which document's H row i holds
    length: PieceLengthState | None = None  # decoding to a budget (length control)

    def index_select(self, idx: torch.Tensor) -> Bert2StageState:
        idx = idx.to(self.src.device)
        if self.length is not None:
            return replace(replace(self, length=None).index_select(idx), length=self.length.index_select(idx))
        pick = lambda kv: (kv[0].index_select(0, idx), kv[1].index_select(0, idx))  # noqa: E731
        doc = self.doc.index_select(0, idx)
        if torch.equal(doc, self.doc):  # beams reordered within their documents: H-side caches stay
            return replace(self, self_kv=[pick(kv) for kv in self.self_kv])
        return Bert2StageState(
            src=self.src.index_select(0, idx), memory=self.memory.index_select(0, idx),
            memory_bias=self.memory_bias.index_select(0, idx), cross_kv=[pick(kv) for kv in self.cross_kv],
            copy_keys=self.copy_keys.index_select(0, idx), self_kv=[pick(kv) for kv in self.self_kv],
            step=self.step, doc=doc)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------
class Bert2Stage(nn.Module):
    """See the module docstring. V = `arch.vocab_size`, the subword model's pieces."""

    never_predicted: torch.Tensor  # (V,) bool, the buffer registered in __init__
    piece_bytes: torch.Tensor  # (V,) with length control: `piece_costs`, set by `set_piece_costs`
    piece_starts_word: torch.Tensor  # (V,) bool, likewise

    def __init__(self, arch: Bert2StageArch) -> None:
        super().__init__()
        encoder_cfg, vocab_size = arch.encoder, arch.vocab_size
        if vocab_size <= N_SPECIAL_PIECES:
            raise ValueError(f"vocab_size must be > {N_SPECIAL_PIECES} (set it from the subword model)")
        self.encoder_cfg, self.arch, self.vocab_size = encoder_cfg, arch, vocab_size
        self.encoder = BertEncoder(encoder_cfg, vocab_size)
        self.draft_layers = nn.ModuleList(PostLNDecoderLayer(encoder_cfg, arch.dropout)
                                          for _ in range(arch.n_decoder_layers))
        self.refine_layers = nn.ModuleList(PostLNDecoderLayer(encoder_cfg, arch.dropout)
                                           for _ in range(arch.n_decoder_layers))
        self.draft_copy = BilinearCopyGate(encoder_cfg.d_model)
        self.refine_copy = BilinearCopyGate(encoder_cfg.d_model)
        self.output_bias = nn.Parameter(torch.zeros(vocab_size))
        for module in (self.draft_layers, self.refine_layers, self.draft_copy, self.refine_copy):
            init_bert_weights(module)
        never = torch.zeros(vocab_size, dtype=torch.bool)
        never[MASK] = True
        self.register_buffer("never_predicted", never, persistent=False)
        # last, so every other weight draws what it drew before length control existed
        self.length = RemainingLength(encoder_cfg.d_model) if arch.length_control != "none" else None
        self.piece_costs_set = False
        if self.length is not None:  # saved with the weights: a loaded model counts as it was trained
            self.register_buffer("piece_bytes", torch.zeros(vocab_size, dtype=torch.long))
            self.register_buffer("piece_starts_word", torch.zeros(vocab_size, dtype=torch.bool))
            self.register_load_state_dict_post_hook(lambda module, keys: setattr(module, "piece_costs_set", True))

    def set_piece_costs(self, itos: Sequence[str]) -> None:
        """With length control: what each piece costs (`piece_costs` of the subword model's pieces, V of
        them), for teacher forcing; `warm_start` sets it before training, a loaded model has it."""
        if self.length is None:
            return
        if len(itos) != self.vocab_size:
            raise SumpipeError(f"the subword model has {len(itos)} pieces, the model {self.vocab_size}")
        size, starts = piece_costs(itos)
        self.piece_bytes.copy_(torch.from_numpy(size))
        self.piece_starts_word.copy_(torch.from_numpy(starts))
        self.piece_costs_set = True

    def teacher_remaining(self, batch: Batch) -> torch.Tensor:
        """(B, T) the remaining length at each draft input position of the reference (module doc)."""
        if not self.piece_costs_set:
            raise SumpipeError("a bert2stage model with length control needs its pieces' costs "
                               "(set_piece_costs; warm_start sets them for training)")
        return piece_remaining_lengths(batch.trg_inp, batch.trg_mask, self.piece_bytes, self.piece_starts_word,
                                       self.arch.length_control)

    # ---- pieces ------------------------------------------------------------------------------
    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src, src_mask (B, S) -> H (B, S, D), memory bias (B, 1, 1, S)."""
        return self.encoder(src, src_mask), key_padding_bias(src_mask)

    def _output(self, o: torch.Tensor, copy: BilinearCopyGate, memory: torch.Tensor, copy_keys: torch.Tensor,
                memory_bias: torch.Tensor, src: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """o (B, T, D) -> log P (B, T, V) with the copy gate mixed in, and {"p_gen", "attn"}."""
        logits = linear(o, self.encoder.embeddings.word.weight, self.output_bias)
        logits = logits.masked_fill(self.never_predicted, NEG_INF)
        c = copy(o, memory, copy_keys, memory_bias)
        log_probs = pointer_mix(logits, 1.0 - c.copy_gate, c.copy_attn, src, 0)
        return log_probs, {"p_gen": 1.0 - c.copy_gate.float(), "attn": c.copy_attn.float()}

    def _draft(self, x: torch.Tensor, cross_kv: list[KV], memory_bias: torch.Tensor,
               past: list[KV] | None) -> tuple[torch.Tensor, list[KV]]:
        new = []
        for i, layer in enumerate(self.draft_layers):
            x, kv = layer(x, cross_kv[i], memory_bias, causal=True, past_kv=None if past is None else past[i])
            new.append(kv)
        return x, new

    # ---- teacher forcing ---------------------------------------------------------------------
    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Draft log P (B, T, V) over trg_ext; refine log P (B, K, V) at K word positions of each
        reference and their targets (B, K) (`<pad>` where a summary has fewer words). K = every
        position, or in training `arch.refine_positions` drawn at random (see `refine_positions`)."""
        memory, bias = self.encode(batch.src, batch.src_mask)
        cross_kv = [cast(PostLNDecoderLayer, layer).cross_attn.project_kv(memory) for layer in self.draft_layers]
        keys = self.draft_copy.project_keys(memory)
        x = self.encoder.embeddings(batch.trg_inp)
        if self.length is not None:
            x = x + self.length(self.teacher_remaining(batch), self.arch.length_dropout)
        o, _ = self._draft(x, cross_kv, bias, None)
        draft, _ = self._output(o, self.draft_copy, memory, keys, bias, batch.src)
        words = batch.trg_inp[:, 1:]
        keep = words != PAD
        positions = self.refine_positions(keep)
        refine = self._refine_log_probs(memory, bias, batch.src, words, keep, positions)
        targets = torch.where(keep.gather(1, positions), words.gather(1, positions), PAD)
        return draft, refine, targets

    def refine_positions(self, keep: torch.Tensor) -> torch.Tensor:
        """(B, K) word positions stage 2 masks: all L (K = L), or in training with
        `arch.refine_positions` = k, k of each summary's positions drawn uniformly without
        replacement (torch's global generator, so a resumed run draws the same; K = min(k, L)).
        The sampled L_dec2 estimates the full sum (two_stage_loss scales it), at k/L of the cost."""
        b, length = keep.shape
        k = self.arch.refine_positions
        if not self.training or k is None or k >= length:
            return torch.arange(length, device=keep.device).expand(b, length)
        draw = torch.rand(b, length).to(keep.device).masked_fill(~keep, -1.0)  # padding last
        return draw.topk(k, dim=1).indices.sort(dim=1).values

    def summed_loss(self, batch: Batch, smoothing: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(L_dec1 + L_dec2 summed over tokens, number of draft target tokens) (Eqn 10.7)."""
        draft, refine, targets = self(batch)
        return two_stage_loss(draft, refine, targets, batch, smoothing, self.vocab_size)

    # ---- stage 2 -----------------------------------------------------------------------------
    @staticmethod
    def masked_variants(words: torch.Tensor, keep: torch.Tensor, positions: torch.Tensor | None = None
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        """words, keep (B, L), positions (B, K) (default: all L) -> (B·K, L + 2) ids of `<s>` words
        `</s>` with word positions[b, k] of variant (b, k) replaced by `<mask>`, and their keep-mask.
        A variant whose position is past the summary's end is padding (the unmasked summary; its
        output is never used)."""
        b, length = words.shape
        if positions is None:
            positions = torch.arange(length, device=words.device).expand(b, length)
        k = positions.shape[1]
        lengths = keep.sum(dim=1)
        seq = torch.full((b, length + 2), PAD, dtype=words.dtype, device=words.device)
        seq[:, 0] = BOS
        seq[:, 1:-1] = torch.where(keep, words, PAD)
        seq.scatter_(1, (lengths + 1)[:, None], EOS)
        seq_keep = seq != PAD
        columns = torch.arange(length + 2, device=words.device)
        hide = (columns[None, None, :] == positions[:, :, None] + 1) & keep.gather(1, positions)[:, :, None]
        variants = torch.where(hide, torch.full_like(seq, MASK)[:, None, :], seq[:, None, :])  # (B, K, L + 2)
        return variants.reshape(b * k, length + 2), seq_keep[:, None, :].expand(b, k, length + 2).reshape(
            b * k, length + 2)

    def _refine_log_probs(self, memory: torch.Tensor, bias: torch.Tensor, src: torch.Tensor,
                          words: torch.Tensor, keep: torch.Tensor, positions: torch.Tensor | None = None
                          ) -> torch.Tensor:
        """log P(y_t | a_≠t, H) (B, K, V) at the word positions (B, K) (default: all) of the drafts
        `words` (B, L)."""
        b, length = words.shape
        if positions is None:
            positions = torch.arange(length, device=words.device).expand(b, length)
        k = positions.shape[1]
        if length == 0 or k == 0:
            return memory.new_zeros(b, k, self.vocab_size)
        ids, ids_keep = self.masked_variants(words, keep, positions)
        context = self.encoder(ids, ids_keep)  # (B·K, L + 2, D)
        self_bias = key_padding_bias(ids_keep)
        masked_at = positions.reshape(-1) + 1
        y = context
        for i, layer in enumerate(self.refine_layers):
            last = i == len(self.refine_layers) - 1
            kv = cast(PostLNDecoderLayer, layer).cross_attn.project_kv(memory)
            y, _ = layer(y, kv, bias, causal=False, self_bias=self_bias,
                         variants=k, query_index=masked_at if last else None)
        at_mask = y.view(b, k, -1)  # the last layer computed the masked positions only
        log_probs, _ = self._output(at_mask, self.refine_copy, memory, self.refine_copy.project_keys(memory),
                                    bias, src)
        return log_probs

    @torch.inference_mode()
    def refine(self, batch: Batch, drafts: Sequence[Sequence[int]], block_adjacent: bool = False) -> list[list[int]]:
        """Refined drafts (`sumpipe.models.protocol.Refinable`): each word position masked against the
        draft, the best non-special piece predicted there (all positions and documents in one batch).
        With `block_adjacent`, left to right, a position whose best piece is the one just chosen before it
        takes its next best (the positions are predicted independently, so the draft search's rule alone
        would not hold). Drafts keep their lengths; with `arch.refine` off they come back unchanged."""
        if not self.arch.refine:
            return [list(d) for d in drafts]
        device = self.output_bias.device
        batch = batch.to(device)
        length = max((len(d) for d in drafts), default=0)
        if length == 0:
            return [[] for _ in drafts]
        words = torch.full((len(drafts), length), PAD, dtype=torch.long, device=device)
        for i, d in enumerate(drafts):
            words[i, : len(d)] = torch.as_tensor(list(d), dtype=torch.long)
        keep = words != PAD
        memory, bias = self.encode(batch.src, batch.src_mask)
        log_probs = self._refine_log_probs(memory, bias, batch.src, words, keep)
        log_probs[..., :N_SPECIAL_PIECES] = NEG_INF
        best = log_probs.argmax(dim=-1)
        if block_adjacent:
            rows = torch.arange(len(drafts), device=device)
            for t in range(1, length):
                step = log_probs[:, t].clone()  # (B, V)
                step[rows, best[:, t - 1]] = NEG_INF
                best[:, t] = step.argmax(dim=-1)
        return [best[i, : len(d)].tolist() for i, d in enumerate(drafts)]

    # ---- draft decoding (sumpipe.models.protocol) ----------------------------------------------
    def start_decoding(self, batch: Batch) -> Bert2StageState:
        device = self.output_bias.device
        batch = batch.to(device)
        memory, bias = self.encode(batch.src, batch.src_mask)
        n, heads = memory.shape[0], self.encoder_cfg.n_heads
        empty = memory.new_zeros(n, heads, 0, self.encoder_cfg.d_model // heads)
        budget = batch.length_budget
        check_budget(self.arch.length_control, getattr(budget, "total", None),
                     getattr(budget, "unit", self.arch.length_control), optional=self.arch.length_dropout > 0)
        length = None if self.length is None or budget is None else PieceLengthState.start(budget, n, device)
        return Bert2StageState(
            src=batch.src, memory=memory, memory_bias=bias,
            cross_kv=[cast(PostLNDecoderLayer, layer).cross_attn.project_kv(memory) for layer in self.draft_layers],
            copy_keys=self.draft_copy.project_keys(memory), self_kv=[(empty, empty) for _ in self.draft_layers],
            step=0, doc=torch.arange(n, device=device), length=length)

    def decode_step(self, state: Bert2StageState, prev_tokens: torch.Tensor
                    ) -> tuple[torch.Tensor, Bert2StageState, dict[str, torch.Tensor]]:
        """prev_tokens (N,) -> log P (N, V), the advanced state, {"p_gen": (N,), "attn": (N, S)}."""
        prev_tokens = prev_tokens.to(state.src.device)
        x = self.encoder.embeddings(prev_tokens[:, None], offset=state.step)
        length = state.length
        if self.length is not None and length is not None:
            remaining, length = length.feed(prev_tokens)
            x = x + self.length(remaining[:, None])
        o, kvs = self._draft(x, state.cross_kv, state.memory_bias, state.self_kv)
        log_probs, info = self._output(o, self.draft_copy, state.memory, state.copy_keys, state.memory_bias,
                                       state.src)
        return log_probs[:, 0], replace(state, self_kv=kvs, step=state.step + 1, length=length), {
            "p_gen": info["p_gen"][:, 0], "attn": info["attn"][:, 0]}


def two_stage_loss(draft: torch.Tensor, refine: torch.Tensor, refine_targets: torch.Tensor, batch: Batch,
                   smoothing: float, vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """L = L_dec1 + L_dec2 (Eqn 10.7), each label-smoothed and summed over its tokens, and the number
    of draft targets (the engine divides by it: the loss per summary token, both stages counted).
    When stage 2 saw a sample of the positions, its mean × the number of summary words estimates
    its sum."""
    mean1, n1 = label_smoothed_nll(draft, batch.trg_ext, batch.trg_mask, smoothing, vocab_size)
    mean2, _ = label_smoothed_nll(refine, refine_targets, refine_targets != PAD, smoothing, vocab_size)
    n_words = (batch.trg_inp[:, 1:] != PAD).sum()
    return mean1 * n1 + mean2 * n_words, n1


# --------------------------------------------------------------------------------------------
# The `bert2stage` family (sumpipe.models.registry)
# --------------------------------------------------------------------------------------------
class Bert2StageTask(SummarizationTask):
    """The summarization task over pieces with the two-stage loss (teacher forced in both stages)."""

    def loss(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        draft, refine, targets = model(batch)
        return two_stage_loss(draft, refine, targets, batch, self.label_smoothing, self.vocab_size)

    def token_accuracy(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Token accuracy of the draft (stage 1, what decoding emits first) under teacher forcing."""
        draft = model(batch)[0]
        right = (draft.argmax(-1) == batch.trg_ext) & batch.trg_mask
        return right.sum(), batch.trg_mask.sum()


class PieceVocabulary(SubwordVocab):
    """The subword model, and the words of the text the model was trained on (`known_words`: the vocab
    stage's `words.parquet`, sources and summaries; None when training had none), which
    `decode.known_words` lets the draft write (`sumpipe.models.known_words`). The model folder's
    vocab.parquet keeps them in its schema metadata, beside the sentencepiece model, one word a line
    (a token of the text convention holds no white space)."""

    known_words: list[str] | None = None

    def to_table(self) -> Any:
        table = super().to_table()
        if self.known_words is None:
            return table
        return table.replace_schema_metadata({**table.schema.metadata,
                                              KNOWN_WORDS_KEY: "\n".join(self.known_words).encode()})

    @classmethod
    def from_table(cls, path: str | os.PathLike) -> PieceVocabulary:
        import pyarrow.parquet as pq

        vocab = cast(PieceVocabulary, super().from_table(path))
        words = (pq.read_schema(path).metadata or {}).get(KNOWN_WORDS_KEY)
        if words is not None:
            try:
                vocab.known_words = words.decode().split("\n") if words else []
            except UnicodeDecodeError:
                raise SumpipeError(f"{path}: its known words are not UTF-8 (a damaged model folder)") from None
        return vocab


class SubwordCodec:
    """Decode-time text <-> pieces (`sumpipe.models.registry.Codec`): a document becomes `<s>` pieces
    `</s>`; generated pieces become words again (sentencepiece detokenisation), so ROUGE and every
    reader see words."""

    def __init__(self, vocab: SubwordVocab, max_source_tokens: int) -> None:
        self.vocab, self.max_source_tokens = vocab, max_source_tokens
        # "." may be a piece of its own or carry the word-start mark ("\u2581.")
        self.sentence_end_ids = tuple(i for i, piece in enumerate(vocab.itos) if piece.lstrip("\u2581") in SENTENCE_END)
        self.piece_costs = piece_costs(vocab.itos)  # (bytes, starts_word): length control's and known words'
        self.starts_word = self.piece_costs[1].tolist()

    @functools.cached_property
    def lexicon(self) -> PieceTrie | None:
        """The training words as piece sequences (None: the model was saved without them)."""
        words = getattr(self.vocab, "known_words", None)
        if words is None:
            return None
        return PieceTrie(pieces for pieces in self.vocab.encode_many(words) if pieces and UNK not in pieces)

    @functools.cached_property
    def lexicon_starts(self) -> torch.Tensor:
        """(V,) bool: the pieces that begin a training word (made once, not for every batch)."""
        assert self.lexicon is not None, "batches.known_words_of checks the lexicon first"
        return first_pieces(self.lexicon, len(self.vocab))

    def known_words(self, batch: Batch) -> KnownWords:
        """The batch's `decode.known_words` constraint: the training words and each document's own."""
        assert self.lexicon is not None, "batches.known_words_of checks the lexicon first"
        sources = [[p for p in row if p >= N_SPECIAL_PIECES] for row in batch.src.tolist()]
        return KnownWords.for_batch(self.starts_word, self.lexicon, sources, self.lexicon_starts)

    def encode(self, example_id: str, source: str) -> Example:
        return encode_pieces_example(example_id, self.vocab.encode(source), [], self.max_source_tokens, 1)

    def collate(self, examples: Sequence[Example]) -> Batch:
        return collate(examples)

    def words(self, ids: Sequence[int], example: Example) -> list[str]:
        return self.vocab.decode(list(ids)).split()

    def source_tokens(self, source: str) -> list[str]:
        """The pieces the model reads (the copy attention's columns), `<s>` and `</s>` included."""
        ids = self.vocab.encode(source)[: self.max_source_tokens - 2]
        return [self.vocab.itos[BOS], *(self.vocab.itos[i] for i in ids), self.vocab.itos[EOS]]

    def length_costs(self) -> tuple[np.ndarray, np.ndarray]:
        """(bytes (V,), starts_word (V,)) of the pieces, what decoding to a budget counts with
        (`sumpipe.decode.batches.length_budget`; `sumpipe.models.piece_length.piece_costs`)."""
        return self.piece_costs


def make_task(data: TaskData) -> Bert2StageTask:
    """Sources and references as pieces (`<s>` source `</s>`; summary cut to max_summary_tokens)."""
    arch, cfg, vocab = data.arch, data.cfg, data.vocab

    def encode(df: Any) -> list[Example]:
        ids, sources, refs = df["id"].astype(str).tolist(), df["source"].tolist(), df["reference"].tolist()
        return [encode_pieces_example(i, s, r, arch.max_source_tokens, arch.max_summary_tokens)
                for i, s, r in zip(ids, vocab.encode_many(sources), vocab.encode_many(refs))]

    return Bert2StageTask(encode(data.train), encode(data.valid), batch_size=cfg.batch_size, seed=cfg.seed,
                          label_smoothing=cfg.label_smoothing, vocab_size=len(vocab))


def arch_defaults(params: Params) -> dict[str, Any]:
    """`families.bert2stage` + the pre-trained encoder's architecture and the folders training reads."""
    base = dict(params.families.get("bert2stage", {}))
    for key in ("encoder", "subword_dir", "encoder_dir", "vocab_size"):
        if key in base:
            raise ConfigError(f"families.bert2stage.{key}: set by the pipeline (pretrain.encoder, paths), not here")
    base.update(encoder=dataclasses.asdict(params.pretrain.encoder), subword_dir=params.paths.subword,
                encoder_dir=params.paths.pretrain)
    return dataclasses.asdict(from_dict(Bert2StageArch, base, "families.bert2stage"))


def _vocab_for_training(vocab_dir: Path, arch: Bert2StageArch) -> tuple[SubwordVocab, Bert2StageArch]:
    """The subword stage's model (`arch.subword_dir`), with the training words of the vocab stage
    (`words.parquet`, for `decode.known_words`; the word vocabulary itself is not used)."""
    vocab = cast(PieceVocabulary, PieceVocabulary.load(arch.subword_dir))
    words = Path(vocab_dir) / WORDS_FILE
    if words.is_file():
        vocab.known_words = _read_words(words)
    return vocab, replace(arch, vocab_size=len(vocab))


def _read_words(path: Path) -> list[str]:
    from sumpipe.io.atomic import read_table

    return [str(word) for word in read_table(path, ["token"]).column("token").to_pylist()]


def warm_start(model: Bert2Stage, arch: Bert2StageArch) -> list[Path]:
    """Copy the pre-trained encoder (`arch.encoder_dir`, the pretrain stage) into the fresh model.

    The encoder must have been pre-trained on this subword model with this architecture: anything
    else is a one-line error. Returns the files read (for the resume fingerprint)."""
    from sumpipe.io.atomic import file_sha256
    from sumpipe.models.bert import ENCODER_CARD, ENCODER_WEIGHTS, load_encoder

    subword = Path(arch.subword_dir) / MODEL_FILE
    if model.length is not None:  # length control counts with the pieces' costs
        model.set_piece_costs(SubwordVocab.load(subword).itos)
    if not arch.pretrained:
        return [subword]
    folder = Path(arch.encoder_dir)
    pretrained, card = load_encoder(folder)
    if card.subword_sha256 != file_sha256(subword):
        raise SumpipeError(f"{folder}: pre-trained on another subword model than {subword} (run `sumpipe pretrain`)")
    if pretrained.encoder.cfg != arch.encoder or pretrained.encoder.vocab_size != arch.vocab_size:
        raise SumpipeError(f"{folder}: the encoder's architecture differs from pretrain.encoder in params.yaml "
                           "(run `sumpipe pretrain`)")
    model.encoder.load_state_dict(pretrained.encoder.state_dict())
    return [subword, folder / ENCODER_CARD, folder / ENCODER_WEIGHTS]


def _save_vocab(vocab: SubwordVocab, model_dir: Path, arch: Bert2StageArch) -> None:
    from sumpipe.io.atomic import write_parquet

    write_parquet(vocab.to_table(), Path(model_dir) / VOCAB_FILE)


def _load_vocab(model_dir: Path, arch: Bert2StageArch) -> SubwordVocab:
    vocab = PieceVocabulary.from_table(Path(model_dir) / VOCAB_FILE)
    if len(vocab) != arch.vocab_size:
        raise SumpipeError(f"{Path(model_dir) / VOCAB_FILE}: has {len(vocab)} pieces, config.json says "
                           f"{arch.vocab_size}")
    return vocab


SUBWORD_VOCABULARY = VocabularyKind(_vocab_for_training, _save_vocab, _load_vocab)

FAMILY = register_family(Family(
    name="bert2stage",
    arch_type=Bert2StageArch,
    build=lambda arch, spec: Bert2Stage(arch),
    make_task=make_task,
    codec=lambda vocab, arch: SubwordCodec(vocab, arch.max_source_tokens),
    vocabulary=SUBWORD_VOCABULARY,
    card_section=lambda model: {"parameters": sum(p.numel() for p in model.parameters()),
                                "encoder_parameters": sum(p.numel() for p in model.encoder.parameters())},
    arch_defaults=arch_defaults,
    warm_start=warm_start,
    # arch keys that cards from before length control lack
    legacy_arch={"length_control": "none", "length_dropout": 0.0},
))
