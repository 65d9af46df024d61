"""`sumpipe subword`: the sentencepiece vocabulary of the subword families (Roy Choudhury 2020)."""

from __future__ import annotations

from pathlib import Path

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def subword(params: ParamsOption = Path("params.yaml")) -> None:
    """Train a sentencepiece model on the train split's sources and references."""
    from sumpipe.config import load_params
    from sumpipe.io.atomic import write_json
    from sumpipe.subword.stage import train_subword

    p = load_params(params)
    stats = train_subword(p.paths.processed, p.paths.subword, p.subword)
    write_json(stats, Path(p.paths.metrics) / "subword.json")
    echo(f"subword: {stats['pieces']:,} {stats['model_type']} pieces, "
               f"{stats['pieces_per_word']:.3f} pieces per source word -> {p.paths.subword}")
