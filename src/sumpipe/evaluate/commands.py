"""Thin Typer commands: `sumpipe evaluate` (the DVC stage) and `sumpipe rouge` (any two files)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sumpipe.options import ParamsOption, flag
from sumpipe.terminal import echo


def evaluate(params: ParamsOption = Path("params.yaml")) -> None:
    """ROUGE of every trained model (over its seeds), the extractive systems and the Lead-k / first-N
    baselines on the test split, with seed-aware comparisons."""
    from sumpipe.config import load_params
    from sumpipe.evaluate.copy_rate import output_vocabularies
    from sumpipe.evaluate.stage import run_evaluate
    from sumpipe.selection.methods import baseline_selections

    p = load_params(params)
    extractive = [s for s in p.extractive.systems if s not in p.models]
    result = run_evaluate(p.paths, p.evaluate, p.models, p.seeds_by_model(), extractive,
                          baseline_selections(p.extract.budgets), split=p.decode.split,
                          ensembles={name: spec.model for name, spec in p.ensembles.items()},
                          vocab_sizes=output_vocabularies(p))
    for name in result.skipped:
        echo(f"evaluate: no {p.decode.split} output for {name}, left out", err=True)
    best = max(result.summaries, key=lambda s: result.summaries[s]["rougeL"])
    echo(f"evaluate: {len(result.summaries)} systems scored -> {p.paths.scores}/, "
               f"{p.paths.metrics}/rouge.json; best R-L: {best} {result.summaries[best]['rougeL']:.2f}")


def rouge(
    pred: Annotated[Path, typer.Argument(help="predictions: text (one per line), JSONL or Parquet")],
    ref: Annotated[Path, typer.Argument(help="references, same formats; a list value = several references")],
    column: Annotated[
        str | None, typer.Option("--column", help="prediction column/field (dotted for nested JSON)")
    ] = None,
    ref_column: Annotated[str | None, typer.Option("--ref-column", help="reference column/field")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=1, help="bootstrap resamples for the intervals")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="bootstrap seed")] = 1234,
    no_stem: Annotated[bool, flag("--no-stem", help="turn the Porter stemmer off")] = False,
    as_json: Annotated[bool, flag("--json", help="print JSON instead of a table")] = False,
    split_sentences: Annotated[bool, flag(
        "--split-sentences", help="split summaries into sentences with Punkt before ROUGE-Lsum "
                                  "(rouge-score's split_summaries=True); default: a summary's lines")] = False,
) -> None:
    """Score two files with ROUGE-1/2/L/Lsum (rouge-score numbers) and print P, R, F1 with intervals."""
    import json

    from sumpipe.evaluate.score_files import render_rouge_table, score_files

    result = score_files(pred, ref, column=column, ref_column=ref_column, bootstrap=bootstrap, seed=seed,
                         use_stemmer=not no_stem, split_sentences=split_sentences)
    echo(json.dumps(result, indent=2) if as_json else render_rouge_table(result), lines=True)


def crosseval(params: ParamsOption = Path("params.yaml")) -> None:
    """Cross-data-set test (Morozovskii 2022 Table 5.22): trained models on the `crosseval.data` corpus."""
    from sumpipe.config import load_params
    from sumpipe.numerics import pin_numerics

    p = load_params(params)
    pin_numerics(p.train.numerics)  # before torch loads (the next import): it decodes the trained models
    from sumpipe.evaluate.crosseval import CrossEnsemble, run_crosseval

    specs = {name: p.models[name] for name in p.crosseval.models if name in p.models}
    ensembles = {name: CrossEnsemble(p.ensembles[name].model, p.ensemble_seeds(name)) for name in p.crosseval.ensembles}
    result = run_crosseval(p.paths, p.crosseval, p.crosseval.decode_config(p.decode), p.evaluate, p.seeds_by_model(),
                           specs, ensembles)
    for note in result.notes:
        echo(f"crosseval: {note}", err=True)
    key = "" if p.crosseval.protocol.measure == "fmeasure" else f"_{p.crosseval.protocol.measure}"
    figures = ", ".join(f"{name} R-1/R-2/R-L {s['rouge1' + key]:.2f}/{s['rouge2' + key]:.2f}/{s['rougeL' + key]:.2f}"
                        for name, s in result.summaries.items())
    echo(f"crosseval: {figures} -> {p.paths.crosseval}/, {p.paths.metrics}/crosseval.json")


def compare(
    a: Annotated[str, typer.Argument(help="experiment A: a scores folder, a project folder, a DVC experiment or "
                                          "a Git revision")],
    b: Annotated[str, typer.Argument(help="experiment B, the same kinds")],
    system: Annotated[list[str] | None, typer.Option(
        "--system", "-s", help="a system to compare (repeat it; default: every system both scored)")] = None,
    as_json: Annotated[bool, flag("--json", help="print JSON instead of a table")] = False,
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Compare two experiments, each trained with several seeds: B - A per system, with the two-level
    bootstrap's interval and p (so one seed's luck is not read as a result)."""
    import json

    from sumpipe.config import Params, load_params
    from sumpipe.evaluate.compare import compare_experiments, open_experiment, render
    from sumpipe.evaluate.stage import setup_of

    p = load_params(params) if params.is_file() else Params()
    types = ("rouge1", "rouge2", "rougeL")
    exp_a = open_experiment(a, params.resolve().parent, p.paths.scores)
    exp_b = open_experiment(b, params.resolve().parent, p.paths.scores)
    rows = compare_experiments(exp_a, exp_b, system, setup_of(p.evaluate), types)
    echo(json.dumps(rows, indent=2) if as_json else render(rows, a, b, types, p.evaluate.confidence),
         lines=True)
