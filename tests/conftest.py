"""Shared test fixtures.

Tests that read the real corpora in ../shared/data use the `shared_data` fixture, which skips
cleanly when the folder is absent (a fresh clone elsewhere, a user's machine).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SUMPIPE_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data, or skip the test when it is not there."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (real data is optional)")
    return SHARED_DATA


@pytest.fixture
def repo_root() -> Path:
    return REPO


def transformer_card(model, selection=None, dataset: str = "pydoc", name: str = "m"):
    """The card training writes for a transformer-family `model` that reads `selection` (a Budget;
    None = the whole preprocessed text)."""
    from sumpipe.config import ModelSpec
    from sumpipe.extract.methods import selection_name
    from sumpipe.models.card import ModelCard

    input = selection_name(selection) if selection is not None else ""
    return ModelCard(family="transformer", arch=model.arch, vocab_size=model.vocab_size, name=name, input=input,
                     spec=ModelSpec(input=input, rarity=model.rarity), selection=selection, dataset=dataset)


def pytest_terminal_summary(terminalreporter) -> None:
    """The reliability cases' totals line (case counts by expected and actual outcome), when any ran."""
    harness = sys.modules.get("tests.reliability.harness")  # tests/reliability/harness.py, imported by the reliability tests
    if harness is not None and harness.CHECKED:
        terminalreporter.write_line(harness.totals_line())
        table = os.environ.get("SUMPIPE_RELIABILITY_TABLE")  # a path: the case table, as Markdown
        if table:
            Path(table).write_text(harness.case_table())
