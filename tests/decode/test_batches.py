"""The decoding API (`sumpipe.decode.batches`), on tiny real models saved with `save_pretrained` and on a
hand-built copying model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from sumpipe.config import Budget, DecodeConfig
from sumpipe.decode.batches import (
    banned_ids,
    has_words,
    load_model,
    prepare_raw,
    repeatable_ids,
    resolve_max_length,
    summarize,
    summary_text,
)
from sumpipe.decode.search import beam_search, sample_search
from sumpipe.errors import SumpipeError
from sumpipe.models.batching import WordCodec, collate, encode_example
from sumpipe.models.card import ModelCard
from sumpipe.models.transformer import ArchConfig
from sumpipe.names import EOS, UNK
from sumpipe.vocab.vocabulary import Vocabulary


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, make_model_dir):
    model_dir = make_model_dir(tmp_path_factory.mktemp("models") / "M1", scale=1.5)
    return load_model(model_dir)


# --------------------------------------------------------------------------------------------
# Small pieces
# --------------------------------------------------------------------------------------------
def test_ids_to_words_and_text_convention() -> None:
    vocab = Vocabulary.from_counts({"the": 2, ".": 1}, 6)
    codec = WordCodec(vocab, 10)
    example = codec.encode("0", "the zebra . yak")
    assert example.oov_words == ["zebra", "yak"]
    assert codec.words([4, 6, 5, 7], example) == ["the", "zebra", ".", "yak"]
    assert summary_text(["a", "b", ".", "c", "!", "d"]) == "a b .\nc !\nd"
    assert summary_text([]) == ""


def _card(dataset: str = "pydoc", max_summary: int = 8, selection: Budget | None = None) -> ModelCard:
    arch = ArchConfig(vocab_size=24, max_source_tokens=40, max_summary_tokens=max_summary)
    return ModelCard(family="transformer", arch=arch, vocab_size=24, dataset=dataset, selection=selection)


@pytest.mark.parametrize(("dataset", "max_summary", "expected"), [
    ("cnn_dailymail", 100, 120), ("xsum", 20, 30), ("gigaword", 18, 25), ("pydoc", 40, 48), ("local", 18, 22),
    ("pydoc", 60, 48), ("pydoc", 8, 10), ("local", 60, 72)])  # pydoc references have at most 40 words
def test_max_length_by_dataset(dataset: str, max_summary: int, expected: int) -> None:
    card = _card(dataset, max_summary)
    assert resolve_max_length(DecodeConfig(), card) == expected
    assert resolve_max_length(DecodeConfig(max_length=7), card) == 7


RAW = "Alpha beta gamma delta. Short one. Zebra yak xylophone walrus."


def test_prepare_raw_first_n_tokens() -> None:
    assert prepare_raw(RAW, _card(selection=Budget("first", 10))) == "alpha beta gamma delta .\nshort one .\nzebra yak"
    assert prepare_raw(RAW, _card()) == "alpha beta gamma delta .\nshort one .\nzebra yak xylophone walrus ."


def test_prepare_raw_ngram_selection(tmp_path: Path) -> None:
    """Alg. 1 with an empty table: every 3-gram is unknown (maximum score), so the 4-content-word
    sentence outranks 'short one .' (no 3-gram, score 0) whenever it fits the budget."""
    from sumpipe.vocab.ngrams import NgramTable

    NgramTable(3, np.zeros(0, np.uint64), np.zeros(0, np.uint32), ["alpha"]).save(tmp_path / "ngrams.parquet")
    config = lambda n: _card(selection=Budget("ngram", n, first_k=1))  # noqa: E731
    assert prepare_raw(RAW, config(6), tmp_path) == "alpha beta gamma delta ."
    assert prepare_raw(RAW, config(8), tmp_path) == "alpha beta gamma delta .\nshort one ."
    assert prepare_raw(RAW, config(10), tmp_path) == "alpha beta gamma delta .\nzebra yak xylophone walrus ."
    with pytest.raises(SumpipeError, match="ngrams.parquet: no such file"):
        prepare_raw(RAW, config(10), tmp_path / "missing")
    with pytest.raises(SumpipeError, match="pass the vocab folder"):
        prepare_raw(RAW, config(10))


def test_non_latin_text_leaves_no_words() -> None:
    assert not has_words(prepare_raw("Привет, мир. 你好，世界。", _card()))
    assert has_words(prepare_raw("Привет, мир 2024.", _card()))


# --------------------------------------------------------------------------------------------
# A copying model: OOV words come back as source words, never <unk>
# --------------------------------------------------------------------------------------------
@dataclass
class CopyState:
    src_ext: torch.Tensor
    step: int

    def index_select(self, idx: torch.Tensor) -> CopyState:
        return CopyState(self.src_ext[idx], self.step)


class CopyModel(torch.nn.Module):
    """Copies the source, one position per step, then stops; puts even more mass on <unk>."""

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def start_decoding(self, batch) -> CopyState:
        return CopyState(batch.src_ext, 0)

    def decode_step(self, state: CopyState, prev: torch.Tensor):
        n, width = state.src_ext.size(0), self.vocab_size + 4
        logits = torch.full((n, width), -10.0)
        if state.step < state.src_ext.size(1):
            target = state.src_ext[:, state.step].clamp(max=width - 1)
            logits.scatter_(1, target[:, None], 0.0)
        logits[:, EOS] = -1.0 if state.step >= 2 else -10.0
        logits[:, UNK] = 5.0
        info = {"p_gen": torch.zeros(n), "attn": torch.ones(n, state.src_ext.size(1))}
        return logits.log_softmax(-1), CopyState(state.src_ext, state.step + 1), info


def test_copied_oov_words_map_back_to_the_source_word(tiny_vocab) -> None:
    vocab = tiny_vocab
    model = CopyModel(len(vocab))
    config = _card()
    cfg = DecodeConfig(block_ngram_repeat=0, min_length=0)
    out = summarize(model, vocab, config, ["zebra cat quixotic", "the cat"], cfg)
    assert out[0].tokens == ["zebra", "cat"]               # "zebra" is OOV: copied by extended id
    assert out[1].tokens == ["the", "cat"]
    assert all("<unk>" not in s.tokens for s in out)
    greedy = summarize(model, vocab, config, ["zebra cat quixotic"], DecodeConfig(strategy="greedy"))
    assert greedy[0].tokens == ["zebra", "cat", "quixotic"]  # two OOVs: extended ids V and V + 1


def test_banned_ids_are_the_words_and_pieces_the_pattern_matches_in_full() -> None:
    words = WordCodec(Vocabulary.from_counts({"unk": 5, "##": 4, "#.#": 3, "c#": 2, "cat": 1}, 10), 40)
    cfg = DecodeConfig(banned_words="unk|[#.,]*#[#.,]*")
    assert sorted(words.itos[i] for i in banned_ids(words, cfg)) == ["##", "#.#", "unk"]
    assert banned_ids(words, DecodeConfig()) == ()


def test_repeatable_ids_are_the_stop_words_of_words_and_the_word_start_pieces() -> None:
    words = WordCodec(Vocabulary.from_counts({"the": 5, "cat": 4, "of": 3, "sat": 2}, 10), 40)
    on, off = DecodeConfig(repeat_stop_words=True), DecodeConfig()
    assert [words.itos[i] for i in repeatable_ids(words, on)] == ["the", "of"]
    assert repeatable_ids(words, off) == ()

    @dataclass
    class Pieces:                                          # a subword codec's two fields that matter here
        vocab: object
        starts_word: list[bool]

    @dataclass
    class Itos:
        itos: list[str]

    pieces = Pieces(Itos(["<pad>", "\u2581the", "the", "\u2581cat", "\u2581of"]), [False, True, False, True, True])
    assert repeatable_ids(pieces, on) == (1, 4)            # "the" inside a word ("o-the-r") is no stop word


# --------------------------------------------------------------------------------------------
# The real (tiny) transformer
# --------------------------------------------------------------------------------------------
def _batch(vocab, docs):
    return collate([encode_example(str(i), d, "", vocab, 40, 1) for i, d in enumerate(docs)])


def test_real_model_beam_one_is_greedy(tiny, decode_docs) -> None:
    model, vocab, _ = tiny
    batch = _batch(vocab, decode_docs)
    beam = beam_search(model, batch, beam_size=1, max_length=10, min_length=1, alpha=1.0, block_ngram=3)
    greedy = sample_search(model, batch, max_length=10, min_length=1, alpha=1.0, block_ngram=3)
    assert [h.tokens for h in beam] == [h.tokens for h in greedy]
    assert any(len(h.tokens) >= 3 for h in beam)


def test_real_model_batched_equals_one_at_a_time(tiny, decode_docs) -> None:
    model, vocab, config = tiny
    cfg = DecodeConfig(beam_size=3, block_ngram_repeat=2, batch_size=4)
    together = summarize(model, vocab, config, decode_docs, cfg)
    for doc, summary in zip(decode_docs, together):
        alone = summarize(model, vocab, config, [doc], cfg)[0]
        assert alone.tokens == summary.tokens
        assert alone.score == pytest.approx(summary.score, abs=1e-4)


def test_decode_threads_hold_while_decoding_and_are_restored(tiny, decode_docs, monkeypatch) -> None:
    """`decode.threads`: torch's CPU threads while the batches are decoded, then as they were; the
    summaries do not depend on it."""
    import torch

    from sumpipe.decode import search

    model, vocab, config = tiny
    seen, real = [], search.decode_batch
    monkeypatch.setattr(search, "decode_batch", lambda *a, **k: seen.append(torch.get_num_threads()) or real(*a, **k))
    before = torch.get_num_threads()
    one = summarize(model, vocab, config, decode_docs, DecodeConfig(beam_size=2, batch_size=2, threads=1))
    assert set(seen) == {1} and len(seen) == -(-len(decode_docs) // 2) and torch.get_num_threads() == before
    every_core = summarize(model, vocab, config, decode_docs, DecodeConfig(beam_size=2, batch_size=2, threads=None))
    assert seen[-1] == before and [s.tokens for s in every_core] == [s.tokens for s in one]
    assert DecodeConfig().threads == 1  # params.yaml's value: on 2 cores one thread decodes fastest


def test_real_model_details(tiny, decode_docs) -> None:
    model, vocab, config = tiny
    out = summarize(model, vocab, config, decode_docs, DecodeConfig(), details=True)
    for doc, s in zip(decode_docs, out):
        assert s.source_tokens == doc.split()
        assert len(s.p_gen) == len(s.tokens) and all(0.0 <= p <= 1.0 for p in s.p_gen)
        assert s.attention.shape == (len(s.tokens), len(s.source_tokens))
        assert np.allclose(s.attention.sum(axis=1), 1.0, atol=1e-4)
        # the transformer's 2 copy heads, each a distribution; the averaged map is their mean
        assert s.head_attention.shape == (2, len(s.tokens), len(s.source_tokens))
        assert np.allclose(s.head_attention.sum(axis=2), 1.0, atol=1e-4)
        assert np.allclose(s.head_attention.mean(axis=0), s.attention, atol=1e-6)
        assert "<unk>" not in s.tokens and 1 <= len(s.tokens) <= 10


def test_greedy_details_have_the_per_head_attention(tiny, decode_docs) -> None:
    model, vocab, config = tiny
    (s,) = summarize(model, vocab, config, decode_docs[:1], DecodeConfig(strategy="greedy"), details=True)
    assert s.head_attention.shape == (2, len(s.tokens), len(s.source_tokens))
    assert np.allclose(s.head_attention.mean(axis=0), s.attention, atol=1e-6)
    assert summarize(model, vocab, config, decode_docs[:1], DecodeConfig(strategy="greedy"))[0].head_attention is None


def test_a_beam_whose_step_scores_exceed_the_memory_is_refused_before_decoding(workdir, monkeypatch) -> None:
    """`--beam 65536` over a 50,000-word model is 13 GB of scores a step; refused in one line."""
    import sumpipe.validation as validation
    from sumpipe.decode.batches import check_step_memory

    model, vocab, card = load_model(workdir / "models" / "M1" / "seed-1")
    width = model.vocab_size + card.arch.max_source_tokens
    cfg = DecodeConfig(beam_size=1000, batch_size=16, device="cpu")
    need = 16 * 1000 * width * 4 * 4
    monkeypatch.setattr(validation, "memory_budget_bytes", lambda: 2 * need)
    check_step_memory(model, card, cfg, n_docs=16)  # exactly half the budget: allowed
    check_step_memory(model, card, cfg, n_docs=100)  # the batch holds 16 documents at most
    monkeypatch.setattr(validation, "memory_budget_bytes", lambda: 2 * need - 2)
    with pytest.raises(SumpipeError, match=r"--beam \(decode.beam_size\) 1000 x 16 documents at once over \d+ words"):
        summarize(model, vocab, card, ["the cat sat ."] * 16, cfg)
    check_step_memory(model, card, DecodeConfig(beam_size=1000, strategy="greedy", device="cpu"), n_docs=16)


# --------------------------------------------------------------------------------------------
# Decoding to a length budget
# --------------------------------------------------------------------------------------------
def test_a_budget_goes_to_a_model_trained_for_one_and_is_refused_by_one_without(tmp_path: Path, make_model_dir,
                                                                                 tiny) -> None:
    from sumpipe.decode.batches import stage_config

    docs = ["return the sum of the values in the list .", "open the file and read the lines ."]
    plain_model, plain_vocab, plain_card = tiny
    with pytest.raises(SumpipeError, match="trained without length control"):
        summarize(plain_model, plain_vocab, plain_card, docs, DecodeConfig(target_length=40))
    # the stages give the budget to the models that take one and decode the others as before
    assert stage_config(DecodeConfig(target_length=40), plain_card).target_length is None
    model, vocab, card = load_model(make_model_dir(tmp_path / "M1-len", scale=1.5, length_control="bytes"))
    assert card.arch.length_control == "bytes"
    assert stage_config(DecodeConfig(target_length=40), card).target_length == 40
    with pytest.raises(SumpipeError, match="trained with length control in bytes: give it a target length"):
        summarize(model, vocab, card, docs, DecodeConfig())
    with pytest.raises(SumpipeError, match="counts its length in bytes, not words"):
        summarize(model, vocab, card, docs, DecodeConfig(target_length=8, length_unit="words"))
    short, long = (summarize(model, vocab, card, docs, DecodeConfig(target_length=n, max_length=8)) for n in (5, 300))
    assert all(s.tokens for s in short + long) and [s.text for s in short] != [s.text for s in long]
