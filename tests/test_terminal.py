"""What reaches the terminal: control sequences escaped, stdout's refusals one line."""

from __future__ import annotations

import errno
import io
import json
import sys

import pytest

from sumpipe.terminal import StdoutError, checked_stdout, printable


@pytest.mark.parametrize(("text", "shown"), [
    ("plain text, 'quoted'", "plain text, 'quoted'"),
    ("red \x1b[31mtext\x1b[0m", "red \\u001b[31mtext\\u001b[0m"),
    ("title \x1b]0;pwned\x07", "title \\u001b]0;pwned\\u0007"),
    ("ok\rerror: forged", "ok\\u000derror: forged"),         # a carriage return cannot overwrite the line
    ("two\nlines\tand a tab", "two\\u000alines\\u0009and a tab"),
    ("csi \x9b2J", "csi \\u009b2J"),                           # the one-byte C1 escape
    ("bidi \u202eevil", "bidi \\u202eevil"),
    ("bad\udcff\udcfename", "bad\\udcff\\udcfename"),          # a file name that is not UTF-8
    ("pydoc\u2028error: forged", "pydoc\\u2028error: forged"),  # a line separator: a line break to splitlines
    ("pydoc\u2029\x85error", "pydoc\\u2029\\u0085error"),       # paragraph separator, NEL
    ("arabic mark \u061c", "arabic mark \\u061c"),
    ("caf\u00e9 \u5317\u4eac", "caf\u00e9 \u5317\u4eac"),      # printable non-ASCII stays
])
def test_printable_escapes_what_could_drive_the_terminal(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert "\n" not in printable(text)
    printable(text).encode("utf-8")  # a strict UTF-8 stdout takes it


def test_printable_escapes_every_line_break_control_and_bidi_control_of_unicode() -> None:
    """The class, not the cases: every code point that ends a line for Python (`str.splitlines`), every
    control (Cc), surrogate (Cs), line or paragraph separator (Zl, Zp) and bidi control is escaped, so no
    string from a file can break the one-line rule or reorder a line; nothing else is."""
    import unicodedata

    bidi_controls = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
    for code in range(0x110000):
        c = chr(code)
        unsafe = (c.splitlines() != [c] or unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp")
                  or unicodedata.bidirectional(c) in bidi_controls or c in "\u200e\u200f\u061c")
        assert (printable(c) == f"\\u{code:04x}") == unsafe, hex(code)
        assert len(printable(f"a{c}b").splitlines()) == 1, hex(code)


def test_printable_keeps_lines_and_tabs_when_asked() -> None:
    assert printable("one\ttwo\nthree\x1b[2J", lines=True) == "one\ttwo\nthree\\u001b[2J"


def test_escaped_text_stays_valid_json() -> None:
    line = printable(json.dumps({"summary": "x\x9by\u202e"}, ensure_ascii=False))
    assert json.loads(line) == {"summary": "x\x9by\u202e"}


class _Full(io.RawIOBase):
    def __init__(self, code: int) -> None:
        self.code = code

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        raise OSError(self.code, "refused")


@pytest.mark.parametrize(("code", "message"), [
    (errno.ENOSPC, "stdout: cannot write (refused); the output is incomplete"),
    (errno.EPIPE, "stdout: the reader closed the pipe; the output is incomplete"),
])
def test_a_refused_write_to_stdout_is_a_stdout_error(code: int, message: str, monkeypatch) -> None:
    stream = io.TextIOWrapper(io.BufferedWriter(_Full(code)), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "__stdout__", stream)
    with pytest.raises(StdoutError, match=message.replace("(", r"\(").replace(")", r"\)")), checked_stdout():
        print("summary")
    assert sys.stdout is stream  # restored


def test_checked_stdout_leaves_a_captured_stream_alone(capsys) -> None:
    before = sys.stdout
    with checked_stdout():
        assert sys.stdout is before
        print("seen")
    assert capsys.readouterr().out == "seen\n"
