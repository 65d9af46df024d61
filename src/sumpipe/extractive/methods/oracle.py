"""The greedy ROUGE oracle (Nallapati et al. 2017): the extractive upper bound. It READS THE REFERENCE.

Sentences are added one at a time, each time the one that most raises ROUGE-1 F1 + ROUGE-2 F1 of
the selection against the reference, until no sentence raises it or the budget is reached (a
sentence that would overflow the token budget is not a candidate). ROUGE tokens are rouge-score's
(`RougeTokens`: lowercase, runs outside [a-z0-9] separate, NLTK's Porter stem for words longer than
three characters), as the evaluate stage scores them, with bigrams counted within sentences. Only
n-grams of the reference can match, so each sentence is a count vector over the reference's distinct
n-grams and every step scores all candidates at once.
A document whose sentences share nothing with the reference gets the lead sentences.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from sumpipe.errors import SumpipeError
from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import Limit, Method, take
from sumpipe.extractive.methods.document import Document

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


class RougeTokens:
    """rouge-score's DefaultTokenizer(use_stemmer=True) as small ints, each word stemmed once."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._stem = PorterStemmer().stem
        self._ids: dict[str, int] = {}      # word -> token id
        self._tokens: dict[str, int] = {}   # stemmed token -> id

    def __call__(self, text: str) -> list[int]:
        out = []
        for word in _NON_ALPHANUMERIC.sub(" ", text.lower()).split():
            ident = self._ids.get(word)
            if ident is None:
                token = self._stem(word) if len(word) > 3 else word
                ident = self._ids[word] = self._tokens.setdefault(token, len(self._tokens))
            out.append(ident)
        return out


def _ngrams(ids: Sequence[int], n: int) -> list[tuple[int, ...]]:
    return [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]


def greedy_oracle(sentences: list[list[int]], reference: list[int], lengths: Sequence[int] | np.ndarray,
                  limit: Limit) -> list[int]:
    """Sentence indices (document order) chosen greedily for ROUGE-1 + ROUGE-2 F1 (module docstring).

    `sentences` and `reference` are ROUGE token ids; `lengths` the sentences' budget lengths."""
    grams = {n: _ngrams(reference, n) for n in (1, 2)}
    index = {g: k for k, g in enumerate(dict.fromkeys(grams[1] + grams[2]))}
    if not index:
        return []
    target = np.zeros(len(index))
    for g in grams[1] + grams[2]:
        target[index[g]] += 1
    is_bigram = np.array([len(g) == 2 for g in index])
    ref_totals = np.array([len(grams[1]), len(grams[2])], dtype=np.float64)
    vectors = np.zeros((len(sentences), len(index)))
    totals = np.zeros((len(sentences), 2))
    for i, ids in enumerate(sentences):
        for n in (1, 2):
            own = _ngrams(ids, n)
            totals[i, n - 1] = len(own)
            for g in own:
                k = index.get(g)
                if k is not None:
                    vectors[i, k] += 1
    max_sentences = limit.sentences or len(sentences)
    budget = limit.tokens
    chosen: list[int] = []
    summary, summary_totals, used, best_score = np.zeros(len(index)), np.zeros(2), 0, 0.0
    left = np.asarray(lengths) > 0
    while len(chosen) < max_sentences:
        fits = left if budget is None else left & (used + np.asarray(lengths) <= budget)
        candidates = np.flatnonzero(fits)
        if candidates.size == 0:
            break
        hits = np.minimum(summary + vectors[candidates], target)
        matched = np.column_stack([hits[:, ~is_bigram].sum(axis=1), hits[:, is_bigram].sum(axis=1)])
        predicted = summary_totals + totals[candidates]
        precision = np.divide(matched, predicted, out=np.zeros_like(matched), where=predicted > 0)
        recall = np.divide(matched, ref_totals, out=np.zeros_like(matched), where=ref_totals > 0)
        denom = precision + recall
        f1 = np.divide(2 * precision * recall, denom, out=np.zeros_like(denom), where=denom > 0)
        scores = f1.sum(axis=1)
        k = int(np.argmax(scores))
        if scores[k] <= best_score:
            break
        best = int(candidates[k])
        chosen.append(best)
        best_score = float(scores[k])
        summary += vectors[best]
        summary_totals += totals[best]
        used += int(lengths[best])
        left[best] = False
    return sorted(chosen)


@register
class GreedyOracle(Method):
    """The greedy ROUGE-1+2 oracle (Nallapati et al. 2017): the extractive upper bound, not a
    summarizer; it reads the reference (`Document.reference`)."""

    name = "oracle"
    uses_reference = True

    def __init__(self) -> None:
        self.tokens = RougeTokens()

    def fit(self, documents: Iterable[Document]) -> GreedyOracle:
        return self

    def select(self, doc: Document, limit: Limit) -> list[int]:
        if doc.reference is None:
            raise SumpipeError("the oracle selection needs the reference (it is an upper bound, not a summarizer)")
        if doc.n_sentences == 0:
            return []
        words = self.tokens
        chosen = greedy_oracle([words(" ".join(s)) for s in doc.sentences], words(" ".join(doc.reference)),
                               doc.lengths, limit)
        return chosen or take(range(doc.n_sentences), doc.lengths, limit)
