"""The contract between trained models and the decoders (beam search, greedy, sampling).

A model that can be decoded implements `Decodable`. Decoding works on N rows (N = batch × beam):

    state = model.start_decoding(batch)                 # encoder runs once; N = batch size
    state = state.index_select(torch.arange(B).repeat_interleave(k))   # expand to beams
    for step in range(max_len):
        log_probs, state, info = model.decode_step(state, prev_tokens)   # prev_tokens: (N,)
        ...
        state = state.index_select(beam_origin)         # reorder caches after pruning

Shapes and conventions:
- `start_decoding(batch)` takes a `sumpipe.models.batching.Batch` on any device (the model moves it
  to its own) and returns a state for the batch's B rows, step 0, empty caches.
- `prev_tokens` (N,) long: the previous output token as an *extended* id (the decoder maps ids
  >= vocab_size, i.e. copied OOV words, to `<unk>` before embedding); the first step gets `<s>`.
- `log_probs` (N, vocab_size + n_oov) float32: log P(w) over the extended vocabulary
  (pointer-generator mix already applied). Extended id `vocab_size + j` is the j-th OOV word of
  that row's source (`Batch.oov_words[row][j]`).
- `info` may map "p_gen" -> (N,) and "attn" -> (N, S) (copy attention over source positions, 0 at
  padding), both float32, for heat maps and `--json` output; both keys are optional (a family
  without a copy mechanism or attention returns `{}`, and its summaries carry no details).
- Token ids: the special ids of `sumpipe.names` (`<s>` starts, `</s>` ends; `<unk>`, `<pad>` and
  `<s>` are never generated).
- `index_select(idx)` returns a state whose row i is row idx[i] of this one, caches included.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch


class DecoderState(Protocol):
    def index_select(self, idx: torch.Tensor) -> DecoderState: ...


class Decodable(Protocol):
    vocab_size: int

    def start_decoding(self, batch: Any) -> DecoderState: ...

    def decode_step(
        self, state: DecoderState, prev_tokens: torch.Tensor
    ) -> tuple[torch.Tensor, DecoderState, dict[str, torch.Tensor]]: ...


class Refinable(Protocol):
    """Optional second pass of a `Decodable` (Roy Choudhury 2020's refine decoder): `decode_batch` hands it the
    batch and the searched drafts (extended ids, no `</s>`) and keeps the tokens it returns; with
    `block_adjacent` (`decode.block_adjacent_repeat`) no token may follow itself in what it returns."""

    def refine(self, batch: Any, drafts: list[list[int]], block_adjacent: bool = False) -> list[list[int]]: ...
