"""The selection-method registry: names, look-ups, one-line errors, select_text = the extract stage, and
every selectable extractive method as an input selection (`lsa30` etc.)."""

from __future__ import annotations

import pandas as pd
import pytest

from sumpipe.config import Budget
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extractive.methods import all_methods
from sumpipe.selection.methods import (
    SELECTION_METHODS,
    FitContext,
    apply_selection,
    baseline_selections,
    find_selection,
    get_method,
    resolve_selections,
    select_text,
    selectable,
    selection_name,
)

# every extractive method of the registry but the oracle (reads the reference) and those with state of
# their own: derived from the registry, so a new method is covered here without an edit
SELECTABLE = [name for name, cls in all_methods().items() if selectable(cls)]

BUDGETS = [Budget("ngram", 200, 5), Budget("first", 200), Budget("ngram", 400)]


def test_names_and_lookups() -> None:
    assert [selection_name(b) for b in BUDGETS] == ["ngram200", "first200", "ngram400"]
    assert find_selection("ngram400", BUDGETS) == Budget("ngram", 400)
    assert Budget("ngram", 400).leading_sentences == 10 and Budget("ngram", 200, 3).leading_sentences == 3
    assert baseline_selections(BUDGETS) == ["first200"]
    with pytest.raises(SumpipeError, match=r"^models.M1.input: 'lead3' is not an extract selection "
                                           r"\(extract.budgets makes: ngram200, first200, ngram400\)$"):
        find_selection("lead3", BUDGETS, "models.M1.input")


def test_unknown_method_and_unexpected_options_are_one_line_errors() -> None:
    with pytest.raises(ConfigError, match=r"^extract.budgets\[1\].method: unknown selection method 'tfidf9'"):
        resolve_selections([Budget("first", 10), Budget("tfidf9", 10)])
    with pytest.raises(ConfigError, match=r"^extract.budgets\[0\].options: the 'first' method takes no options$"):
        resolve_selections([Budget("first", 10, options={"topics": 3})])


def test_first_method_on_one_document() -> None:
    doc = [["a", "b", "c", "."], ["d", "e", "."], ["f", "."]]
    assert select_text(Budget("first", 5), doc, None) == [["a", "b", "c", "."], ["d"]]
    assert select_text(Budget("first", 50), doc, None) == doc


def test_the_selections_are_ngram_first_and_every_selectable_extractive_method() -> None:
    assert SELECTION_METHODS.names() == sorted(SELECTABLE + ["first", "ngram"])
    # what the rule leaves out: the oracle reads the reference, ngram and lsa_collection have fitted state
    assert set(all_methods()) - set(SELECTABLE) == {"oracle", "ngram", "lsa_collection"}
    assert len(SELECTABLE) >= 15 and {"lead", "lexrank", "random", "textrank"} <= set(SELECTABLE)


DOC = [s.split() for s in ["the storm hit the coast .", "thousands of homes lost power after the storm .",
                           "markets were calm .", "the storm moved inland on tuesday ."]]


@pytest.fixture
def processed(tmp_path):
    pd.DataFrame({"id": ["a", "b"], "source": ["storm news .\nmarket news .", "storm coast ."],
                  "reference": ["x", "y"]}).to_parquet(tmp_path / "train.parquet")
    return tmp_path


@pytest.mark.parametrize("name", SELECTABLE)
def test_every_method_selects_within_the_budget_in_document_order(name, processed):
    method = get_method(name)
    state = method.fit(FitContext(processed_dir=processed))
    budget = Budget(name, 16)
    analysis = method.prepare(state, [DOC])[0]
    chosen, kept = apply_selection(method, budget, DOC, analysis)
    assert chosen == sorted(chosen) and chosen
    assert sum(map(len, kept)) <= 16


def test_the_oracle_and_methods_with_state_of_their_own_are_not_model_inputs():
    assert "oracle" not in SELECTABLE and "lsa_collection" not in SELECTABLE
    assert get_method("ngram").name == "ngram" and get_method("ngram").check is None  # Alg. 1 itself
    with pytest.raises(ConfigError, match="unknown selection method 'oracle'"):
        resolve_selections([Budget("oracle", 30)])


def test_options_are_checked_when_params_are_read():
    assert resolve_selections([Budget("lexrank", 30, options={"threshold": 0.2})])[0].name == "lexrank30"
    with pytest.raises(ConfigError, match=r"extract.budgets\[0\].options"):
        resolve_selections([Budget("lexrank", 30, options={"treshold": 0.2})])
