"""Sentence selection under a token budget: Morozovskii 2022 Alg. 1 (`select_ngram`) and first-N (`select_first`).

Alg. 1, per document: keep the first k sentences, score every other sentence by the mean score of its
3-grams (content words only; unknown 3-grams at the table's maximum), then add sentences by
decreasing score while the input stays within N tokens; output them in document order.

What Alg. 1 leaves open, decided here:
- A sentence that would overflow the budget is skipped and lower-ranked (shorter) sentences are still
  tried: `SelectImportantSents(N, scores)` fills up to N tokens, and stopping at the first long
  sentence would waste budget the next sentence could use. The budget is never exceeded.
- The first k sentences are kept even when they alone exceed N: they are then cut at N tokens, i.e.
  the selection degrades to first-N (the last kept sentence is truncated by `cut`).
- A sentence with fewer than 3 content words has no 3-gram and scores 0: it ranks after every scored
  sentence but may still fill left-over budget. Ties keep document order. Empty sentences are never
  selected.
- Budgets count every token (stop words and punctuation included): they are the model's input length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sumpipe.vocab.ngrams import NgramTable


def _lead(lengths: Sequence[int], tokens: int, first_k: int) -> tuple[list[int], int]:
    """Leading sentences (at most `first_k` non-empty ones) until `tokens` is reached; the last one
    may cross the budget (the caller truncates). Returns (indices, tokens they hold)."""
    chosen: list[int] = []
    used = 0
    for i, length in enumerate(lengths):
        if len(chosen) >= first_k or used >= tokens:
            break
        if length:
            chosen.append(i)
            used += length
    return chosen, used


def choose_sentences(lengths: Sequence[int], scores: Sequence[float] | np.ndarray, tokens: int,
                     first_k: int) -> list[int]:
    """Alg. 1's selection from sentence lengths and scores (both (S,)); sorted sentence indices."""
    chosen, used = _lead(lengths, tokens, first_k)
    if used >= tokens:
        return chosen
    start = chosen[-1] + 1 if chosen else 0
    rest = np.arange(start, len(lengths))
    order = rest[np.argsort(-np.asarray(scores, dtype=np.float64)[start:], kind="stable")]
    for i in order.tolist():
        length = lengths[i]
        if length and used + length <= tokens:
            chosen.append(i)
            used += length
            if used == tokens:
                break
    return sorted(chosen)


def select_ngram(sentences: Sequence[Sequence[str]], table: NgramTable, tokens: int, first_k: int) -> list[int]:
    """Indices (document order) of the sentences Alg. 1 selects for a `tokens` budget."""
    lengths = [len(s) for s in sentences]
    scores = table.sentence_scores(sentences)
    return choose_sentences(lengths, scores, tokens, first_k)


def select_first(sentences: Sequence[Sequence[str]], tokens: int) -> list[int]:
    """Indices of the sentences holding the first `tokens` tokens (the last may be cut by `cut`)."""
    chosen, _ = _lead([len(s) for s in sentences], tokens, first_k=len(sentences))
    return chosen


def cut(sentences: Sequence[Sequence[str]], selected: Sequence[int], tokens: int) -> list[list[str]]:
    """The selected sentences, in the given order, with the total cut after `tokens` tokens."""
    out: list[list[str]] = []
    left = tokens
    for i in selected:
        if left <= 0:
            break
        sentence = list(sentences[i][:left])
        out.append(sentence)
        left -= len(sentence)
    return out


def render(sentences: Sequence[Sequence[str]]) -> str:
    """Sentences of tokens -> the text convention (tokens joined by " ", sentences by "\n")."""
    return "\n".join(" ".join(s) for s in sentences)
