"""Summaries from a trained model directory: the Python API behind `sumpipe decode` and the report.

    model, vocab, config = load_model("models/M1")
    docs = [prepare_raw(raw, config, vocab_dir="data/vocab") for raw in raw_texts]
    for s in summarize(model, vocab, config, docs, DecodeConfig(), details=True):
        s.text, s.score, s.p_gen, s.attention      # attention: (T, S) over s.source_tokens

- `prepare_raw` applies to raw text what the training data went through: the preprocessing of
  `sumpipe.text.preprocess` and, for a model whose input is a selection (`ngram<N>`: Alg. 1 with
  the training n-gram table; `first<N>`: the first N tokens), the same selection.
- `summarize` decodes preprocessed documents in length-sorted batches and maps extended ids back to
  words: a copied out-of-vocabulary id becomes the source word it points to, and `<unk>` is never
  generated, so a summary never contains `<unk>`.
- The maximum summary length, unless `decode.max_length` sets it, follows seed 001 Table 4.3 by the
  model's data set (CNN/DM 120, XSum 30, Gigaword/DUC 25); for any other data set it is
  1.2 × the model's `max_summary_tokens` (Table 4.3's ratio for CNN/DM: 100 -> 120).
"""

from __future__ import annotations

import functools
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from sumpipe.errors import SumpipeError

# Raw input beyond this many characters is cut before preprocessing (at a whitespace): about
# 30,000 words, far beyond any model input (400 tokens) and any selection's useful pool, and it
# keeps a 50 MB file from being sentence-split and tokenised in full.
MAX_RAW_CHARS = 200_000

# Seed 001 Table 4.3: the longest summary generated, by data set.
MAX_LENGTH_BY_DATASET = {"cnn_dailymail": 120, "cnndm": 120, "xsum": 30, "gigaword": 25, "duc": 25, "duc2004": 25}
SENTENCE_END = frozenset({".", "!", "?"})
_SELECTION = re.compile(r"^(ngram|first)(\d+)$")


@dataclass
class Summary:
    """One summary. tokens/text: words (text convention: sentences on lines); score: log P / lp.

    With details: p_gen[t] is the generation probability when tokens[t] was produced, and
    attention (T, S) float32 numpy the copy attention of step t over `source_tokens` (the S tokens
    the model read); both None otherwise.
    """

    tokens: list[str]
    text: str
    score: float
    p_gen: list[float] | None
    attention: Any
    source_tokens: list[str]


# --------------------------------------------------------------------------------------------
# Model and its configuration
# --------------------------------------------------------------------------------------------
def load_model(model_dir: str | os.PathLike, device: str = "cpu") -> tuple[Any, Any, dict[str, Any]]:
    """(model in eval mode, its Vocabulary, config.json) from a model directory."""
    from sumpipe.models.io import load_pretrained

    return load_pretrained(model_dir, device=device)


def model_input(config: dict[str, Any]) -> str:
    """The extract selection a model reads (`first400`, `ngram200`, ...), from its config.json."""
    spec = config.get("spec") if isinstance(config.get("spec"), dict) else {}
    name = config.get("input") or spec.get("input") or ""
    return str(name)


def selection_budget(config: dict[str, Any]) -> tuple[str, int, int] | None:
    """(kind, tokens, first_k) of the model's input selection, or None for a plain input.

    config.json names it (`input: ngram400`) and the train stage records the budget it was built
    with (`selection: {name, kind, tokens, first_k}`, from params `extract.budgets`); without
    first_k the thesis rule applies: 10 leading sentences for 400 tokens, 5 for 200.
    """
    match = _SELECTION.match(model_input(config))
    if not match:
        return None
    kind, tokens = match.group(1), int(match.group(2))
    budget = config.get("selection") if isinstance(config.get("selection"), dict) else {}
    tokens = int(budget.get("tokens") or tokens)
    first_k = budget.get("first_k")
    return kind, tokens, int(first_k) if first_k is not None else max(1, tokens // 40)


def dataset_name(config: dict[str, Any]) -> str:
    data = config.get("data") if isinstance(config.get("data"), dict) else {}
    return str(config.get("dataset") or data.get("dataset") or "")


def arch_value(config: dict[str, Any], key: str, default: int) -> int:
    arch = config.get("arch") if isinstance(config.get("arch"), dict) else {}
    return int(arch.get(key, default))


def resolve_max_length(cfg: Any, config: dict[str, Any]) -> int:
    """`cfg.max_length`, else by data set (Table 4.3), else 1.2 × the model's max_summary_tokens."""
    if cfg.max_length:
        return int(cfg.max_length)
    by_dataset = MAX_LENGTH_BY_DATASET.get(dataset_name(config).lower())
    if by_dataset:
        return by_dataset
    return max(1, math.ceil(1.2 * arch_value(config, "max_summary_tokens", 100)))


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
def _ngram_table(path: str) -> Any:
    from sumpipe.vocab.ngrams import NgramTable

    return NgramTable.load(path)


def prepare_raw(raw_text: str, config: dict[str, Any], vocab_dir: str | os.PathLike | None = None) -> str:
    """Raw text -> the model's input in the text convention ("" when nothing is left).

    Preprocessing as at training time, then the model's selection: `first<N>` keeps the first N
    tokens, `ngram<N>` runs Alg. 1 with the n-gram table in `vocab_dir` (`ngrams.parquet`, needed
    only for these hybrid models; default `data/vocab`).
    """
    from sumpipe.text.preprocess import preprocess_text

    text = preprocess_text(cap_raw(raw_text))
    budget = selection_budget(config)
    if not text or budget is None:
        return text
    from sumpipe.extract.select import cut, render, select_first, select_ngram

    kind, tokens, first_k = budget
    sentences = [line.split() for line in text.split("\n")]
    if kind == "first":
        selected = select_first(sentences, tokens)
    else:
        path = Path(vocab_dir if vocab_dir is not None else "data/vocab") / "ngrams.parquet"
        if not path.is_file():
            raise SumpipeError(
                f"{path}: no such file; the model reads {model_input(config)} and needs the training "
                "n-gram table (run `dvc repro vocab`, or pass the vocab folder)")
        selected = select_ngram(sentences, _ngram_table(str(path)), tokens, first_k)
    return render(cut(sentences, selected, tokens))


def has_words(text: str) -> bool:
    """Whether preprocessed text holds a letter or digit: non-Latin input leaves at most some
    punctuation (full-width commas fold to ","), which is nothing to summarise."""
    return any(c.isalnum() for c in text)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------
def ids_to_words(ids: Sequence[int], itos: Sequence[str], oov_words: Sequence[str]) -> list[str]:
    """Extended ids -> words: id < V is a vocabulary word, id V + j the j-th OOV source word."""
    size = len(itos)
    return [itos[i] if i < size else oov_words[i - size] for i in ids]


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


def summarize(
    model: Any,
    vocab: Any,
    config: dict[str, Any],
    documents: Sequence[str],
    cfg: Any,
    details: bool = False,
    progress: Any = None,
    generator: Any = None,
) -> list[Summary]:
    """Summaries of preprocessed `documents` (text convention), in the given order.

    cfg is a `sumpipe.config.DecodeConfig`. Documents are batched `cfg.batch_size` at a time in
    order of length (less padding); `progress(indices, seconds)` is called after each batch with
    the indices of its documents and the time it took. An empty document is a SumpipeError
    (prepare_raw returns "" when no Latin-script text is left).
    """
    import torch

    from sumpipe.decode.search import decode_batch, make_generator
    from sumpipe.models.batching import collate, encode_example

    max_source = arch_value(config, "max_source_tokens", 400)
    max_length = resolve_max_length(cfg, config)
    device = model_device(model)
    if cfg.strategy == "sample" and generator is None:
        generator = make_generator(cfg.seed, device)
    examples = []
    for i, doc in enumerate(documents):
        if not doc.split():
            raise SumpipeError(f"document {i + 1} is empty (no Latin-script text after preprocessing)")
        examples.append(encode_example(str(i), doc, "", vocab, max_source, 1))
    itos = list(vocab.itos[: model.vocab_size])
    order = sorted(range(len(examples)), key=lambda i: -len(examples[i].src))
    results: list[Summary | None] = [None] * len(examples)
    with torch.inference_mode():
        for start in range(0, len(order), cfg.batch_size):
            started = time.perf_counter()
            chunk = order[start : start + cfg.batch_size]
            batch = collate([examples[i] for i in chunk]).to(device)
            hyps = decode_batch(model, batch, cfg, max_length, details=details, generator=generator)
            for i, hyp in zip(chunk, hyps):
                example = examples[i]
                tokens = ids_to_words(hyp.tokens, itos, example.oov_words)
                attention = None
                if details and hyp.attention is not None:
                    attention = hyp.attention[:, : len(example.src)].numpy()
                results[i] = Summary(tokens, summary_text(tokens), hyp.score, hyp.p_gen, attention,
                                     documents[i].split()[:max_source])
            if progress is not None:
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                progress(chunk, time.perf_counter() - started)
    return [r for r in results if r is not None]
