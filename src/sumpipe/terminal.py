"""What reaches the terminal: untrusted text escaped, and stdout checked.

A model card, a corpus, a file name or an input text can hold control characters. Printed raw, an
escape sequence can move the cursor, recolour or rewrite lines (a card's dataset name could forge an
`error:` line, or hide one), a carriage return can overwrite what was printed, and a bidi override can
reorder a line. `printable` escapes them (as `\\u001b`, valid inside a JSON string too), and also the
lone surrogates that stand for the undecodable bytes of a file name that is not UTF-8 (a strict
UTF-8 stdout would raise on those).

`checked_stdout` makes an error of writing to stdout (a full disk behind `> file`, a reader that closed
the pipe) a `StdoutError`, so the CLI ends such a run in one line instead of a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import sys
from collections.abc import Iterator

from sumpipe.errors import SumpipeError

# C0 controls but tab and newline (handled by `printable`'s flags), DEL, C1 controls (NEL among them), the
# Unicode line and paragraph separators (U+2028, U+2029: a line break to Python's `splitlines` and to some
# terminals, so a card's "pydoc\u2028error: forged" would read as a second line), the bidi marks (LRM, RLM,
# ALM), embeddings, overrides and isolates, and lone surrogates. tests/test_terminal.py derives the same set
# from the Unicode database (categories Cc, Cs, Zl, Zp; bidi classes of the controls) and compares.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_UNSAFE_WITH_LINES = re.compile(f"[\n\t]|{_UNSAFE.pattern}")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str, lines: bool = False) -> str:
    """`text` safe to print: control characters, bidi controls and lone surrogates become `\\uXXXX`.
    With `lines`, newlines and tabs are kept (a summary's sentence breaks); without, they are escaped
    too, so the result is one line (an `error:` message stays one line whatever it quotes)."""
    pattern = _UNSAFE if lines else _UNSAFE_WITH_LINES
    return pattern.sub(_escape, text) if pattern.search(text) else text


def echo(message: str, err: bool = False, lines: bool = False) -> None:
    """Print a line a command composed (to stderr with `err`), escaped by `printable`: whatever it quotes
    (a file name, a model's or a data set's name from a card or params.yaml, a path) cannot forge or hide
    a line. Every command prints through it; `lines` keeps the line breaks of a multi-line text (a table)."""
    import typer

    typer.echo(printable(message, lines=lines), err=err)


class StdoutError(SumpipeError):
    """stdout refused a write: a full disk or quota behind `> file`, a reader that closed the pipe."""


class _CheckedStdout(io.TextIOWrapper):
    """The process's stdout, whose refused writes raise StdoutError (a one-line SumpipeError) instead of
    an OSError that names no file: an error of writing to stdout is then told from any other."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as exc:
            raise _stdout_error(exc) from None

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            raise _stdout_error(exc) from None


def _stdout_error(exc: OSError) -> StdoutError:
    if exc.errno == errno.EPIPE:
        return StdoutError("stdout: the reader closed the pipe; the output is incomplete")
    return StdoutError(f"stdout: cannot write ({exc.strerror or exc}); the output is incomplete")


@contextlib.contextmanager
def checked_stdout() -> Iterator[None]:
    """Within it, sys.stdout (when it is the process's own) raises StdoutError on a refused write."""
    original = sys.stdout
    if original is None or original is not sys.__stdout__ or not isinstance(original, io.TextIOWrapper):
        yield  # a test's captured stream, or no stdout at all
        return
    original.flush()
    checked = _CheckedStdout(original.buffer, encoding=original.encoding, errors=original.errors,
                             line_buffering=original.line_buffering, write_through=original.write_through)
    sys.stdout = checked
    try:
        yield
        checked.flush()
    finally:
        sys.stdout = original
        try:
            checked.detach()  # the buffer stays open: it is the interpreter's stdout
        except (OSError, ValueError):
            pass


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's final flush of what stdout still holds
    cannot fail a second time ("Exception ignored ... BrokenPipeError" after our one line)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass
