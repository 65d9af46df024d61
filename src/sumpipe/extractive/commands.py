"""`sumpipe extractive-fit` and `sumpipe extractive`: the extractive methods as summarizers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def extractive_fit(params: ParamsOption = Path("params.yaml")) -> None:
    """Fit the extractive methods' corpus statistics and the NMF keyword table (Sokol 2022 §4.2)."""
    from sumpipe.config import load_params
    from sumpipe.extractive.stage import check_systems, fit_stage

    p = load_params(params)
    check_systems(p.extractive)
    figures = fit_stage(p.paths, p.extractive)
    echo(f"extractive-fit: idf and entropy weights of {figures['terms']:,} terms over "
               f"{figures['documents']:,} train documents, {figures['topics']} reference topics, "
               f"a {figures['lsa_dimensions']}-concept collection LSA space -> {p.paths.extractive}/")


def extractive(
    system: Annotated[str, typer.Option("--system", help="an extractive method named in extractive.systems")],
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """One extractive system's summaries of the decode split, in the decode stage's format."""
    from sumpipe.config import load_params
    from sumpipe.extractive.stage import check_systems, system_stage

    p = load_params(params)
    check_systems(p.extractive)  # options checked before any file is read
    result = system_stage(system, p.paths, p.extractive, p.decode.split)
    echo(f"extractive: {system} summarised {result.documents:,} documents in {result.seconds:.1f} s "
               f"(the budget binds for {result.binds:.0%}) -> {result.path}")
