"""Extractive methods: each ranks or picks the sentences of a preprocessed `Document` under a `Limit`.

One module per method, each named in the one registry `METHODS`. A method is built with its options
(params; typed by the options dataclass its module defines beside it), fitted once on the training
documents when it needs corpus state (`CorpusStats`: the idf of `tfidf`, `lexrank`,
`lexrank_continuous` and `nmf`, the entropy weights of `lsa` and `lsa_gongliu`; fitted once and
shared), then selects per document:

    analyzer = Analyzer()
    corpus = fit_corpus(analyzer.parse(text) for text in train_texts)
    method = build_method("lexrank", {"threshold": 0.1}, corpus)
    method.select(analyzer.parse(text), Limit(sentences=3))   # sentence indices, in document order

Adding a method = one module that defines a `Method` subclass (and its options dataclass, `Options`)
and decorates it with `@register`, plus one line in `BUILTIN` below (name -> module, imported on first
use). It is then an extractive system (`extractive.systems`, `sumpipe summarize --method`) and, unless
it reads the reference or has fitted state of its own (`needs`), an input selection of the extract
stage (`extract.budgets`, `sumpipe.selection.methods`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extractive.methods.base import Limit, Method, RankingMethod, ScoringMethod, checked_options, take
from sumpipe.extractive.methods.corpus import CorpusStats
from sumpipe.extractive.methods.document import Analyzer, Document
from sumpipe.registry import Registry

# name -> module that registers it (imported on first use, so a method's scipy or nltk loads lazily)
BUILTIN: dict[str, str] = {
    "lead": "sumpipe.extractive.methods.lead",
    "wordfreq": "sumpipe.extractive.methods.wordfreq",
    "tfidf": "sumpipe.extractive.methods.tfidf",
    "lsa": "sumpipe.extractive.methods.lsa",
    "lsa_gongliu": "sumpipe.extractive.methods.lsa",
    "nmf": "sumpipe.extractive.methods.nmf",
    "textrank": "sumpipe.extractive.methods.textrank",
    "lexrank": "sumpipe.extractive.methods.lexrank",
    "lexrank_continuous": "sumpipe.extractive.methods.lexrank",
    "luhn": "sumpipe.extractive.methods.luhn",
    "edmundson": "sumpipe.extractive.methods.edmundson",
    "sumbasic": "sumpipe.extractive.methods.sumbasic",
    "klsum": "sumpipe.extractive.methods.klsum",
    "reduction": "sumpipe.extractive.methods.reduction",
    "random": "sumpipe.extractive.methods.random",
    "oracle": "sumpipe.extractive.methods.oracle",
    "ngram": "sumpipe.extractive.methods.ngram",
    "lsa_collection": "sumpipe.extractive.methods.lsa_collection",
}

METHODS: Registry[type[Method]] = Registry("extractive method", BUILTIN)
M = TypeVar("M", bound=type[Method])

__all__ = ["Analyzer", "BUILTIN", "CorpusStats", "Document", "Limit", "Method", "RankingMethod", "METHODS",
           "ScoringMethod", "all_methods", "build_method", "checked_options", "fit_corpus", "register", "take"]


def register(cls: M) -> M:
    """Class decorator: add the method `cls` to `METHODS` under `cls.name` (a second registration
    under the same name replaces the first)."""
    METHODS.register(cls.name, cls)
    return cls


def all_methods() -> dict[str, type[Method]]:
    """Every registered method by name, sorted (imports every builtin module: listings, not look-ups)."""
    return {name: METHODS.get(name, "method") for name in METHODS.names()}


def build_method(name: str, options: Mapping[str, Any] | None = None, corpus: CorpusStats | None = None,
                 state: Any = None, key: str = "method") -> Method:
    """A method by name, with its options (constructor keywords from params), for the methods that use
    it the shared `corpus` state (`fit_corpus`), and for a method that `needs` state of its own, `state`.
    An unknown `name` is the registry's one-line ConfigError naming `key`."""
    cls = METHODS.get(name, key)
    try:
        kwargs = checked_options(cls, options)
    except ConfigError as exc:  # the caller prefixes the params key (extractive.options.<name>)
        raise SumpipeError(f"extractive method {name!r}: bad option {exc}") from None
    if cls.uses_corpus:
        kwargs["corpus"] = corpus
    if cls.needs:
        kwargs[cls.needs] = state
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise SumpipeError(f"extractive method {name!r}: bad option ({exc})") from None


def fit_corpus(documents: Iterable[Document]) -> CorpusStats:
    """The corpus state (idf, entropy weights) every method that uses it shares, fitted once on the
    training documents."""
    return CorpusStats.fit(documents)
