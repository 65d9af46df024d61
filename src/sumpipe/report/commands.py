"""Thin Typer command: `sumpipe report` (the DVC stage)."""

from __future__ import annotations

from pathlib import Path

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def report(params: ParamsOption = Path("params.yaml")) -> None:
    """Markdown/HTML report: ROUGE tables with intervals, significance, coverage, samples, heat maps, curves."""
    from sumpipe.config import load_params
    from sumpipe.report.stage import build_report

    p = load_params(params)
    result = build_report(p.paths, p.report, list(p.models), seed=p.evaluate.seed, split=p.decode.split,
                          crosseval_summary=Path(p.paths.crosseval) / "summary.json", seeds=p.seeds_by_model())
    for note in result.notes:
        echo(f"report: {note}", err=True)
    echo(f"report: {result.markdown} and {result.html.name}, {len(result.figures)} figures")
