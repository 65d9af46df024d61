"""Thin Typer command for the `preprocess` stage."""

from __future__ import annotations

from pathlib import Path

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def preprocess(params: ParamsOption = Path("params.yaml")) -> None:
    """Morozovskii 2022 Alg. 2 on data/raw/{split}.parquet -> data/processed/{split}.parquet (+ metrics)."""
    from sumpipe.config import load_params
    from sumpipe.text.preprocess import preprocess as run_preprocess

    cfg = load_params(params)
    paths = cfg.paths
    stats = run_preprocess(paths.raw, paths.processed, cfg.preprocess, Path(paths.metrics) / "preprocess.json")
    total = stats["total"]
    splits = ", ".join(f"{name} {s['rows_out']}" for name, s in stats.items() if name != "total")
    echo(f"preprocess: {total['rows_out']}/{total['rows_in']} rows kept ({splits}); "
               f"dropped {total['dropped_empty']} empty, {total['dropped_short']} short; "
               f"repaired {total['repaired']}; mean tokens source {total['mean_source_tokens']:.1f}, "
               f"reference {total['mean_reference_tokens']:.1f} -> {paths.processed}")
