from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from sumpipe.config import DecodeConfig
from sumpipe.decode.search import beam_search
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.models.batching import collate, encode_examples, word_bytes
from sumpipe.models.length import (
    LengthBudget,
    LengthState,
    RemainingLength,
    check_budget,
    remaining_lengths,
)
from sumpipe.models.rnn import RNNArch, RNNSummarizer
from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer
from sumpipe.names import BOS
from sumpipe.validation import from_dict
from tests.models.tiny import VOCAB, WORDS, overfit

ARCH = ArchConfig(d_model=32, d_ff=64, n_layers=1, n_heads=4, vocab_size=len(VOCAB), max_source_tokens=50,
                  max_summary_tokens=20)
RNN = RNNArch(embedding_dim=32, hidden_dim=32, vocab_size=len(VOCAB), max_source_tokens=50, max_summary_tokens=20)


def _batch(references: list[str], sources: list[str] | None = None):
    sources = sources or ["the big zorro sat on the mat ."] * len(references)
    df = pd.DataFrame({"id": [str(i) for i in range(len(references))], "source": sources, "reference": references})
    return collate(encode_examples(df, VOCAB, 50, 20))


def _budget(total: int, unit: str) -> LengthBudget:
    return LengthBudget(total, unit, torch.from_numpy(word_bytes(VOCAB.itos)))


def test_remaining_length_is_the_summary_left_after_each_fed_word() -> None:
    """"a dog ran" is 9 bytes: after <s> 9 left, after "a" 8, after " dog" 4, after " ran" 0 (the </s> step)."""
    batch = _batch(["a dog ran", "zorro sat"])
    assert batch.trg_fed_bytes.tolist() == [[0, 1, 3, 3], [0, 5, 3, 0]]
    assert remaining_lengths(batch.trg_fed_bytes, batch.trg_mask, "bytes").tolist() == [[9, 8, 4, 0], [9, 4, 0, 0]]
    assert remaining_lengths(batch.trg_fed_bytes, batch.trg_mask, "words").tolist() == [[3, 2, 1, 0], [2, 1, 0, 0]]


def test_decoding_counts_each_hypothesis_own_bytes_copied_words_included() -> None:
    """Row 0 fed "zorro" (a copied OOV, extended id V) then "sat": 14, 14, 9, 5; row 1 "a", "cat": 14, 13, 9."""
    batch = _batch(["x", "y"])
    state = LengthState.start(_budget(14, "bytes"), batch.oov_words, torch.device("cpu"))
    v, cat, sat, a = len(VOCAB), VOCAB.stoi["cat"], VOCAB.stoi["sat"], VOCAB.stoi["a"]
    seen = []
    for tokens in ([BOS, BOS], [v, a], [sat, cat]):
        remaining, state = state.feed(torch.tensor(tokens))
        seen.append(remaining.tolist())
    assert seen == [[14, 14], [9, 13], [5, 9]]
    assert state.index_select(torch.tensor([1, 1, 0])).remaining.tolist() == [9, 9, 5]


def test_remaining_length_vectors_clamp_an_overshoot_to_nothing_left() -> None:
    layer = RemainingLength(8)
    out = layer(torch.tensor([[-3, 0, 5]]))
    assert out.shape == (1, 3, 8)
    torch.testing.assert_close(out[0, 0], out[0, 1])
    assert not torch.allclose(out[0, 1], out[0, 2])


@pytest.mark.parametrize("unit", ["words", "bytes"])
@pytest.mark.parametrize("family", ["transformer", "rnn"])
def test_incremental_decoding_to_the_reference_length_matches_teacher_forcing(family: str, unit: str) -> None:
    """With the budget at the reference's own length the decoder reads the same remaining lengths as in
    training, so every step's distribution is teacher forcing's (the copied "zorro" costs its 5 bytes)."""
    torch.manual_seed(4)
    reference = "zorro sat on the mat ."
    model = (PointerGeneratorTransformer(dataclasses.replace(ARCH, length_control=unit)) if family == "transformer"
             else RNNSummarizer(dataclasses.replace(RNN, length_control=unit))).eval()
    batch = _batch([reference])
    batch.length_budget = _budget(len(reference) if unit == "bytes" else 6, unit)
    with torch.no_grad():
        full = model(batch)
        state = model.start_decoding(batch)
        for t in range(batch.trg_inp.shape[1]):
            prev = batch.trg_ext[:, t - 1] if t > 0 else batch.trg_inp[:, 0]
            step, state, _ = model.decode_step(state, prev)
            torch.testing.assert_close(step, full[:, t], atol=1e-5, rtol=1e-5)
        # a different budget is a different input
        batch.length_budget = _budget(40, unit)
        other, _, _ = model.decode_step(model.start_decoding(batch), batch.trg_inp[:, 0])
    assert not torch.allclose(other, full[:, 0])


@pytest.mark.parametrize("family", ["transformer", "rnn"])
def test_length_control_off_builds_the_model_as_before(family: str) -> None:
    """`none`: no new weights, the same initial weights from the same seed, and no budget taken."""
    torch.manual_seed(7)
    plain = PointerGeneratorTransformer(ARCH) if family == "transformer" else RNNSummarizer(RNN)
    torch.manual_seed(7)
    on = (PointerGeneratorTransformer(dataclasses.replace(ARCH, length_control="bytes")) if family == "transformer"
          else RNNSummarizer(dataclasses.replace(RNN, length_control="bytes")))
    extra = sorted(set(on.state_dict()) - set(plain.state_dict()))
    assert extra == ["length.project.weight"]
    assert all(torch.equal(value, on.state_dict()[key]) for key, value in plain.state_dict().items())
    batch = _batch(["a dog ran"])
    batch.length_budget = _budget(9, "bytes")
    with pytest.raises(SumpipeError, match="trained without length control"):
        plain.start_decoding(batch)


def test_a_tiny_model_trained_with_length_control_writes_to_the_budget() -> None:
    """References are the source's first k words, each source at k = 1..6: only the length input says k.
    Decoded to budgets of 2 and 5 words, every summary has 2 and 5 words."""
    torch.manual_seed(11)
    rng = np.random.default_rng(11)
    documents = [" ".join(rng.choice(WORDS[:-2], size=8, replace=False)) for _ in range(6)]
    pairs = [(doc, k) for doc in documents for k in range(1, 7)]  # each document at every k: only the input tells k
    sources, references = [doc for doc, _ in pairs], [" ".join(doc.split()[:k]) for doc, k in pairs]
    batch = _batch(references, sources)
    model = PointerGeneratorTransformer(dataclasses.replace(ARCH, d_model=16, d_ff=32, length_control="words"))
    losses = overfit(model, batch, lr=2e-2, max_steps=300)
    model.eval()
    test = _batch(["x"] * 4, documents[:4])
    for words in (2, 5):
        test.length_budget = _budget(words, "words")
        hyps = beam_search(model, test, beam_size=2, max_length=12)
        assert [len(h.tokens) for h in hyps] == [words] * 4, f"{len(losses)} steps, loss {losses[-1]:.3f}"


def test_a_budget_the_model_cannot_take_is_one_line_naming_why() -> None:
    check_budget("none", None, "bytes")
    check_budget("bytes", 75, "bytes")
    for control, total, unit, message in (
        ("none", 75, "bytes", "M1 was trained without length control"),
        ("bytes", None, "bytes", "M1 was trained with length control in bytes: give it a target length"),
        ("bytes", 13, "words", "M1 counts its length in bytes, not words"),
        ("words", 500, "words", "target length 500 words is out of range for M1: 1 to 200 words"),
    ):
        with pytest.raises(SumpipeError, match=message):
            check_budget(control, total, unit, "M1")
    with pytest.raises(ConfigError, match="model.length_control: expected one of 'none', 'words', 'bytes'"):
        from_dict(ArchConfig, {"length_control": "tokens"}, "model")
    with pytest.raises(ConfigError, match="decode.target_length: must be in"):
        from_dict(DecodeConfig, {"target_length": 0}, "decode")


def test_length_dropout_withholds_whole_summaries_in_training_only() -> None:
    """`length_dropout`: a withheld row's vectors are all 0 (what decoding without a budget adds); in eval none is."""
    torch.manual_seed(0)
    layer = RemainingLength(8)
    remaining = torch.tensor([[5, 3, 0]] * 400)
    out = layer(remaining, withheld=0.25)
    zero_rows = (out == 0).all(dim=2).all(dim=1)
    assert (out[~zero_rows] != 0).any(dim=2).all()        # a kept row keeps every position's vector
    assert 0.18 < zero_rows.float().mean().item() < 0.32  # about a quarter of 400 rows
    layer.eval()
    assert (layer(remaining, withheld=0.25) != 0).any(dim=2).all()


@pytest.mark.parametrize("family", ["transformer", "rnn"])
def test_a_model_trained_with_length_dropout_also_decodes_without_a_budget(family: str) -> None:
    """No budget: the decoder adds no length vector, so every step equals a model that reads none."""
    torch.manual_seed(4)
    arch = ARCH if family == "transformer" else RNN
    with_drop = dataclasses.replace(arch, length_control="bytes", length_dropout=0.25)
    model = (PointerGeneratorTransformer(with_drop) if family == "transformer" else RNNSummarizer(with_drop)).eval()
    plain = (PointerGeneratorTransformer(arch) if family == "transformer" else RNNSummarizer(arch)).eval()
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("length.")})
    batch = _batch(["zorro sat on the mat ."])
    with torch.no_grad():
        full = plain(batch)
        state = model.start_decoding(batch)
        for t in range(batch.trg_inp.shape[1]):
            step, state, _ = model.decode_step(state, batch.trg_ext[:, t - 1] if t > 0 else batch.trg_inp[:, 0])
            torch.testing.assert_close(step, full[:, t], atol=1e-5, rtol=1e-5)
    check_budget("bytes", None, "bytes", "M1", optional=True)
    with pytest.raises(ConfigError, match="model.length_dropout: needs length_control: words or bytes"):
        from_dict(ArchConfig, {"length_dropout": 0.2}, "model")
