"""Input-selection methods: the one registry that names, parses, fits and applies every selection.

A selection method picks, per preprocessed document, the sentences a model reads under a token
budget. params.yaml names one per `extract.budgets` entry; the extract stage writes each to
`<paths.extracted>/<method><tokens>/`, and a model reads it with `models.<name>.input`:

    extract:
      budgets:
        - {method: ngram, tokens: 200, first_k: 5}   # -> selection `ngram200` (seed Alg. 1)
        - {method: first, tokens: 200}               # -> `first200` (the first 200 tokens)

Everything that deals in selection names goes through this module: `selection_name` builds
`<method><tokens>` (the only place), `resolve_selections` checks a budgets list, `find_selection`
maps a model's `input` back to its budget, `apply_selection` runs a method on one document (the
extract stage and `sumpipe decode`'s `prepare_raw` both use it).

Adding a method = one module that builds a `SelectionMethod` and calls `register_method`, plus
one line in `BUILTIN` below (name -> module, imported on first use). The interface:

    SelectionMethod(
        name="tfidf",
        fit=lambda ctx: ...,               # FitContext -> state (None if none); picklable, deterministic
        prepare=lambda state, docs: ...,   # (state, list[Document]) -> per-document analysis, once per
                                           #   batch and shared by every budget of the method
        choose=lambda doc, analysis, budget: ...,   # -> sentence indices, document order
        baseline=False,                    # True: `evaluate` also scores the selection as a system
        check=None,                        # (budget, key) -> None: validates `budget.options`
    )

`Document` is a list of sentences, each a list of tokens. `fit` sees `FitContext(vocab_dir,
processed_dir)`: state is fitted on (or loaded from) the training split, e.g. an idf table; it is
fitted once per process and reused for every document. The chosen sentences are cut at the budget
by `apply_selection` (a method may overshoot with its last sentence).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from sumpipe.config import Budget
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.registry import Registry

Document = list[list[str]]

# name -> module that registers it (imported on first use, so a method's dependencies load lazily)
BUILTIN: dict[str, str] = {
    "ngram": "sumpipe.extract.methods",
    "first": "sumpipe.extract.methods",
    # the extractive summarizers (sumpipe.extractive.scorers), each also an input selection
    **{name: "sumpipe.extract.scorer_selection" for name in (
        "lead", "wordfreq", "tfidf", "lsa", "lsa_gongliu", "nmf", "textrank", "lexrank", "lexrank_continuous",
        "luhn", "edmundson", "sumbasic", "klsum", "reduction", "random")},
}


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
    prepare: Callable[[Any, Sequence[Document]], Sequence[Any]]
    choose: Callable[[Document, Any, Budget], list[int]]
    baseline: bool = False
    check: Callable[[Budget, str], None] | None = None  # validates a budget's `options`; errors name `key`


@dataclass(frozen=True)
class Selection:
    """A configured selection: its name (`ngram200`), method and budget."""

    name: str
    method: SelectionMethod
    budget: Budget


METHODS: Registry[SelectionMethod] = Registry("selection method", BUILTIN)


def register_method(method: SelectionMethod) -> SelectionMethod:
    """Add `method` to the registry (a second registration under the same name replaces the first)."""
    return METHODS.register(method.name, method)


def get_method(name: str, key: str = "method") -> SelectionMethod:
    """The registered method `name`; an unknown name is a one-line ConfigError naming `key`."""
    return METHODS.get(name, key)


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


def apply_selection(method: SelectionMethod, budget: Budget, document: Document, analysis: Any) -> tuple[list[int], Document]:
    """(indices of the kept sentences, the kept sentences cut at `budget.tokens`) for one document."""
    from sumpipe.extract.select import cut

    chosen = method.choose(document, analysis, budget)
    kept = cut(document, chosen, budget.tokens)
    return chosen[: len(kept)], kept


def select_text(budget: Budget, document: Document, state: Any) -> Document:
    """One document's selection under `budget`, from the method's fitted `state` (decode time)."""
    method = get_method(budget.method)
    analysis = method.prepare(state, [document])[0]
    return apply_selection(method, budget, document, analysis)[1]


# --------------------------------------------------------------------------------------------
# The thesis's methods
# --------------------------------------------------------------------------------------------
def _fit_ngram(ctx: FitContext) -> Any:
    """The 3-gram table of the vocab stage (`<vocab_dir>/ngrams.parquet`, counted on the train split)."""
    from sumpipe.vocab.ngrams import NgramTable

    if ctx.vocab_dir is None:
        raise SumpipeError("the ngram selection needs the training n-gram table: pass the vocab folder "
                           "(`paths.vocab`, with ngrams.parquet)")
    return NgramTable.load(Path(ctx.vocab_dir) / "ngrams.parquet")


def _choose_ngram(document: Document, scores: Any, budget: Budget) -> list[int]:
    from sumpipe.extract.select import choose_sentences

    return choose_sentences([len(s) for s in document], scores, budget.tokens, budget.leading_sentences)


def _choose_first(document: Document, _analysis: Any, budget: Budget) -> list[int]:
    from sumpipe.extract.select import select_first

    return select_first(document, budget.tokens)


register_method(SelectionMethod(
    name="ngram",  # seed 001 Alg. 1: the first k sentences, then the best mean-3-gram sentences
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
