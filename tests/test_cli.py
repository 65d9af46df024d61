"""The `sumpipe` command line's conventions: --version, flags that read as flags, one-line errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from sumpipe import __version__


@pytest.fixture(autouse=True)
def wide_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one help row per option


def test_version(cli) -> None:
    assert cli("--version") == (0, f"sumpipe {__version__}\n", "")
    assert __version__ == "0.1.0"


@pytest.mark.parametrize(("command", "flags"), [
    ("decode", ["--greedy", "--sample", "--per-line", "--per-block", "--json"]),
    ("rouge", ["--no-stem", "--json", "--split-sentences"]),
    ("train", ["--resume"]),
    ("pretrain", ["--resume"]),
])
def test_boolean_options_read_as_flags_in_help(cli, command: str, flags: list[str]) -> None:
    code, out, _ = cli(command, "--help")
    assert code == 0
    for flag in flags:
        row = next(line for line in out.splitlines() if re.search(rf"\s{flag}\s", line))
        assert "<bool>" not in row, row
    if command in ("train", "pretrain"):
        assert "--no-resume" in out


@pytest.mark.parametrize("args", [[], ["summarize"], ["decode"], ["numerals"], ["numerals", "run"], ["sweep"]])
def test_no_help_page_shows_a_bool_value_column(cli, args: list[str]) -> None:
    code, out, _ = cli(*args, "--help")
    assert code == 0
    assert "--help" in out
    assert "<bool>" not in out   # --help itself, --version and every flag read as flags



def test_under_dvc_a_watcher_ends_the_stage_with_dvc(monkeypatch) -> None:
    """DVC sets DVC_STAGE for its stage commands; only then does sumpipe watch for DVC's end (a
    SIGTERM to `dvc repro` is not passed on; tests/reliability/test_rel_hostile.py kills a real one)."""
    import threading

    from sumpipe import cli

    monkeypatch.delenv("DVC_STAGE", raising=False)
    cli._stop_with_dvc()
    assert not [t for t in threading.enumerate() if t.name == "stop-with-dvc"]
    monkeypatch.setenv("DVC_STAGE", "train@M1")
    cli._stop_with_dvc(interval=3600)
    watchers = [t for t in threading.enumerate() if t.name == "stop-with-dvc"]
    assert len(watchers) == 1 and watchers[0].daemon  # never keeps the process alive


@pytest.mark.parametrize("args", [["preprocess"], ["numerals", "report"]])
def test_ctrl_c_in_a_command_says_interrupted_with_status_130(cli, monkeypatch, args: list[str]) -> None:
    """Ctrl-C (a KeyboardInterrupt) in a command, a sub-app's too: one `interrupted` line and exit status 130.
    Typer turns it into status 130 without a word, which `main` took for the command's own return value."""
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("sumpipe.config.load_params", interrupt)
    monkeypatch.setattr("sumpipe.config.load_config", interrupt)
    assert cli(*args) == (130, "", "interrupted\n")


def test_an_error_line_quoting_control_characters_stays_one_plain_line(cli, tmp_path) -> None:
    code, out, err = cli("decode", "-m", "M1", "x\x1b[2J\rerror: forged\n.txt", cwd=tmp_path)
    assert code == 1 and err.count("\n") == 1 and err.startswith("error: x\\u001b[2J\\u000derror: forged\\u000a")


def test_importing_the_cli_imports_no_heavy_library(repo_root) -> None:
    # `sumpipe --help` and a one-line error must stay fast (under 3 s): the commands import torch,
    # pandas and the like only when they run. A fresh process: this one has them loaded already.
    code = ("import sys, sumpipe.cli; "
            "print(sorted(m for m in ('torch', 'pandas', 'numpy', 'pyarrow', 'nltk', 'tqdm', 'yaml', 'dvc') "
            "if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(repo_root / "src")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "[]"
