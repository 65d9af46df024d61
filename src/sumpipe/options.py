"""Typer option types shared by every stage command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ParamsOption = Annotated[
    Path, typer.Option("--params", "-p", help="params file to read (validated before anything runs)")
]
