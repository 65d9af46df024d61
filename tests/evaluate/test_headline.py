"""The headline metrics (sumpipe.evaluate.headline): headline.json, what DVC compares experiments by, and
figures.json, the headline figures in full."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sumpipe.evaluate.headline import best_valid_loss, dvc_headline, headline, valid_losses

ROUGE = {"rouge1": 24.4429, "rouge1_low": 22.8737, "rouge1_high": 26.0533, "rouge2": 5.2448, "rougeL": 21.6397,
         "rouge1_sd": 0.6, "seeds": {"1": {"rouge1": 24.0}}}


def test_headline_puts_every_models_r1_first_then_the_rest_rounded() -> None:
    summaries = {"M2": {**ROUGE, "rouge1": 23.1}, "M1": ROUGE, "lead3": {**ROUGE, "rouge1": 22.004}, "lsa": ROUGE}
    rare = {"M1": {"recall": 10.784, "recall_low": 7.0}, "M2": {"recall": 9.7}, "lead3": {"recall": 3.0}}
    out = headline(summaries, rare, ["M1", "M2", "PG-cov"], "lead3", {"M1-1": 4.371234, "M2-1": 4.4})
    # figure first, then system: DVC's first columns are the models' R-1 (PG-cov, not scored, left out)
    assert list(out) == ["R-1", "R-1_low", "R-1_high", "R-2", "R-L", "rare", "valid_loss"]
    assert out["R-1"] == {"M1": 24.44, "M2": 23.1, "lead3": 22.0}
    assert list(out["R-1"]) == ["M1", "M2", "lead3"]
    assert out["R-1_low"] == {"M1": 22.87, "M2": 22.87} and out["R-L"]["M1"] == 21.64
    assert out["rare"] == {"M1": 10.78, "M2": 9.7}
    assert out["valid_loss"] == {"M1-1": 4.3712, "M2-1": 4.4}
    # numbers only, and few of them: nothing per seed, no extractive system
    values = [v for figures in out.values() for v in figures.values()]
    assert all(isinstance(v, float) for v in values) and len(values) == 15
    # DVC's metrics: the models' R-1 alone, in params order (the lead does not change with a setting)
    assert dvc_headline(out, ["M1", "M2", "PG-cov"]) == {"R-1": {"M1": 24.44, "M2": 23.1}}


def test_a_headline_without_runs_or_rare_words_leaves_those_out() -> None:
    assert list(headline({"M1": ROUGE}, {}, ["M1"], "lead3", {})) == ["R-1", "R-1_low", "R-1_high", "R-2", "R-L"]


def log(folder: Path, valid: list[float | None]) -> None:
    folder.mkdir(parents=True)
    pd.DataFrame({"step": range(len(valid)), "epoch": 1.0, "loss": 5.0, "valid_loss": valid, "lr": 0.01}).to_csv(
        folder / "train_log.csv", index=False)


def test_the_best_validation_loss_is_the_lowest_logged_one(tmp_path: Path) -> None:
    log(tmp_path / "M1" / "seed-1", [None, 4.6, None, 4.37, 4.41])
    log(tmp_path / "M1" / "seed-2", [None, None])   # no epoch ended: no figure
    assert best_valid_loss(tmp_path / "M1" / "seed-1") == 4.37
    assert best_valid_loss(tmp_path / "M1" / "seed-2") is None
    assert best_valid_loss(tmp_path / "M2" / "seed-1") is None   # no log
    assert valid_losses(tmp_path, ["M1", "M2"], {"M1": [1, 2], "M2": [1]}) == {"M1-1": 4.37}
    assert valid_losses(tmp_path, ["M1"], [1, 2, 3]) == {"M1-1": 4.37}
