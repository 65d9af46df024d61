"""Summaries of a system's scores: one run, and a model over its training seeds."""

from __future__ import annotations

import pandas as pd
import pytest

from sumpipe.evaluate.summary import ScoringSetup, cell, compare_seeds, markdown_table, summarize_seeds

SETUP = ScoringSetup(bootstrap_samples=500, seed=3)


def run(f1: list[float], ids: list[str] | None = None) -> pd.DataFrame:
    """Per-example scores with the same F1, precision and recall for every ROUGE type."""
    ids = ids or [f"d{i}" for i in range(len(f1))]
    columns = {f"{t}_{f}": f1 for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")
               for f in ("precision", "recall", "fmeasure")}
    return pd.DataFrame({"id": ids, **columns})


def test_a_models_figure_is_the_mean_over_seeds_with_their_spread() -> None:
    # Seed 1 scores 0.2 and 0.4 (mean 30), seed 2 0.4 and 0.6 (mean 50): mean 40, sd over the seeds'
    # means sqrt(((30-40)^2 + (50-40)^2) / 1) = 14.1421 (by hand).
    out = summarize_seeds({1: run([0.2, 0.4]), 2: run([0.4, 0.6])}, SETUP)
    assert out["rouge1"] == 40.0
    assert out["rouge1_sd"] == pytest.approx(14.1421, abs=1e-4)
    assert out["seeds"] == {"1": pytest.approx({t: 30.0 for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")}),
                            "2": pytest.approx({t: 50.0 for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")})}
    assert (out["n"], out["n_seeds"]) == (2, 2)
    assert out["rouge1_low"] <= 40.0 <= out["rouge1_high"]


def test_one_seed_has_no_spread() -> None:
    out = summarize_seeds({7: run([0.2, 0.4])}, SETUP)
    assert out["rouge1"] == 30.0 and "rouge1_sd" not in out and out["n_seeds"] == 1


def test_seeds_that_scored_other_examples_are_refused() -> None:
    with pytest.raises(ValueError, match="different examples"):
        summarize_seeds({1: run([0.2, 0.4]), 2: run([0.2, 0.4], ["d0", "x"])}, SETUP)


def test_compare_seeds_aligns_the_examples_by_id() -> None:
    # B lists the same examples in another order: B - A is 0.1 on each, 10 points (x 100).
    a = {1: run([0.2, 0.4, 0.6])}
    b = {1: run([0.7, 0.3, 0.5], ["d2", "d0", "d1"])}
    out = compare_seeds(b, a, SETUP)
    assert out["rouge1"]["delta"] == pytest.approx(10.0)
    assert out["rouge1"]["p_value"] == 0.0
    assert (out["n"], out["seeds_a"], out["seeds_b"]) == (3, 1, 1)


def test_table_cells_show_the_seed_spread_and_count() -> None:
    seeded = {"rouge1": 22.68, "rouge1_sd": 0.58, "rouge1_low": 21.0, "rouge1_high": 24.1, "n": 454, "n_seeds": 4}
    plain = {"rouge1": 23.91, "rouge1_low": 22.6, "rouge1_high": 25.27, "n": 454}
    assert cell(seeded, "rouge1") == "22.68 ± 0.58 [21.00, 24.10]"
    assert cell(plain, "rouge1", intervals=False) == "23.91"
    table = markdown_table({"M1": seeded, "lead": plain}, types=("rouge1",)).split("\n")
    assert table[0] == "| Model | R-1 | n | seeds |"
    assert table[2:] == ["| M1 | 22.68 ± 0.58 [21.00, 24.10] | 454 | 4 |", "| lead | 23.91 [22.60, 25.27] | 454 | 1 |"]
