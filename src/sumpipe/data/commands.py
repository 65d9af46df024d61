"""Thin Typer commands for this package (placeholder until the stage lands)."""

from pathlib import Path

from sumpipe.errors import SumpipeError
from sumpipe.options import ParamsOption


def download(params: ParamsOption = Path("params.yaml")) -> None:
    """(not built yet)"""
    raise SumpipeError("download: not built yet")
