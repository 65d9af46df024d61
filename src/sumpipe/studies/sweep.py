"""A hyper-parameter sweep point: one default model retrained with other settings, judged on validation.

    experiments/sweep/params.yaml ─► run_sweep_point(cfg) ─► <out>/metrics.json

How the default configuration was chosen (issue "models that summarize"): each point takes the
repository's params.yaml, replaces the `model:` and `train:` keys the sweep's params name, trains the
named model on the main pipeline's artifacts (`data/extracted/<input>/train|valid`, `data/vocab`:
run `dvc repro extract` first), decodes the **validation** split with the `decode:` settings and
writes what decides a configuration: ROUGE-1/2/L F1 x 100 beside the one-lead-sentence baseline of
the same documents, and the degeneracy figures (% distinct summaries, % with a word repeated back to
back, mean length; `sumpipe.evaluate.abstractiveness`), with the training cost, once per seed of
`train.seeds` (mean, sd and every seed's figures: one seed proves nothing). The test split is
never read, so choosing by these numbers leaves the test figures of the report honest.

Run it as DVC experiments, one point each, and compare them with `dvc exp show`:

    cd experiments/sweep && dvc exp run -S train.lr=0.005   # its own DVC project
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sumpipe.config import params_from_dict, read_params_yaml
from sumpipe.validation import require

METRICS_FILE = "metrics.json"


@dataclass(frozen=True)
class SweepConfig:
    """experiments/sweep/params.yaml: `repo` (the folder whose params.yaml and artifacts are used,
    relative to the sweep folder), the model to retrain, and the `model:` / `train:` keys to set."""

    repo: str = "../.."
    model_name: str = "M1"
    model: dict[str, Any] = field(default_factory=dict)
    train: dict[str, Any] = field(default_factory=dict)
    out: str = "runs"

    def check(self, key: str) -> None:
        require(bool(self.model_name), f"{key}.model_name" if key else "model_name", "must name a model")


def swept_params(cfg: SweepConfig, base: Path) -> Any:
    """The repository's params with the sweep's keys set, models and checkpoints under `cfg.out`."""
    raw = read_params_yaml(base / "params.yaml")  # bounded, and a number too long to read is one line
    raw["model"] = {**raw.get("model", {}), **cfg.model}
    raw["train"] = {**raw.get("train", {}), **cfg.train}
    paths = raw.setdefault("paths", {})
    for key in ("extracted", "vocab", "processed", "subword", "pretrain"):
        paths[key] = str(base / paths.get(key, key))
    paths["models"], paths["checkpoints"] = f"{cfg.out}/models", f"{cfg.out}/checkpoints"
    return params_from_dict(raw)


def run_sweep_point(cfg: SweepConfig, base: Path) -> dict[str, Any]:
    """Train `cfg.model_name` with the sweep's settings, once per seed of the model's
    (`Params.seeds_of`: `train.seeds` unless it has its own), score each run's
    validation summaries and write the metrics: every figure as the mean over the seeds, with its sd
    (`<figure>_sd`, two seeds or more) and each seed's figures under "seeds"."""
    import numpy as np

    from sumpipe.io.atomic import write_json

    params = swept_params(cfg, base)
    runs = {seed: _run_seed(cfg, params, seed) for seed in params.seeds_of(cfg.model_name)}
    metrics: dict[str, Any] = {}
    for key in runs[min(runs)]:
        values = np.array([run[key] for run in runs.values()], dtype=np.float64)
        metrics[key] = round(float(values.mean()), 2)
        if len(values) > 1:
            metrics[f"{key}_sd"] = round(float(values.std(ddof=1)), 2)
    metrics["n_seeds"] = len(runs)
    metrics["seeds"] = {str(seed): run for seed, run in runs.items()}
    write_json(metrics, Path(cfg.out) / METRICS_FILE)
    return metrics


def _run_seed(cfg: SweepConfig, params: Any, seed: int) -> dict[str, Any]:
    """One training run of the sweep point and its validation figures."""
    import pandas as pd

    from sumpipe.decode.batches import load_model, summarize
    from sumpipe.evaluate.abstractiveness import abstractiveness
    from sumpipe.evaluate.rouge import FastRouge, score_pairs
    from sumpipe.evaluate.stage import lead_sentences
    from sumpipe.io.atomic import read_parquet
    from sumpipe.train.stage import resolve_inputs, train_model

    inputs = resolve_inputs(params, cfg.model_name, seed)
    started = time.perf_counter()
    summary = train_model(inputs, resume=False)
    seconds = time.perf_counter() - started
    model, vocab, card = load_model(inputs.out_dir)
    valid = read_parquet(inputs.extracted_dir / "valid.parquet")
    decode_cfg = dataclasses.replace(params.decode, device="cpu")
    predictions = [s.text for s in summarize(model, vocab, card, valid["source"].tolist(), decode_cfg)]
    processed = read_parquet(Path(params.paths.processed) / "valid.parquet").set_index("id")
    lead = [lead_sentences(processed.loc[i, "source"], 1) for i in valid["id"]]
    scorer = FastRouge(("rouge1", "rouge2", "rougeL"), params.evaluate.use_stemmer)
    references = valid["reference"].tolist()
    scores = score_pairs(predictions, references, scorer=scorer)
    lead_r1 = score_pairs(lead, references, scorer=scorer)["rouge1_fmeasure"]
    figures = abstractiveness(predictions, [""] * len(predictions))
    return {
        "valid_rouge1": round(100 * float(scores["rouge1_fmeasure"].mean()), 2),
        "valid_rouge2": round(100 * float(scores["rouge2_fmeasure"].mean()), 2),
        "valid_rougeL": round(100 * float(scores["rougeL_fmeasure"].mean()), 2),
        "valid_lead1_rouge1": round(100 * float(pd.Series(lead_r1).mean()), 2),
        "distinct": figures["distinct"], "word_twice": figures["adjacent_repeat"],
        "mean_length": figures["mean_length"],
        "train_seconds": round(seconds, 1), "epochs": summary["epochs_completed"],
        "best_step": summary["best_step"], "steps": summary["steps"],
        "parameters": summary["parameters"],
    }
