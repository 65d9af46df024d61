"""Text inputs and option values given to the user-facing commands, as a new user would.

One table per category: a case -> the expected outcome ("ok" or "error: <fragment of the one line>").
Adding a command (e.g. the extractive `sumpipe summarize`) is one entry in COMMANDS plus its column
of expectations in EXPECTED (a missing entry falls back to the command's `default`).
"""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest

from tests.reliability.harness import check, run_inprocess, run_subprocess, sumpipe_argv

ARTICLE = ("Police said the man was arrested on Monday after a long chase through the city. "
           "A bird flew over the house. The dog ate the bone, and the cat sat on the mat.\n")


def _big(path: Path) -> None:
    line = ARTICLE.encode()
    with path.open("wb") as f:
        f.write(line * (50 * 1024 * 1024 // len(line) + 1))


# name -> what to put at the input path (bytes, a callable that writes it, or None: nothing there)
INPUTS = {
    "missing file": None,
    "a directory": "DIR",
    "empty": b"",
    "whitespace only": b"  \n\t \n\n",
    "random bytes": random.Random(0).randbytes(4096),
    "Latin-1": "The caf\xe9 owner said the man was arrested on Monday.\n".encode("latin-1"),
    "UTF-16 with BOM": ARTICLE.encode("utf-16"),
    "NUL inside English": ARTICLE[:40].encode() + b"\x00" + ARTICLE[40:].encode(),
    "50 MB": _big,
    "100,000 chars, no space": b"a" * 100_000 + b"\n",
    "only punctuation": b"!!! ... ??? ;;; --- ((()))\n",
    "only digits": b"1234 5678 90 42 7\n",
    "CJK": ("\u5317\u4eac\u662f\u4e2d\u56fd\u7684\u9996\u90fd\u3002"
            "\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002\n").encode(),
    "Cyrillic": ("\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440. "
                 "\u041a\u0430\u043a \u0434\u0435\u043b\u0430?\n").encode(),
    "emoji": "\U0001F600 \U0001F389 \U0001F680 \U0001F44D\n".encode(),
    "HTML page": (b"<!DOCTYPE html><html><head><title>News</title><script>var x = 1;</script></head><body>"
                  b"<p>Police said the man was arrested on Monday.</p><p>The dog ate the bone.</p></body></html>\n"),
}

# command -> argv with the input path in it; `sumpipe rouge` scores the file against itself
COMMANDS = {
    "decode": lambda path: ["decode", "-m", "M1", path],
    "rouge": lambda path: ["rouge", "--bootstrap", "20", path, path],
    "summarize": lambda path: ["summarize", "--method", "lead", path],  # extractive; once on main
}

NO_TEXT = "error: no Latin-script text"
EXPECTED = {
    "decode": {
        "missing file": "error: input.txt: no such file",
        "a directory": "error: input.txt: is a directory",
        "empty": "error: input.txt: is empty",
        "whitespace only": "error: input.txt: is empty",
        "random bytes": "error: input.txt: looks like a binary file",
        "Latin-1": "error: input.txt: not UTF-8 text (byte 0xe9 at offset 7)",
        "UTF-16 with BOM": "ok",
        "NUL inside English": "error: input.txt: looks like a binary file",
        "50 MB": "ok",
        "100,000 chars, no space": "ok",
        "only punctuation": NO_TEXT,
        "only digits": "ok",
        "CJK": NO_TEXT,
        "Cyrillic": NO_TEXT,
        "emoji": NO_TEXT,
        "HTML page": "ok",
    },
    "rouge": {
        "missing file": "error: input.txt: no such file",
        "a directory": "error: input.txt: is a directory",
        "empty": "error: nothing to score",
        "whitespace only": "ok",
        "random bytes": "error: input.txt: not UTF-8 text",
        "Latin-1": "error: input.txt: not UTF-8 text",
        "UTF-16 with BOM": "ok",
        "NUL inside English": "ok",
        "50 MB": None,  # 50 MB of summaries is a scoring job, not an input check: not run here
        "100,000 chars, no space": "ok",
        "only punctuation": "ok",
        "only digits": "ok",
        "CJK": "ok",
        "Cyrillic": "ok",
        "emoji": "ok",
        "HTML page": "ok",
    },
}

# `sumpipe summarize` reads raw text like `sumpipe decode INPUT`: the same outcomes (one document).
EXPECTED["summarize"] = dict(EXPECTED["decode"])

SLOW_INPUTS = {"50 MB"}


def _available(command: str) -> bool:
    from sumpipe.cli import app

    return any(info.name == command for info in app.registered_commands)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    """A folder without params.yaml (built-in defaults) holding a tiny trained-format models/M1."""
    root = tmp_path_factory.mktemp("rel-inputs")
    make_model_dir(root / "models" / "M1", seed=0)
    return root


def _place(kind, path: Path) -> None:
    if kind is None:
        return
    if kind == "DIR":
        path.mkdir()
    elif callable(kind):
        kind(path)
    else:
        path.write_bytes(kind)


def _cases():
    for command, table in EXPECTED.items():
        if not _available(command):  # a command of a branch not merged yet
            continue
        for name, expected in table.items():
            if expected is None:
                continue
            marks = [pytest.mark.slow] if name in SLOW_INPUTS else []
            yield pytest.param(command, name, expected, id=f"{command}-{name}", marks=marks)


@pytest.mark.parametrize(("command", "input_name", "expected"), list(_cases()))
def test_text_input(command, input_name, expected, workdir, tmp_path, monkeypatch, capsys) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "models").symlink_to(workdir / "models")
    _place(INPUTS[input_name], case / "input.txt")
    result = run_inprocess(COMMANDS[command]("input.txt"), case, monkeypatch, capsys)
    check(result, expected)
    if expected == "ok" and command == "decode":
        assert result.out.strip() and "<unk>" not in result.out


# --------------------------------------------------------------------------------------------
# stdin
# --------------------------------------------------------------------------------------------
STDIN = {
    # name -> (shell prefix that sets up fd 0, expected)
    "closed stdin": ("exec 0<&-;", "error: stdin"),
    "stdin from /dev/null": ("exec 0</dev/null;", "error: stdin: is empty"),
}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "setup", "expected"), [pytest.param(n, *v, id=n) for n, v in STDIN.items()])
def test_decode_stdin(name, setup, expected, workdir) -> None:
    result = run_subprocess(sumpipe_argv("decode", "-m", "M1", "-"), workdir, timeout=120, shell_prefix=setup)
    check(result, expected)


# --------------------------------------------------------------------------------------------
# Option values
# --------------------------------------------------------------------------------------------
OPTIONS = {
    "--beam 0": (["--beam", "0"], "error: --beam: must be >= 1"),
    "--beam -1": (["--beam", "-1"], "error: --beam: must be >= 1"),
    "--beam 1000": (["--beam", "1000"], "ok"),
    "--max-length 0": (["--max-length", "0"], "error: --max-length: must be >= 1"),
    "--min-length > --max-length": (["--min-length", "9", "--max-length", "3"],
                                    "error: --min-length: must be <= --max-length"),
    "--top-p 2": (["--sample", "--top-p", "2"], "error: --top-p: must be in (0, 1]"),
    "--temperature 0": (["--sample", "--temperature", "0"], "error: --temperature: must be > 0"),
    "--top-k -5": (["--sample", "--top-k", "-5"], "error: --top-k: must be >= 0"),
    "--model ../../etc": (["--model", "../../etc"], "error: unknown model '../../etc'"),
    "--model /etc": (["--model", "/etc"], "error: unknown model '/etc'"),
    "--model M9": (["--model", "M9"], "error: unknown model 'M9'"),
    "--greedy --sample": (["--greedy", "--sample"], "error: --greedy and --sample exclude each other"),
    # above the implied maximum (1.2 x the model's 8 summary tokens) it was silently cut
    "--min-length 500": (["--min-length", "500"], "error: --min-length (decode.min_length) 500 is above the longest"),
    "--min-length 500 --max-length 600": (["--min-length", "500", "--max-length", "600", "--greedy"], "ok"),
}


@pytest.mark.parametrize(("args", "expected"), [pytest.param(*v, id=k) for k, v in OPTIONS.items()])
def test_decode_option(args, expected, workdir, monkeypatch, capsys) -> None:
    (workdir / "article.txt").write_text(ARTICLE, encoding="utf-8")
    model = [] if "--model" in args else ["-m", "M1"]
    result = run_inprocess(["decode", *model, *args, "article.txt"], workdir, monkeypatch, capsys)
    check(result, expected)


ROUGE_OPTIONS = {
    "--bootstrap 0": (["--bootstrap", "0"], "error: --bootstrap"),
    "--column absent (JSONL)": (["--column", "nope"], "error: row 1 has no field 'nope'"),
}


@pytest.mark.parametrize(("args", "expected"), [pytest.param(*v, id=k) for k, v in ROUGE_OPTIONS.items()])
def test_rouge_option(args, expected, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "s.jsonl").write_text('{"summary": "the cat sat"}\n', encoding="utf-8")
    result = run_inprocess(["rouge", *args, "s.jsonl", "s.jsonl"], tmp_path, monkeypatch, capsys)
    check(result, expected)


def test_rouge_column_on_text_files_is_refused(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a.txt").write_text("the cat sat\n", encoding="utf-8")
    result = run_inprocess(["rouge", "--column", "x", "a.txt", "a.txt"], tmp_path, monkeypatch, capsys)
    check(result, "error: a.txt: plain text (one summary per line) has no column 'x'")


# --------------------------------------------------------------------------------------------
# Endless streams: several documents are read up to a cap, then a clear error
# --------------------------------------------------------------------------------------------
class _Endless(io.RawIOBase):
    """A stdin that never ends (`yes the cat sat |`)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        line = b"the cat sat on the mat .\n"
        n = len(buffer)
        buffer[:n] = (line * (n // len(line) + 1))[:n]
        return n


@pytest.mark.parametrize("mode", ["--per-line", "--per-block"])
def test_endless_stdin_is_refused_at_the_cap(mode, workdir, monkeypatch, capsys) -> None:
    import sumpipe.decode.interactive as interactive

    monkeypatch.setattr(interactive, "MAX_STREAM_BYTES", 1 << 20)  # the same check, 1 MB instead of 256
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(_Endless())))
    result = run_inprocess(["decode", "-m", "M1", mode, "-"], workdir, monkeypatch, capsys)
    check(result, "error: stdin: larger than 1 MB, the most one run reads")


@pytest.mark.faults  # reads 256 MB from a pipe: ~20 s on 2 cores
def test_endless_pipe_is_refused_at_the_real_cap(workdir) -> None:
    result = run_subprocess(sumpipe_argv("decode", "-m", "M1", "--per-line", "-"), workdir, timeout=300,
                            shell_prefix="yes 'the cat sat on the mat .' |")
    check(result, "error: stdin: larger than 256 MB")
