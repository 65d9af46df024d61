"""The `sumpipe` command line's conventions: --version, flags that read as flags, one-line errors."""

from __future__ import annotations

import re
import sys

import pytest

from sumpipe import __version__
from sumpipe.cli import main


def run(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sumpipe", *args])
    monkeypatch.setenv("COLUMNS", "200")  # one help row per option
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version(monkeypatch, capsys) -> None:
    assert run(monkeypatch, capsys, "--version") == (0, f"sumpipe {__version__}\n", "")
    assert __version__ == "0.1.0"


@pytest.mark.parametrize(("command", "flags"), [
    ("decode", ["--greedy", "--sample", "--per-line", "--per-block", "--json"]),
    ("rouge", ["--no-stem", "--json", "--split-sentences"]),
    ("train", ["--resume"]),
    ("pretrain", ["--resume"]),
])
def test_boolean_options_read_as_flags_in_help(monkeypatch, capsys, command: str, flags: list[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, command, "--help")
    assert code == 0
    for flag in flags:
        row = next(line for line in out.splitlines() if re.search(rf"\s{flag}\s", line))
        assert "<bool>" not in row, row
    if command in ("train", "pretrain"):
        assert "--no-resume" in out


@pytest.mark.parametrize("args", [[], ["summarize"], ["decode"], ["numerals"], ["numerals", "run"], ["sweep"]])
def test_no_help_page_shows_a_bool_value_column(monkeypatch, capsys, args: list[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, *args, "--help")
    assert code == 0
    assert "--help" in out
    assert "<bool>" not in out   # --help itself, --version and every flag read as flags

