"""`sumpipe extract`: the input selections of `extract.budgets` and the coverage metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sumpipe.options import ParamsOption


def extract(params: ParamsOption = Path("params.yaml")) -> None:
    """Select model inputs for every `extract.budgets` entry (e.g. 3-gram selection, first N tokens)."""
    from sumpipe.config import load_params
    from sumpipe.extract.methods import resolve_selections, selection_name
    from sumpipe.extract.stage import extract as run_extract

    p = load_params(params)
    resolve_selections(p.extract.budgets)  # every method and its options checked before any file is read
    metrics_path = Path(p.paths.metrics) / "coverage.json"
    metrics = run_extract(p.paths.processed, p.paths.vocab, p.paths.extracted, p.extract, metrics_path)
    names = [selection_name(b) for b in p.extract.budgets]
    test = metrics.get("test", {})
    # A corpus may have no test split (Gigaword's validation files): then there is nothing to quote.
    shares = ", ".join(f"{n} {test[n]['share']:.1%}" for n in names) if test.get("examples") else ""
    typer.echo(f"extract: {', '.join(names)} for {', '.join(metrics)} -> {p.paths.extracted}"
               + (f"; test reference-word coverage: {shares}" if shares else "")
               + f" ({metrics_path})")


def extractive_fit(params: ParamsOption = Path("params.yaml")) -> None:
    """Fit the extractive methods' corpus statistics and the NMF keyword table (seed 000 §4.2)."""
    from sumpipe.config import load_params
    from sumpipe.extract.systems import check_systems, fit_stage

    p = load_params(params)
    check_systems(p.extractive)
    figures = fit_stage(p.paths, p.extractive)
    typer.echo(f"extractive-fit: idf and entropy weights of {figures['terms']:,} terms over "
               f"{figures['documents']:,} train documents, {figures['topics']} reference topics, "
               f"a {figures['lsa_dimensions']}-concept collection LSA space -> {p.paths.extractive}/")


def extractive(
    system: Annotated[str, typer.Option("--system", help="an extractive method named in extractive.systems")],
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """One extractive system's summaries of the decode split, in the decode stage's format."""
    from sumpipe.config import load_params
    from sumpipe.extract.systems import check_systems, system_stage

    p = load_params(params)
    check_systems(p.extractive)  # options checked before any file is read
    result = system_stage(system, p.paths, p.extractive, p.decode.split)
    typer.echo(f"extractive: {system} summarised {result.documents:,} documents in {result.seconds:.1f} s "
               f"(the budget binds for {result.binds:.0%}) -> {result.path}")

