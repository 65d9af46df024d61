"""The extractive-method registry: every method (budgets and document order, degenerate documents), their typed
options, one-line errors, and a toy method added as one module plus one registry line."""

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.config import Budget, ExtractConfig, params_from_dict
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extractive.methods import (
    BUILTIN,
    METHODS,
    Analyzer,
    Limit,
    all_methods,
    build_method,
    checked_options,
    fit_corpus,
)

STORY = """the storm hit the coast on monday .
thousands of homes lost power as the storm moved inland .
officials said the damage would take weeks to repair .
the storm is the strongest to hit the region in a decade .
markets were calm .
schools will reopen on thursday , officials said ."""

DEGENERATE = {
    "empty": "",
    "one sentence": "the storm hit the coast .",
    "no content words": "the , of .\nand 12 3 .\n--",
    "repeated sentence": "storm storm\nstorm storm\nstorm storm",
}


def _state(needs, a):
    """The fitted state a method `needs`: an empty 3-gram table, or the LSA space of the three texts."""
    import numpy as np

    from sumpipe.extractive.methods.lsa_collection import LsaSpace, term_stream
    from sumpipe.vocab.ngrams import NgramTable

    if needs == "ngrams":
        return NgramTable(n=3, keys=np.zeros(0, np.uint64), counts=np.zeros(0, np.uint32), words=[])
    if needs == "space":
        return LsaSpace.fit([term_stream(a.parse(t)) for t in [STORY, "markets rose", "storm news"]])
    return None


def _fitted(name):
    a = Analyzer()
    return a, build_method(name, corpus=fit_corpus(a.parse(t) for t in [STORY, "markets rose", "storm news"]),
                           state=_state(METHODS.get(name, "method").needs, a))


@pytest.mark.parametrize("name", METHODS.names())
@pytest.mark.parametrize("limit", [Limit(sentences=3), Limit(tokens=20), Limit(sentences=2, tokens=25)])
def test_budgets_and_document_order(name, limit):
    a, method = _fitted(name)
    doc = a.parse(STORY, reference="storm cuts power to thousands", key="x")
    chosen = method.select(doc, limit)
    assert chosen == sorted(set(chosen)) and chosen
    if limit.sentences:
        assert len(chosen) <= limit.sentences
    if limit.tokens:
        assert sum(doc.lengths[i] for i in chosen) <= limit.tokens


@pytest.mark.parametrize("name", METHODS.names())
@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_degenerate_documents_never_crash(name, case):
    a, method = _fitted(name)
    doc = a.parse(DEGENERATE[case], reference="storm", key="x")
    chosen = method.select(doc, Limit(sentences=2))
    assert chosen == sorted(chosen) and all(0 <= i < doc.n_sentences for i in chosen)
    if name == "oracle":  # stops when another sentence would not raise ROUGE
        assert (len(chosen) >= 1) == (doc.n_sentences >= 1) and len(chosen) <= 2
    else:
        assert len(chosen) == min(2, doc.n_sentences)
    if case == "no content words" and name != "oracle":
        assert chosen == [0, 1]                                  # no terms: the lead sentences


def test_unknown_method_and_bad_option_are_one_line_errors():
    with pytest.raises(ConfigError, match=r"^method: unknown extractive method 'lsa2' \(known: edmundson, klsum, "):
        build_method("lsa2")
    with pytest.raises(ConfigError, match=r"^extractive.systems\[2\]: unknown extractive method 'foo' "):
        build_method("foo", key="extractive.systems[2]")
    with pytest.raises(SumpipeError, match="bad option"):
        build_method("lexrank", {"treshold": 0.2})


# --- options: typed and bounded before a method is built -------------------------------------
def test_every_method_s_options_match_its_constructor() -> None:
    for name, cls in all_methods().items():
        # the shared corpus statistics and a method's fitted state (`needs`) are not options
        accepted = set(inspect.signature(cls).parameters) - {"corpus", "analyzer", cls.needs}
        assert set(cls.Options.__dataclass_fields__) == accepted, name


@pytest.mark.parametrize(("method", "options", "message"), [
    ("lexrank", {"threshold": "abc"}, "threshold: expected float, got 'abc'"),
    ("lexrank", {"threshold": 1.5}, r"threshold: must be in \[0, 1\]"),
    ("nmf", {"topics": -1}, r"topics: must be in \[1, 1000\]"),
    ("nmf", {"iterations": 10**9}, r"iterations: must be in \[1, 100000\]"),
    ("textrank", {"damping": "abc"}, "damping: expected float"),
    ("textrank", {"damping": 1.0}, r"damping: must be in \(0, 1\)"),
    ("lexrank_continuous", {"damping": 0.0}, r"damping: must be in \(0, 1\)"),
    ("lsa", {"dimensions": -2}, r"dimensions: must be in \[0, 1000\]"),
    ("ngram", {"first_k": -1}, r"first_k: must be in \[0, 1000\]"),
    ("klsum", {"alpha": float("nan")}, "alpha: must be a finite number, got nan"),  # the one check of every float
    ("edmundson", {"cue_weight": 1e9}, r"cue_weight: must be a finite number in \[-1e\+06, 1e\+06\]"),
    ("luhn", {"max_gap": 0}, r"max_gap: must be in \[1, 1000\]"),
    ("random", {"seed": -1}, r"seed: must be in \[0, 2\*\*63\)"),
    ("lead", {"k": 3}, "k: unknown key"),
])
def test_bad_option_is_a_one_line_error(method, options, message) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        checked_options(METHODS.get(method, "method"), options)
    with pytest.raises(SumpipeError, match=f"^extractive method '{method}': bad option {message}"):
        build_method(method, options)


def test_only_given_options_are_passed_ints_become_floats() -> None:
    assert checked_options(METHODS.get("lexrank", "method"), {"threshold": 0}) == {"threshold": 0.0}
    assert build_method("lexrank", {"threshold": 0}).threshold == 0.0
    assert build_method("lexrank").damping == 0.85  # the method's own default stays the source


# --- adding a method: one module (the method and its options) and one registry line, nothing else -
TOY_MODULE = """
from collections.abc import Iterable
from dataclasses import dataclass

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import RankingMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.validation import require


@dataclass(frozen=True)
class LastFirstOptions:
    lead: int = 0

    def check(self, key: str) -> None:
        require(self.lead >= 0, "lead", "must be >= 0")


@register
class LastFirst(RankingMethod):
    \"\"\"A toy method: the first `lead` sentences, then the others from the last one backwards.\"\"\"

    name = "toy"
    uses_terms = False  # ranks by position alone
    Options = LastFirstOptions

    def __init__(self, lead: int = 0) -> None:
        self.lead = lead

    def rank(self, doc: Document) -> Iterable[int]:
        lead = list(range(min(self.lead, doc.n_sentences)))
        return lead + list(range(doc.n_sentences - 1, len(lead) - 1, -1))
"""


# four sentences of 15, 12, 14 and 13 tokens (54)
SENTENCES = [" ".join(f"w{s}{t}" for t in range(n - 1)) + " ." for s, n in enumerate((15, 12, 14, 13))]


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The toy method's module written to a folder on sys.path and its one line in `BUILTIN`, for one
    test (the registries are restored afterwards and the module imported afresh by each test)."""
    from sumpipe.selection import methods

    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "sumpipe_toy_method.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    all_methods()  # the shipped ones registered first: their modules register only once, in the real entries
    monkeypatch.setattr(METHODS, "entries", dict(METHODS.entries))
    # the selections made from it
    monkeypatch.setattr(methods.SELECTION_METHODS, "entries", dict(methods.SELECTION_METHODS.entries))
    monkeypatch.setitem(BUILTIN, "toy", "sumpipe_toy_method")  # the one line
    yield
    sys.modules.pop("sumpipe_toy_method", None)


def test_a_toy_method_is_listed_everywhere_the_methods_are(toy, cli, tmp_path) -> None:
    from sumpipe.selection.methods import SELECTION_METHODS

    assert "toy" in all_methods() and all_methods()["toy"].__module__ == "sumpipe_toy_method"
    assert "toy" in SELECTION_METHODS.names()                                 # an input selection
    assert "toy" in cli("summarize", "--help").stdout                          # `--method`'s listing
    (tmp_path / "doc.txt").write_text("The storm hit the coast. Power failed. Markets were calm.")
    done = cli("summarize", "--method", "toy", "--sentences", "1", "doc.txt", cwd=tmp_path)
    assert (done.exit_code, done.stdout) == (0, "Markets were calm.\n")         # the last sentence first

    from sumpipe.docs.blocks import BLOCKS, Sources  # docs/extractive.md's list
    listing = BLOCKS["extractive-methods"](Sources(tmp_path, params_from_dict({})))
    assert ("| `toy` | A toy method: the first `lead` sentences, then the others from the last one backwards. "
            "| positions only | yes (`toy<N>`) |") in listing


def test_a_toy_method_is_an_extractive_system(toy, tmp_path) -> None:
    from sumpipe.extractive.stage import check_systems, system_stage

    doc = Analyzer().parse("\n".join(SENTENCES))
    assert list(doc.lengths) == [15, 12, 14, 13]
    assert build_method("toy").select(doc, Limit(sentences=2)) == [2, 3]
    assert build_method("toy").select(doc, Limit(tokens=40)) == [1, 2, 3]     # 13 + 14 + 12 = 39; 15 more overflow
    assert build_method("toy", {"lead": 1}).select(doc, Limit(sentences=2)) == [0, 3]
    with pytest.raises(SumpipeError, match="^extractive method 'toy': bad option lead: must be >= 0$"):
        build_method("toy", {"lead": -1})

    (tmp_path / "processed").mkdir()
    pd.DataFrame({"id": ["a", "b"], "source": ["\n".join(SENTENCES), "\n".join(SENTENCES[:2])],
                  "reference": ["x", "y"]}).to_parquet(tmp_path / "processed" / "test.parquet")
    params = params_from_dict({
        "paths": {k: str(tmp_path / k) for k in ("processed", "extractive", "predictions", "timings")},
        "extractive": {"systems": ["lead", "toy"], "sentences": 1, "options": {"toy": {"lead": 0}}}})
    check_systems(params.extractive)
    frame = pd.read_parquet(system_stage("toy", params.paths, params.extractive, "test").path)
    assert frame["selected"].map(list).tolist() == [[3], [1]]                 # each document's last sentence
    assert frame["prediction"].tolist() == [SENTENCES[3], SENTENCES[1]]


def test_a_toy_method_is_an_input_selection(toy, tmp_path) -> None:
    from sumpipe.selection.methods import FitContext, find_selection, get_method, resolve_selections, select_text
    from sumpipe.selection.stage import extract

    budgets = [Budget("first", 40), Budget("toy", 40), Budget("toy", 30, options={"lead": 1})]
    assert [s.name for s in resolve_selections(budgets)] == ["first40", "toy40", "toy30"]
    assert find_selection("toy40", budgets) == Budget("toy", 40)
    method = get_method("toy")
    state = method.fit(FitContext())
    document = [s.split() for s in SENTENCES]
    assert select_text(Budget("toy", 40), document, state) == document[1:]
    assert select_text(Budget("toy", 30, options={"lead": 1}), document, state) == [document[0], document[3]]
    with pytest.raises(ConfigError, match=r"^extract.budgets\[0\].options: extractive method 'toy': bad option lead"):
        resolve_selections([Budget("toy", 40, options={"lead": -1})])

    (tmp_path / "processed").mkdir()
    pd.DataFrame({"id": ["a"], "source": ["\n".join(SENTENCES)], "reference": ["w30 w31"]}).to_parquet(
        tmp_path / "processed" / "test.parquet")
    extract(tmp_path / "processed", tmp_path / "vocab", tmp_path / "extracted", ExtractConfig(budgets=budgets),
            tmp_path / "coverage.json", progress=False)
    toy40 = pd.read_parquet(tmp_path / "extracted" / "toy40" / "test.parquet")
    assert toy40["selected"].map(list).tolist() == [[1, 2, 3]] and toy40["n_tokens"].tolist() == [39]
    first40 = pd.read_parquet(tmp_path / "extracted" / "first40" / "test.parquet")
    assert first40["selected"].map(list).tolist() == [[0, 1, 2]]              # the first 40 tokens, the third cut


def test_unknown_names_are_the_registry_s_one_line_error() -> None:
    from sumpipe.extractive.stage import check_systems
    from sumpipe.selection.methods import resolve_selections

    cfg = params_from_dict({"extractive": {"systems": ["lead", "tfidf", "foo"]}}).extractive
    with pytest.raises(ConfigError, match=r"^extractive.systems\[2\]: unknown extractive method 'foo' \(known: "):
        check_systems(cfg)
    cfg = params_from_dict({"extractive": {"options": {"lexrank9": {}}}}).extractive
    with pytest.raises(ConfigError, match=r"^extractive.options.lexrank9: unknown extractive method 'lexrank9'"):
        check_systems(cfg)
    cfg = params_from_dict({"extractive": {"options": {"lexrank": {"threshold": "abc"}}}}).extractive
    with pytest.raises(ConfigError, match=r"^extractive.options.lexrank: extractive method 'lexrank': bad option "
                                          r"threshold: expected float, got 'abc'$"):
        check_systems(cfg)
    with pytest.raises(ConfigError, match=r"^extract.budgets\[1\].method: unknown selection method 'foo' "
                                          r"\(known: edmundson, first, klsum, .*wordfreq\)$"):
        resolve_selections([Budget("first", 10), Budget("foo", 10)])
