"""Length control over subword pieces (the `bert2stage` family): `sumpipe.models.length` counted
in sentencepiece pieces instead of words.

The remaining length r_t = L - used_t is the same input as the word families' (`RemainingLength`, the
sinusoid of r through a learnt map, 0 at the position that predicts `</s>` in training, L the budget at
decoding); what changes is what a fed piece costs, so that the count is exactly the detokenised summary's
(`SubwordVocab.decode`: "\u2581" becomes a space, the text's leading space is dropped).

Costs (`piece_costs`, the one place that knows them): a piece's bytes are the UTF-8 length of its text
without its word-start mark "\u2581"; `bytes`: a piece costs its bytes, plus 1 (the space before it) when it
starts a word and some text was written before it; `words`: a piece costs 1 when it starts a word or is
the summary's first piece of text, else 0. The special pieces (`<unk>` .. `<mask>`, ids <
N_SPECIAL_PIECES) write no text and cost 0 (`decode` drops them).

Shapes: B batch, T target positions, N decoding rows (documents x beams), V pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from sumpipe.models.length import LengthBudget
from sumpipe.subword.pieces import N_SPECIAL_PIECES

WORD_START = "\u2581"  # sentencepiece's word-boundary mark


def piece_costs(itos: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(bytes (V,) int64, starts_word (V,) bool) of each piece (module doc); specials: 0 bytes, no word."""
    n = len(itos)
    size = np.zeros(n, dtype=np.int64)
    starts = np.zeros(n, dtype=bool)
    for i in range(N_SPECIAL_PIECES, n):
        piece = itos[i]
        starts[i] = piece.startswith(WORD_START)
        # any mark inside a piece is a space in the text too (sentencepiece never makes one from single spaces)
        size[i] = len(piece.replace(WORD_START, " ").encode("utf-8")) - int(starts[i])
    return size, starts


def piece_step_costs(pieces: torch.Tensor, written: torch.Tensor, piece_bytes: torch.Tensor,
                     starts_word: torch.Tensor, unit: str) -> torch.Tensor:
    """The length that feeding `pieces` (...) adds to the summary; written (...) bool: some text came before.

    piece_bytes, starts_word (V,): `piece_costs`."""
    writes = pieces >= N_SPECIAL_PIECES
    starts = starts_word[pieces]
    if unit == "words":
        return (writes & (starts | ~written)).to(torch.long)
    return piece_bytes[pieces] + (starts & written).to(torch.long)


def piece_remaining_lengths(trg_inp: torch.Tensor, trg_mask: torch.Tensor, piece_bytes: torch.Tensor,
                            starts_word: torch.Tensor, unit: str) -> torch.Tensor:
    """Teacher forcing: (B, T) the remaining length at each decoder input position (0 at padding).

    trg_inp (B, T) the fed pieces (`<s>` at position 0, cost 0), trg_mask (B, T). L is each row's whole
    summary, so r is 0 at its last real position (the one that predicts `</s>`), as
    `sumpipe.models.length.remaining_lengths` for words."""
    writes = ((trg_inp >= N_SPECIAL_PIECES) & trg_mask).to(torch.long)
    written = (writes.cumsum(dim=1) - writes) > 0  # text before position t
    cost = piece_step_costs(trg_inp, written, piece_bytes, starts_word, unit) * trg_mask
    used = cost.cumsum(dim=1)
    return (used[:, -1:] - used) * trg_mask


@dataclass(frozen=True)
class PieceBudget(LengthBudget):
    """A `LengthBudget` over pieces (`SubwordCodec.length_costs`): vocab_bytes (V,) each piece's bytes
    without its word-start mark, starts_word (V,) bool (`piece_costs`)."""

    starts_word: torch.Tensor


@dataclass
class PieceLengthState:
    """Per decoding row: the remaining length before the next piece, and whether the row wrote text yet.

    remaining (N,) long, written (N,) bool; piece_bytes, starts_word (V,) (`piece_costs`)."""

    remaining: torch.Tensor
    written: torch.Tensor
    piece_bytes: torch.Tensor
    starts_word: torch.Tensor
    unit: str

    @classmethod
    def start(cls, budget: LengthBudget, n: int, device: torch.device) -> PieceLengthState:
        starts_word = getattr(budget, "starts_word", None)
        if starts_word is None:
            raise TypeError("a piece model decodes to a PieceBudget (the codec's length_costs), not a word budget")
        return cls(remaining=torch.full((n,), budget.total, dtype=torch.long, device=device),
                   written=torch.zeros(n, dtype=torch.bool, device=device),
                   piece_bytes=budget.vocab_bytes.to(device), starts_word=starts_word.to(device), unit=budget.unit)

    def feed(self, pieces: torch.Tensor) -> tuple[torch.Tensor, PieceLengthState]:
        """pieces (N,) fed at this step -> (remaining after them (N,), the advanced state)."""
        cost = piece_step_costs(pieces, self.written, self.piece_bytes, self.starts_word, self.unit)
        remaining = self.remaining - cost
        written = self.written | (pieces >= N_SPECIAL_PIECES)
        return remaining, replace(self, remaining=remaining, written=written)

    def index_select(self, idx: torch.Tensor) -> PieceLengthState:
        return replace(self, remaining=self.remaining.index_select(0, idx), written=self.written.index_select(0, idx))
