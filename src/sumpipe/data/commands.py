"""`sumpipe download`: the first DVC stage (heavy imports stay inside the command)."""

from __future__ import annotations

from pathlib import Path

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def download(params: ParamsOption = Path("params.yaml")) -> None:
    """Build data/raw/{train,valid,test}.parquet from the corpus named by data.dataset."""
    from sumpipe.config import load_params
    from sumpipe.data.download import download as run_download

    cfg = load_params(params)
    out_dir = Path(cfg.paths.raw)
    stats = run_download(cfg.data, out_dir)
    info = stats[cfg.data.dataset]
    for name in info.get("packages_not_installed", []):
        echo(f"note: pydoc: package {name!r} is not installed, skipped", err=True)
    for path, why in info.get("skipped_files", {}).items():
        echo(f"note: local: skipped {path}: {why}", err=True)
    counts = stats["counts"]
    echo(
        f"download: {cfg.data.dataset}: {counts['train']} train / {counts['valid']} valid / "
        f"{counts['test']} test examples -> {out_dir}"
    )
