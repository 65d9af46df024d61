"""Length control over subword pieces: what each piece costs, the teacher-forced remaining lengths, the
decoding state, and that the count is the detokenised summary's own length."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sumpipe.config import SubwordConfig
from sumpipe.models.piece_length import (
    PieceBudget,
    PieceLengthState,
    piece_costs,
    piece_remaining_lengths,
)
from sumpipe.names import BOS, PAD, UNK
from sumpipe.subword.pieces import SubwordVocab
from sumpipe.subword.stage import train_sentencepiece

SPECIALS = ["<unk>", "<pad>", "<s>", "</s>", "<mask>"]
ITOS = [*SPECIALS, "\u2581the", "\u2581caf", "é", "s", "\u2581", "12", "\u2581."]
THE, CAF, E_ACUTE, S, MARK, TWELVE, DOT = range(5, 12)

SENTENCES = ["the café sold 12 crêpes to 3 tourists .", "über 40 cafés closed in 2019 , officials said .",
             "naïve investors lost $ 5 million in the crash .", "the mayor 's office said the café would reopen ."]


def _tables() -> tuple[torch.Tensor, torch.Tensor]:
    size, starts = piece_costs(ITOS)
    return torch.from_numpy(size), torch.from_numpy(starts)


def test_piece_costs_are_the_bytes_without_the_word_start_mark() -> None:
    size, starts = piece_costs(ITOS)
    #                       specials        the caf é  s  ▁  12 ▁.
    assert size.tolist() == [0, 0, 0, 0, 0, 3, 3, 2, 1, 0, 2, 1]
    assert starts.tolist() == [False] * 5 + [True, True, False, False, True, False, True]


def test_teacher_forced_remaining_length_is_the_text_left_after_each_fed_piece() -> None:
    """"the cafés 12 ." is 15 bytes (é is 2), 4 words: after <s> 15 left, "the" 12, " caf" 8, "é" 6, "s" 5, " " 4,
    "12" 2, " ." 0. "és the" (a first piece that continues no word still starts the text, no space before it): 7 bytes.
    "<unk> the": the special writes nothing, so "the" is the first word, no space: 3 bytes."""
    rows = [[BOS, THE, CAF, E_ACUTE, S, MARK, TWELVE, DOT],
            [BOS, E_ACUTE, S, THE, PAD, PAD, PAD, PAD],
            [BOS, UNK, THE, PAD, PAD, PAD, PAD, PAD]]
    trg_inp = torch.tensor(rows)
    mask = trg_inp != PAD
    size, starts = _tables()
    assert piece_remaining_lengths(trg_inp, mask, size, starts, "bytes").tolist() == [
        [15, 12, 8, 6, 5, 4, 2, 0], [7, 5, 4, 0, 0, 0, 0, 0], [3, 3, 0, 0, 0, 0, 0, 0]]
    assert piece_remaining_lengths(trg_inp, mask, size, starts, "words").tolist() == [
        [4, 3, 2, 2, 2, 1, 1, 0], [2, 1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]]


def test_decoding_counts_each_row_own_pieces_and_follows_the_beams() -> None:
    """Budget 10 bytes. Row 0 feeds "the", " caf", "é": 10, 7, 3, 1; row 1 "é", " the", "12": 10, 8, 4, 2."""
    size, starts = _tables()
    state = PieceLengthState.start(PieceBudget(10, "bytes", size, starts), 2, torch.device("cpu"))
    seen = []
    for pieces in ([BOS, BOS], [THE, E_ACUTE], [CAF, THE], [E_ACUTE, TWELVE]):
        remaining, state = state.feed(torch.tensor(pieces))
        seen.append(remaining.tolist())
    assert seen == [[10, 10], [7, 8], [3, 4], [1, 2]]
    moved = state.index_select(torch.tensor([1, 1, 0]))
    assert moved.remaining.tolist() == [2, 2, 1] and moved.written.tolist() == [True] * 3
    remaining, _ = moved.feed(torch.tensor([DOT, S, S]))
    assert remaining.tolist() == [0, 1, 0]
    words = PieceLengthState.start(PieceBudget(3, "words", size, starts), 1, torch.device("cpu"))
    counts = []
    for piece in (BOS, E_ACUTE, S, THE, TWELVE, MARK, TWELVE):  # "és the12 12": 3 words
        remaining, words = words.feed(torch.tensor([piece]))
        counts.append(int(remaining[0]))
    assert counts == [3, 2, 2, 1, 1, 0, 0]


def test_a_word_budget_is_not_a_piece_budget() -> None:
    from sumpipe.models.length import LengthBudget

    with pytest.raises(TypeError, match="PieceBudget"):
        PieceLengthState.start(LengthBudget(10, "bytes", torch.zeros(12, dtype=torch.long)), 1, torch.device("cpu"))


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_the_count_is_the_detokenised_summary_length(model_type: str) -> None:
    """For real sentences (accents, digits, punctuation) encoded by a trained sentencepiece model, the
    pieces' costs add up to the UTF-8 length and the word count of the text `SubwordVocab.decode` gives back
    (as `decode.batches.summary_text` writes it: words joined by single spaces), at every prefix."""
    vocab = SubwordVocab(train_sentencepiece(iter(SENTENCES * 5), SubwordConfig(size=80, model_type=model_type)))
    size, starts = (torch.from_numpy(t) for t in piece_costs(vocab.itos))
    assert "\u2581" in vocab.itos  # a bare mark (before "12", "$"): a space and then a piece that continues it
    for sentence in SENTENCES:
        ids = vocab.encode(sentence)
        trg_inp = torch.tensor([[BOS, *ids]])
        mask = torch.ones_like(trg_inp, dtype=torch.bool)
        by_bytes = piece_remaining_lengths(trg_inp, mask, size, starts, "bytes")[0].tolist()
        by_words = piece_remaining_lengths(trg_inp, mask, size, starts, "words")[0].tolist()
        texts = [vocab.decode(ids[:t]) for t in range(len(ids) + 1)]  # a bare mark last: its space written
        total = len(sentence.encode())
        assert texts[-1] == sentence and by_bytes[0] == total and by_words[0] == len(sentence.split())
        assert by_bytes == [total - len(text.encode()) for text in texts]
        # a bare mark last has begun a word its next piece writes
        began = [int(t > 0 and vocab.itos[ids[t - 1]] == "\u2581") for t in range(len(ids) + 1)]
        assert by_words == [len(sentence.split()) - len(text.split()) - b for text, b in zip(texts, began)]
    assert np.array_equal(piece_costs(vocab.itos)[0][:5], np.zeros(5))
