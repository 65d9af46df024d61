"""Typer option types shared by every stage command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup


def flag(*names: str, help: str, **more: Any) -> Any:
    """A boolean option that reads as a flag in --help: `--json`, or `--resume/--no-resume` for one that
    is on by default. (This Typer prints a `<bool>` value column for every bool option, as if it took a
    value; an empty metavar leaves the column blank, as click shows flags.)"""
    return typer.Option(*names, help=help, metavar="", **more)


def _as_flag(option: Any) -> Any:
    if option is not None:
        option.metavar = ""  # `--help` is a flag too (this Typer would print `<bool>` beside it)
    return option


class Command(TyperCommand):
    """Every sumpipe command: its `--help` option reads as a flag, like the `flag` options."""

    def get_help_option(self, ctx: Any) -> Any:
        return _as_flag(super().get_help_option(ctx))


class Group(TyperGroup):
    """The `sumpipe` app and its sub-apps: `--help` reads as a flag; commands are `Command`s; Ctrl-C in a
    command reaches `sumpipe.cli.main`, which says `interrupted` (exit status 130)."""

    def get_help_option(self, ctx: Any) -> Any:
        return _as_flag(super().get_help_option(ctx))

    def invoke(self, ctx: Any) -> Any:
        # Typer turns a KeyboardInterrupt into exit status 130 without a word, returned (standalone_mode=False)
        # as if the command had returned it; an Abort it passes on, as EOF in a prompt is
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise typer.Abort() from None


ParamsOption = Annotated[
    Path, typer.Option("--params", "-p", help="params file to read (validated before anything runs)")
]
