"""Input-selection methods: the one registry that names, parses, fits and applies every selection.

A selection method picks, per preprocessed document, the sentences a model reads under a token
budget. params.yaml names one per `extract.budgets` entry; the extract stage writes each to
`<paths.extracted>/<method><tokens>/`, and a model reads it with `models.<name>.input`:

    extract:
      budgets:
        - {method: ngram, tokens: 200, first_k: 5}   # -> selection `ngram200` (Morozovskii 2022 Alg. 1)
        - {method: first, tokens: 200}               # -> `first200` (the first 200 tokens)

Everything that deals in selection names goes through this module: `selection_name` builds
`<method><tokens>` (the only place), `resolve_selections` checks a budgets list, `find_selection`
maps a model's `input` back to its budget, `apply_selection` runs a method on one document (the
extract stage and `sumpipe decode`'s `prepare_raw` both use it).

Where the methods come from: `ngram` and `first` are registered below (the thesis's own); every
extractive method (`sumpipe.extractive.methods.METHODS`) that may feed a model is a selection method
too (`method: lsa, tokens: 400` gives `lsa400`): each one but the reference-reading oracle and those
with fitted state of their own (`needs`). So a new extractive method (one module plus one line in that
registry) is a selection method with nothing added here. A selection method that is not an extractive
method is a `SelectionMethod` passed to `register_method`:

    SelectionMethod(
        name="last",
        fit=lambda ctx: ...,               # FitContext -> state (None if none); picklable, deterministic
        prepare=lambda state, docs: ...,   # (state, list[Sentences]) -> per-document analysis, once per
                                           #   batch and shared by every budget of the method
        choose=lambda doc, analysis, budget: ...,   # -> sentence indices, document order
        baseline=False,                    # True: `evaluate` also scores the selection as a system
        check=None,                        # (budget, key) -> None: validates `budget.options`
    )

`Sentences` is a list of sentences, each a list of tokens. `fit` sees `FitContext(vocab_dir,
processed_dir)`: state is fitted on (or loaded from) the training split, e.g. an idf table; it is
fitted once per process and reused for every document. The chosen sentences are cut at the budget
by `apply_selection` (a method may overshoot with its last sentence).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sumpipe.config import Budget
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extractive.methods import METHODS, Analyzer, CorpusStats, Document, Limit, Method, build_method, fit_corpus
from sumpipe.registry import Registry

Sentences = list[list[str]]  # a preprocessed document: its sentences, each a list of tokens


@dataclass(frozen=True)
class FitContext:
    """Where a method may fit or load its state: the vocab stage's folder and the processed splits
    (`<processed_dir>/train.parquet`). Either may be None at decode time when not given."""

    vocab_dir: Path | None = None
    processed_dir: Path | None = None


@dataclass(frozen=True)
class SelectionMethod:
    """One selection method (see the module docstring)."""

    name: str
    fit: Callable[[FitContext], Any]
    prepare: Callable[[Any, Sequence[Sentences]], Sequence[Any]]
    choose: Callable[[Sentences, Any, Budget], list[int]]
    baseline: bool = False
    check: Callable[[Budget, str], None] | None = None  # validates a budget's `options`; errors name `key`


@dataclass(frozen=True)
class Selection:
    """A configured selection: its name (`ngram200`), method and budget."""

    name: str
    method: SelectionMethod
    budget: Budget


def selectable(method: type[Method]) -> bool:
    """Whether an extractive method may be a model input: not the oracle (it reads the reference, which
    a model input must never see) and not a method with fitted state of its own (`needs`: the `ngram`
    extractive method's 3-gram table is the `ngram` selection's, registered below)."""
    return not method.uses_reference and not method.needs


class SelectionRegistry(Registry[SelectionMethod]):
    """The selection methods: those registered with `register_method` (the shipped ones named in
    `BUILTIN`), and every `selectable` extractive method of `METHODS`, made a selection method on first
    use (`extractive_selection`). Unknown names are `Registry`'s error."""

    def names(self) -> list[str]:
        extractive = (name for name in METHODS.names() if selectable(METHODS.get(name, "method")))
        return sorted(set(self.entries) | set(self.builtin) | set(extractive))

    def get(self, name: str, key: str) -> SelectionMethod:
        if name not in self.entries and name in METHODS.names() and selectable(METHODS.get(name, key)):
            self.register(name, extractive_selection(name))
        return super().get(name, key)


# selection methods that are not extractive methods: name -> module that registers it (imported on first use;
# a spawned worker process finds a method through this map)
BUILTIN: dict[str, str] = {
    "ngram": "sumpipe.selection.methods",  # Morozovskii 2022 Alg. 1 (below)
    "first": "sumpipe.selection.methods",  # the first N tokens (below)
}
SELECTION_METHODS = SelectionRegistry("selection method", BUILTIN)


def register_method(method: SelectionMethod) -> SelectionMethod:
    """Add `method` to the registry (a second registration under the same name replaces the first)."""
    return SELECTION_METHODS.register(method.name, method)


def get_method(name: str, key: str = "method") -> SelectionMethod:
    """The registered method `name`; an unknown name is a one-line ConfigError naming `key`."""
    return SELECTION_METHODS.get(name, key)


def selection_name(budget: Budget) -> str:
    """`<method><tokens>`: the selection's name, folder and what `models.<name>.input` refers to."""
    return f"{budget.method}{budget.tokens}"


def resolve_selections(budgets: Sequence[Budget], key: str = "extract.budgets") -> list[Selection]:
    """The configured selections, methods looked up (an unknown one names `extract.budgets[i].method`)
    and each budget checked by its method (`options`; errors name `extract.budgets[i]...`)."""
    out = []
    for i, budget in enumerate(budgets):
        method = get_method(budget.method, f"{key}[{i}].method")
        if method.check is not None:
            method.check(budget, f"{key}[{i}]")
        elif budget.options:
            raise ConfigError(f"{key}[{i}].options: the {method.name!r} method takes no options")
        out.append(Selection(selection_name(budget), method, budget))
    return out


def find_selection(name: str, budgets: Sequence[Budget], key: str = "input") -> Budget:
    """The budget whose selection is `name`; otherwise a one-line error listing the configured ones."""
    for budget in budgets:
        if selection_name(budget) == name:
            return budget
    known = ", ".join(selection_name(b) for b in budgets) or "none"
    raise SumpipeError(f"{key}: {name!r} is not an extract selection (extract.budgets makes: {known})")


def baseline_selections(budgets: Sequence[Budget]) -> list[str]:
    """Names of the selections `evaluate` scores as extractive systems (their method's `baseline`)."""
    return [s.name for s in resolve_selections(budgets) if s.method.baseline]


def apply_selection(method: SelectionMethod, budget: Budget, document: Sentences,
                    analysis: Any) -> tuple[list[int], Sentences]:
    """(indices of the kept sentences, the kept sentences cut at `budget.tokens`) for one document."""
    from sumpipe.selection.select import cut

    chosen = method.choose(document, analysis, budget)
    kept = cut(document, chosen, budget.tokens)
    return chosen[: len(kept)], kept


def select_text(budget: Budget, document: Sentences, state: Any) -> Sentences:
    """One document's selection under `budget`, from the method's fitted `state` (decode time)."""
    method = get_method(budget.method)
    analysis = method.prepare(state, [document])[0]
    return apply_selection(method, budget, document, analysis)[1]


# --------------------------------------------------------------------------------------------
# The thesis's methods
# --------------------------------------------------------------------------------------------
def _fit_ngram(ctx: FitContext) -> Any:
    """The 3-gram table of the vocab stage (`<vocab_dir>/ngrams.parquet`, counted on the train split)."""
    from sumpipe.vocab.ngrams import NGRAMS_FILE, NgramTable

    if ctx.vocab_dir is None:
        raise SumpipeError("the ngram selection needs the training n-gram table: pass the vocab folder "
                           "(`paths.vocab`, with ngrams.parquet)")
    return NgramTable.load(Path(ctx.vocab_dir) / NGRAMS_FILE)


def _choose_ngram(document: Sentences, scores: Any, budget: Budget) -> list[int]:
    from sumpipe.selection.select import choose_sentences

    return choose_sentences([len(s) for s in document], scores, budget.tokens, budget.leading_sentences)


def _choose_first(document: Sentences, _analysis: Any, budget: Budget) -> list[int]:
    from sumpipe.selection.select import select_first

    return select_first(document, budget.tokens)


register_method(SelectionMethod(
    name="ngram",  # Morozovskii 2022 Alg. 1: the first k sentences, then the best mean-3-gram sentences
    fit=_fit_ngram,
    prepare=lambda table, docs: table.documents_sentence_scores(docs) if docs else [],
    choose=_choose_ngram,
))
register_method(SelectionMethod(
    name="first",  # the first N tokens; also the first-N baseline of the evaluate stage
    fit=lambda ctx: None,
    prepare=lambda state, docs: [None] * len(docs),
    choose=_choose_first,
    baseline=True,
))


# --------------------------------------------------------------------------------------------
# Every selectable extractive method as a selection method
# --------------------------------------------------------------------------------------------
# Per document the method ranks the sentences and keeps the best that fit `tokens` (`base.take`), in
# document order; `options` are the method's keyword options (e.g. `{threshold: 0.2}` for lexrank),
# checked when params are read. State: the methods that use corpus statistics (`CorpusStats`: idf,
# entropy weights) fit them on the training split, `<processed_dir>/train.parquet`, once per process
# for all of them, and a batch of documents is analysed (stems, term counts) once for every method
# (`SharedAnalysis`). Without a processed folder (raw text at decode time) they fall back to
# statistics of the document itself.
class SharedAnalysis:
    """What every extractive selection shares within one process: the analyzer (its stem cache), the
    corpus statistics (fitted on first use) and the parsed documents of the batch being selected, so a
    batch is analysed once for all the methods (the extract stage prepares each method in turn on
    the same list of documents)."""

    def __init__(self, processed_dir: str | None) -> None:
        self.processed_dir = processed_dir
        self.analyzer = Analyzer()
        self._corpus: CorpusStats | None = None
        self._batch: Sequence[Sentences] | None = None
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
        from sumpipe.io.atomic import read_table
        from sumpipe.schemas import PROCESSED

        sources = read_table(path, columns=["source"], contract=PROCESSED).column("source").to_pylist()
        return fit_corpus(self.analyzer.parse(s or "") for s in sources)

    def documents(self, docs: Sequence[Sentences]) -> list[Document]:
        if docs is not self._batch:  # the same list object: the previous method's batch
            self._batch, self._documents = docs, [self.analyzer.document(d) for d in docs]
        return self._documents


@functools.lru_cache(maxsize=4)
def shared_analysis(processed_dir: str | None) -> SharedAnalysis:
    """One `SharedAnalysis` per processed folder and process (a cache: fitting and parsing are pure)."""
    return SharedAnalysis(processed_dir)


class MethodState:
    """An extractive selection's fitted state: the shared analysis and the method built for each `options`."""

    def __init__(self, name: str, shared: SharedAnalysis) -> None:
        self.name, self.shared = name, shared
        self._built: dict[str, Method] = {}

    def method(self, options: dict[str, Any]) -> Method:
        key = repr(sorted(options.items()))
        if key not in self._built:
            corpus = self.shared.corpus if METHODS.get(self.name, "method").uses_corpus else None
            self._built[key] = build_method(self.name, options, corpus)
        return self._built[key]


def extractive_selection(name: str) -> SelectionMethod:
    """The extractive method `name` (of `METHODS`) as a selection method (section comment)."""
    def fit(ctx: FitContext) -> MethodState:
        return MethodState(name, shared_analysis(None if ctx.processed_dir is None else str(ctx.processed_dir)))

    def prepare(state: MethodState, docs: Sequence[Sentences]) -> list[tuple[MethodState, Document]]:
        # the analysis carries the state: `choose` receives only the document and its analysis
        return [(state, doc) for doc in state.shared.documents(docs)]

    def check(budget: Budget, key: str) -> None:
        try:
            build_method(name, budget.options)
        except SumpipeError as exc:
            raise ConfigError(f"{key}.options: {exc}") from None

    return SelectionMethod(name=name, fit=fit, prepare=prepare, choose=_choose_extractive, check=check)


def _choose_extractive(document: Sentences, analysis: tuple[MethodState, Document], budget: Budget) -> list[int]:
    """The method's best sentences within `budget.tokens`, in document order."""
    state, doc = analysis
    return state.method(budget.options).select(doc, Limit(tokens=budget.tokens))
