"""The headline metrics: the few numbers experiments are compared by.

`${paths.metrics}/headline.json`, the only `metrics:` of dvc.yaml, so `dvc metrics show/diff` and `dvc exp
show` carry it and nothing else: each model's R-1 F1 (the mean over its seeds), `{"R-1": {"M1": 24.44, ..}}`.
No more, because of how `dvc exp show` draws its table (docs/params.md): every metric column comes before
any parameter, and a terminal shows the table's first columns (DVC pages it with `less -S`), so in 120
columns the four R-1 figures leave just the room for the first parameter, the one an experiment sets.

`${paths.metrics}/figures.json`, a plain output in git beside the detailed files (rouge.json,
read_quality.json, ...): the headline figures in full, figure first, then system:

    {"R-1": {"<model>": .., .., "<lead>": ..}, "R-1_low": {"<model>": ..}, "R-1_high": {..},
     "R-2": {..}, "R-L": {..}, "rare": {"<model>": ..}, "valid_loss": {"<model>-<seed>": ..}}

ROUGE: F1 x 100 (a model's mean over its seeds) with the R-1 interval of rouge.json; `rare`: rare-word
recall x 100 (rare_words.json); the lead baseline's R-1 alone, as the anchor; `valid_loss`: each
training run's best validation loss, read from its `train_log.csv`. Numbers only, rounded (2 decimals,
the loss 4), written in this order (not key-sorted). A model or run without a figure is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sumpipe.names import TRAIN_LOG_FILE, Seeds, seed_folder, seeds_for

HEADLINE_FILE = "headline.json"
FIGURES_FILE = "figures.json"

# headline key -> rouge.json key, in column order
ROUGE_FIGURES = (("R-1", "rouge1"), ("R-1_low", "rouge1_low"), ("R-1_high", "rouge1_high"),
                 ("R-2", "rouge2"), ("R-L", "rougeL"))


def headline(summaries: Mapping[str, Mapping[str, Any]], rare: Mapping[str, Mapping[str, Any]],
             models: Sequence[str], lead: str, valid_losses: Mapping[str, float]) -> dict[str, dict[str, float]]:
    """The headline dict (module docstring) from evaluate's per-system `summaries` (rouge.json), its
    rare-word figures (rare_words.json), the `models` in params order, the `lead` baseline's name and
    each run's best validation loss ({"M1-2": 4.37})."""
    scored = [name for name in models if name in summaries]
    out: dict[str, dict[str, float]] = {}
    for label, key in ROUGE_FIGURES:
        out[label] = {name: round(float(summaries[name][key]), 2) for name in scored}
    if lead in summaries:
        out["R-1"][lead] = round(float(summaries[lead]["rouge1"]), 2)
    out["rare"] = {name: round(float(rare[name]["recall"]), 2) for name in scored if name in rare}
    out["valid_loss"] = {run: round(float(loss), 4) for run, loss in valid_losses.items()}
    return {label: figures for label, figures in out.items() if figures}


def dvc_headline(figures: Mapping[str, Mapping[str, float]], models: Sequence[str]) -> dict[str, dict[str, float]]:
    """headline.json from `headline`'s figures: each model's R-1 (no baseline: it does not change with an
    experiment's settings, and a fifth column would push the set parameter out of a 120-column view)."""
    r1 = figures.get("R-1", {})
    return {"R-1": {name: r1[name] for name in models if name in r1}}


def best_valid_loss(model_dir: Path) -> float | None:
    """The lowest `valid_loss` of a model folder's `train_log.csv` (None: no log, or no validation row)."""
    import pandas as pd

    log = model_dir / TRAIN_LOG_FILE
    if not log.is_file():
        return None
    losses = pd.read_csv(log, usecols=["valid_loss"])["valid_loss"].dropna()
    return float(losses.min()) if len(losses) else None


def valid_losses(models_dir: Path, models: Sequence[str], seeds: Seeds) -> dict[str, float]:
    """{"<model>-<seed>": best validation loss} of every training run of `models` (over `seeds`, as
    evaluate reads them) whose model folder has a log with one."""
    found = {f"{name}-{seed}": best_valid_loss(models_dir / name / seed_folder(seed))
             for name in models for seed in seeds_for(seeds, name)}
    return {run: loss for run, loss in found.items() if loss is not None}
