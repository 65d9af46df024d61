"""Every scorer as an input selection of the registry: `lsa30` etc."""

import pandas as pd
import pytest

from sumpipe.config import Budget
from sumpipe.errors import ConfigError
from sumpipe.extract.methods import FitContext, apply_selection, get_method, resolve_selections
from sumpipe.extract.scorer_selection import SELECTABLE

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


def test_the_oracle_is_not_a_model_input():
    assert "oracle" not in SELECTABLE
    with pytest.raises(ConfigError, match="unknown selection method 'oracle'"):
        resolve_selections([Budget("oracle", 30)])


def test_options_are_checked_when_params_are_read():
    assert resolve_selections([Budget("lexrank", 30, options={"threshold": 0.2})])[0].name == "lexrank30"
    with pytest.raises(ConfigError, match=r"extract.budgets\[0\].options"):
        resolve_selections([Budget("lexrank", 30, options={"treshold": 0.2})])
