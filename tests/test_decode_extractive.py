"""`sumpipe summarize`: raw text through the preprocessing and an extractive method."""

import sys
from pathlib import Path

import pytest

from sumpipe.cli import main

STORY = ("The storm hit the coast on Monday. Thousands of homes lost power as the storm moved inland. "
         "Markets were calm. Officials said the storm damage would take weeks to repair.")


def run(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["sumpipe", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_textrank_two_sentences_without_params(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)          # no params.yaml: statistics from the input alone
    (tmp_path / "a.txt").write_text(STORY)
    code, out, _ = run(monkeypatch, capsys, "summarize", "--method", "textrank", "--sentences", "2", "a.txt")
    # the input's own sentences, as written, in document order; the off-topic one is left out
    assert code == 0 and out == ("The storm hit the coast on Monday. "
                                 "Thousands of homes lost power as the storm moved inland.\n")


def test_tokens_flag_prints_the_preprocessed_form(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, out, _ = run(monkeypatch, capsys, "summarize", "--method", "textrank", "--sentences", "2", "--tokens", "a.txt")
    assert code == 0 and out == ("the storm hit the coast on monday .\n"
                                 "thousands of homes lost power as the storm moved inland .\n")


def test_max_tokens_budget(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, out, _ = run(monkeypatch, capsys, "summarize", "--method", "lead", "--max-tokens", "8", "a.txt")
    assert code == 0 and out == "The storm hit the coast on Monday.\n"   # 8 tokens with the full stop


@pytest.mark.parametrize("args, message", [
    (["--method", "oracle"], "reads the reference"),
    (["--method", "nope"], "unknown extractive method"),
])
def test_errors_are_one_line(tmp_path: Path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, _, err = run(monkeypatch, capsys, "summarize", *args, "a.txt")
    assert code == 1 and message in err and len(err.strip().split("\n")) == 1
