"""`sumpipe.report.plots`: the per-head attention grid of Text Summarizing (blog, 2023) beside the averaged heat map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.image import imread

from sumpipe.report.plots import attention_heads, attention_heatmap

SOURCE = [f"w{i}" for i in range(12)]
SUMMARY = ["a", "b", "c", "d"]


def head_weights(n_heads: int, seed: int = 0) -> np.ndarray:
    """(H, T, S) rows that are distributions, as the copy heads give."""
    logits = np.random.default_rng(seed).normal(size=(n_heads, len(SUMMARY), len(SOURCE)))
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)


def test_grid_has_one_panel_per_head_in_rows_of_four(tmp_path: Path) -> None:
    two = imread(attention_heads(head_weights(2), SOURCE, SUMMARY, tmp_path / "two.png", "M1 on x"))
    eight = imread(attention_heads(head_weights(8), SOURCE, SUMMARY, tmp_path / "eight.png", "M1 on x"))
    # 8 heads: 2 rows of 4 panels; 2 heads: 1 row of 2, so the grid is twice as wide and a panel taller
    # (the word labels along the bottom take the same height in both)
    assert eight.shape[1] > 1.7 * two.shape[1] and eight.shape[0] > 1.3 * two.shape[0]


def test_grid_is_reproducible_and_draws_the_weights(tmp_path: Path) -> None:
    heads = head_weights(4)
    first = attention_heads(heads, SOURCE, SUMMARY, tmp_path / "a.png", "M1 on x").read_bytes()
    # the report's figures are git-tracked DVC outputs: the same input must give the same bytes
    assert attention_heads(heads, SOURCE, SUMMARY, tmp_path / "b.png", "M1 on x").read_bytes() == first
    assert attention_heads(head_weights(4, seed=1), SOURCE, SUMMARY, tmp_path / "c.png",
                           "M1 on x").read_bytes() != first


def test_grid_cuts_long_sources_like_the_averaged_map(tmp_path: Path) -> None:
    long_source = [f"w{i}" for i in range(200)]
    heads = np.full((2, len(SUMMARY), 200), 1 / 200)
    cut = imread(attention_heads(heads, long_source, SUMMARY, tmp_path / "cut.png", "t", max_source=20))
    full = imread(attention_heads(heads, long_source, SUMMARY, tmp_path / "full.png", "t", max_source=200))
    assert cut.shape[1] < full.shape[1]
    averaged = attention_heatmap(heads.mean(axis=0), long_source, SUMMARY, tmp_path / "mean.png", "t", max_source=20)
    assert averaged.is_file()


def test_training_curves_one_panel_per_model_and_the_coverage_rule(tmp_path) -> None:
    import numpy as np
    import pandas as pd
    from PIL import Image

    from sumpipe.report import plots

    def log(shift: float) -> pd.DataFrame:
        steps = np.arange(10, 210, 10)
        valid = np.where(steps % 50 == 0, 5.0 - steps / 100 + shift, np.nan)
        return pd.DataFrame({"step": steps, "loss": 6.0 - steps / 100 + shift, "valid_loss": valid})

    logs = {name: {seed: log(0.1 * seed) for seed in (1, 2, 3)} for name in ("M1", "M2", "PG-cov")}
    path = plots.training_curves(logs, tmp_path / "curves.png", {"PG-cov": 150.0})
    width, _ = Image.open(path).size
    assert width == 1100  # 10 inches at 110 dpi: the report's frame


def test_coverage_bars_stay_within_the_frame_for_many_selections(tmp_path) -> None:
    from PIL import Image

    from sumpipe.report import plots

    selections = ["full"] + [f"sel{i}40" for i in range(14)]
    coverage = {split: {s: {"share": 0.3, "words_present": 2.0} for s in selections}
                for split in ("train", "valid", "test")}
    width, _ = Image.open(plots.coverage_bars(coverage, tmp_path / "coverage.png")).size
    assert width == 1100  # was 2,106 pixels for nine selections
