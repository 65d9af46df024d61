"""`sumpipe extract`: the input selections of `extract.budgets` and the coverage metrics."""

from __future__ import annotations

from pathlib import Path

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def extract(params: ParamsOption = Path("params.yaml")) -> None:
    """Select model inputs for every `extract.budgets` entry (e.g. 3-gram selection, first N tokens)."""
    from sumpipe.config import load_params
    from sumpipe.selection.methods import resolve_selections, selection_name
    from sumpipe.selection.stage import extract as run_extract

    p = load_params(params)
    resolve_selections(p.extract.budgets)  # every method and its options checked before any file is read
    metrics_path = Path(p.paths.metrics) / "coverage.json"
    metrics = run_extract(p.paths.processed, p.paths.vocab, p.paths.extracted, p.extract, metrics_path)
    names = [selection_name(b) for b in p.extract.budgets]
    test = metrics.get("test", {})
    # A corpus may have no test split (Gigaword's validation files): then there is nothing to quote.
    shares = ", ".join(f"{n} {test[n]['share']:.1%}" for n in names) if test.get("examples") else ""
    echo(f"extract: {', '.join(names)} for {', '.join(metrics)} -> {p.paths.extracted}"
               + (f"; test reference-word coverage: {shares}" if shares else "")
               + f" ({metrics_path})")
