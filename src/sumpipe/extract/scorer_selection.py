"""Every extractive scorer as an input-selection method of the registry (`sumpipe.extract.methods`).

`method: lsa, tokens: 400` in `extract.budgets` gives the selection `lsa400`, which any model can
name as its `input`, and which the coverage diagnostic measures like `ngram400`. Per document the
method ranks the sentences and keeps the best that fit `tokens` (`base.take`), in document order;
`options` are the method's keyword options (e.g. `{threshold: 0.2}` for lexrank), checked when
params are read. The ROUGE oracle is not registered: it reads the reference, which a model input
must never see (it is an extractive *system* only, `sumpipe.extractive.systems`).

State: the methods that use corpus statistics (`CorpusStats`: idf, entropy weights) fit them on the
training split, `<processed_dir>/train.parquet`, once per process for all of them, and a batch of
documents is analysed (stems, term counts) once for every method (`SharedAnalysis`). Without a
processed folder (raw text at decode time) they fall back to statistics of the document itself.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sumpipe.config import Budget
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extract.methods import FitContext, SelectionMethod, register_method
from sumpipe.extractive.scorers import METHODS, Analyzer, CorpusStats, Document, Limit, Method, build_method, fit_corpus

# Methods offered as model inputs: everything but the reference-reading oracle and the methods with
# fitted state of their own (`needs`: `ngram` is the thesis's own selection, `sumpipe.extract.methods`).
SELECTABLE = tuple(name for name, cls in METHODS.items() if not cls.uses_reference and not cls.needs)


class SharedAnalysis:
    """What every registered scorer shares within one process: the analyzer (its stem cache), the
    corpus statistics (fitted on first use) and the `Document`s of the batch being selected, so a
    batch is analysed once for all the methods (the extract stage prepares each method in turn on
    the same list of documents)."""

    def __init__(self, processed_dir: str | None) -> None:
        self.processed_dir = processed_dir
        self.analyzer = Analyzer()
        self._corpus: CorpusStats | None = None
        self._batch: Sequence[list[list[str]]] | None = None
        self._documents: list[Document] = []

    @property
    def corpus(self) -> CorpusStats:
        if self._corpus is None:
            self._corpus = self._fit_corpus()
        return self._corpus

    def _fit_corpus(self) -> CorpusStats:
        if self.processed_dir is None:
            return CorpusStats()
        path = Path(self.processed_dir) / "train.parquet"
        if not path.is_file():
            raise SumpipeError(f"{path}: not found (the extractive selections fit their idf on the train split)")
        from sumpipe.io import read_table
        from sumpipe.schemas import PROCESSED

        sources = read_table(path, columns=["source"], contract=PROCESSED).column("source").to_pylist()
        return fit_corpus(self.analyzer.parse(s or "") for s in sources)

    def documents(self, docs: Sequence[list[list[str]]]) -> list[Document]:
        if docs is not self._batch:  # the same list object: the previous method's batch
            self._batch, self._documents = docs, [self.analyzer.document(d) for d in docs]
        return self._documents


@functools.lru_cache(maxsize=4)
def shared_analysis(processed_dir: str | None) -> SharedAnalysis:
    """One `SharedAnalysis` per processed folder and process (a cache: fitting and parsing are pure)."""
    return SharedAnalysis(processed_dir)


class ScorerState:
    """A method's fitted state: the shared analysis and the method objects built for each `options`."""

    def __init__(self, name: str, shared: SharedAnalysis) -> None:
        self.name, self.shared = name, shared
        self._built: dict[str, Method] = {}

    def method(self, options: dict[str, Any]) -> Method:
        key = repr(sorted(options.items()))
        if key not in self._built:
            corpus = self.shared.corpus if METHODS[self.name].uses_corpus else None
            self._built[key] = build_method(self.name, options, corpus)
        return self._built[key]


def _selection(name: str) -> SelectionMethod:
    def fit(ctx: FitContext) -> ScorerState:
        return ScorerState(name, shared_analysis(None if ctx.processed_dir is None else str(ctx.processed_dir)))

    def prepare(state: ScorerState, docs: Sequence[list[list[str]]]) -> list[tuple[ScorerState, Document]]:
        # the analysis carries the state: `choose` receives only the document and its analysis
        return [(state, doc) for doc in state.shared.documents(docs)]

    def check(budget: Budget, key: str) -> None:
        try:
            build_method(name, budget.options)
        except SumpipeError as exc:
            raise ConfigError(f"{key}.options: {exc}") from None

    return SelectionMethod(name=name, fit=fit, prepare=prepare, choose=_choose, check=check)


def _choose(document: list[list[str]], analysis: tuple[ScorerState, Document], budget: Budget) -> list[int]:
    """The method's best sentences within `budget.tokens`, in document order."""
    state, doc = analysis
    return state.method(budget.options).select(doc, Limit(tokens=budget.tokens))


for _name in SELECTABLE:
    register_method(_selection(_name))
