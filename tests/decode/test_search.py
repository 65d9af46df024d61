"""Beam search, greedy decoding and sampling on hand-built toy models (no trained model needed).

The toy model implements the decoding protocol of `sumpipe.models.protocol` with a fixed table:
log P(next | document, step, previous token). Small enough to enumerate every output exactly.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import pytest
import torch

from sumpipe.config import DecodeConfig
from sumpipe.decode.search import (
    Hypothesis,
    beam_search,
    block_repeated_ngrams,
    decode_batch,
    filter_top_k_top_p,
    length_penalty,
    make_generator,
    novel_bigram_costs,
    sample_search,
)
from sumpipe.names import BOS, EOS, PAD, UNK


@dataclass
class ToyBatch:
    src: torch.Tensor                  # (B, S): only its shape matters to the toy model
    oov_words: list[list[str]]
    src_ext: torch.Tensor | None = None    # (B, S): the source's ids, read by novel_bigram_penalty
    src_mask: torch.Tensor | None = None


@dataclass
class ToyState:
    doc: torch.Tensor                  # (N,) which document's table each row reads
    step: int

    def index_select(self, idx: torch.Tensor) -> ToyState:
        return ToyState(self.doc[idx], self.step)


class ToyModel:
    """log_probs = table[doc, min(step, L - 1), prev]; table (B, L, W, W) of log-probabilities."""

    def __init__(self, table: torch.Tensor, vocab_size: int) -> None:
        self.table = table
        self.vocab_size = vocab_size
        self.calls = 0

    def start_decoding(self, batch: ToyBatch) -> ToyState:
        return ToyState(torch.arange(batch.src.size(0)), 0)

    def decode_step(self, state: ToyState, prev: torch.Tensor):
        self.calls += 1
        step = min(state.step, self.table.size(1) - 1)
        log_probs = self.table[state.doc, step, prev]
        n, s = len(prev), 3
        info = {"p_gen": torch.full((n,), 0.25 + 0.1 * step),
                "attn": torch.softmax(torch.arange(s, dtype=torch.float) * (1 + step), 0).expand(n, s)}
        return log_probs, ToyState(state.doc, state.step + 1), info


def random_table(n_docs: int, steps: int, width: int, seed: int, sharpness: float = 2.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n_docs, steps, width, width, generator=g) * sharpness
    return logits.log_softmax(dim=-1)


def toy(n_docs: int = 3, steps: int = 6, vocab: int = 7, n_oov: int = 0, seed: int = 0, **kw):
    table = random_table(n_docs, steps, vocab + n_oov, seed, **kw)
    batch = ToyBatch(torch.zeros(n_docs, 3, dtype=torch.long),
                     [[f"oov{j}" for j in range(n_oov)] for _ in range(n_docs)])
    return ToyModel(table, vocab), batch


def brute_force(table: torch.Tensor, words: list[int], max_length: int, min_length: int, alpha: float):
    """Best (tokens, score) over every word sequence of min..max words followed by `</s>`."""
    best = (None, -math.inf)
    for n in range(min_length, max_length + 1):
        for seq in itertools.product(words, repeat=n):
            prev, total = BOS, 0.0
            for step, tok in enumerate((*seq, EOS)):
                total += float(table[min(step, table.size(0) - 1), prev, tok])
                prev = tok
            score = total / length_penalty(n + 1, alpha)
            if score > best[1]:
                best = (list(seq), score)
    return best


# --------------------------------------------------------------------------------------------
# Beam search against brute force
# --------------------------------------------------------------------------------------------
def enumerable_toy():
    """4 documents, words 4-6, `</s>` made a little less likely so that the winner depends on alpha."""
    model, batch = toy(n_docs=4, steps=5, vocab=7, seed=13, sharpness=1.5)
    model.table[..., EOS] -= 1.0
    return model, batch


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0, 2.5])
@pytest.mark.parametrize("min_length", [0, 2])
def test_wide_beam_finds_the_brute_force_optimum(alpha: float, min_length: int) -> None:
    max_length = 4
    model, batch = enumerable_toy()
    results = beam_search(model, batch, beam_size=128, max_length=max_length,
                          min_length=min_length, alpha=alpha)
    for doc, hyp in enumerate(results):
        tokens, score = brute_force(model.table[doc], [4, 5, 6], max_length, min_length, alpha)
        assert hyp.tokens == tokens
        assert hyp.score == pytest.approx(score, abs=1e-5)
        assert len(tokens) >= min_length


def test_the_length_penalty_changes_the_winner() -> None:
    """Sanity of the test above: alpha must matter on this table, or it checks nothing."""
    model, _ = enumerable_toy()
    for doc in range(4):
        winners = {tuple(brute_force(model.table[doc], [4, 5, 6], 4, 0, a)[0]) for a in (0.0, 0.6, 1.0, 2.5)}
        assert len(winners) >= 2


def test_gnmt_length_penalty_by_hand_flips_the_winner_between_alpha_0_and_1() -> None:
    """Two summaries, worked out on paper (not by the function under test):

    short "4 </s>":   P = 0.5 x 0.4 = 0.20,        log P = ln 0.20 = -1.609438, |Y| = 2
    long  "5 6 </s>": P = 0.5 x 0.4 x 0.9 = 0.18,  log P = ln 0.18 = -1.714798, |Y| = 3
    lp(Y) = ((5 + |Y|) / 6) ** alpha:  alpha 0: 1 and 1;  alpha 1: 7/6 = 1.166667 and 8/6 = 1.333333
    score = log P / lp:  alpha 0: short -1.609438 > long -1.714798  -> the short one wins
                         alpha 1: short -1.609438 / 1.166667 = -1.379518
                              <   long  -1.714798 / 1.333333 = -1.286099  -> the long one wins
    Every other path has a step of probability 1e-6 (log -13.8) and never competes.
    """
    assert length_penalty(2, 0.0) == 1.0 and length_penalty(3, 0.0) == 1.0
    assert length_penalty(2, 1.0) == pytest.approx(1.166667, abs=1e-6)
    assert length_penalty(3, 1.0) == pytest.approx(1.333333, abs=1e-6)
    assert length_penalty(3, 2.0) == pytest.approx(1.777778, abs=1e-6)  # (8/6)^2
    w = 7
    table = torch.full((1, 3, w, w), 1e-6)
    table[0, 0, BOS, 4], table[0, 0, BOS, 5] = 0.5, 0.5
    table[0, 1, 4, EOS], table[0, 1, 5, 6] = 0.4, 0.4
    table[0, 2, 6, EOS] = 0.9
    model = ToyModel(table.log(), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    short = beam_search(model, batch, beam_size=4, max_length=5, alpha=0.0)[0]
    assert short.tokens == [4]
    assert short.log_prob == pytest.approx(-1.609438, abs=1e-5)
    assert short.score == pytest.approx(-1.609438, abs=1e-5)
    long = beam_search(model, batch, beam_size=4, max_length=5, alpha=1.0)[0]
    assert long.tokens == [5, 6]
    assert long.log_prob == pytest.approx(-1.714798, abs=1e-5)
    assert long.score == pytest.approx(-1.286099, abs=1e-5)


def test_beam_beats_greedy_on_a_garden_path() -> None:
    """Greedy takes word 4 (0.5) but then continues badly; beam 2 finds 5 → 6 (0.4 × 0.9)."""
    w = 7
    table = torch.full((1, 3, w, w), 1e-6)
    table[0, 0, BOS, 4], table[0, 0, BOS, 5] = 0.5, 0.4
    table[0, 1, 4, 4], table[0, 1, 4, 5], table[0, 1, 4, 6] = 0.3, 0.3, 0.3
    table[0, 1, 5, 6] = 0.9
    for prev in range(w):
        table[0, 2, prev, EOS] = 0.9
    model = ToyModel(table.log(), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    greedy = sample_search(model, batch, max_length=5, alpha=0.0)[0]
    beam = beam_search(model, batch, beam_size=2, max_length=5, alpha=0.0)[0]
    assert greedy.tokens[:1] == [4]
    assert beam.tokens == [5, 6]
    assert beam.log_prob == pytest.approx(math.log(0.4 * 0.9 * 0.9), abs=1e-4)
    assert beam.score > greedy.score


# --------------------------------------------------------------------------------------------
# Beam 1 = greedy; batched = one at a time
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_beam_size_one_is_greedy(alpha: float) -> None:
    model, batch = toy(n_docs=5, steps=12, vocab=9, seed=3)
    beam = beam_search(model, batch, beam_size=1, max_length=10, alpha=alpha, min_length=1)
    greedy = sample_search(model, batch, max_length=10, alpha=alpha, min_length=1)
    assert [h.tokens for h in beam] == [h.tokens for h in greedy]
    assert [h.score for h in beam] == pytest.approx([h.score for h in greedy], abs=1e-5)
    assert any(len(h.tokens) > 1 for h in beam)


@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_batched_equals_one_document_at_a_time(strategy: str) -> None:
    model, batch = toy(n_docs=6, steps=10, vocab=11, n_oov=2, seed=5)
    cfg = DecodeConfig(strategy=strategy, beam_size=3, block_ngram_repeat=2, min_length=2, top_k=4)
    together = decode_batch(model, batch, cfg, max_length=8)
    if strategy == "sample":      # one stream over the batch: compare with itself, reproducibly
        again = decode_batch(model, batch, cfg, max_length=8)
        assert [h.tokens for h in together] == [h.tokens for h in again]
        return
    for doc in range(6):
        single_model = ToyModel(model.table[doc : doc + 1], model.vocab_size)
        single_batch = ToyBatch(batch.src[doc : doc + 1], batch.oov_words[doc : doc + 1])
        alone = decode_batch(single_model, single_batch, cfg, max_length=8)[0]
        assert alone.tokens == together[doc].tokens
        assert alone.score == pytest.approx(together[doc].score, abs=1e-5)


class ModuleToy(torch.nn.Module):
    """The toy model as an `nn.Module` whose parameters (and outputs) live on the CPU."""

    def __init__(self, toy_model: ToyModel) -> None:
        super().__init__()
        self.toy, self.vocab_size = toy_model, toy_model.vocab_size
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    def start_decoding(self, batch: ToyBatch) -> ToyState:
        return self.toy.start_decoding(batch)

    def decode_step(self, state: ToyState, prev: torch.Tensor):
        return self.toy.decode_step(state, prev)


@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_search_runs_on_the_models_device_not_the_batchs(strategy: str) -> None:
    """The protocol lets a batch arrive on any device (the model moves it): scores, histories and
    the sampling generator must live where `decode_step` computes (here a `meta` batch, CPU model)."""
    model, batch = toy(n_docs=2, steps=6, vocab=7, seed=4)
    cfg = DecodeConfig(strategy=strategy, beam_size=2)
    expected = decode_batch(model, batch, cfg, max_length=5)
    elsewhere = ToyBatch(batch.src.to("meta"), batch.oov_words)
    got = decode_batch(ModuleToy(model), elsewhere, cfg, max_length=5)
    assert [h.tokens for h in got] == [h.tokens for h in expected]


def test_finished_documents_leave_the_batch() -> None:
    """A document whose best answer is final stops costing decoder rows (and steps end early)."""
    w = 7
    table = torch.full((2, 1, w, w), 1e-3)
    table[0, 0, :, EOS] = 0.99                              # doc 0 wants to stop at once
    table[1, 0, :, 4] = 0.5
    table[1, 0, :, 5] = 0.49                                # doc 1 never wants to stop
    model = ToyModel(table.log(), w)
    batch = ToyBatch(torch.zeros(2, 2, dtype=torch.long), [[], []])
    out = beam_search(model, batch, beam_size=2, max_length=6, alpha=0.0)
    assert out[0].tokens == []
    assert len(out[1].tokens) == 6
    assert model.calls == 7                                 # max_length + 1 steps, not more


# --------------------------------------------------------------------------------------------
# Masks: <unk>, min/max length, n-gram blocking, OOV columns
# --------------------------------------------------------------------------------------------
def test_unk_is_never_chosen_even_when_preferred() -> None:
    model, batch = toy(n_docs=3, steps=8, vocab=8, seed=7)
    model.table[..., UNK] = 0.0                              # P(<unk>) = 1 everywhere
    model.table[..., PAD] = -0.1
    for strategy in ("beam", "greedy", "sample"):
        cfg = DecodeConfig(strategy=strategy, block_ngram_repeat=0)
        for hyp in decode_batch(model, batch, cfg, max_length=6):
            assert UNK not in hyp.tokens and PAD not in hyp.tokens and BOS not in hyp.tokens


def test_block_repeated_ngrams_by_hand() -> None:
    history = torch.tensor([[4, 5, 6, 4, 5]])
    for n, blocked in [(1, {4, 5, 6}), (2, {6}), (3, {6}), (4, set()), (6, set())]:
        lp = torch.zeros(1, 8)
        block_repeated_ngrams(lp, history, n)
        assert {int(i) for i in torch.nonzero(lp[0] == -math.inf)} == blocked, n
    lp = torch.zeros(2, 8)                                   # rows are independent
    block_repeated_ngrams(lp, torch.tensor([[4, 5, 4], [5, 6, 7]]), 2)
    assert lp[0, 5] == -math.inf and torch.isfinite(lp[1]).all()


def test_repeatable_ids_are_blocked_only_where_the_whole_ngram_is_theirs() -> None:
    history = torch.tensor([[4, 5, 6, 4, 5]])
    free = torch.tensor([4, 5])                              # say 4 = "the", 5 = "of": stop words
    for n, blocked in [(1, {6}), (2, {6}), (3, {6})]:
        lp = torch.zeros(1, 8)
        block_repeated_ngrams(lp, history, n, free)
        assert {int(i) for i in torch.nonzero(lp[0] == -math.inf)} == blocked, n
    lp = torch.zeros(1, 8)                                   # (4, 5) -> 4 is all free: "of the" may recur
    block_repeated_ngrams(lp, torch.tensor([[5, 4, 7, 5]]), 2, free)
    assert torch.isfinite(lp).all()
    lp = torch.zeros(1, 8)                                   # (5, 7): 7 is a content word, still blocked
    block_repeated_ngrams(lp, torch.tensor([[5, 7, 4, 5]]), 2, free)
    assert {int(i) for i in torch.nonzero(lp[0] == -math.inf)} == {7}


def test_decode_lets_stop_words_recur_and_no_content_word() -> None:
    w = 10
    table = torch.full((1, 1, w, w), 0.01)
    for a, b in [(4, 5), (5, 4)]:
        table[:, 0, a, b] = 1.0                              # loves to loop: 4 5 4 5 ...
    table[:, 0, BOS, 4] = 1.0
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    cfg = DecodeConfig(strategy="greedy", block_ngram_repeat=1, min_length=6)
    blocked = decode_batch(model, batch, cfg, max_length=8)[0].tokens
    assert blocked[:2] == [4, 5] and len(blocked) == len(set(blocked))
    free = decode_batch(model, batch, cfg, max_length=8, repeatable=(4,))[0].tokens
    assert free[:3] == [4, 5, 4] and free.count(5) == 1     # 4 recurs, 5 (a content word) does not


@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_banned_ids_are_never_written(strategy: str) -> None:
    w = 10
    table = torch.full((1, 1, w, w), 0.01)
    table[:, 0, BOS, 4] = table[:, 0, 4, 5] = table[:, 0, 5, 6] = 1.0     # the favourite: 4 5 6
    table[:, 0, BOS, 7] = table[:, 0, 7, 6] = 0.5                         # the runner-up: 7 6
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    cfg = DecodeConfig(strategy=strategy, min_length=2, block_ngram_repeat=0, beam_size=3)
    assert decode_batch(model, batch, cfg, max_length=3)[0].tokens[:1] == [4] or strategy == "sample"
    for hyp in decode_batch(model, batch, cfg, max_length=3, banned=(4, 5)):
        assert not {4, 5} & set(hyp.tokens)
        assert strategy == "sample" or hyp.tokens[:2] == [7, 6]


def test_novel_bigram_costs_by_hand() -> None:
    """Row 0 follows 3: the source writes 3 5 and 3 6 (3 7 sits in the padding), so every other token but
    </s> pays; row 1 is still at <s> and pays nothing; -inf stays -inf."""
    scores = torch.zeros(2, 9)
    scores[0, 8] = float("-inf")
    src = torch.tensor([[3, 5, 4, 3, 6, 3, 7], [4, 4, 4, 4, 4, 4, 4]])
    mask = torch.tensor([[True] * 5 + [False] * 2, [True] * 7])
    novel_bigram_costs(scores, torch.tensor([3, BOS]), src, mask, 1.5)
    paid = [c for c in range(9) if scores[0, c] == -1.5]
    assert paid == [c for c in range(8) if c not in (5, 6, EOS)]
    assert scores[0, 5] == scores[0, 6] == scores[0, EOS] == 0.0
    assert scores[0, 8] == float("-inf")
    assert scores[1].tolist() == [0.0] * 9


@pytest.mark.parametrize("strategy", ["beam", "greedy"])
def test_novel_bigram_penalty_follows_the_source_where_the_model_hesitates(strategy: str) -> None:
    """The model slightly prefers 4 7 to 4 5; the source writes "4 5 6", so a penalty of 0.5 a novel pair
    turns the summary to the source's pair, and the log-probability then includes the costs paid."""
    w = 10
    table = torch.full((1, 3, w, w), 1e-6)
    table[0, 0, BOS, 4] = 0.9
    table[0, 1, 4, 7], table[0, 1, 4, 5] = 0.5, 0.4
    table[0, 2, :, EOS] = 0.9
    model = ToyModel(table.log(), w)
    src = torch.tensor([[4, 5, 6]])
    batch = ToyBatch(src, [[]], src_ext=src, src_mask=torch.ones(1, 3, dtype=torch.bool))
    plain = DecodeConfig(strategy=strategy, min_length=0, block_ngram_repeat=0, length_penalty=0.0, beam_size=3)
    assert decode_batch(model, batch, plain, max_length=3)[0].tokens == [4, 7]
    costed = replace(plain, novel_bigram_penalty=0.5)
    hyp = decode_batch(model, batch, costed, max_length=3)[0]
    assert hyp.tokens == [4, 5]
    assert hyp.log_prob == pytest.approx(math.log(0.9 * 0.4 * 0.9), abs=1e-4)   # 4 5 </s>: no pair novel
    on_its_own = replace(costed, novel_bigram_penalty=0.1)     # 0.1 < log(0.5 / 0.4): the model's choice stays
    assert decode_batch(model, batch, on_its_own, max_length=3)[0].tokens == [4, 7]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_blocking_leaves_no_repeated_ngram(n: int, strategy: str) -> None:
    w = 10
    table = torch.full((4, 1, w, w), 0.01)
    for a, b in [(4, 5), (5, 4), (6, 7), (7, 6), (8, 9), (9, 8)]:
        table[:, 0, a, b] = 1.0                              # loves to loop: 4 5 4 5 ...
    table[:, 0, BOS, 4] = 1.0
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(4, 2, dtype=torch.long), [[]] * 4)
    cfg = DecodeConfig(strategy=strategy, block_ngram_repeat=n, min_length=6, beam_size=3)
    for hyp in decode_batch(model, batch, cfg, max_length=12):
        grams = [tuple(hyp.tokens[i : i + n]) for i in range(len(hyp.tokens) - n + 1)]
        assert len(grams) == len(set(grams))
        assert len(hyp.tokens) >= 6                          # it did not just stop
    unblocked = decode_batch(model, batch, replace(cfg, strategy="greedy", block_ngram_repeat=0), max_length=12)
    assert unblocked[0].tokens[:4] == [4, 5, 4, 5]           # the loop is really there


@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_the_adjacent_rule_stops_a_token_twice_in_a_row_which_2_gram_blocking_allows(strategy: str) -> None:
    # A model that loves "4 4" then "5 5 ...": the 2-gram (4, 4) is new, so 2-gram blocking lets it
    # through once; the adjacent rule never does, and leaves every other choice alone.
    w = 8
    table = torch.full((2, 1, w, w), 0.01)
    table[:, 0, BOS, 4] = 1.0
    table[:, 0, 4, 4], table[:, 0, 4, 5] = 1.0, 0.5
    table[:, 0, 5, 5], table[:, 0, 5, 6] = 1.0, 0.5
    table[:, 0, 6, 6], table[:, 0, 6, 4] = 1.0, 0.5
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(2, 2, dtype=torch.long), [[]] * 2)
    cfg = DecodeConfig(strategy=strategy, block_ngram_repeat=2, min_length=4, max_length=6, beam_size=3)
    plain = decode_batch(model, batch, replace(cfg, strategy="greedy"), max_length=6)
    assert plain[0].tokens[:2] == [4, 4]                     # the habit, through 2-gram blocking
    for hyp in decode_batch(model, batch, replace(cfg, block_adjacent_repeat=True), max_length=6):
        assert all(a != b for a, b in zip(hyp.tokens, hyp.tokens[1:])) and len(hyp.tokens) >= 4
    greedy = decode_batch(model, batch, replace(cfg, strategy="greedy", block_adjacent_repeat=True), max_length=6)
    assert greedy[0].tokens[:3] == [4, 5, 6]                 # the next best, once the repeat is barred


def test_min_and_max_length() -> None:
    model, batch = toy(n_docs=4, steps=8, vocab=8, seed=2)
    model.table[..., EOS] = 0.0                              # wants to stop immediately
    for strategy in ("beam", "greedy", "sample"):
        out = decode_batch(model, batch, DecodeConfig(strategy=strategy, min_length=3, top_k=1), max_length=5)
        assert all(len(h.tokens) == 3 for h in out)
    model.table[..., EOS] = -50.0                            # never wants to stop
    for strategy in ("beam", "greedy", "sample"):
        out = decode_batch(model, batch, DecodeConfig(strategy=strategy, block_ngram_repeat=0), max_length=5)
        assert all(len(h.tokens) == 5 for h in out)


@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_min_length_counts_a_sentence_end_as_an_end(strategy: str) -> None:
    # A model that says "4 5 ." and would then stop; token 6 stands for ".". With min_length 6 and no
    # sentence ends the search must pad ("4 5 . 7 ..."), the "temperature. Degrees."; with
    # 6 as a sentence end, "</s>" is allowed right after it and the model's own 3 words stand.
    w, period = 9, 6
    table = torch.full((1, 1, w, w), -9.0)
    table[0, 0, BOS, 4] = table[0, 0, 4, 5] = table[0, 0, 5, period] = -0.1
    table[0, 0, period, EOS] = -0.1
    table[0, 0, period, 7] = table[0, 0, 7, 8] = table[0, 0, 8, 7] = -1.0
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    cfg = DecodeConfig(strategy=strategy, min_length=6, top_k=1, beam_size=3, block_ngram_repeat=0)
    padded = decode_batch(model, batch, cfg, max_length=8)[0]
    assert padded.tokens[:3] == [4, 5, period] and len(padded.tokens) >= 6
    ended = decode_batch(model, batch, cfg, max_length=8, sentence_ends=(period,))[0]
    assert ended.tokens == [4, 5, period]
    # Before a sentence end, min_length still holds: "</s>" after "4" stays barred.
    table[0, 0, 4, EOS] = 0.0
    early = decode_batch(ToyModel(table.log_softmax(-1), w), batch, cfg, max_length=8, sentence_ends=(period,))[0]
    assert early.tokens == [4, 5, period]


@pytest.mark.parametrize("strategy", ["beam", "greedy", "sample"])
def test_min_sentences_bars_the_end_until_enough_sentences_are_said(strategy: str) -> None:
    # A model that says "4 5 ." and would stop; after ".", its next best is "7 8 ." (token 6 is ".").
    # min_sentences 2: "</s>" is barred after the first "." (one sentence end), so the search goes on to
    # the second: "4 5 . 7 8 ."; off (0), or without sentence ends to count, the model's "4 5 ." stands;
    # max_length still ends a hypothesis that cannot reach the count (5 tokens, one "." among them).
    w, period = 9, 6
    table = torch.full((1, 1, w, w), -9.0)
    table[0, 0, BOS, 4] = table[0, 0, 4, 5] = table[0, 0, 5, period] = -0.1
    table[0, 0, period, EOS] = -0.1
    table[0, 0, period, 7] = -1.0
    table[0, 0, 7, 8] = table[0, 0, 8, period] = -0.1
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    cfg = DecodeConfig(strategy=strategy, top_k=1, beam_size=3, block_ngram_repeat=0, min_sentences=2)
    assert decode_batch(model, batch, cfg, max_length=12, sentence_ends=(period,))[0].tokens == [4, 5, period, 7, 8,
                                                                                                  period]
    off = replace(cfg, min_sentences=0)
    assert decode_batch(model, batch, off, max_length=12, sentence_ends=(period,))[0].tokens == [4, 5, period]
    assert decode_batch(model, batch, cfg, max_length=12)[0].tokens == [4, 5, period]
    short = decode_batch(model, batch, cfg, max_length=5, sentence_ends=(period,))[0].tokens
    assert len(short) == 5 and short.count(period) == 1


def test_padding_columns_of_other_documents_are_never_chosen() -> None:
    """Doc 0 has 2 OOV words, doc 1 none: doc 1 must not pick extended ids V, V+1."""
    model, batch = toy(n_docs=2, steps=6, vocab=7, n_oov=2, seed=1)
    batch.oov_words = [["x", "y"], []]
    model.table[..., 7:] = 0.0                               # extended ids look perfect
    out = beam_search(model, batch, beam_size=2, max_length=4, block_ngram=0)
    assert set(out[0].tokens) <= {7, 8}
    assert all(t < 7 for t in out[1].tokens)


def test_details_follow_the_chosen_rows() -> None:
    model, batch = toy(n_docs=2, steps=8, vocab=8, seed=4)
    for hyp in beam_search(model, batch, beam_size=3, max_length=6, min_length=2, details=True):
        assert hyp.p_gen == pytest.approx([0.25 + 0.1 * t for t in range(len(hyp.tokens))])
        assert hyp.attention.shape == (len(hyp.tokens), 3)
        assert torch.allclose(hyp.attention.sum(1), torch.ones(len(hyp.tokens)))


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------
def test_filter_top_k_top_p_by_hand() -> None:
    logits = torch.tensor([[0.5, 0.3, 0.15, 0.05]]).log()
    kept = lambda out: torch.isfinite(out[0]).nonzero().view(-1).tolist()  # noqa: E731
    assert kept(filter_top_k_top_p(logits, top_p=0.7)) == [0, 1]
    assert kept(filter_top_k_top_p(logits, top_p=0.92)) == [0, 1, 2]
    assert kept(filter_top_k_top_p(logits, top_p=0.4)) == [0]
    assert kept(filter_top_k_top_p(logits, top_k=3)) == [0, 1, 2]
    assert kept(filter_top_k_top_p(logits, top_k=3, top_p=0.7)) == [0, 1]
    assert kept(filter_top_k_top_p(logits, top_k=1, top_p=1.0)) == [0]


def test_sampling_is_deterministic_for_a_seed_and_varies_across_seeds() -> None:
    model, batch = toy(n_docs=8, steps=10, vocab=12, seed=9, sharpness=0.5)
    run = lambda seed: [h.tokens for h in sample_search(  # noqa: E731
        model, batch, max_length=8, greedy=False, generator=make_generator(seed))]
    assert run(1) == run(1)
    assert run(1) != run(2)


def test_sampling_stays_inside_top_k_and_top_p() -> None:
    w = 10
    probs = torch.tensor([0.0, 0.0, 0.0, 0.02, 0.4, 0.3, 0.2, 0.05, 0.02, 0.01])
    table = probs.log().expand(200, 1, w, w).clone()        # same distribution at every step
    model = ToyModel(table, w)
    batch = ToyBatch(torch.zeros(200, 2, dtype=torch.long), [[]] * 200)
    seen_k = set()
    for h in sample_search(model, batch, max_length=6, greedy=False, top_k=2, generator=make_generator(0)):
        seen_k.update(h.tokens)
    assert seen_k == {4, 5}                                  # top-2 words (</s> 0.02 is outside)
    seen_p = set()
    for h in sample_search(model, batch, max_length=6, greedy=False, top_p=0.85, generator=make_generator(0)):
        seen_p.update(h.tokens)
    assert seen_p == {4, 5, 6}                               # 0.4 + 0.3 + 0.2 reaches 0.85
    greedy_like = sample_search(model, batch, max_length=6, greedy=False, top_k=1, generator=make_generator(0))
    assert all(h.tokens == [4] * 6 for h in greedy_like)


def test_temperature_sharpens() -> None:
    w = 8
    probs = torch.tensor([0.0, 0.0, 0.0, 0.0001, 0.4, 0.3, 0.2, 0.0999])
    model = ToyModel(probs.log().expand(300, 1, w, w).clone(), w)
    batch = ToyBatch(torch.zeros(300, 2, dtype=torch.long), [[]] * 300)
    count = lambda temp: sum(h.tokens.count(4) for h in sample_search(  # noqa: E731
        model, batch, max_length=3, greedy=False, temperature=temp, generator=make_generator(0)))
    assert count(0.2) > count(1.0) > count(5.0)


@pytest.mark.parametrize("temperature", [1e-45, 1e-300, 5e-324])
def test_a_vanishing_temperature_samples_the_greedy_choice(temperature: float) -> None:
    """Below float32's range the logits all overflowed to -inf and softmax gave NaN (a RuntimeError
    from multinomial). Sampling at a temperature near 0 is greedy decoding, its limit."""
    model, batch = toy(n_docs=6, steps=8, vocab=10, seed=4, sharpness=0.5)
    greedy = [h.tokens for h in sample_search(model, batch, max_length=6, greedy=True)]
    cold = [h.tokens for h in sample_search(model, batch, max_length=6, greedy=False, temperature=temperature,
                                            generator=make_generator(0))]
    assert cold == greedy


def test_a_huge_temperature_samples_uniformly_not_nan() -> None:
    w = 8
    probs = torch.tensor([0.0, 0.0, 0.0, 0.0001, 0.9, 0.0499, 0.05, 0.0])
    model = ToyModel(probs.log().expand(300, 1, w, w).clone(), w)
    batch = ToyBatch(torch.zeros(300, 2, dtype=torch.long), [[]] * 300)
    hyps = sample_search(model, batch, max_length=2, greedy=False, temperature=1e300, generator=make_generator(0))
    tokens = [t for h in hyps for t in h.tokens]
    assert set(tokens) == {4, 5, 6}  # the words with any probability (and </s>), never an impossible one
    assert tokens.count(5) > 100     # ~1 in 4, where its probability is 0.05


def test_hypothesis_of_a_dead_end_is_empty() -> None:
    """Every word blocked and </s> not yet allowed: no finished hypothesis, no crash."""
    w = 5                                                    # a single word (4)
    model = ToyModel(torch.zeros(1, 1, w, w).log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    out = beam_search(model, batch, beam_size=2, max_length=6, min_length=4, block_ngram=1)
    assert out[0] == Hypothesis([], -math.inf, -math.inf)
    out = sample_search(model, batch, max_length=6, min_length=4, block_ngram=1)
    assert out[0].score == -math.inf


@pytest.mark.parametrize("strategy", ["beam", "greedy"])
def test_known_words_keep_the_search_from_joining_pieces_into_a_non_word(strategy: str) -> None:
    # pieces: 5 "\u2581ca" 6 "s" 7 "\u2581cat"; the model prefers "ca" + "s" ("cas", no word), then "cat" + "s".
    # With the known words {cat, cats} the search writes "cats"; without, "cas".
    from sumpipe.models.known_words import KnownWords, PieceTrie

    w, ca, s, cat = 8, 5, 6, 7
    table = torch.full((1, 1, w, w), -9.0)
    table[0, 0, BOS, ca], table[0, 0, BOS, cat] = -0.1, -1.0
    table[0, 0, ca, s] = table[0, 0, cat, s] = table[0, 0, s, EOS] = -0.1
    model = ToyModel(table.log_softmax(-1), w)
    batch = ToyBatch(torch.zeros(1, 2, dtype=torch.long), [[]])
    cfg = DecodeConfig(strategy=strategy, beam_size=2, block_ngram_repeat=0)
    starts = [False] * 5 + [True, False, True]
    known = KnownWords.for_batch(starts, PieceTrie([[cat], [cat, s]]), [[]])
    assert decode_batch(model, batch, cfg, max_length=4, known_words=known)[0].tokens == [cat, s]
    assert decode_batch(model, batch, cfg, max_length=4)[0].tokens == [ca, s]
