"""Every extractive scorer as an input-selection method of the registry (`sumpipe.extract.methods`).

`method: lsa, tokens: 400` in `extract.budgets` gives the selection `lsa400`, which any model can
name as its `input`, and which the coverage diagnostic measures like `ngram400`. Per document the
method ranks the sentences and keeps the best that fit `tokens` (`base.take`), in document order;
`options` are the method's keyword options (e.g. `{threshold: 0.2}` for lexrank), checked when
params are read. The ROUGE oracle is not registered: it reads the reference, which a model input
must never see (it is an extractive *system* only, `sumpipe.extract.systems`).

State: the methods that use corpus statistics (`CorpusStats`: idf, entropy weights) fit them on the
training split, `<processed_dir>/train.parquet`, once per process for all of them (`corpus_state`
keeps the last fit, keyed by the file's path, size and modification time). Without a processed
folder (raw text at decode time) they fall back to statistics of the document itself.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sumpipe.config import Budget
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extract.methods import FitContext, SelectionMethod, register_method
from sumpipe.extract.scorers import METHODS, Analyzer, CorpusStats, Document, Limit, Method, build_method, fit_corpus

# Methods offered as model inputs (everything but the reference-reading oracle).
SELECTABLE = tuple(name for name, cls in METHODS.items() if not cls.uses_reference)


@functools.lru_cache(maxsize=2)
def _fit_train(path: str, size: int, mtime_ns: int) -> CorpusStats:
    import pyarrow.parquet as pq

    analyzer = Analyzer()
    sources = pq.read_table(path, columns=["source"]).column("source").to_pylist()
    return fit_corpus(analyzer.parse(s or "") for s in sources)


def corpus_state(processed_dir: str | Path | None) -> CorpusStats:
    """Corpus statistics of `<processed_dir>/train.parquet` (unfitted when there is no such file)."""
    if processed_dir is None:
        return CorpusStats()
    path = Path(processed_dir) / "train.parquet"
    if not path.is_file():
        raise SumpipeError(f"{path}: not found (the extractive selections fit their idf on the train split)")
    stat = path.stat()
    return _fit_train(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


class ScorerState:
    """A method's fitted state: the analyzer (with its stem cache), the corpus statistics and the
    method objects built for each `options` seen."""

    def __init__(self, name: str, corpus: CorpusStats) -> None:
        self.name, self.corpus, self.analyzer = name, corpus, Analyzer()
        self._built: dict[str, Method] = {}

    def method(self, options: dict[str, Any]) -> Method:
        key = repr(sorted(options.items()))
        if key not in self._built:
            self._built[key] = build_method(self.name, options, self.corpus)
        return self._built[key]


def _selection(name: str) -> SelectionMethod:
    cls = METHODS[name]

    def fit(ctx: FitContext) -> ScorerState:
        return ScorerState(name, corpus_state(ctx.processed_dir) if cls.uses_corpus else CorpusStats())

    def prepare(state: ScorerState, docs: Sequence[list[list[str]]]) -> list[tuple[ScorerState, Document]]:
        # the analysis carries the state: `choose` receives only the document and its analysis
        return [(state, state.analyzer.document(d)) for d in docs]

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
