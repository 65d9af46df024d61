"""Extractive methods: sentence scorers over a preprocessed `Document`, chosen under a `Limit`.

One module per method; `METHODS` names them all. A method is built with its options (params), fitted
once on the training documents when it needs corpus state (`CorpusStats`: the idf of `tfidf`,
`lexrank`, `lexrank_continuous` and `nmf`, the entropy weights of `lsa` and `lsa_gongliu`; fitted once
and shared), then selects per document:

    analyzer = Analyzer()
    corpus = fit_corpus(analyzer.parse(text) for text in train_texts)
    method = build_method("lexrank", {"threshold": 0.1}, corpus)
    method.select(analyzer.parse(text), Limit(sentences=3))   # sentence indices, in document order
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extractive.scorers.base import Limit, Method, ScoringMethod, take
from sumpipe.extractive.scorers.corpus import CorpusStats
from sumpipe.extractive.scorers.document import Analyzer, Document
from sumpipe.extractive.scorers.edmundson import Edmundson
from sumpipe.extractive.scorers.klsum import KlSum
from sumpipe.extractive.scorers.lead import Lead
from sumpipe.extractive.scorers.lexrank import ContinuousLexRank, LexRank
from sumpipe.extractive.scorers.lsa import LsaGongLiu, LsaSteinbergerJezek
from sumpipe.extractive.scorers.lsa_collection import LsaCollection
from sumpipe.extractive.scorers.luhn import Luhn
from sumpipe.extractive.scorers.ngram import NgramAlg1
from sumpipe.extractive.scorers.nmf import NmfRelevance
from sumpipe.extract.options import checked_options
from sumpipe.extractive.scorers.oracle import GreedyOracle
from sumpipe.extractive.scorers.random_order import RandomOrder
from sumpipe.extractive.scorers.reduction import Reduction
from sumpipe.extractive.scorers.sumbasic import SumBasic
from sumpipe.extractive.scorers.textrank import TextRank
from sumpipe.extractive.scorers.tfidf import TfidfCentroid
from sumpipe.extractive.scorers.wordfreq import WordFrequency

METHODS: dict[str, type[Method]] = {cls.name: cls for cls in (
    Lead, WordFrequency, TfidfCentroid, LsaSteinbergerJezek, LsaGongLiu, NmfRelevance, TextRank, LexRank,
    ContinuousLexRank, Luhn, Edmundson, SumBasic, KlSum, Reduction, RandomOrder, GreedyOracle, NgramAlg1,
    LsaCollection,
)}

__all__ = ["Analyzer", "CorpusStats", "Document", "Limit", "METHODS", "Method", "ScoringMethod",
           "build_method", "fit_corpus", "take"]


def build_method(name: str, options: Mapping[str, Any] | None = None, corpus: CorpusStats | None = None,
                 state: Any = None) -> Method:
    """A method by name, with its options (constructor keywords from params), for the methods that use
    it the shared `corpus` state (`fit_corpus`), and for a method that `needs` state of its own, `state`."""
    cls = METHODS.get(name)
    if cls is None:
        raise SumpipeError(f"unknown extractive method {name!r} (known: {', '.join(sorted(METHODS))})")
    try:
        kwargs = checked_options(name, options)
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
