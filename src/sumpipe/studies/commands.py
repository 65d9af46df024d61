"""`sumpipe numerals run|report`, `sweep`, `decoding`, `meta-eval`: the stages of the pipelines under experiments/."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sumpipe.options import Command, Group, ParamsOption
from sumpipe.terminal import echo

numerals = typer.Typer(help="Hansen & Petersen 2019's numerals experiment (experiments/numerals/dvc.yaml).",
                       no_args_is_help=True, cls=Group)


@numerals.command("run", cls=Command)
def run(
    run: Annotated[str, typer.Option("--run", help="continuous-none | random-none | random-bahdanau | "
                                                   "continuous-bahdanau")],
    length: Annotated[int, typer.Option("--length", help="maximum sequence length of the data")],
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Train and evaluate one (data, attention, max length) cell into <out>/<run>-<length>/."""
    from sumpipe.config import load_config
    from sumpipe.errors import SumpipeError
    from sumpipe.studies.numerals import NumeralsExperiment, run_numerals

    cfg = load_config(params, NumeralsExperiment)
    if run not in cfg.runs or length not in cfg.max_lengths:
        raise SumpipeError(f"--run {run} --length {length}: not in {params}'s runs {cfg.runs} "
                           f"and max_lengths {cfg.max_lengths}")
    m = run_numerals(cfg, run, length)
    echo(f"{run} L{length}: token accuracy {100 * m['valid_token_accuracy']:.1f} %, sequence accuracy "
               f"{100 * m['valid_sequence_accuracy']:.1f} %, train loss {m['train_loss']:.3f} "
               f"({m['steps']} steps, {m['train_seconds']} s) -> {cfg.run_dir(run, length)}")


@numerals.command("report", cls=Command)
def report(params: ParamsOption = Path("params.yaml")) -> None:
    """Figures like Hansen & Petersen 2019's Figs. 5-8, a markdown table and the combined metrics."""
    from sumpipe.config import load_config
    from sumpipe.studies.numerals import NumeralsExperiment
    from sumpipe.studies.numerals_report import numerals_report

    for path in numerals_report(load_config(params, NumeralsExperiment)):
        echo(f"wrote {path}")


def sweep(params: ParamsOption = Path("params.yaml")) -> None:
    """One point of the hyper-parameter sweep (experiments/sweep/dvc.yaml): retrain a default model with
    the sweep's settings and score it on the validation split."""
    from sumpipe.config import load_config
    from sumpipe.studies.sweep import METRICS_FILE, SweepConfig, run_sweep_point

    cfg = load_config(params, SweepConfig)
    m = run_sweep_point(cfg, Path(params).resolve().parent / cfg.repo)
    spread = f" ± {m['valid_rouge1_sd']:.2f} over {m['n_seeds']} seeds" if "valid_rouge1_sd" in m else ""
    echo(f"sweep {cfg.model_name}: valid R-1 {m['valid_rouge1']:.2f}{spread} "
               f"(lead-1 {m['valid_lead1_rouge1']:.2f}), "
               f"distinct {m['distinct']:.1f} %, word twice {m['word_twice']:.1f} %, length {m['mean_length']:.1f}, "
               f"{m['train_seconds']} s -> {cfg.out}/{METRICS_FILE}")


def decoding(params: ParamsOption = Path("params.yaml")) -> None:
    """Decoding settings on the validation split (experiments/decoding): every model named, every seed,
    every setting; ROUGE, length and read quality as mean ± sd over the seeds, and the setting chosen
    under the read-quality guards."""
    from sumpipe.config import load_config
    from sumpipe.studies.decoding import RESULTS_MD, DecodingSweep, run_decoding

    folder = Path(params).resolve().parent
    cfg = load_config(params, DecodingSweep)
    results = run_decoding(cfg, folder / cfg.repo)
    for name, setting in results["chosen"].items():
        if setting is None:
            echo(f"decoding {name}: no setting passes the read-quality guards")
            continue
        if name == "all models":
            echo(f"decoding, every model at once: {setting!r}")
            continue
        model = results["models"][name]
        figures = model["settings"][setting]
        echo(f"decoding {name}: {setting!r} (valid {cfg.choose_by} {figures[cfg.choose_by]['mean']:.2f}, "
                   f"R-1 {figures['rouge1']['mean']:.2f}, one lead sentence R-1 {model['lead1_rouge1']:.2f}, "
                   f"fragments {figures['fragment_rate']['mean']:.1f} %)")
    echo(f"-> {cfg.out}/{RESULTS_MD}")


def meta_eval(params: ParamsOption = Path("params.yaml")) -> None:
    """Does each read-quality measure track what people judge? Correlations of every measure, of ROUGE and
    of the trivial baselines (ROUGE-1/2 precision against the source, novel n-grams, length) with every
    human score of a judgments file (experiments/measures), with bootstrap intervals, each minus the
    baseline row (paired), on all articles and on the held-out half, and the check that the published ROUGE
    row is reproduced."""
    from sumpipe.config import load_config
    from sumpipe.errors import SumpipeError
    from sumpipe.evaluate.meta_eval import RESULTS_MD, MetaEvaluation, markdown_table, run_meta_eval

    cfg = load_config(params, MetaEvaluation)
    results = run_meta_eval(cfg, Path(params).resolve().parent)
    echo(markdown_table(results, levels=("article", "system")), lines=True)
    echo(f"-> {cfg.out}/{RESULTS_MD}")
    if not results["check"]["passed"]:
        raise SumpipeError(f"meta-eval: the published {cfg.reproduce} row is not reproduced within {cfg.tolerance} "
                           f"(largest difference {results['check']['max_difference']:.4f}): the protocol is wrong")
