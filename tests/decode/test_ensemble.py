"""Ensemble decoding: a model's seeds averaged step by step in probability space, one search over the mean.

Toy members (a fixed table of step distributions) check the arithmetic and the search; the tiny trained
transformers of `make_model_dir` check loading, the folder checks and the summaries."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from sumpipe.config import Budget, DecodeConfig
from sumpipe.decode.ensemble import EnsembleModel, load_ensemble, mean_details, mean_in_probability
from sumpipe.decode.search import beam_search, sample_search
from sumpipe.errors import SumpipeError
from sumpipe.names import EOS

NEG_INF = float("-inf")


@dataclass
class ToyBatch:
    src: torch.Tensor          # (B, S): only its size matters
    oov_words: list[list[str]]


@dataclass
class ToyState:
    doc: torch.Tensor          # (N,) which document each row decodes
    step: int

    def index_select(self, idx: torch.Tensor) -> ToyState:
        return ToyState(self.doc[idx], self.step)


class ToyMember(torch.nn.Module):
    """log P(next) = table[doc, min(step, L - 1)] (W,): independent of the previous token. p_gen and
    attention are fixed per member, so the ensemble's details can be computed by hand."""

    def __init__(self, probs: torch.Tensor, vocab_size: int, p_gen: float = 0.5, attn: tuple = (1.0, 0.0)) -> None:
        super().__init__()
        self.table = probs.log()                        # (B, L, W)
        self.vocab_size = vocab_size
        self.p_gen, self.attn = p_gen, torch.tensor(attn)
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # the search asks a module for its device

    def start_decoding(self, batch: ToyBatch) -> ToyState:
        return ToyState(torch.arange(batch.src.size(0)), 0)

    def decode_step(self, state: ToyState, prev: torch.Tensor):
        log_probs = self.table[state.doc, min(state.step, self.table.size(1) - 1)]
        n = len(prev)
        info = {"p_gen": torch.full((n,), self.p_gen), "attn": self.attn.expand(n, -1)}
        return log_probs, ToyState(state.doc, state.step + 1), info


def distribution(words: dict[int, float], width: int = 7) -> torch.Tensor:
    """(width,) probabilities: `words` {id: p}, 0 elsewhere (the specials 0-3 among them)."""
    p = torch.zeros(width)
    for token, value in words.items():
        p[token] = value
    return p


def two_step_member(first: dict[int, float]) -> ToyMember:
    """One document: `first` at step 0, then `</s>` for certain."""
    probs = torch.stack([distribution(first), distribution({EOS: 1.0})])[None]  # (1, 2, W)
    return ToyMember(probs, vocab_size=7)


def batch(n_docs: int = 1) -> ToyBatch:
    return ToyBatch(torch.zeros(n_docs, 2, dtype=torch.long), [[] for _ in range(n_docs)])


def random_member(seed: int, n_docs: int = 3, steps: int = 6, width: int = 9) -> ToyMember:
    g = torch.Generator().manual_seed(seed)
    probs = (torch.randn(n_docs, steps, width, generator=g) * 2).softmax(-1)
    return ToyMember(probs, vocab_size=7, p_gen=0.3 + 0.1 * seed, attn=(0.2, 0.8))


# --------------------------------------------------------------------------------------------
# (c) the averaged distribution, by hand
# --------------------------------------------------------------------------------------------
# member A prefers word 4, member B word 6; both put 0.45 on word 5, which their mean prefers
A_FIRST = {4: 0.50, 5: 0.45, 6: 0.05}
B_FIRST = {4: 0.05, 5: 0.45, 6: 0.50}


def test_a_step_is_the_log_of_the_members_mean_probability() -> None:
    ensemble = EnsembleModel([two_step_member(A_FIRST), two_step_member(B_FIRST)])
    state = ensemble.start_decoding(batch())
    log_probs, state, _ = ensemble.decode_step(state, torch.tensor([2]))
    expected = [NEG_INF] * 4 + [math.log(0.275), math.log(0.45), math.log(0.275)]
    assert log_probs.shape == (1, 7)
    assert log_probs[0].tolist() == pytest.approx(expected)
    second, _, _ = ensemble.decode_step(state, torch.tensor([5]))
    assert second[0, EOS].item() == pytest.approx(0.0) and bool(torch.isinf(second[0, 4:]).all())


def test_the_search_picks_the_word_the_mean_prefers_which_no_member_ranks_first() -> None:
    a, b = two_step_member(A_FIRST), two_step_member(B_FIRST)
    assert beam_search(a, batch(), beam_size=1, max_length=3)[0].tokens == [4]
    assert beam_search(b, batch(), beam_size=1, max_length=3)[0].tokens == [6]
    ensemble = EnsembleModel([a, b])
    for hyp in (beam_search(ensemble, batch(), beam_size=3, max_length=3)[0],
                sample_search(ensemble, batch(), max_length=3, greedy=True)[0]):
        assert hyp.tokens == [5]
        assert hyp.log_prob == pytest.approx(math.log(0.45))


def test_details_p_gen_is_the_mean_and_attention_follows_the_copy_mass() -> None:
    infos = [{"p_gen": torch.tensor([0.2]), "attn": torch.tensor([[1.0, 0.0]])},
             {"p_gen": torch.tensor([0.6]), "attn": torch.tensor([[0.0, 1.0]])}]
    out = mean_details(infos)
    assert out["p_gen"].tolist() == pytest.approx([0.4])
    # copy masses 0.8 and 0.4: the mixture copies from position 0 with 0.8 / 1.2 of its copy mass
    assert out["attn"][0].tolist() == pytest.approx([2 / 3, 1 / 3])
    no_copy = mean_details([{"p_gen": torch.tensor([1.0]), "attn": torch.tensor([[1.0, 0.0]])},
                            {"p_gen": torch.tensor([1.0]), "attn": torch.tensor([[0.0, 1.0]])}])
    assert no_copy["attn"][0].tolist() == pytest.approx([0.5, 0.5])  # nothing copied: the plain mean
    assert mean_details([{"p_gen": torch.tensor([0.5])}, {}]) == {}  # a key one member lacks is left out


def test_a_narrower_member_gives_the_extra_columns_probability_zero() -> None:
    wide = torch.tensor([[math.log(0.5), math.log(0.5)]])
    narrow = torch.tensor([[0.0]])
    assert mean_in_probability([wide, narrow])[0].tolist() == pytest.approx([math.log(0.75), math.log(0.25)])


# --------------------------------------------------------------------------------------------
# (a) one member is that member; (b) two identical members are one
# --------------------------------------------------------------------------------------------
def test_an_ensemble_of_one_decodes_exactly_as_its_member() -> None:
    member = random_member(1)
    alone = beam_search(member, batch(3), beam_size=3, max_length=5, details=True)
    ensembled = beam_search(EnsembleModel([member]), batch(3), beam_size=3, max_length=5, details=True)
    for a, e in zip(alone, ensembled):
        assert (e.tokens, e.score, e.log_prob, e.p_gen) == (a.tokens, a.score, a.log_prob, a.p_gen)
        assert (e.attention is None and a.attention is None) or torch.equal(e.attention, a.attention)
    assert any(h.attention is not None for h in ensembled)


def test_two_identical_members_give_the_hypotheses_of_one() -> None:
    member = random_member(2)
    alone = beam_search(member, batch(3), beam_size=4, max_length=5, block_ngram=2)
    twice = beam_search(EnsembleModel([member, random_member(2)]), batch(3), beam_size=4, max_length=5, block_ngram=2)
    assert [h.tokens for h in twice] == [h.tokens for h in alone]
    assert [h.score for h in twice] == pytest.approx([h.score for h in alone], abs=1e-5)


def test_members_of_different_vocabulary_sizes_are_refused() -> None:
    small = ToyMember(torch.full((1, 1, 8), 1 / 8), vocab_size=8)
    with pytest.raises(SumpipeError, match=r"share one vocabulary \(sizes \[7, 8\]\)"):
        EnsembleModel([random_member(1), small])


# --------------------------------------------------------------------------------------------
# Trained model folders
# --------------------------------------------------------------------------------------------
def test_an_ensemble_of_one_folder_summarizes_as_that_model(tmp_path: Path, make_model_dir, decode_docs) -> None:
    from sumpipe.decode.batches import load_model, summarize

    folder = make_model_dir(tmp_path / "m", seed=3, scale=3.0)
    cfg = DecodeConfig(device="cpu", beam_size=3, min_length=2)
    model, vocab, card = load_model(folder)
    ensemble, e_vocab, e_card = load_ensemble([folder])
    assert e_card == card and e_vocab.itos == vocab.itos
    alone = summarize(model, vocab, card, decode_docs, cfg, details=True)
    ensembled = summarize(ensemble, e_vocab, e_card, decode_docs, cfg, details=True)
    assert [(s.text, s.score, s.p_gen) for s in ensembled] == [(s.text, s.score, s.p_gen) for s in alone]


def test_two_seeds_decode_as_one_summary_each(tmp_path: Path, make_model_dir, decode_docs) -> None:
    from sumpipe.decode.batches import summarize

    folders = [make_model_dir(tmp_path / "M" / f"seed-{s}", seed=s, scale=3.0, training_seed=s) for s in (1, 2)]
    model, vocab, card = load_ensemble(folders)
    assert len(model.members) == 2 and not model.training
    summaries = summarize(model, vocab, card, decode_docs, DecodeConfig(device="cpu", beam_size=2, min_length=2))
    assert len(summaries) == len(decode_docs) and all(len(s.tokens) >= 2 for s in summaries)


# --------------------------------------------------------------------------------------------
# (d) members that do not fit together: one line naming the folders, before any weights load
# --------------------------------------------------------------------------------------------
def _edit_card(folder: Path, **changes) -> Path:
    card = json.loads((folder / "config.json").read_text())
    for key, value in changes.items():
        if key.startswith("arch_"):
            card["arch"][key.removeprefix("arch_")] = value
        else:
            card[key] = value
    (folder / "config.json").write_text(json.dumps(card))
    return folder


@pytest.mark.parametrize(("changes", "message"), [
    ({"family": "rnn"}, "different families (transformer, rnn)"),
    ({"input": "first40"}, "different input selections (first400, first40)"),
    ({"arch_max_source_tokens": 30}, "different source cut lengths (arch.max_source_tokens) (40, 30)"),
    ({"arch_max_summary_tokens": 9}, "different summary cut lengths (arch.max_summary_tokens) (8, 9)"),
    ({"dataset": "cnn_dailymail"}, "different data sets (pydoc, cnn_dailymail)"),
])
def test_members_that_differ_are_one_line_naming_both_folders(tmp_path: Path, make_model_dir, changes,
                                                             message: str) -> None:
    first = make_model_dir(tmp_path / "M1" / "seed-1", training_seed=1)
    other = _edit_card(make_model_dir(tmp_path / "M2" / "seed-1", seed=1, training_seed=1), **changes)
    with pytest.raises(SumpipeError) as info:
        load_ensemble([first, other])
    assert str(info.value) == f"{first} and {other}: {message}; an ensemble's members must share them"


def test_a_different_vocabulary_of_the_same_size_is_refused(tmp_path: Path, make_model_dir, tiny_vocab) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    first = make_model_dir(tmp_path / "a", training_seed=1)
    other = tmp_path / "b"
    shutil.copytree(first, other)
    table = pq.read_table(other / "vocab.parquet")
    tokens = table.column("token").to_pylist()
    tokens[-2], tokens[-1] = tokens[-1], tokens[-2]  # two words swap ids: same size, other bytes
    pq.write_table(table.set_column(table.schema.get_field_index("token"), "token", pa.array(tokens)),
                   other / "vocab.parquet")
    with pytest.raises(SumpipeError, match=r"^.*/a and .*/b: different vocabularies \(vocab.parquet differs\)"):
        load_ensemble([first, other])


def test_a_model_with_a_refine_pass_is_refused(tmp_path: Path, make_model_dir) -> None:
    folder = _edit_card(make_model_dir(tmp_path / "m", training_seed=1), arch_refine=True)
    with pytest.raises(SumpipeError, match=r"m: refines its drafts in a second pass .* decode it one seed at a time"):
        load_ensemble([folder, folder])


def test_selection_is_compared_by_name_and_budget(tmp_path: Path, make_model_dir) -> None:
    first = make_model_dir(tmp_path / "a", selection=Budget("first", 400))
    same = make_model_dir(tmp_path / "b", selection=Budget("first", 400), seed=5)
    model, _, card = load_ensemble([first, same])
    assert len(model.members) == 2 and card.input == "first400"
    assert dataclasses.asdict(card)["selection"]["tokens"] == 400
