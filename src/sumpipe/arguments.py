"""The Python API's arguments, checked where they enter (`sumpipe.load`, `Summarizer.summarize`,
`sumpipe.load_extractive`, `ExtractiveSummarizer.summarize`, `sumpipe.rouge`; docs/api.md).

docs/api.md promises that every error is one `SumpipeError`: a wrong type used to surface as whatever
the code it reached raised (`summarize(b"...")`: "object of type 'int' has no len()", `summarize(Path(...))`:
"'PosixPath' object is not iterable", `rouge(bootstrap=-1)`: numpy's "negative dimensions"). Each
function here takes one argument and its name and returns it checked, or raises one line naming the
argument, what it must be and what it got (with what to do for the usual mistakes: bytes, a path).
Text with a NUL byte is refused as the command refuses such a file (binary data, not text). A bool is
not taken for a number (`sentences=True` is a mistake, not 1).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

from sumpipe.errors import SumpipeError

DEVICES = ("auto", "cpu", "cuda")


def _got(value: Any) -> str:
    """What a wrong argument is, for the error line, with the fix for the usual mistakes."""
    if isinstance(value, (bytes, bytearray)):
        return "bytes (decode them first: data.decode('utf-8'))"
    if isinstance(value, os.PathLike):
        return f"a path ({os.fspath(value)!r}); read the file first: Path(...).read_text()"
    if value is None:
        return "None"
    shown = repr(value)
    return f"{type(value).__name__} {shown[:40]}{'...' if len(shown) > 40 else ''}"


def _refuse(name: str, expected: str, value: Any) -> SumpipeError:
    return SumpipeError(f"{name}: expected {expected}, got {_got(value)}")


def text(value: Any, name: str) -> str:
    """`value`, a str without NUL bytes."""
    if not isinstance(value, str):
        raise _refuse(name, "a string", value)
    nul = value.find("\0")
    if nul >= 0:
        raise SumpipeError(f"{name}: holds a NUL byte (character {nul:,}): binary data, not text "
                           "(the command refuses such a file too)")
    return value


def texts(value: Any, name: str = "texts") -> tuple[list[str], bool]:
    """(the texts, whether one string was given) of a str or an iterable of str (a list, a tuple, a
    pandas Series); each text checked by `text` and named by its index (`texts[3]`)."""
    if isinstance(value, str):
        return [text(value, name)], True
    if isinstance(value, (bytes, bytearray, os.PathLike, Mapping)) or not isinstance(value, Iterable):
        raise _refuse(name, "a string or a list of strings", value)
    return [text(item, f"{name}[{i}]") for i, item in enumerate(value)], False


def references(value: Any, name: str = "references") -> list[str | list[str]]:
    """`sumpipe.rouge`'s references: a str, or an iterable whose items are each a str or a list of str
    (several references of one summary)."""
    if isinstance(value, str):
        return [text(value, name)]
    if isinstance(value, (bytes, bytearray, os.PathLike, Mapping)) or not isinstance(value, Iterable):
        raise _refuse(name, "a string or a list of strings (or of lists of strings)", value)
    return [text(item, f"{name}[{i}]") if isinstance(item, str) else texts(item, f"{name}[{i}]")[0]
            for i, item in enumerate(value)]


def whole(value: Any, name: str, minimum: int | None = None) -> int:
    """`value`, an int (not a bool) of at least `minimum`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise _refuse(name, "an int", value)
    if minimum is not None and value < minimum:
        raise SumpipeError(f"{name}: must be >= {minimum}, got {value}")
    return value


def optional_whole(value: Any, name: str, minimum: int | None = None) -> int | None:
    return None if value is None else whole(value, name, minimum)


def flag(value: Any, name: str) -> bool:
    """`value`, a bool (`"no"` is a true string, so no other type is taken)."""
    if not isinstance(value, bool):
        raise _refuse(name, "True or False", value)
    return value


def fraction(value: Any, name: str) -> float:
    """`value`, a finite number strictly between 0 and 1."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _refuse(name, "a number in (0, 1)", value)
    if not (math.isfinite(value) and 0 < value < 1):
        raise SumpipeError(f"{name}: must be in (0, 1), got {value}")
    return float(value)


def path(value: Any, name: str) -> str | os.PathLike[str]:
    """`value`, a str or an os.PathLike of str (not bytes), without a NUL byte."""
    if not isinstance(value, (str, os.PathLike)) or isinstance(os.fspath(value), bytes):
        raise _refuse(name, "a folder or file name (str or Path)", value)
    if "\0" in os.fspath(value):
        raise SumpipeError(f"{name}: holds a NUL byte, which no file name can")
    return value


def optional_path(value: Any, name: str) -> str | os.PathLike[str] | None:
    return None if value is None else path(value, name)


def seeds(value: Any, name: str = "seeds") -> list[int] | None:
    """None, or an iterable of seeds (ints >= 0)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise _refuse(name, "a list of seeds (ints)", value)
    return [whole(seed, f"{name}[{i}]", 0) for i, seed in enumerate(value)]


def device(value: Any, name: str = "device") -> str | None:
    """None (params.yaml's `decode.device`) or one of DEVICES."""
    if value is not None and value not in DEVICES:
        raise SumpipeError(f"{name}: must be one of {', '.join(map(repr, DEVICES))}, got {_got(value)}")
    return value
