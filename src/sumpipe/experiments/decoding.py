"""Decoding settings chosen on the validation split, over every training seed: `sumpipe decoding`.

    experiments/decoding/params.yaml ─► run_decoding(cfg) ─► <out>/decoding.json, <out>/decoding.md

Length and repetition are decoding choices (seed 001 §2.3.4: beam search with a GNMT length penalty;
a minimum length; n-gram and adjacent-repeat blocking), and ROUGE F1 rewards the length the references
have, so they are chosen like any hyper-parameter: on validation, never on test. Each setting is a
set of `decode:` keys over params.yaml's (`min_length`, `length_penalty`, `block_adjacent_repeat`,
...: validated as the `decode:` section is). For every model named and every seed of `train.seeds` the
trained model (`models/<m>/seed-<s>/`, from `dvc repro`) summarises the validation split of its input
selection under each setting; the table gives, per model and setting, ROUGE-1/2/L F1 x 100 (mean ±
sd over the seeds), the length in words (punctuation not counted) and the shares of summaries with a
word twice in a row and of distinct summaries (`sumpipe.evaluate.abstractiveness`), beside the one-
lead-sentence baseline of the same documents and the references' length.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sumpipe.validation import require

RESULTS_JSON = "decoding.json"
RESULTS_MD = "decoding.md"
FIGURES = ("rouge1", "rouge2", "rougeL", "mean_words", "adjacent_repeat", "distinct")


@dataclass(frozen=True)
class DecodingSweep:
    """experiments/decoding/params.yaml: `repo` (the project whose params.yaml, models and data are
    used, relative to the sweep's folder), the `models` to decode, the `split` (never test) and the
    named `settings` (each a mapping of `decode:` keys)."""

    repo: str = "../.."
    models: list[str] = field(default_factory=lambda: ["M1"])
    split: str = "valid"
    settings: dict[str, dict[str, Any]] = field(default_factory=lambda: {"params.yaml": {}})
    out: str = "results"

    def check(self, key: str) -> None:
        require(self.split in ("train", "valid"), f"{key}.split" if key else "split",
                "must be train or valid: settings are chosen without reading the test split")
        require(bool(self.models), f"{key}.models" if key else "models", "needs at least one model")
        require(bool(self.settings), f"{key}.settings" if key else "settings", "needs at least one setting")


def setting_configs(sweep: DecodingSweep, base: Any) -> dict[str, Any]:
    """{setting: DecodeConfig} (params.yaml's `decode:` with the setting's keys, validated); a bad key or
    value is one line naming `settings.<name>.<key>`."""
    from sumpipe.config import DecodeConfig
    from sumpipe.validation import from_dict

    return {name: from_dict(DecodeConfig, {**dataclasses.asdict(base), **keys}, f"settings.{name}")
            for name, keys in sweep.settings.items()}


def run_decoding(sweep: DecodingSweep, repo: Path) -> dict[str, Any]:
    """Decode every (model, seed, setting), write the results (module docstring) and return them."""
    import numpy as np
    import pandas as pd

    from sumpipe.config import load_params
    from sumpipe.decode.batches import load_model, summarize
    from sumpipe.errors import SumpipeError
    from sumpipe.evaluate.abstractiveness import abstractiveness
    from sumpipe.evaluate.rouge import FastRouge, score_pairs
    from sumpipe.evaluate.stage import lead_sentences
    from sumpipe.io.atomic import read_parquet, write_json, write_text
    from sumpipe.names import seed_folder

    params = load_params(repo / "params.yaml")
    configs = setting_configs(sweep, params.decode)
    unknown = [m for m in sweep.models if m not in params.models]
    if unknown:
        raise SumpipeError(f"models: {unknown[0]!r} is not a model of {repo / 'params.yaml'}")
    scorer = FastRouge(("rouge1", "rouge2", "rougeL"), params.evaluate.use_stemmer)
    processed = read_parquet(repo / params.paths.processed / f"{sweep.split}.parquet").set_index("id")
    results: dict[str, Any] = {"split": sweep.split, "seeds": {m: params.seeds_of(m) for m in sweep.models},
                               "settings": sweep.settings,
                               "models": {}}
    for name in sweep.models:
        spec = params.models[name]
        frame = read_parquet(repo / params.paths.extracted / spec.input / f"{sweep.split}.parquet")
        references = frame["reference"].tolist()
        lead = [lead_sentences(processed.loc[i, "source"], 1) for i in frame["id"]]
        lead_r1 = 100 * float(score_pairs(lead, references, scorer=scorer)["rouge1_fmeasure"].mean())
        per_setting: dict[str, dict[str, list[float]]] = {s: {f: [] for f in FIGURES} for s in configs}
        for seed in params.seeds_of(name):
            folder = repo / params.paths.models / name / seed_folder(seed)
            model, vocab, card = load_model(folder)
            for setting, cfg in configs.items():
                texts = [s.text for s in summarize(model, vocab, card, frame["source"].tolist(), cfg)]
                scores = score_pairs(texts, references, scorer=scorer)
                figures = abstractiveness(texts, [""] * len(texts))
                for t in ("rouge1", "rouge2", "rougeL"):
                    per_setting[setting][t].append(100 * float(scores[f"{t}_fmeasure"].mean()))
                for key in ("mean_words", "adjacent_repeat", "distinct"):
                    per_setting[setting][key].append(float(figures[key]))
        results["models"][name] = {
            "lead1_rouge1": round(lead_r1, 2),
            "settings": {s: {f: {"mean": round(float(np.mean(v)), 2),
                                 "sd": round(float(np.std(v, ddof=1)), 2) if len(v) > 1 else None,
                                 "seeds": [round(x, 2) for x in v]}
                             for f, v in figures.items()}
                         for s, figures in per_setting.items()}}
    words = pd.Series([len([t for t in r.split() if any(c.isalnum() for c in t)]) for r in processed["reference"]])
    results["reference_words"] = {"mean": round(float(words.mean()), 2), "p10": float(words.quantile(0.1)),
                                  "p90": float(words.quantile(0.9))}
    out = Path(sweep.out)
    write_json(results, out / RESULTS_JSON)
    write_text(render(results), out / RESULTS_MD)
    return results


def render(results: dict[str, Any]) -> str:
    """The results as a markdown table: one row per (model, setting)."""
    ref = results["reference_words"]
    lines = [f"# Decoding settings on the {results['split']} split (seeds {', '.join(map(str, results['seeds']))})",
             "", f"Mean ± sd over the seeds; references: {ref['mean']:.1f} words (10th-90th percentile "
                 f"{ref['p10']:.0f}-{ref['p90']:.0f}). Settings (over params.yaml's `decode:`): "
             + "; ".join(f"`{name}` {keys or 'as is'}" for name, keys in results["settings"].items()) + ".", "",
             "| model | setting | R-1 | R-2 | R-L | words | word twice % | distinct % | one lead sentence R-1 |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    def cell(figure: dict[str, Any]) -> str:
        return f"{figure['mean']:.2f}" + (f" ± {figure['sd']:.2f}" if figure["sd"] is not None else "")

    for name, model in results["models"].items():
        for setting, figures in model["settings"].items():
            lines.append(f"| {name} | {setting} | {cell(figures['rouge1'])} | {cell(figures['rouge2'])} | "
                         f"{cell(figures['rougeL'])} | "
                         f"{figures['mean_words']['mean']:.1f} | {figures['adjacent_repeat']['mean']:.1f} | "
                         f"{figures['distinct']['mean']:.1f} | {model['lead1_rouge1']:.2f} |")
    return "\n".join(lines) + "\n"
