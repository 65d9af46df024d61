"""The selection-method registry: names, look-ups, one-line errors, and select_text = the extract stage."""

from __future__ import annotations

import pytest

from sumpipe.config import Budget
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extract.methods import (
    baseline_selections,
    find_selection,
    resolve_selections,
    select_text,
    selection_name,
)

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
