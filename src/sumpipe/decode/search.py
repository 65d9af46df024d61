"""Batched search over a `Decodable` model: beam search, greedy decoding and sampling.

Every search runs B documents at once through the incremental protocol of
`sumpipe.models.protocol`: the encoder runs once (`start_decoding`), each step feeds one token
per row to `decode_step` (the model caches the decoder's keys and values), and
`state.index_select` reorders / shrinks the rows after each step. A document that is done leaves
the batch, so the remaining ones decode faster.

Conventions shared by all strategies:
- Outputs are *extended* ids: `id >= vocab_size` is a word copied from the source
  (`Batch.oov_words`); the caller maps ids back to words (`sumpipe.decode.batches`).
- `<unk>`, `<pad>` and `<s>` are never chosen, nor extended ids beyond a document's own OOV
  words. `</s>` is masked while a hypothesis has fewer than `min_length` words, unless its last
  token ends a sentence (`sentence_ends`: a sentence end counts as an end, so a model that has said
  its sentence is never pushed to start another one to reach the count: "Convert degrees to a
  temperature. Degrees."), and after `max_length` words `</s>` is the only choice, so every
  hypothesis ends with `</s>` and has at most `max_length` words (the `</s>` is not part of
  `Hypothesis.tokens`).
- `min_sentences` = m > 0 also masks `</s>` while a hypothesis holds fewer than m sentence ends
  (`sentence_ends` tokens: a news model trained on highlights ended by "." otherwise stops after
  one or two); `max_length` still ends it. Off (0) by default, and a no-op without `sentence_ends`.
- `block_ngram` = n > 0 forbids any token that would repeat an n-gram (of extended ids) already in
  the hypothesis (n = 1 forbids repeating any word). `repeatable` ids (the stop words, with
  `decode.repeat_stop_words`) are exempt where the whole n-gram is made of them, so a headline under
  n = 1 may say "of" and "the" twice but no content word twice.
- `block_adjacent` forbids the token just generated as the next one ("the cache cache"): a word
  twice in a row, which a repeated 2-gram rule does not catch (the 2-gram (cache, cache) is new). A
  decoding rule, not a trained cure: the report shows every model's figures with and without it.
- `banned` ids (`decode.banned_words`) are never chosen.
- `novel_bigram_penalty` = b > 0 subtracts b from the log-probability of every token that, with the token
  before it, makes a pair of (extended) ids the document's source never writes side by side (Rush et al.
  2015's bigram-match feature, as a cost so that a step's score stays <= 0 and rule 2 below stays exact).
  The first token and `</s>` are exempt. The scores, and `Hypothesis.log_prob`, then include these costs.
- `known_words` (a subword model's `decode.known_words`) lets a hypothesis write only known words: the
  model's training words and its document's (`sumpipe.models.known_words`).
- GNMT length penalty (Wu et al. 2016, used by Morozovskii 2022 §2.3.4): lp(Y) = ((5 + |Y|) / 6) ** alpha
  with |Y| = the number of output tokens *including* the final `</s>`; a finished hypothesis
  scores log P(Y) / lp(Y).

Beam search (k beams per document). Each step takes the 2k best extensions of the k live beams;
`</s>` extensions ranked among the first k are set aside as finished hypotheses, and the first k
extensions that are not `</s>` become the new beams (the fairseq / OpenNMT scheme). A document is
done when
  1. it has k finished hypotheses (the beam's budget is spent; this is what makes beam size 1
     identical to greedy decoding), or
  2. its best finished hypothesis cannot be beaten: log-probabilities only fall as a hypothesis
     grows and lp only grows with |Y|, so no extension of a live beam with log-probability s
     can score more than s / lp(max_length + 1); once the best finished score reaches that bound
     for the best live beam, stopping cannot change the result, or
  3. no live beam has a finite score, or `max_length` words have been generated (the forced `</s>`
     finishes every live beam).
The result is the best finished hypothesis. With a beam wide enough to hold every prefix the
search is exact (tests/decode/test_search.py checks it against brute-force enumeration).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from sumpipe.names import BOS, EOS, PAD, UNK

NEG_INF = float("-inf")


@dataclass
class Hypothesis:
    """One decoded summary.

    tokens: extended ids without `</s>`; log_prob: log P(tokens + `</s>`); score: log_prob / lp.
    With details: p_gen[t] and attention[t] (S,) are the model's p_gen and copy attention at the
    step that produced tokens[t] (attention is a (T, S) float32 CPU tensor); a multi-head copy
    attention (the transformer's) also gives head_attention (T, H, S), each head's weights.
    """

    tokens: list[int]
    score: float
    log_prob: float
    p_gen: list[float] | None = None
    attention: torch.Tensor | None = None
    head_attention: torch.Tensor | None = None


def length_penalty(length: int, alpha: float) -> float:
    """GNMT lp(Y) = ((5 + |Y|) / 6) ** alpha."""
    return ((5.0 + length) / 6.0) ** alpha


# --------------------------------------------------------------------------------------------
# Masks applied to every step's log-probabilities
# --------------------------------------------------------------------------------------------
def block_repeated_ngrams(log_probs: torch.Tensor, history: torch.Tensor, n: int,
                          repeatable: torch.Tensor | None = None) -> None:
    """In place: -inf for every token that would complete an n-gram already in its row's history.

    log_probs (N, W); history (N, t) long, the tokens generated so far. The last n - 1 tokens are
    compared with every earlier window of n - 1 tokens; where they match, the token that followed
    that window is blocked, unless every token of that earlier n-gram is in `repeatable` (ids, long).
    """
    t = history.size(1)
    if n < 1 or t < n:
        return
    if n == 1:
        followers = history
        match = torch.ones_like(history, dtype=torch.bool)
    else:
        prefix = history[:, t - n + 1 :]                           # (N, n-1)
        windows = history.unfold(1, n - 1, 1)[:, : t - n + 1]      # (N, t-n+1, n-1), starts 0..t-n
        match = (windows == prefix[:, None, :]).all(dim=-1)        # (N, t-n+1)
        followers = history[:, n - 1 :]                            # token after window i
    if repeatable is not None and repeatable.numel():
        free = torch.isin(history, repeatable).unfold(1, n, 1).all(dim=-1)   # (N, t-n+1): n-gram i all free
        match &= ~free
    width = log_probs.size(1)
    # Unmatched windows write into a spare column, so one scatter handles every row.
    index = torch.where(match, followers, torch.full_like(followers, width))
    blocked = torch.zeros(log_probs.size(0), width + 1, dtype=torch.bool, device=log_probs.device)
    blocked.scatter_(1, index, True)
    log_probs.masked_fill_(blocked[:, :width], NEG_INF)


def _masked(
    log_probs: torch.Tensor,
    history: torch.Tensor,
    step: int,
    width_limit: torch.Tensor,
    min_length: int,
    max_length: int,
    block_ngram: int,
    block_adjacent: bool = False,
    sentence_ends: torch.Tensor | None = None,
    min_sentences: int = 0,
    known_words: Any = None,
    row_doc: torch.Tensor | None = None,
    repeatable: torch.Tensor | None = None,
    banned: torch.Tensor | None = None,
    source_pairs: _SourcePairs | None = None,
) -> torch.Tensor:
    """A float32 copy of log_probs (N, W) with every forbidden choice at -inf (see module doc).

    width_limit (N,): V + the row's own number of OOV words (columns beyond are padding);
    sentence_ends: the ids (long tensor) after which `</s>` is allowed before `min_length`, and which
    `min_sentences` counts in each row's history (N, t); known_words: a `sumpipe.models.known_words.KnownWords`
    of the batch (None: no constraint), which reads each row's document in row_doc (N,); repeatable: the
    ids `block_ngram` lets repeat (long tensor, or None); banned: ids never chosen (long tensor, or None);
    source_pairs: the costs of `novel_bigram_penalty` (None: off), charged after the masks.
    """
    out = log_probs.float().clone()
    out[:, [UNK, PAD, BOS]] = NEG_INF
    if banned is not None and banned.numel():
        out[:, banned] = NEG_INF
    columns = torch.arange(out.size(1), device=out.device)
    out.masked_fill_(columns[None, :] >= width_limit[:, None], NEG_INF)
    if step >= max_length:
        eos = out[:, EOS].clone()
        out.fill_(NEG_INF)
        out[:, EOS] = eos
        return out
    if step < min_length:
        out[:, EOS] = _min_length_eos(out[:, EOS], history, sentence_ends)
    if min_sentences > 0 and sentence_ends is not None and sentence_ends.numel():
        too_few = torch.isin(history, sentence_ends).sum(dim=1) < min_sentences   # (N,)
        out[:, EOS] = out[:, EOS].masked_fill(too_few, NEG_INF)
    if block_ngram > 0:
        block_repeated_ngrams(out, history, block_ngram, repeatable)
    if block_adjacent and history.size(1):
        out.scatter_(1, history[:, -1:], NEG_INF)
    if known_words is not None:
        assert row_doc is not None, "known_words reads each row's document"
        known_words.mask(out, history, row_doc)
    if source_pairs is not None:
        assert row_doc is not None, "source_pairs reads each row's document"
        source_pairs.charge(out, history, row_doc)
    return out


def novel_bigram_costs(scores: torch.Tensor, prev: torch.Tensor, src: torch.Tensor, src_mask: torch.Tensor,
                       penalty: float) -> None:
    """In place: `penalty` off every column of scores (N, W) whose token would follow its row's previous
    token `prev` (N,) in a pair the row's source src (N, S) (extended ids; src_mask (N, S) True at real
    tokens) never writes. `</s>`, rows still at `<s>` and -inf entries are unchanged.

    The source's followers of `prev` are scattered as "seen" into a (N, W + 1) mask; a position that does
    not follow `prev` writes into the spare last column, so one scatter handles every row.
    """
    width = scores.size(1)
    follows = (src[:, :-1] == prev[:, None]) & src_mask[:, 1:]                       # (N, S-1)
    index = torch.where(follows, src[:, 1:], torch.full_like(src[:, 1:], width))
    seen = torch.zeros(scores.size(0), width + 1, dtype=torch.bool, device=scores.device)
    seen.scatter_(1, index, True)
    seen = seen[:, :width]
    seen[:, EOS] = True
    seen[prev == BOS] = True
    scores.sub_(penalty * (~seen).to(scores.dtype))


def _min_length_eos(eos: torch.Tensor, history: torch.Tensor, sentence_ends: torch.Tensor | None) -> torch.Tensor:
    """The `</s>` column (N,) before `min_length`: -inf, except in rows whose last token ends a sentence."""
    if sentence_ends is None or not sentence_ends.numel() or not history.size(1):
        return torch.full_like(eos, NEG_INF)
    ended = torch.isin(history[:, -1], sentence_ends)
    return torch.where(ended, eos, torch.full_like(eos, NEG_INF))


def _ids(sentence_ends: Sequence[int], device: torch.device) -> torch.Tensor:
    return torch.tensor(list(sentence_ends), dtype=torch.long, device=device)


@dataclass(frozen=True)
class _SourcePairs:
    """`novel_bigram_penalty` over one batch: its source ids src (B, S) and mask on the search's device."""

    src: torch.Tensor
    mask: torch.Tensor
    penalty: float

    @classmethod
    def of(cls, batch: Any, device: torch.device, penalty: float) -> _SourcePairs | None:
        return cls(batch.src_ext.to(device), batch.src_mask.to(device), penalty) if penalty > 0 else None

    def charge(self, scores: torch.Tensor, history: torch.Tensor, row_doc: torch.Tensor) -> None:
        """In place on scores (N, W): the cost of each row's next token (the first token is exempt)."""
        if history.size(1):
            novel_bigram_costs(scores, history[:, -1], self.src[row_doc], self.mask[row_doc], self.penalty)


def _device(model: Any, batch: Any) -> torch.device:
    """Where `decode_step` returns its log-probabilities: the model's device (a toy model without
    parameters computes where its batch is)."""
    return next(model.parameters()).device if isinstance(model, torch.nn.Module) else batch.src.device


def _start(model: Any, batch: Any) -> tuple[Any, int, torch.device, torch.Tensor]:
    """Run the encoder: (state for B rows, B, the device the model computes on, (B,) width limits).

    The search keeps its own tensors (scores, histories, masks) on the model's device, which is
    where `decode_step` returns log-probabilities, whatever device the batch came on. The width
    limit of a document is V + its number of OOV words (`Batch.oov_words`).
    """
    n_docs = int(batch.src.size(0))
    device = _device(model, batch)
    oov = getattr(batch, "oov_words", None) or [[] for _ in range(n_docs)]
    limits = torch.tensor([model.vocab_size + len(w) for w in oov], dtype=torch.long, device=device)
    return model.start_decoding(batch), n_docs, device, limits


class _Details:
    """Per-row p_gen (N, t), attention (N, t, S) and per-head attention (N, t, H, S) histories, kept only
    when asked for. Every `info` key is optional (a family without a copy mechanism returns none, one
    with a single attention no "head_attn"): a missing one stays None."""

    def __init__(self, enabled: bool, n_rows: int, device: torch.device) -> None:
        self.enabled = enabled
        self.p_gen: torch.Tensor | None = None
        self.attn: torch.Tensor | None = None
        self.head_attn: torch.Tensor | None = None

    @staticmethod
    def _extend(history: torch.Tensor | None, rows: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        """history (N, t, ...) reordered to `rows`, with this step's value (N', ...) appended as column t."""
        value = value.float()[rows]
        prev = history[rows] if history is not None else value.new_zeros(len(rows), 0, *value.shape[1:])
        return torch.cat([prev, value[:, None]], dim=1)

    def append(self, rows: torch.Tensor, info: dict[str, torch.Tensor]) -> None:
        """Reorder to `rows` (indices into the current rows) and add this step's values."""
        if not self.enabled:
            return
        if "p_gen" in info:
            self.p_gen = self._extend(self.p_gen, rows, info["p_gen"].reshape(-1))
        if "attn" in info:
            self.attn = self._extend(self.attn, rows, info["attn"])
        if "head_attn" in info:
            self.head_attn = self._extend(self.head_attn, rows, info["head_attn"])

    def of_row(self, row: int) -> tuple[list[float] | None, torch.Tensor | None]:
        if not self.enabled:
            return None, None
        p_gen = self.p_gen[row].tolist() if self.p_gen is not None else None
        attn = self.attn[row].cpu() if self.attn is not None else None
        return p_gen, attn

    def heads_of_row(self, row: int) -> torch.Tensor | None:
        """Row `row`'s per-head attention (t, H, S) on the CPU, or None."""
        if not self.enabled or self.head_attn is None:
            return None
        return self.head_attn[row].cpu()


# --------------------------------------------------------------------------------------------
# Beam search
# --------------------------------------------------------------------------------------------
@torch.inference_mode()
def beam_search(
    model: Any,
    batch: Any,
    beam_size: int,
    max_length: int,
    min_length: int = 0,
    alpha: float = 1.0,
    block_ngram: int = 0,
    details: bool = False,
    block_adjacent: bool = False,
    sentence_ends: Sequence[int] = (),
    min_sentences: int = 0,
    known_words: Any = None,
    repeatable: Sequence[int] = (),
    banned: Sequence[int] = (),
    novel_bigram_penalty: float = 0.0,
) -> list[Hypothesis]:
    """The best hypothesis per document of `batch` (B documents × `beam_size` beams at once).

    The termination rule and scoring are in the module docstring; `known_words` restricts the words
    written (`sumpipe.models.known_words`).
    """
    k = beam_size
    lp_max = length_penalty(max_length + 1, alpha)
    state, n_docs, device, limits = _start(model, batch)
    state = state.index_select(torch.arange(n_docs, device=device).repeat_interleave(k))
    active = list(range(n_docs))             # original index of each active document
    row_doc = torch.arange(n_docs, device=device).repeat_interleave(k)
    # Only beam 0 is live at the start, so the k beams do not all extend the same `<s>`.
    beam_logp = torch.full((n_docs, k), NEG_INF, device=device)
    beam_logp[:, 0] = 0.0
    beam_logp = beam_logp.view(-1)
    history = torch.zeros(n_docs * k, 0, dtype=torch.long, device=device)
    prev = torch.full((n_docs * k,), BOS, dtype=torch.long, device=device)
    trace = _Details(details, n_docs * k, device)
    finished: list[list[Hypothesis]] = [[] for _ in range(n_docs)]
    sentence_end_ids = _ids(sentence_ends, device)
    repeatable_ids, banned_ids = _ids(repeatable, device), _ids(banned, device)
    source_pairs = _SourcePairs.of(batch, device, novel_bigram_penalty)

    for step in range(max_length + 1):
        log_probs, state, info = model.decode_step(state, prev)
        masked = _masked(log_probs, history, step, limits[row_doc], min_length, max_length, block_ngram,
                         block_adjacent, sentence_end_ids, min_sentences, known_words, row_doc, repeatable_ids,
                         banned_ids, source_pairs)
        n_active, width = len(active), masked.size(1)
        cand = (beam_logp[:, None] + masked).view(n_active, k * width)
        top_scores, top_idx = cand.topk(min(2 * k, k * width), dim=1)     # sorted, best first
        top_beam, top_tok = top_idx // width, top_idx % width
        is_eos = top_tok == EOS

        # 1. `</s>` among the k best extensions: a finished hypothesis.
        rank = torch.arange(top_scores.size(1), device=device)
        done_eos = is_eos & (rank[None, :] < k) & torch.isfinite(top_scores)
        if bool(done_eos.any()):
            lp = length_penalty(step + 1, alpha)
            for i, r in done_eos.nonzero().tolist():
                row = i * k + int(top_beam[i, r])
                log_prob = float(top_scores[i, r])
                p_gen, attn = trace.of_row(row)
                finished[active[i]].append(
                    Hypothesis(history[row].tolist(), log_prob / lp, log_prob, p_gen, attn, trace.heads_of_row(row)))

        # 2. The k best extensions that are not `</s>` become the next beams (a stable sort keeps
        # their rank order; at most k of the 2k candidates are `</s>`, one per beam).
        keep = torch.sort(is_eos.to(torch.int8), dim=1, stable=True).indices[:, :k]
        next_logp = top_scores.gather(1, keep)                  # (n_active, k), best first
        origin = (torch.arange(n_active, device=device)[:, None] * k + top_beam.gather(1, keep))
        next_tok = top_tok.gather(1, keep)

        # 3. Which documents are done (rules 1-3 of the module docstring).
        best_live = next_logp[:, 0].tolist()
        still = []
        for i, doc in enumerate(active):
            hyps = finished[doc]
            done = (
                step >= max_length
                or best_live[i] == NEG_INF
                or len(hyps) >= k
                or (bool(hyps) and max(h.score for h in hyps) >= best_live[i] / lp_max)
            )
            if not done:
                still.append(i)
        if not still:
            break
        still_t = torch.tensor(still, dtype=torch.long, device=device)
        rows = origin[still_t].view(-1)
        state = state.index_select(rows)
        history = torch.cat([history[rows], next_tok[still_t].view(-1, 1)], dim=1)
        trace.append(rows, info)
        beam_logp = next_logp[still_t].view(-1)
        prev = next_tok[still_t].view(-1)
        row_doc = row_doc[rows]
        active = [active[i] for i in still]

    return [max(hyps, key=lambda h: h.score) if hyps else Hypothesis([], NEG_INF, NEG_INF)
            for hyps in finished]


# --------------------------------------------------------------------------------------------
# Greedy decoding and sampling
# --------------------------------------------------------------------------------------------
def filter_top_k_top_p(logits: torch.Tensor, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """A copy of logits (N, W) with -inf outside the top-k and outside the nucleus (Roy Choudhury 2020).

    top_k = 0: no top-k cut. The nucleus is the smallest set of best tokens whose probability
    reaches top_p (a token is kept when the mass of the tokens ranked above it is < top_p);
    both cuts combined keep the intersection, as in Roy Choudhury 2020.
    """
    out = logits.clone()
    if top_k > 0 and top_k < out.size(1):
        kth = out.topk(top_k, dim=1).values[:, -1:]
        out.masked_fill_(out < kth, NEG_INF)
    if top_p < 1.0:
        sorted_logits, order = out.sort(dim=1, descending=True)
        probs = sorted_logits.softmax(dim=1)
        mass_before = probs.cumsum(dim=1) - probs
        drop_sorted = mass_before >= top_p
        drop_sorted[:, 0] = False
        drop = torch.zeros_like(drop_sorted).scatter_(1, order, drop_sorted)
        out.masked_fill_(drop, NEG_INF)
    return out


@torch.inference_mode()
def sample_search(
    model: Any,
    batch: Any,
    max_length: int,
    min_length: int = 0,
    alpha: float = 1.0,
    block_ngram: int = 0,
    block_adjacent: bool = False,
    greedy: bool = True,
    top_k: int = 0,
    top_p: float = 1.0,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    details: bool = False,
    sentence_ends: Sequence[int] = (),
    min_sentences: int = 0,
    known_words: Any = None,
    repeatable: Sequence[int] = (),
    banned: Sequence[int] = (),
    novel_bigram_penalty: float = 0.0,
) -> list[Hypothesis]:
    """One hypothesis per document, choosing each token greedily (argmax) or by sampling.

    Sampling draws from softmax(log P / temperature) restricted to the top-k / nucleus; with a
    seeded `generator` the result is deterministic for the same inputs and batch composition.
    The score is the model's log P(Y) / lp(Y) as in beam search (temperature does not change it).
    """
    state, n_docs, device, limits = _start(model, batch)
    active = list(range(n_docs))
    row_doc = torch.arange(n_docs, device=device)
    logp = torch.zeros(n_docs, device=device)
    history = torch.zeros(n_docs, 0, dtype=torch.long, device=device)
    prev = torch.full((n_docs,), BOS, dtype=torch.long, device=device)
    trace = _Details(details, n_docs, device)
    results: list[Hypothesis | None] = [None] * n_docs
    sentence_end_ids = _ids(sentence_ends, device)
    repeatable_ids, banned_ids = _ids(repeatable, device), _ids(banned, device)
    source_pairs = _SourcePairs.of(batch, device, novel_bigram_penalty)

    for step in range(max_length + 1):
        log_probs, state, info = model.decode_step(state, prev)
        masked = _masked(log_probs, history, step, limits[row_doc], min_length, max_length, block_ngram,
                         block_adjacent, sentence_end_ids, min_sentences, known_words, row_doc, repeatable_ids,
                         banned_ids, source_pairs)
        dead = ~torch.isfinite(masked).any(dim=1)     # every choice blocked: end it here
        masked[dead, EOS] = 0.0
        if greedy:
            token = masked.topk(1, dim=1).indices.view(-1)      # breaks exact ties as beam search does
        else:
            # Shifted so the best is 0, and divided in float64: any finite temperature > 0 then works.
            # A tiny one (1e-300) gives -inf to all but the best (greedy, its limit), a huge one (1e300)
            # ~0 to all (uniform), where a float32 division made every logit -inf and softmax NaN.
            best = masked.max(dim=1, keepdim=True).values
            scaled = ((masked - best).double() / temperature).to(masked.dtype)
            logits = filter_top_k_top_p(scaled, top_k, top_p)
            token = torch.multinomial(logits.softmax(dim=1), 1, generator=generator).view(-1)
        logp = logp + masked.gather(1, token[:, None]).view(-1)
        logp = torch.where(dead, torch.full_like(logp, NEG_INF), logp)

        rows_all = torch.arange(len(active), device=device)
        ends = (token == EOS).tolist()
        if any(ends):
            lp = length_penalty(step + 1, alpha)
            for i in (i for i, e in enumerate(ends) if e):
                p_gen, attn = trace.of_row(i)
                value = float(logp[i])
                results[active[i]] = Hypothesis(history[i].tolist(), value / lp, value, p_gen, attn,
                                                trace.heads_of_row(i))
        still = [i for i, e in enumerate(ends) if not e]
        if not still:
            break
        rows = rows_all[still] if len(still) < len(active) else rows_all
        if len(still) < len(active):
            state = state.index_select(rows)
        history = torch.cat([history[rows], token[rows, None]], dim=1)
        trace.append(rows, info)
        logp, prev, row_doc = logp[rows], token[rows], row_doc[rows]
        active = [active[i] for i in still]

    return [h if h is not None else Hypothesis([], NEG_INF, NEG_INF) for h in results]


def decode_batch(
    model: Any,
    batch: Any,
    cfg: Any,
    max_length: int,
    details: bool = False,
    generator: torch.Generator | None = None,
    sentence_ends: Sequence[int] = (),
    known_words: Any = None,
    repeatable: Sequence[int] = (),
    banned: Sequence[int] = (),
) -> list[Hypothesis]:
    """Run the strategy named by `cfg` (a `sumpipe.config.DecodeConfig`) on one batch.

    `sentence_ends`: the ids of the tokens that end a sentence (the codec's `sentence_end_ids`), after
    which `</s>` is allowed before `cfg.min_length` and which `cfg.min_sentences` counts. `known_words`:
    the batch's `sumpipe.models.known_words.KnownWords` (`decode.known_words`), or None. `repeatable`: the
    ids the repeated n-gram rule lets recur (`decode.repeat_stop_words`: the stop words); `banned`: the ids
    never written (`decode.banned_words`). Sampling draws
    from `generator`, or from a fresh one seeded with `cfg.seed`; pass one generator to a run over many
    batches so they do not all replay the same random stream.
    A model with a second pass (`sumpipe.models.protocol.Refinable`, Roy Choudhury 2020's refine decoder)
    rewrites the tokens of the hypotheses the search found; scores and details stay the draft's.
    """
    min_length = min(cfg.min_length, max_length)
    common = dict(max_length=max_length, min_length=min_length, alpha=cfg.length_penalty,
                  block_ngram=cfg.block_ngram_repeat, block_adjacent=cfg.block_adjacent_repeat, details=details,
                  sentence_ends=sentence_ends, min_sentences=cfg.min_sentences, known_words=known_words,
                  repeatable=repeatable, banned=banned,
                  novel_bigram_penalty=cfg.novel_bigram_penalty)
    if cfg.strategy == "beam":
        hyps = beam_search(model, batch, cfg.beam_size, **common)
    elif cfg.strategy == "greedy":
        hyps = sample_search(model, batch, greedy=True, **common)
    else:
        if generator is None:
            generator = make_generator(cfg.seed, _device(model, batch))
        hyps = sample_search(model, batch, greedy=False, top_k=cfg.top_k, top_p=cfg.top_p,
                             temperature=cfg.temperature, generator=generator, **common)
    refine = getattr(model, "refine", None)
    if callable(refine):
        for hyp, tokens in zip(hyps, refine(batch, [h.tokens for h in hyps], block_adjacent=cfg.block_adjacent_repeat)):
            hyp.tokens = list(tokens)
    return hyps


def make_generator(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """A seeded generator on `device` (sampling must draw on the device of the probabilities)."""
    return torch.Generator(device=device).manual_seed(seed)
