"""Fixtures of the reliability suite, and its totals line at the end of the run.

Plain helpers (run a command, classify how it ended, check a case) live in harness.py, imported by package
path (`tests.reliability.harness`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability import harness
from tests.reliability.harness import TINY_STAGES, run_inprocess, tiny_params


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny pipeline, run in-process once per session: download .. decode on 60 numerals examples (TINY)."""
    import yaml

    root = tmp_path_factory.mktemp("rel-pipeline")
    (root / "params.yaml").write_text(yaml.safe_dump(tiny_params(), sort_keys=False))
    (root / "input.txt").write_text("1 2 3 4 5\n")
    with pytest.MonkeyPatch.context() as mp:
        for stage in TINY_STAGES:
            result = run_inprocess(stage, root, mp, None)
            assert result.outcome == "ok", (stage, result.describe())
    return root


def pytest_terminal_summary(terminalreporter) -> None:
    """The reliability cases' totals line (case counts by expected and actual outcome), when any ran."""
    if harness.CHECKED:
        terminalreporter.write_line(harness.totals_line())
        table = os.environ.get("SUMPIPE_RELIABILITY_TABLE")  # a path: the case table, as Markdown
        if table:
            Path(table).write_text(harness.case_table())
