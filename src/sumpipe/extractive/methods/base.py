"""What every extractive method shares: a ranking of sentences, and choosing from it under a budget.

A method selects sentences of a `Document` under a `Limit` (`Method.select`). Almost every method
ranks them (`RankingMethod.rank`, best first), and `take` then keeps the best ones that fit the limit,
in document order. Most give every sentence a score (`ScoringMethod`: higher is better, ties keep
document order); greedy ones (Gong & Liu, SumBasic, KL-Sum) give the order in which they pick; the ROUGE
oracle needs the limit itself and implements `select` directly. The three classes are abstract: a
subclass that leaves out its one method cannot be built.

Budget rules (the same as the 3-gram selection, Morozovskii 2022 Alg. 1):
- `sentences`: at most that many sentences (Lead-3-style summaries);
- `tokens`: at most that many tokens, every token counted (the model's input length). A sentence
  that would overflow is skipped and lower-ranked, shorter ones are still tried, so the budget is
  filled as far as it goes and never exceeded;
- when no sentence fits the token budget at all, the best-ranked sentence is returned alone: a model
  input is never empty; the caller cuts it at the budget (`sumpipe.selection.select.cut`).
A document without content terms (only stop words, numbers, punctuation) gives every method nothing
to score: it falls back to document order, i.e. the lead sentences.

Options (params: `extractive.options.<method>`, `extract.budgets[i].options`): each method names a
typed dataclass, `Options`, defined beside it in its module and checked like params.yaml
(`checked_options`). A value of the wrong type or out of range is a one-line `ConfigError` naming the
option before the method is built, so a LexRank `threshold: abc` or an NMF `topics: -1` never reaches
numpy. Upper bounds keep a typo (`topics: 100000`) from turning into a matrix that does not fit in
memory.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sumpipe.errors import SumpipeError
from sumpipe.extractive.methods.corpus import CorpusStats
from sumpipe.extractive.methods.document import Document
from sumpipe.extractive.methods.numerics import settle
from sumpipe.validation import from_dict

MAX_TOPICS = 1000       # option bound: topics/concepts per document, far above any sentence count that matters
MAX_ITERATIONS = 100_000
MAX_WEIGHT = 1e6


@dataclass(frozen=True)
class NoOptions:
    """A method without options: any key is unknown."""


@dataclass(frozen=True)
class Limit:
    """A selection budget: at most `sentences` sentences and at most `tokens` tokens (None: no cap)."""

    sentences: int | None = None
    tokens: int | None = None

    def __post_init__(self) -> None:
        if self.sentences is None and self.tokens is None:
            raise SumpipeError("an extractive budget needs `sentences` or `tokens`")
        for name in ("sentences", "tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise SumpipeError(f"an extractive budget's `{name}` must be >= 1, got {value}")


def take(order: Iterable[int], lengths: Sequence[int] | np.ndarray, limit: Limit) -> list[int]:
    """The sentences of `order` (best first) that fit `limit`, in document order (module docstring).

    `order` is consumed lazily, so a greedy method's generator runs only as many steps as needed."""
    max_sentences = limit.sentences if limit.sentences is not None else len(lengths)
    max_tokens = limit.tokens
    chosen: list[int] = []
    first_ranked: int | None = None
    used = 0
    for i in order:
        if len(chosen) >= max_sentences or (max_tokens is not None and used >= max_tokens):
            break
        length = int(lengths[i])
        if length == 0:
            continue
        if first_ranked is None:
            first_ranked = int(i)
        if max_tokens is not None and used + length > max_tokens:
            continue
        chosen.append(int(i))
        used += length
    if not chosen and first_ranked is not None:
        chosen = [first_ranked]
    return sorted(chosen)


def checked_options(method: type[Method], options: Mapping[str, Any] | None) -> dict[str, Any]:
    """`options` of `method`, type- and range-checked against its `Options` (ConfigError naming the
    option), with ints turned into floats where a float is expected. Only the keys given are returned:
    the method's own defaults stay the single source of the others."""
    given = dict(options or {})
    parsed = from_dict(method.Options, given)
    return {f.name: getattr(parsed, f.name) for f in dataclasses.fields(parsed) if f.name in given}


def fits_whole(doc: Document, limit: Limit) -> bool:
    """Whether the whole document is within `limit` (then no method has anything to choose)."""
    return ((limit.sentences is None or doc.n_sentences <= limit.sentences)
            and (limit.tokens is None or int(doc.lengths.sum()) <= limit.tokens))


def order_by_scores(scores: np.ndarray) -> np.ndarray:
    """Sentence indices by decreasing score; ties keep document order. Scores are compared settled
    (rounded to 30 significant bits, `numerics.settle`), so scores equal in exact arithmetic tie
    whatever the last bits the CPU's kernels gave them."""
    return np.argsort(-settle(scores), kind="stable")


class Method(ABC):
    """An extractive method. Subclasses set `name` and implement `select`; most rank sentences instead
    (`RankingMethod`, `ScoringMethod`).

    `fit` receives the training documents once (most methods need nothing from them; the ones with
    `uses_corpus` fit their `CorpusStats`, or share one given to the constructor);
    `uses_reference` marks a method that reads `Document.reference` (the oracle): its output is an
    upper bound, not a summarizer, and is labelled so wherever it appears. `needs` names fitted state
    of its own that the method takes as the constructor keyword of that name (`ngrams`: the vocab
    stage's 3-gram table; `space`: the collection-level LSA space of `extractive-fit`); loaded by
    `sumpipe.extractive.stage.load_state`. `Options`: the dataclass of its constructor's options
    (module docstring).
    """

    name: ClassVar[str] = ""
    uses_reference: ClassVar[bool] = False
    uses_corpus: ClassVar[bool] = False   # takes `corpus=CorpusStats` (fitted on the training documents)
    uses_terms: ClassVar[bool] = True     # reads the document's words (lead and random never do)
    needs: ClassVar[str] = ""             # "" | "ngrams" | "space": the fitted state it takes (docstring)
    Options: ClassVar[type[Any]] = NoOptions

    def fit(self, documents: Iterable[Document]) -> Method:
        """Fit corpus state on the training documents (for a method with `uses_corpus`)."""
        if self.uses_corpus:
            self.corpus = CorpusStats.fit(documents)
        return self

    @abstractmethod
    def select(self, doc: Document, limit: Limit) -> list[int]:
        """The chosen sentence indices, in document order."""


class RankingMethod(Method):
    """A method that orders the sentences, best first; the budget is applied to that order (`take`)."""

    @abstractmethod
    def rank(self, doc: Document) -> Iterable[int]:
        """Sentence indices, best first: every sentence, or a generator that a budget stops early."""

    def select(self, doc: Document, limit: Limit) -> list[int]:
        if doc.n_sentences == 0:
            return []
        if fits_whole(doc, limit):  # nothing to choose: every method keeps the whole document
            return list(range(doc.n_sentences))
        order = range(doc.n_sentences) if self.uses_terms and doc.n_terms == 0 else self.rank(doc)
        return take(order, doc.lengths, limit)


class ScoringMethod(RankingMethod):
    """A method that scores each sentence independently of the others' selection."""

    @abstractmethod
    def scores(self, doc: Document) -> np.ndarray:
        """(S,) float64 sentence scores, higher is better (only called when the document has terms)."""

    def rank(self, doc: Document) -> Iterable[int]:
        return order_by_scores(self.scores(doc))
