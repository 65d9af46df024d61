"""Thin Typer command: `sumpipe docs` rewrites the generated blocks of README.md, docs/*.md and the
experiments' READMEs (experiments/*/README.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sumpipe.options import ParamsOption, flag
from sumpipe.terminal import echo

DOCUMENTS = ("README.md", "docs/*.md", "experiments/*/README.md")


def documents(root: Path) -> list[Path]:
    """The Markdown files whose blocks `sumpipe docs` keeps current, under project folder `root`."""
    return [path for pattern in DOCUMENTS for path in sorted(root.glob(pattern))]


def docs(
    files: Annotated[list[Path] | None, typer.Argument(
        help="Markdown files (default: README.md, docs/*.md, experiments/*/README.md)", show_default=False)] = None,
    check: Annotated[bool, flag("--check", help="write nothing; fail when a block is out of date")] = False,
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Rewrite the generated blocks (results tables, registry lists) from metrics/ and the registries."""
    from sumpipe.docs.blocks import BLOCKS, render, sources
    from sumpipe.docs.generated import update_files
    from sumpipe.errors import SumpipeError

    paths = files or documents(Path("."))
    stale = update_files(paths, render(sources(Path("."), params)), BLOCKS, write=not check)
    listing = "; ".join(f"{path} ({', '.join(names)})" for path, names in stale.items())
    if check and stale:
        raise SumpipeError(f"generated blocks out of date: {listing}; run `sumpipe docs`")
    echo(f"docs: {'rewrote ' + listing if stale else 'every generated block is current'}")
