"""Thin Typer commands for this package (placeholder until the stage lands)."""

from pathlib import Path

from sumpipe.errors import SumpipeError
from sumpipe.options import ParamsOption


def evaluate(params: ParamsOption = Path("params.yaml")) -> None:
    """(not built yet)"""
    raise SumpipeError("evaluate: not built yet")


def rouge(params: ParamsOption = Path("params.yaml")) -> None:
    """(not built yet)"""
    raise SumpipeError("rouge: not built yet")
