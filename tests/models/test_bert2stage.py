"""The two-stage BERT summarizer (Roy Choudhury 2020): masking, copy gate, incremental drafts, refine."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from sumpipe.config import DecodeConfig, EncoderConfig
from sumpipe.decode.search import beam_search, decode_batch, make_generator, sample_search
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.models.batching import collate
from sumpipe.models.bert2stage import FAMILY, Bert2Stage, Bert2StageArch, encode_pieces_example
from sumpipe.models.layers import BilinearCopyGate, key_padding_bias, pointer_mix
from sumpipe.models.loss import label_smoothed_nll
from sumpipe.models.piece_length import PieceBudget, piece_costs
from sumpipe.names import BOS, EOS, PAD, SPECIAL_TOKENS
from sumpipe.subword.pieces import MASK, N_SPECIAL_PIECES
from sumpipe.validation import from_dict

V = 50


def tiny_model(seed: int = 0, dropout: float = 0.1) -> Bert2Stage:
    torch.manual_seed(seed)
    enc = EncoderConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, max_positions=64, dropout=dropout)
    return Bert2Stage(Bert2StageArch(n_decoder_layers=2, dropout=dropout, max_source_tokens=20, max_summary_tokens=60,
                                     refine_positions=None, vocab_size=V, encoder=enc))


def tiny_batch():
    return collate([encode_pieces_example("a", [10, 11, 12, 13, 14, 15, 16], [12, 13, 20, 21], 20, 10),
                    encode_pieces_example("b", [30, 31, 32], [33, 31], 20, 10),
                    encode_pieces_example("c", [40, 41, 42, 43], [41, 42, 43, 44, 45, 46], 20, 10)])


def test_examples_wrap_the_source_and_shift_the_summary() -> None:
    e = encode_pieces_example("x", [7, 8, 9, 10], [11, 12, 13], max_source_tokens=5, max_summary_tokens=2)
    assert e.src.tolist() == [BOS, 7, 8, 9, EOS] and e.src_ext.tolist() == e.src.tolist()
    assert e.trg_inp.tolist() == [BOS, 11, 12] and e.trg_ext.tolist() == [11, 12, EOS]
    assert e.oov_words == []


def test_each_variant_hides_exactly_its_position() -> None:
    words = torch.tensor([[5, 6, 7], [8, 9, PAD]])
    variants, keep = Bert2Stage.masked_variants(words, words != PAD)
    assert variants.tolist() == [
        [BOS, MASK, 6, 7, EOS], [BOS, 5, MASK, 7, EOS], [BOS, 5, 6, MASK, EOS],
        [BOS, MASK, 9, EOS, PAD], [BOS, 8, MASK, EOS, PAD], [BOS, 8, 9, EOS, PAD],  # last: padding variant
    ]
    assert keep.tolist()[3] == [True, True, True, True, False]


def test_refine_prediction_at_t_does_not_see_the_word_at_t() -> None:
    model = tiny_model().eval()
    batch = tiny_batch()
    memory, bias = model.encode(batch.src, batch.src_mask)
    words = batch.trg_inp[:, 1:]
    keep = words != PAD
    base = model._refine_log_probs(memory, bias, batch.src, words, keep)
    changed = words.clone()
    changed[0, 1] = 49  # another word at position 1 of document 0
    other = model._refine_log_probs(memory, bias, batch.src, changed, keep)
    torch.testing.assert_close(other[0, 1], base[0, 1])  # position 1 is masked: its word is unseen
    assert not torch.allclose(other[0, 0], base[0, 0])  # the other positions see it
    torch.testing.assert_close(other[1:], base[1:])  # other documents are untouched


def test_copy_gate_mix_sums_to_one_and_copies_onto_the_source_piece() -> None:
    torch.manual_seed(1)
    gate = BilinearCopyGate(8)
    memory = torch.randn(1, 4, 8)
    src = torch.tensor([[2, 7, 9, 7]])  # piece 7 at positions 1 and 3
    keep = torch.tensor([[True, True, True, False]])  # position 3 is padding
    bias = key_padding_bias(keep)
    with torch.no_grad():
        out = gate(torch.randn(1, 1, 8), memory, gate.project_keys(memory), bias)
    a, g = out.copy_attn[0, 0], out.copy_gate[0, 0]
    assert a[3] == 0 and float(a.sum()) == pytest.approx(1.0, abs=1e-6)
    logits = torch.zeros(1, 1, 12)  # P_vocab uniform: 1/12 each
    probs = pointer_mix(logits, 1.0 - out.copy_gate, out.copy_attn, src, 0).exp()[0, 0]
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-6)
    assert float(probs[7]) == pytest.approx(float((1 - g) / 12 + g * a[1]), abs=1e-6)
    assert float(probs[9]) == pytest.approx(float((1 - g) / 12 + g * a[2]), abs=1e-6)
    assert float(probs[5]) == pytest.approx(float((1 - g) / 12), abs=1e-6)


def test_model_distributions_sum_to_one_and_never_predict_mask() -> None:
    model = tiny_model().eval()
    with torch.no_grad():
        draft, refine, targets = model(tiny_batch())
    assert draft.shape == (3, 7, V) and refine.shape == (3, 6, V) and targets.shape == (3, 6)
    torch.testing.assert_close(draft.exp().sum(-1), torch.ones(3, 7))
    torch.testing.assert_close(refine.exp().sum(-1), torch.ones(3, 6))
    assert float(draft[..., MASK].exp().max()) < 1e-9


def test_incremental_draft_decoding_equals_teacher_forcing() -> None:
    model = tiny_model(dropout=0.3).eval()
    batch = tiny_batch()
    forced, _, _ = model(batch)
    state = model.start_decoding(batch)
    steps = []
    for t in range(batch.trg_inp.shape[1]):
        log_probs, state, info = model.decode_step(state, batch.trg_inp[:, t])
        steps.append(log_probs)
        assert info["attn"].shape == (3, batch.src.shape[1]) and info["p_gen"].shape == (3,)
    incremental = torch.stack(steps, dim=1)
    mask = batch.trg_mask
    torch.testing.assert_close(incremental[mask], forced[mask], atol=1e-5, rtol=1e-5)


def test_loss_is_the_sum_of_both_stages() -> None:
    model = tiny_model().eval()
    batch = tiny_batch()
    with torch.no_grad():
        total, n = model.summed_loss(batch, smoothing=0.0)
        draft, refine, targets = model(batch)
    assert torch.equal(targets, batch.trg_inp[:, 1:])
    nll1 = -draft.gather(-1, batch.trg_ext[..., None])[..., 0][batch.trg_mask].sum()
    words = batch.trg_inp[:, 1:]
    nll2 = -refine.gather(-1, words[..., None])[..., 0][words != PAD].sum()
    assert int(n) == int(batch.trg_mask.sum()) == 15
    assert float(total) == pytest.approx(float(nll1 + nll2), rel=1e-5)
    assert float(nll2) > 0 and math.isfinite(float(total))


def test_refined_samples_are_deterministic_for_a_seed() -> None:
    model = tiny_model().eval()
    batch = tiny_batch()
    cfg = DecodeConfig(strategy="sample", top_k=10, top_p=0.92, block_ngram_repeat=0)

    def run(seed: int) -> tuple[list[list[int]], list[list[int]]]:
        hyps = decode_batch(model, batch, cfg, 8, generator=make_generator(seed))
        drafts = [h.tokens for h in hyps]
        return drafts, model.refine(batch, drafts)

    first, again, other = run(3), run(3), run(4)
    assert first == again
    assert [len(d) for d in first[1]] == [len(d) for d in first[0]]  # refining keeps the lengths
    assert all(t >= 5 for d in first[1] for t in d)  # never a special piece
    assert first[0] != other[0]


def test_beam_and_greedy_drafts_refine() -> None:
    model = tiny_model().eval()
    batch = tiny_batch()
    for strategy in ("beam", "greedy"):
        hyps = decode_batch(model, batch, DecodeConfig(strategy=strategy, beam_size=3), 6)
        refined = model.refine(batch, [h.tokens for h in hyps])
        assert [len(r) for r in refined] == [len(h.tokens) for h in hyps]
    assert model.refine(batch, [[], [], []]) == [[], [], []]


def test_computing_only_the_masked_positions_changes_nothing() -> None:
    model = tiny_model().eval()
    layer = model.refine_layers[0]
    memory = torch.randn(2, 5, 32)
    bias = key_padding_bias(torch.ones(2, 5, dtype=torch.bool))
    y = torch.randn(2 * 3, 4, 32)  # 2 documents x 3 variants, 4 positions each
    index = torch.tensor([1, 2, 3, 1, 2, 3])
    kv = layer.cross_attn.project_kv(memory)
    full, _ = layer(y, kv, bias, causal=False, variants=3)
    pruned, _ = layer(y, kv, bias, causal=False, variants=3, query_index=index)
    torch.testing.assert_close(pruned[:, 0], full[torch.arange(6), index], atol=1e-5, rtol=1e-5)


def test_sampled_stage_two_positions_are_real_words_and_follow_the_generator() -> None:
    model = tiny_model(dropout=0.0)
    model.arch = dataclasses.replace(model.arch, refine_positions=2)
    batch = tiny_batch()
    keep = batch.trg_inp[:, 1:] != PAD
    torch.manual_seed(5)
    positions = model.train().refine_positions(keep)
    assert positions.shape == (3, 2)
    assert keep.gather(1, positions).all()  # every summary has >= 2 words: only real positions
    assert (positions[:, 1] > positions[:, 0]).all()  # without replacement, in order
    torch.manual_seed(5)
    assert torch.equal(model.refine_positions(keep), positions)
    assert model.eval().refine_positions(keep).shape == (3, 6)  # validation and decoding: every position
    model.train()
    total, n = model.summed_loss(batch, smoothing=0.0)
    assert math.isfinite(float(total)) and int(n) == 15


def test_token_accuracy_counts_the_drafts_right_argmax_over_summary_tokens() -> None:
    from sumpipe.models.bert2stage import Bert2StageTask

    model = tiny_model().eval()
    batch = tiny_batch()
    task = Bert2StageTask([], [], batch_size=2, seed=0, label_smoothing=0.0, vocab_size=V)
    with torch.no_grad():
        right, n = task.token_accuracy(model, batch)
        draft = model(batch)[0]
        # plant the answer: make the draft's argmax the target at exactly the first 4 summary tokens
        planted = torch.full_like(draft, -10.0).scatter(-1, (batch.trg_ext + 1)[..., None] % V, 0.0)
        planted[0, :4] = torch.full_like(planted[0, :4], -10.0).scatter(-1, batch.trg_ext[0, :4, None], 0.0)
    assert int(n) == 15  # the summary tokens and </s> of the three examples
    assert int(right) == int(((draft.argmax(-1) == batch.trg_ext) & batch.trg_mask).sum())

    class Planted(torch.nn.Module):
        def forward(self, batch):
            return planted, None, None

    right, n = task.token_accuracy(Planted(), batch)
    assert (int(right), int(n)) == (4, 15)


def test_refine_with_the_adjacent_rule_never_puts_a_piece_after_itself(monkeypatch) -> None:
    # every position's best piece is 20 (next best: 21 at position 1, 22 at position 2): refined
    # independently, the positions would say it three times in a row
    model = tiny_model().eval()
    scores = torch.full((1, 3, V), -10.0)
    scores[0, :, 20] = 0.0
    scores[0, 1, 21] = -1.0
    scores[0, 2, 22] = -1.0
    monkeypatch.setattr(model, "_refine_log_probs", lambda *args, **kwargs: scores.clone())
    batch = collate([encode_pieces_example("a", [10, 11, 12], [12, 13, 14], 20, 10)])
    assert model.refine(batch, [[12, 13, 14]]) == [[20, 20, 20]]
    assert model.refine(batch, [[12, 13, 14]], block_adjacent=True) == [[20, 21, 20]]


# --------------------------------------------------------------------------------------------
# The training words travel with the model (decode.known_words)
# --------------------------------------------------------------------------------------------
def _tiny_piece_vocab(tmp_path):
    """A 40-piece sentencepiece model of twelve code words, by the subword stage."""
    import pandas as pd

    from sumpipe.config import SubwordConfig
    from sumpipe.models.bert2stage import PieceVocabulary
    from sumpipe.subword.stage import train_subword

    words = "the returns array arrays returned value values compute computes sort sorted".split()
    rows = [{"id": str(i), "source": " ".join(words[(i + j) % len(words)] for j in range(8)),
             "reference": " ".join(words[i % 5: i % 5 + 3])} for i in range(40)]
    (tmp_path / "processed").mkdir()
    pd.DataFrame(rows).to_parquet(tmp_path / "processed" / "train.parquet")
    train_subword(tmp_path / "processed", tmp_path / "subword", SubwordConfig(size=40))
    vocab = PieceVocabulary.load(tmp_path / "subword")
    assert isinstance(vocab, PieceVocabulary) and vocab.known_words is None
    return vocab


def test_the_training_words_travel_in_vocab_parquet_and_open_the_documents_own(tmp_path) -> None:
    from sumpipe.io.atomic import write_parquet
    from sumpipe.models.bert2stage import PieceVocabulary, SubwordCodec

    vocab = _tiny_piece_vocab(tmp_path)
    vocab.known_words = ["the", "sorted", "values"]
    write_parquet(vocab.to_table(), tmp_path / "vocab.parquet")
    again = PieceVocabulary.from_table(tmp_path / "vocab.parquet")
    assert again.known_words == ["the", "sorted", "values"] and again.itos == vocab.itos

    codec = SubwordCodec(again, max_source_tokens=16)
    assert codec.lexicon is not None and len(codec.lexicon) == 3
    batch = codec.collate([codec.encode("0", "compute returns")])
    known = codec.known_words(batch)
    # nothing written yet: the first piece of a training word or of the document's ("compute", "returns"),
    # or the end (the minimum length, not this rule, keeps a summary from being empty)
    out = torch.zeros(1, len(again))
    known.mask(out, torch.zeros(1, 0, dtype=torch.long), torch.tensor([0]))
    firsts = {again.encode(w)[0] for w in ("the", "sorted", "values", "compute", "returns")}
    assert set(torch.isfinite(out[0]).nonzero().view(-1).tolist()) == firsts | {EOS}


def test_known_words_that_are_not_utf8_are_a_one_line_error(tmp_path) -> None:
    import pyarrow.parquet as pq

    from sumpipe.models.bert2stage import KNOWN_WORDS_KEY, PieceVocabulary

    table = _tiny_piece_vocab(tmp_path).to_table()
    table = table.replace_schema_metadata({**table.schema.metadata, KNOWN_WORDS_KEY: b"caf\xe9"})  # Latin-1 "café"
    pq.write_table(table, tmp_path / "vocab.parquet")
    with pytest.raises(SumpipeError, match=r"vocab\.parquet: its known words are not UTF-8"):
        PieceVocabulary.from_table(tmp_path / "vocab.parquet")


# ---- length control --------------------------------------------------------------------------
# V = 50 pieces: word starts "▁the" (5), "▁caf" (6), "▁." (11), "▁w12", "▁ww13", "▁www14", "▁wwww15", "▁w16"
# .. "▁wwww49" (3 to 6 bytes); continuations "é" (7), "s" (8), "ing" (9), "12" (10). No bare "▁": every sequence
# of them detokenises to "".join(pieces) with "▁" as spaces.
PIECES = [*SPECIAL_TOKENS, "<mask>", "\u2581the", "\u2581caf", "é", "s", "ing", "12", "\u2581.",
          *(f"\u2581{'w' * (1 + i % 4)}{i}" for i in range(12, V))]
THE, CAF, E_ACUTE, S, DOT = 5, 6, 7, 8, 11


def detokenised(ids: list[int]) -> str:
    return "".join(PIECES[i] for i in ids if i >= N_SPECIAL_PIECES).replace("\u2581", " ").lstrip()


def length_model(control: str, seed: int = 0, d_model: int = 32, length_dropout: float = 0.0) -> Bert2Stage:
    torch.manual_seed(seed)
    enc = EncoderConfig(d_model=d_model, n_layers=1, n_heads=4, d_ff=2 * d_model, max_positions=64, dropout=0.0)
    model = Bert2Stage(Bert2StageArch(n_decoder_layers=1, max_source_tokens=20, max_summary_tokens=20,
                                      refine=False, vocab_size=V, encoder=enc, length_control=control,
                                      length_dropout=length_dropout))
    model.set_piece_costs(PIECES)
    return model


def budget(total: int, unit: str) -> PieceBudget:
    size, starts = piece_costs(PIECES)
    return PieceBudget(total, unit, torch.from_numpy(size), torch.from_numpy(starts))


def test_length_control_off_builds_the_model_as_before() -> None:
    """`none`: the model of main before length control (commit 9acaec9: 148 tensors, 74,420 numbers, and
    this loss on the seeded batch, dropout on); `bytes` adds the length map and the pieces' costs only,
    every other weight drawn the same from the same seed."""
    plain = tiny_model()
    state = plain.state_dict()
    assert len(state) == 148 and sum(v.numel() for v in state.values()) == 74420
    torch.manual_seed(5)
    total, n = plain.train().summed_loss(tiny_batch(), smoothing=0.1)
    assert total.item() == pytest.approx(96.96942138671875, rel=1e-6) and int(n) == 15
    torch.manual_seed(0)
    enc = EncoderConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, max_positions=64, dropout=0.1)
    on = Bert2Stage(Bert2StageArch(n_decoder_layers=2, dropout=0.1, max_source_tokens=20, max_summary_tokens=60,
                                   refine_positions=None, vocab_size=V, encoder=enc, length_control="bytes"))
    assert sorted(set(on.state_dict()) - set(state)) == ["length.project.weight", "piece_bytes", "piece_starts_word"]
    assert all(torch.equal(value, on.state_dict()[key]) for key, value in state.items())
    assert plain.length is None and FAMILY.legacy_arch == {"length_control": "none", "length_dropout": 0.0}


@pytest.mark.parametrize("unit", ["words", "bytes"])
def test_draft_decoding_to_the_reference_length_matches_teacher_forcing(unit: str) -> None:
    """The reference "the cafés ." is 12 bytes, 3 words: decoded to that budget, every draft step reads the
    remaining length teacher forcing read, so the distributions are the same; another budget differs."""
    model = length_model(unit).eval()
    batch = collate([encode_pieces_example("a", [20, 21, 22, THE, CAF], [THE, CAF, E_ACUTE, S, DOT], 20, 10)])
    assert detokenised([THE, CAF, E_ACUTE, S, DOT]) == "the cafés ."
    batch.length_budget = budget(12 if unit == "bytes" else 3, unit)
    with torch.no_grad():
        forced, _, _ = model(batch)
        state = model.start_decoding(batch)
        for t in range(batch.trg_inp.shape[1]):
            step, state, _ = model.decode_step(state, batch.trg_inp[:, t])
            torch.testing.assert_close(step, forced[:, t], atol=1e-5, rtol=1e-5)
        batch.length_budget = budget(40, unit)
        other, _, _ = model.decode_step(model.start_decoding(batch), batch.trg_inp[:, 0])
    assert not torch.allclose(other, forced[:, 0])


@pytest.mark.parametrize("unit", ["words", "bytes"])
def test_decoding_to_a_budget_feeds_each_row_what_its_text_leaves(unit: str, monkeypatch) -> None:
    """Sampled drafts of 6 pieces (an untrained model: any pieces, continuations too) for 3 documents, budget
    30: at each step the length input of a row is 30 minus the bytes (words) of the text its pieces so far
    detokenise to."""
    model = length_model(unit, seed=3).eval()
    seen: list[list[int]] = []
    real = model.length.forward
    monkeypatch.setattr(model.length, "forward", lambda remaining, withheld=0.0: (
        seen.append(remaining[:, 0].tolist()), real(remaining, withheld))[1])
    batch = tiny_batch()
    batch.length_budget = budget(30, unit)
    hyps = sample_search(model, batch, max_length=6, min_length=6, greedy=False, generator=make_generator(1))
    assert any(not PIECES[t].startswith("\u2581") for h in hyps for t in h.tokens)
    assert [len(h.tokens) for h in hyps] == [6, 6, 6] and len(seen) == 7  # <s> and 6 pieces fed
    size = (lambda text: len(text.encode())) if unit == "bytes" else (lambda text: len(text.split()))
    expected = [[30 - size(detokenised(h.tokens[:t])) for h in hyps] for t in range(7)]
    assert seen == expected
    assert len({tuple(row) for row in expected}) == 7  # every step spent some of the budget


def test_a_tiny_model_with_length_control_drafts_to_its_budget() -> None:
    """References are a document's first k pieces (each a word of 3 to 6 bytes), every document at k = 1..6:
    only the length input says k. Trained on the draft loss, beam drafts of the 6 documents hold exactly 2
    and 5 words at those budgets, and at a budget of the bytes of a document's own first 2, 3 or 5 words,
    exactly those words (checked once over seeds 11-15 at k = 1..6: every word budget exact, 35 or 36 of the
    36 byte budgets a seed; the misses were the tiny model skipping a source word, not its length)."""
    rng = np.random.default_rng(11)
    documents = [rng.choice(np.arange(12, V), size=8, replace=False).tolist() for _ in range(6)]
    examples = [encode_pieces_example(f"{d}-{k}", doc, doc[:k], 20, 10)
                for d, doc in enumerate(documents) for k in range(1, 7)]
    batch = collate(examples)
    for unit in ("words", "bytes"):
        torch.manual_seed(11)
        model = length_model(unit)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(300):
            optimizer.zero_grad()
            loss, _ = label_smoothed_nll(model(batch)[0], batch.trg_ext, batch.trg_mask, 0.0)
            loss.backward()
            optimizer.step()
            if loss.item() < 0.002:
                break
        model.eval()
        for k in (2, 3, 5):
            drafts = []
            for doc in documents:
                test = collate([encode_pieces_example("x", doc, [], 20, 1)])
                test.length_budget = budget(k if unit == "words" else len(detokenised(doc[:k]).encode()), unit)
                drafts.append(beam_search(model, test, beam_size=2, max_length=12)[0].tokens)
            assert drafts == [doc[:k] for doc in documents], f"{unit} {k}: loss {loss.item():.4f}"


def test_a_budget_the_model_cannot_take_is_one_line() -> None:
    batch = tiny_batch()
    batch.length_budget = budget(30, "bytes")
    with pytest.raises(SumpipeError, match="trained without length control"):
        tiny_model().start_decoding(batch)
    with pytest.raises(SumpipeError, match="counts its length in words, not bytes"):
        length_model("words").start_decoding(batch)
    batch.length_budget = None
    with pytest.raises(SumpipeError, match="trained with length control in bytes: give it a target length"):
        length_model("bytes").start_decoding(batch)
    length_model("bytes", length_dropout=0.25).start_decoding(batch)  # it also writes without one
    with pytest.raises(ConfigError, match="families.bert2stage.length_control: expected one of 'none', 'words'"):
        from_dict(Bert2StageArch, {"length_control": "tokens"}, "families.bert2stage")
    with pytest.raises(ConfigError, match="families.bert2stage.length_dropout: needs length_control: words or bytes"):
        from_dict(Bert2StageArch, {"length_dropout": 0.2}, "families.bert2stage")
    torch.manual_seed(0)
    unset = Bert2Stage(Bert2StageArch(vocab_size=V, encoder=EncoderConfig(d_model=32, n_layers=1, n_heads=4, d_ff=64,
                                                                                max_positions=64),
                                      length_control="bytes"))
    with pytest.raises(SumpipeError, match="needs its pieces' costs"):
        unset(batch)
    unset.load_state_dict(length_model("bytes").state_dict())  # a loaded model has them: saved with the weights
    assert unset.piece_costs_set and unset.piece_bytes[: 12].tolist() == [0] * 5 + [3, 3, 2, 1, 3, 2, 1]
    unset(batch)


def test_a_state_moved_with_the_beams_moves_each_row_length() -> None:
    model = length_model("bytes").eval()
    batch = tiny_batch()
    batch.length_budget = budget(20, "bytes")
    state = model.start_decoding(batch)
    _, state, _ = model.decode_step(state, torch.full((3,), BOS))
    _, state, _ = model.decode_step(state, torch.tensor([THE, CAF, E_ACUTE]))
    assert state.length is not None and state.length.remaining.tolist() == [17, 17, 18]
    for idx in ([2, 0, 1], [0, 0, 1]):  # beams within documents, then across
        moved = state.index_select(torch.tensor(idx))
        assert moved.length is not None and moved.length.remaining.tolist() == [[17, 17, 18][i] for i in idx]
