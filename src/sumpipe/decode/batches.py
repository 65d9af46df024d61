"""Decoding in batches: the internal layer under the public `sumpipe.load` (`sumpipe.decode.summarizer`),
the decode stage, crosseval and the report.

    model, vocab, card = load_model("models/M1")
    docs = [prepare_raw(raw, card, vocab_dir="data/vocab") for raw in raw_texts]
    for s in summarize(model, vocab, card, docs, DecodeConfig(), details=True):
        s.text, s.score, s.p_gen, s.attention      # attention: (T, S) over s.source_tokens

- `prepare_raw` applies to raw text what the training data went through: the preprocessing of
  `sumpipe.text.preprocess` and the model's input selection (`card.selection`, e.g. `ngram200`:
  Alg. 1 with the training n-gram table; `first400`: the first 400 tokens).
- `summarize` decodes preprocessed documents in length-sorted batches through the model family's
  codec (`sumpipe.models.registry`), which maps generated ids back to words: for the pointer-
  generator a copied out-of-vocabulary id becomes the source word it points to, and `<unk>` is
  never generated, so a summary never contains `<unk>`.
- The maximum summary length, unless `decode.max_length` sets it, follows Morozovskii 2022 Table 4.3 by the
  model's data set (CNN/DM 120, XSum 30, Gigaword/DUC 25); for any other data set it is
  1.2 × the model's `max_summary_tokens` (Table 4.3's ratio for CNN/DM: 100 -> 120), or × the data
  set's longest reference when shorter (the default pydoc corpus: 40 words, so 48).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sumpipe.data.datasets import lengths_of
from sumpipe.errors import SumpipeError
from sumpipe.models.card import ModelCard
from sumpipe.names import SENTENCE_END

if TYPE_CHECKING:
    import torch

# Raw input beyond this many characters is cut before preprocessing (at a whitespace): about
# 30,000 words, far beyond any model input (400 tokens) and any selection's useful pool, and it
# keeps a 50 MB file from being sentence-split and tokenised in full.
MAX_RAW_CHARS = 200_000


@dataclass
class Decoded:
    """One decoded summary. tokens/text: words (text convention: sentences on lines); score: log P / lp.

    With details: p_gen[t] is the generation probability when tokens[t] was produced, and
    attention (T, S) float32 numpy the copy attention of step t over `source_tokens` (the S tokens
    the model read), and for a multi-head copy attention (the transformer's) head_attention
    (H, T, S) float32 numpy, each head's weights (their mean is `attention`); None otherwise.
    """

    tokens: list[str]
    text: str
    score: float
    p_gen: list[float] | None
    attention: Any
    source_tokens: list[str]
    head_attention: Any = None


# --------------------------------------------------------------------------------------------
# Model and its card
# --------------------------------------------------------------------------------------------
def load_model(model_dir: str | os.PathLike, device: str | torch.device = "cpu") -> tuple[Any, Any, ModelCard]:
    """(model in eval mode, its vocabulary, its ModelCard) from a model directory."""
    from sumpipe.models.io import load_pretrained

    return load_pretrained(model_dir, device=device)


def resolve_max_length(cfg: Any, card: ModelCard) -> int:
    """`cfg.max_length`, else the model's data set's cap (`sumpipe.data.datasets.Lengths`)."""
    if cfg.max_length:
        return int(cfg.max_length)
    return lengths_of(card.dataset).decode_cap(card.max_summary_tokens)


# --------------------------------------------------------------------------------------------
# Raw text -> the model's input
# --------------------------------------------------------------------------------------------
def cap_raw(raw: str, limit: int = MAX_RAW_CHARS) -> str:
    """`raw` cut to about `limit` characters at a whitespace (see MAX_RAW_CHARS)."""
    if len(raw) <= limit:
        return raw
    cut = raw.rfind(" ", limit // 2, limit)
    return raw[: cut if cut > 0 else limit]


@functools.lru_cache(maxsize=4)
def _fitted_state(method: str, vocab_dir: str | None) -> Any:
    """A selection method's state, fitted once per process (e.g. the n-gram table)."""
    from sumpipe.selection.methods import FitContext, get_method

    return get_method(method).fit(FitContext(vocab_dir=Path(vocab_dir) if vocab_dir is not None else None))


def prepare_raw(raw_text: str, card: ModelCard, vocab_dir: str | os.PathLike | None = None) -> str:
    """Raw text -> the model's input in the text convention ("" when nothing is left).

    Preprocessing as at training time, then the model's input selection (`card.selection`, run by
    `sumpipe.selection.methods`); a method with fitted state (the `ngram` table) finds it in
    `vocab_dir` (the vocab stage's folder, `paths.vocab`).
    """
    from sumpipe.text.preprocess import preprocess_text

    text = preprocess_text(cap_raw(raw_text))
    if not text or card.selection is None:
        return text
    from sumpipe.selection.methods import select_text
    from sumpipe.selection.select import render

    state = _fitted_state(card.selection.method, None if vocab_dir is None else str(vocab_dir))
    sentences = [line.split() for line in text.split("\n")]
    return render(select_text(card.selection, sentences, state))


def has_words(text: str) -> bool:
    """Whether preprocessed text holds a letter or digit: non-Latin input leaves at most some
    punctuation (full-width commas fold to ","), which is nothing to summarise."""
    return any(c.isalnum() for c in text)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------
def summary_text(tokens: Sequence[str]) -> str:
    """Tokens in the text convention: spaces between tokens, a line break after each sentence end."""
    lines: list[list[str]] = [[]]
    for token in tokens:
        lines[-1].append(token)
        if token in SENTENCE_END:
            lines.append([])
    return "\n".join(" ".join(line) for line in lines if line)


def model_device(model: Any) -> Any:
    return next(model.parameters()).device


STEP_COPIES = 4  # a decoding step holds the scores of every row over the vocabulary about four times over


def check_step_memory(model: Any, card: ModelCard, cfg: Any, n_docs: int) -> None:
    """Refuse a beam or batch whose per-step scores alone (rows = documents x beams, over the vocabulary
    and the source's copied words, float32, STEP_COPIES times) would take more than half the memory
    budget: `--beam 65536` on a 50,000-word model is 13 GB a step, an allocator failure after loading."""
    from sumpipe.inputs import size_text
    from sumpipe.validation import memory_budget_bytes

    beams = cfg.beam_size if cfg.strategy == "beam" else 1
    rows = min(cfg.batch_size, max(n_docs, 1)) * beams
    width = int(getattr(model, "vocab_size", 0) or 0) + int(getattr(card.arch, "max_source_tokens", 0) or 0)
    need, budget = rows * width * 4 * STEP_COPIES, memory_budget_bytes()
    if budget and need > budget // 2:
        raise SumpipeError(f"--beam (decode.beam_size) {cfg.beam_size} x {min(cfg.batch_size, n_docs)} documents at "
                           f"once over {width:,} words needs ~{size_text(need)} a decoding step, more than half this "
                           f"machine's {size_text(budget)}: lower --beam or decode.batch_size")


def stage_config(cfg: Any, card: ModelCard) -> Any:
    """The stages' (predict, crosseval) decoding settings for one model: `decode.target_length`
    is the budget of the models trained with length control, and a model without it decodes as it always
    did, so one experiment's params can give a budget to the models that take one. The API and
    `sumpipe decode` refuse such a budget instead (`length_budget`)."""
    if cfg.target_length is not None and getattr(card.arch, "length_control", "none") == "none":
        return dataclasses.replace(cfg, target_length=None)
    return cfg


def length_budget(card: ModelCard, codec: Any, cfg: Any) -> Any:
    """The `LengthBudget` the batches carry (`decode.target_length`), or None; a one-line
    SumpipeError for a budget the model cannot take (`sumpipe.models.length.check_budget`). A codec that
    knows what its tokens cost (`length_costs()`: the subword pieces, `sumpipe.models.piece_length`) gives a
    `PieceBudget`; the word codecs' words cost their bytes (`word_bytes`)."""
    from sumpipe.models.batching import word_bytes
    from sumpipe.models.length import LengthBudget, check_budget

    control = getattr(card.arch, "length_control", "none")
    check_budget(control, cfg.target_length, cfg.length_unit, f"the model {card.name or card.family}",
                 optional=getattr(card.arch, "length_dropout", 0.0) > 0)
    if cfg.target_length is None:
        return None
    import torch

    costs = getattr(codec, "length_costs", None)
    if costs is not None:
        from sumpipe.models.piece_length import PieceBudget

        piece_bytes, starts_word = costs()
        return PieceBudget(int(cfg.target_length), control, torch.from_numpy(piece_bytes),
                           torch.from_numpy(starts_word))
    return LengthBudget(int(cfg.target_length), control, torch.from_numpy(word_bytes(codec.itos)))


def known_words_of(card: ModelCard, codec: Any, cfg: Any) -> Any:
    """`decode.known_words`: the codec's constraint maker (batch -> `sumpipe.models.known_words.KnownWords`),
    or None: off, or a word model's codec, which offers none (it writes known words only). A subword model
    saved without its training words is a one-line error before any decoding."""
    make = getattr(codec, "known_words", None)
    if not cfg.known_words or make is None:
        return None
    if getattr(codec, "lexicon", None) is None:
        raise SumpipeError(f"the model {card.name or card.family} was saved without its training words "
                           "(vocab.parquet's known_words): retrain it, or decode without --known-words "
                           "(decode.known_words)")
    return make


def repeatable_ids(codec: Any, cfg: Any) -> tuple[int, ...]:
    """`decode.repeat_stop_words`: the ids of the codec's stop words (NLTK's list; of a subword codec, the
    pieces that start a word and spell a stop word, "\u2581the"), which the repeated n-gram rule then lets
    recur; () when off."""
    if not getattr(cfg, "repeat_stop_words", False):
        return ()
    from sumpipe.vocab.words import STOP_WORDS

    itos = list(codec.vocab.itos)
    starts_word = getattr(codec, "starts_word", None)   # a subword codec's: which pieces begin a word
    if starts_word is None:
        return tuple(i for i, word in enumerate(itos) if word in STOP_WORDS)
    return tuple(i for i, (piece, first) in enumerate(zip(itos, starts_word))
                 if first and piece.lstrip("\u2581") in STOP_WORDS)


def banned_ids(codec: Any, cfg: Any) -> tuple[int, ...]:
    """`decode.banned_words`: the ids of the codec's words (a subword codec's pieces, without the word-start
    mark) that the regular expression matches in full, which the search never writes; () when null."""
    pattern = getattr(cfg, "banned_words", None)
    if pattern is None:
        return ()
    import re

    banned = re.compile(pattern)
    return tuple(i for i, token in enumerate(codec.vocab.itos) if banned.fullmatch(token.lstrip("\u2581")))


def summarize(
    model: Any,
    vocab: Any,
    card: ModelCard,
    documents: Sequence[str],
    cfg: Any,
    details: bool | Collection[int] = False,
    progress: Any = None,
    generator: Any = None,
) -> list[Decoded]:
    """Summaries of preprocessed `documents` (text convention), in the given order.

    cfg is a `sumpipe.config.DecodeConfig`. Documents are batched `cfg.batch_size` at a time in
    order of length (less padding); `progress(indices, seconds)` is called after each batch with
    the indices of its documents and the time it took. An empty document is a SumpipeError
    (prepare_raw returns "" when no Latin-script text is left). `details`: True gives every summary
    its p_gen and attention; a collection of document indices gives them to those documents only
    (only their batches record them: a batch's attention history is rows x T x H x S floats). The
    summaries themselves are the same either way. torch's CPU threads are `cfg.threads` while decoding
    (`decode.threads`; None: unchanged).
    """
    import torch

    from sumpipe.decode.search import decode_batch, make_generator
    from sumpipe.device import torch_threads
    from sumpipe.models.registry import get_family

    codec = get_family(card.family).codec(vocab, card.arch)
    max_length = resolve_max_length(cfg, card)
    if cfg.min_length > max_length:  # the search would cut it to max_length, silently
        raise SumpipeError(f"--min-length (decode.min_length) {cfg.min_length} is above the longest summary, "
                           f"{max_length} words: raise --max-length (decode.max_length) too")
    check_step_memory(model, card, cfg, len(documents))
    budget = length_budget(card, codec, cfg)
    known = known_words_of(card, codec, cfg)
    repeatable, banned = repeatable_ids(codec, cfg), banned_ids(codec, cfg)
    device = model_device(model)
    if cfg.strategy == "sample" and generator is None:
        generator = make_generator(cfg.seed, device)
    examples = []
    for i, doc in enumerate(documents):
        if not doc.split():
            raise SumpipeError(f"document {i + 1} is empty (no Latin-script text after preprocessing)")
        examples.append(codec.encode(str(i), doc))
    order = sorted(range(len(examples)), key=lambda i: -len(examples[i].src))
    wanted = None if isinstance(details, bool) else frozenset(details)
    results: list[Decoded | None] = [None] * len(examples)
    with torch.inference_mode(), torch_threads(getattr(cfg, "threads", None)):
        for start in range(0, len(order), cfg.batch_size):
            started = time.perf_counter()
            chunk = order[start : start + cfg.batch_size]
            batch = codec.collate([examples[i] for i in chunk]).to(device)
            batch.length_budget = budget
            recorded = bool(details) if wanted is None else not wanted.isdisjoint(chunk)
            constraint = None if known is None else known(batch)
            hyps = decode_batch(model, batch, cfg, max_length, details=recorded, generator=generator,
                                sentence_ends=codec.sentence_end_ids, known_words=constraint, repeatable=repeatable,
                                banned=banned)
            for i, hyp in zip(chunk, hyps):
                example = examples[i]
                tokens = codec.words(hyp.tokens, example)
                keep = recorded and (wanted is None or i in wanted)
                attention = heads = None
                if keep and hyp.attention is not None:
                    attention = hyp.attention[:, : len(example.src)].numpy()
                if keep and hyp.head_attention is not None:  # (T, H, S) -> (H, T, S)
                    heads = hyp.head_attention[:, :, : len(example.src)].permute(1, 0, 2).numpy()
                results[i] = Decoded(tokens, summary_text(tokens), hyp.score, hyp.p_gen if keep else None,
                                     attention, codec.source_tokens(documents[i]), heads)
            if progress is not None:
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                progress(chunk, time.perf_counter() - started)
    return [r for r in results if r is not None]
