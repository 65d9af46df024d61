"""experiments/cnn/name_runs.py: the CNN models' piles of copied names, counted by hand on short texts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from sumpipe.evaluate.read_quality import casing

REPO = Path(__file__).resolve().parents[3]

RAW = "In 2009, Christopher Christie beat Jon Corzine in New York City. The mayor of New York City spoke."
SOURCE = "in 2009 , christopher christie beat jon corzine in new york city .\nthe mayor of new york city spoke ."


@pytest.fixture(scope="module")
def name_runs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("name_runs", REPO / "experiments" / "cnn" / "name_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("summary", "expected"), [
    ("christopher christie corzine must qualify .", 1),        # two names jammed: christie corzine
    ("new york city mayor spoke .", 0),                         # one name the story writes whole; mayor no name
    ("christie corzine spoke .", 0),                            # two names only: shorter than a pile
    ("christie corzine christie .\njon corzine york city .", 2),  # one a line; the line break ends a run
    ("christie , corzine , jon .", 0),                          # punctuation between the names
    ("christopher christie beat jon corzine .", 0),             # "beat" is no name
])
def test_a_pile_is_three_names_with_a_pair_the_story_never_writes(name_runs: ModuleType, summary: str,
                                                                  expected: int) -> None:
    assert name_runs.piles(summary, SOURCE, casing(RAW).names) == expected


def test_figures_are_the_share_of_summaries_with_a_pile_and_piles_per_100(name_runs: ModuleType) -> None:
    summaries = ["christie corzine christie .\njon corzine york city .", "the mayor spoke .",
                 "christopher christie corzine .", "new york city ."]
    ids = ["a", "b", "c", "d"]
    share, per_100 = name_runs.figures(summaries, ids, dict.fromkeys(ids, SOURCE), dict.fromkeys(ids, (RAW, "")))
    assert (share, per_100) == (50.0, 75.0)  # piles 2, 0, 1, 0
