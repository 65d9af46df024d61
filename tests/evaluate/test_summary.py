"""Summaries of a system's scores: one run, and a model over its training seeds."""

from __future__ import annotations

import pandas as pd
import pytest

from sumpipe.evaluate.summary import ScoringSetup, cell, compare_seeds, markdown_table, summarize, summarize_seeds

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


def test_a_recall_protocol_gives_recall_its_interval_spread_and_comparisons() -> None:
    """The DUC protocol leads with recall: its mean gets the interval, sd and per-seed values F1 has, and the
    comparisons test it; F1 keeps its own."""
    recall = ScoringSetup(bootstrap_samples=200, seed=3, measure="recall")
    a = {1: run([0.2, 0.4]).assign(rouge1_recall=[0.5, 0.7]), 2: run([0.4, 0.6]).assign(rouge1_recall=[0.7, 0.9])}
    out = summarize_seeds(a, recall)
    assert (out["rouge1"], out["rouge1_recall"]) == (40.0, 70.0)  # F1 30/50, recall 60/80 by seed
    assert out["rouge1_recall_sd"] == out["rouge1_sd"] == pytest.approx(14.1421, abs=1e-4)
    assert out["rouge1_recall_low"] <= 70.0 <= out["rouge1_recall_high"] and "rouge1_recall_low" not in summarize_seeds(
        a, SETUP)
    assert (out["seeds"]["1"]["rouge1_recall"], out["seeds"]["2"]["rouge1_recall"]) == (60.0, 80.0)
    b = {0: run([0.4, 0.6]).assign(rouge1_recall=[0.1, 0.1])}
    assert compare_seeds(a, b, recall)["rouge1"]["delta"] == pytest.approx(60.0)  # recall 70 - 10
    assert compare_seeds(a, b, SETUP)["rouge1"]["delta"] == pytest.approx(-10.0)  # F1 40 - 50
    one = summarize(run([0.2, 0.4]).assign(rouge2_recall=[1.0, 0.0]), recall)
    assert (one["rouge2_recall"], one["rouge2_recall_low"], one["rouge2_recall_high"]) == (50.0, 0.0, 100.0)
    table = markdown_table({"M1": out}, types=("rouge1",), measure="recall").split("\n")
    assert table[0] == "| Model | R-1 recall | n | seeds |" and table[2].startswith("| M1 | 70.00 ± 14.14 [")
    assert "averaged over the references" in ScoringSetup(references="average").line()
    assert ScoringSetup(max_bytes=75).as_dict()["length"] == "the first 75 bytes of every summary (ROUGE-1.5.5 -b 75)"
