"""Typer option types shared by every stage command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

def flag(*names: str, help: str, **more: Any) -> Any:
    """A boolean option that reads as a flag in --help: `--json`, or `--resume/--no-resume` for one that
    is on by default. (This Typer prints a `<bool>` value column for every bool option, as if it took a
    value; an empty metavar leaves the column blank, as click shows flags.)"""
    return typer.Option(*names, help=help, metavar="", **more)


ParamsOption = Annotated[
    Path, typer.Option("--params", "-p", help="params file to read (validated before anything runs)")
]
