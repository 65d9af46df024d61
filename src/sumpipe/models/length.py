"""Length control: the decoder is told, at every step, how much of the summary's length is left.

A model with `length_control: words` or `bytes` (the `model:` arch of the transformer family, `families.rnn`
/ `models.<name>.arch` of the rnn family; `none`, the default, builds the model exactly as before) adds to
its decoder input at position t a vector of the *remaining length* r_t = L - used_t, where L is the
summary's length and used_t the length of the t words fed up to position t (Kikuchi et al. 2016's LenEmb
for the recurrent decoder; for the transformer the same vector beside the positions, after Takase & Okazaki
2019's length-difference encoding). At training time L is the reference's own length, so r = 0 exactly at
the position that predicts `</s>`; at decoding time L is the budget (`decode.target_length`) and every
hypothesis of the beam counts its own words, so the search needs no change.

Units. `words`: used_t = t (position 0 feeds `<s>`, position t the t-th word). `bytes`: the UTF-8 length of the t
words joined by single spaces, `len(" ".join(words[:t]).encode())`: the summary text's length
(`decode.batches.summary_text` puts one space or one line break between tokens), which is what DUC's
75-byte cut (`ScoringProtocol.max_bytes`) reads. A word costs its bytes plus one for the space before it,
the first word none.

The vector (`RemainingLength`): the sinusoidal encoding of r (Vaswani et al.'s table, r clamped to
[0, MAX_REMAINING], an overshoot reads as "nothing left") through a learnt linear map, so it finds its
own subspace beside the positions' encoding, and nearby budgets get nearby vectors (a budget rare in
training, 75 bytes and more are 4 % of the Gigaword training headlines, still reads sensibly).

`length_dropout` p (an arch key beside `length_control`): in training each summary is given no budget with
probability p (its length vectors are 0, what a decoder without a budget reads), so the one model also
writes without a budget, planning its own length as a model without length control does (on the
Gigaword pairs, scored by F1 against references of every length, one fixed budget costs a point).

Shapes: B batch, T target positions, N decoding rows (documents x beams), V vocabulary, J a row's OOV words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import torch
from torch import nn

from sumpipe.errors import SumpipeError
from sumpipe.models.batching import word_bytes
from sumpipe.models.layers import sinusoidal_table
from sumpipe.models.linear import Linear
from sumpipe.validation import require

LengthControl = Literal["none", "words", "bytes"]
LENGTH_CONTROLS = ("none", "words", "bytes")
LENGTH_UNITS = ("words", "bytes")
MAX_REMAINING = 1023  # remaining lengths beyond read as this (a budget is checked against MAX_BUDGET first)
MAX_BUDGET = {"words": 200, "bytes": 1000}


def step_costs(fed_bytes: torch.Tensor, position: torch.Tensor, unit: str) -> torch.Tensor:
    """The length the token fed at `position` adds to the summary (0 at position 0, `<s>`).

    fed_bytes (...) the fed token's UTF-8 length, position (...) or a broadcastable int tensor.
    words: 1 from position 1 on; bytes: the word's bytes, plus 1 (its space) from position 2 on."""
    if unit == "words":
        return (position >= 1).to(torch.long).expand_as(fed_bytes)
    return torch.where(position >= 1, fed_bytes + (position >= 2).to(torch.long), 0)


def remaining_lengths(fed_bytes: torch.Tensor, trg_mask: torch.Tensor, unit: str) -> torch.Tensor:
    """Teacher forcing: (B, T) the remaining length at each decoder input position (0 at padding).

    fed_bytes (B, T) the UTF-8 length of the word fed at each position (`Batch.trg_fed_bytes`; 0 for
    `<s>`), trg_mask (B, T). L is each row's whole summary, so r is 0 at its last real position."""
    position = torch.arange(fed_bytes.shape[1], device=fed_bytes.device)[None, :]
    cost = step_costs(fed_bytes, position, unit) * trg_mask
    used = cost.cumsum(dim=1)
    total = used[:, -1:]
    return (total - used) * trg_mask


class RemainingLength(nn.Module):
    """r (...) long -> (..., D): sinusoid(clamp(r, 0, MAX_REMAINING)) through a learnt D x D map (module doc)."""

    table: torch.Tensor

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("table", sinusoidal_table(MAX_REMAINING + 1, dim), persistent=False)
        self.project = Linear(dim, dim, bias=False)

    def forward(self, remaining: torch.Tensor, withheld: float = 0.0) -> torch.Tensor:
        """remaining (B, T) -> (B, T, D); in training, each row's vectors are 0 with probability `withheld`
        (`length_dropout`: that summary is given no budget, as a decoder without one reads it)."""
        vectors = self.project(self.table[remaining.clamp(0, MAX_REMAINING)])
        if self.training and withheld > 0:
            keep = torch.rand(remaining.shape[0], device=remaining.device) >= withheld
            vectors = vectors * keep[:, None, None].to(vectors.dtype)
        return vectors


@dataclass(frozen=True)
class LengthBudget:
    """What decoding to a budget hands the model with the batch (`Batch.length_budget`).

    total: the budget in `unit`; vocab_bytes (V,) the UTF-8 length of each vocabulary word (the codec's),
    so a hypothesis can count the bytes of the words it chose (a copied word's are its own)."""

    total: int
    unit: str
    vocab_bytes: torch.Tensor


@dataclass
class LengthState:
    """Per decoding row: the remaining length before the next token and what each token costs.

    remaining (N,) long; vocab_bytes (V,); oov_bytes (N, J) the bytes of row's OOV source words (extended
    ids V..V+J-1); step: the position of the next token fed (0: `<s>`)."""

    remaining: torch.Tensor
    vocab_bytes: torch.Tensor
    oov_bytes: torch.Tensor
    unit: str
    step: int = 0

    @classmethod
    def start(cls, budget: LengthBudget, oov_words: Sequence[Sequence[str]], device: torch.device) -> LengthState:
        n_oov = max((len(w) for w in oov_words), default=0)
        oov = np.zeros((len(oov_words), n_oov), dtype=np.int64)
        for row, words in enumerate(oov_words):
            oov[row, : len(words)] = word_bytes(list(words))
        return cls(remaining=torch.full((len(oov_words),), budget.total, dtype=torch.long, device=device),
                   vocab_bytes=budget.vocab_bytes.to(device), oov_bytes=torch.from_numpy(oov).to(device),
                   unit=budget.unit)

    def feed(self, tokens: torch.Tensor) -> tuple[torch.Tensor, LengthState]:
        """tokens (N,) extended ids fed at this step -> (remaining after them (N,), the advanced state)."""
        v = self.vocab_bytes.shape[0]
        in_vocab = tokens < v
        own = self.vocab_bytes[tokens.clamp(max=v - 1)]
        if self.oov_bytes.shape[1]:
            copied = self.oov_bytes.gather(1, (tokens - v).clamp(0, self.oov_bytes.shape[1] - 1)[:, None])[:, 0]
            own = torch.where(in_vocab, own, copied)
        cost = step_costs(own, torch.tensor(self.step, device=tokens.device), self.unit)
        remaining = self.remaining - cost
        return remaining, replace(self, remaining=remaining, step=self.step + 1)

    def index_select(self, idx: torch.Tensor) -> LengthState:
        return replace(self, remaining=self.remaining.index_select(0, idx),
                       oov_bytes=self.oov_bytes.index_select(0, idx))


def check_length_dropout(control: str, dropout: float, key: str) -> None:
    """The arch's `length_dropout` (its key named in the error): in [0, 1), and 0 without length control."""
    require(0.0 <= dropout < 1.0, key, "must be in [0, 1)")
    require(dropout == 0.0 or control != "none", key, "needs length_control: words or bytes")


def check_budget(control: str, total: int | None, unit: str, model: str = "the model", optional: bool = False) -> None:
    """One-line SumpipeError unless a budget fits the model: a budget for a model without length control, a
    model with it and no budget (unless `optional`: trained with `length_dropout`, it also writes without
    one), a unit the model does not count in, or a budget out of range."""
    if control == "none":
        if total is not None:
            raise SumpipeError(f"{model} was trained without length control (arch length_control: none): "
                               "it cannot take a target length (--length, decode.target_length)")
        return
    if total is None:
        if optional:
            return
        raise SumpipeError(f"{model} was trained with length control in {control}: give it a target length "
                           f"(--length N --unit {control}, decode.target_length)")
    if unit != control:
        raise SumpipeError(f"{model} counts its length in {control}, not {unit}: --unit {control} "
                           "(decode.length_unit)")
    if not 1 <= total <= MAX_BUDGET[control]:
        raise SumpipeError(f"target length {total} {unit} is out of range for {model}: "
                           f"1 to {MAX_BUDGET[control]} {unit} (--length, decode.target_length)")
