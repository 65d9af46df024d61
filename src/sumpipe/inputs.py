"""Files given by the user, read within bounds: the one reader of params files, corpora, summaries to
score, raw text to summarise and model cards.

- Only regular files are read. A named pipe (FIFO) without a writer would block `open()` forever,
  and a device (`/dev/zero`) never ends: both are one-line errors, found without blocking (the file is
  opened non-blocking and checked before a byte is read).
- Every read has a byte cap (`read_capped`): a file past it is a one-line error naming the file and
  the cap, decided before the file is held in memory. A `.gz` file is decompressed as a stream, so
  the cap bounds what it decompresses to (a gzip bomb stops at the cap, not at the end of memory).
- A `.gz` file is also bounded by what gzip can do that text cannot (`GzipLimits`): at most 8 GiB once
  decompressed, and at most 100 times its compressed size (real text compresses 2-10 times; a gzip
  bomb, 1,000 times), checked as it streams, so a bomb stops after ~100 MiB of output, in a second, not
  after minutes of parsing. The `local` corpus raises both with `data.options.local` keys.
- JSON nested deeper than Python's recursion limit (`[[[[...]]]]`) is a one-line error, not a
  RecursionError (`loads_json`); so is a number no stage can use (an integer of thousands of digits,
  `1e999`, NaN), naming the key.

The caps on data follow the memory this process may use (`sumpipe.validation.memory_budget_bytes`:
RAM, or an address-space or cgroup limit when lower): `data_bytes_limit()` is an eighth of it, enough
for a corpus to be parsed, split and written without exhausting memory (512 MiB under a 4 GiB limit).
docs/reliability.md lists every limit.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sumpipe.errors import SumpipeError
from sumpipe.validation import memory_budget_bytes

CHUNK = 1 << 20
MEMORY_SHARE = 8          # a data file (decompressed) may take 1/8 of the memory budget
MIN_DATA_BYTES = 64 << 20  # ... but never less than this, however small the budget looks
ROW_BYTES = 2048          # memory budgeted per corpus row (measured: ~900 bytes a short row in `download`)
MAX_GUNZIPPED_GIB = 8.0   # a .gz file, decompressed: a 1 GB corpus is ~1 GB of text (and ~0.3 GB of gzip)
MAX_INFLATION = 100.0     # decompressed / compressed: text is 2-10 (the shared corpora: 2-3), a gzip bomb ~1,000
INFLATION_FLOOR = 64 << 20  # the ratio is judged past this much output (a small file of one line repeated
#                             may compress 100 times and more, and costs nothing)


@dataclass(frozen=True)
class GzipLimits:
    """What a `.gz` input may inflate to: `max_gib` GiB once decompressed, and `max_ratio` times the
    compressed bytes read so far (judged past INFLATION_FLOOR bytes of output). `option` names the
    setting that raises them (a params key prefix, e.g. `data.options.local`), for the error line."""

    max_gib: float = MAX_GUNZIPPED_GIB
    max_ratio: float = MAX_INFLATION
    option: str = ""

    @property
    def max_bytes(self) -> int:
        return int(self.max_gib * (1 << 30))

    def raise_with(self, key: str) -> str:
        return f"raise {self.option}.{key}" if self.option else "see docs/reliability.md#limits"


GZIP_DEFAULTS = GzipLimits()

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def size_text(n: int) -> str:
    """`n` bytes for a message: "512 MiB", "1 MiB", "1.5 GiB", "300 bytes"."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{n} bytes"


def data_bytes_limit() -> int:
    """The most a data file given by the user may hold once decompressed (see the module docstring)."""
    budget = memory_budget_bytes()
    return max(MIN_DATA_BYTES, budget // MEMORY_SHARE) if budget else 1 << 40


def data_rows_limit() -> int:
    """The most rows a corpus given by the user may hold (its files together)."""
    budget = memory_budget_bytes()
    return max(100_000, budget // ROW_BYTES) if budget else 1 << 40


def file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is ("a named pipe (FIFO)"), None for a regular file."""
    return next((kind for test, kind in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "a special file")


def present_but_not_a_file(path: str | os.PathLike) -> str | None:
    """What is at `path` when something is there but no regular file ("a directory", "a broken symbolic
    link", ...); None when `path` is a regular file or nothing is there at all."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a broken symbolic link" if os.path.islink(path) else None
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    return file_kind(mode)


def open_regular(path: str | os.PathLike, hint: str = "") -> BinaryIO:
    """`path` opened for binary reading, if it is a regular file (symlinks followed). Anything else is a
    one-line SumpipeError naming it, raised at once: a FIFO is opened non-blocking, so a pipe nobody
    writes to cannot hang the command. `hint` is added to the refusal of a non-regular file."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SumpipeError(f"{path}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise SumpipeError(f"{path}: is a directory, not a file") from None
        raise SumpipeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise SumpipeError(f"{path}: is {kind}, not a regular file{hint}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_gzip_name(path: str | os.PathLike) -> bool:
    return Path(path).name.lower().endswith(".gz")


def _raw_chunks(raw: BinaryIO, path: Path) -> Iterator[bytes]:
    while True:
        try:
            chunk = raw.read(CHUNK)
        except OSError as exc:
            raise SumpipeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        if not chunk:
            return
        yield chunk


def _gunzipped(chunks: Iterator[bytes], path: Path, limits: GzipLimits = GZIP_DEFAULTS) -> Iterator[bytes]:
    """Gzip data (one or more members) decompressed as a stream, at most CHUNK bytes at a time; past
    `limits.max_ratio` times the compressed bytes consumed (once INFLATION_FLOOR bytes are out), a
    one-line SumpipeError naming the file, the ratio and the option that raises it."""
    inflate, open_member = zlib.decompressobj(wbits=31), False  # wbits 31: gzip header and trailer
    fed = produced = 0
    try:
        for data in chunks:
            fed += len(data)
            while data:
                if inflate.eof:  # the next member of a concatenated .gz, maybe after zero padding
                    data = data.lstrip(b"\0")
                    if not data:
                        break
                    inflate = zlib.decompressobj(wbits=31)
                if not open_member and not data.startswith(b"\x1f\x8b"[:len(data)]):
                    raise SumpipeError(f"{path}: cannot read (Not a gzipped file ({data[:2]!r}))")
                open_member = True
                out = inflate.decompress(data, CHUNK)
                data = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
                open_member = not inflate.eof
                produced += len(out)
                consumed = max(1, fed - len(data))
                if produced > INFLATION_FLOOR and produced > limits.max_ratio * consumed:
                    raise SumpipeError(
                        f"{path}: inflates more than {limits.max_ratio:g} times ({size_text(produced)} from "
                        f"{size_text(consumed)} of gzip so far): a gzip bomb, not text "
                        f"({limits.raise_with('max_inflation')} if it is real)")
                if out:
                    yield out
    except zlib.error as exc:
        raise SumpipeError(f"{path}: cannot read (not valid gzip: {exc})") from None
    if open_member:
        raise SumpipeError(f"{path}: cannot read (the gzip data ends early: a cut .gz file)")


def iter_chunks(path: str | os.PathLike, max_bytes: int, what: str = "a file", hint: str = "",
                gzip: GzipLimits = GZIP_DEFAULTS) -> Iterator[bytes]:
    """The bytes of regular file `path` in chunks, gunzipped as a stream when its name ends in .gz; past
    `max_bytes` (of decompressed data) a one-line SumpipeError naming the file, `what` it is and the cap.
    A .gz file is held to `gzip` too (its decompressed size and inflation ratio, `GzipLimits`)."""
    path = Path(path)
    total, gzipped = 0, is_gzip_name(path)
    with open_regular(path, hint) as raw:
        chunks = _raw_chunks(raw, path)
        if gzipped:
            chunks = _gunzipped(chunks, path, gzip)
        for chunk in chunks:
            total += len(chunk)
            if gzipped and total > gzip.max_bytes and gzip.max_bytes < max_bytes:
                raise SumpipeError(f"{path}: larger than {size_text(gzip.max_bytes)} once decompressed, the most "
                                   f"{what} may hold ({gzip.raise_with('max_gunzipped_gib')} if it is real)")
            if total > max_bytes:
                more = " once decompressed" if gzipped else ""
                raise SumpipeError(f"{path}: larger than {size_text(max_bytes)}{more}, the most {what} may hold "
                                   "(docs/reliability.md#limits)")
            yield chunk


def read_capped(path: str | os.PathLike, max_bytes: int, what: str = "a file", hint: str = "",
                gzip: GzipLimits = GZIP_DEFAULTS) -> bytes:
    """The whole of regular file `path` (gunzipped when named .gz), at most `max_bytes`: `iter_chunks`."""
    return b"".join(iter_chunks(path, max_bytes, what, hint, gzip))


def iter_lines(path: str | os.PathLike, max_bytes: int, what: str = "a file",
               gzip: GzipLimits = GZIP_DEFAULTS) -> Iterator[bytes]:
    """The lines of `path` (`iter_chunks`), each with its line end, split at LF only: the caller splits
    CR itself where it means a line end. Never more than one line plus one chunk is held at once."""
    pending = b""
    for chunk in iter_chunks(path, max_bytes, what, gzip=gzip):
        pending += chunk
        start = 0
        while True:
            end = pending.find(b"\n", start)
            if end < 0:
                break
            yield pending[start:end + 1]
            start = end + 1
        pending = pending[start:]
    if pending:
        yield pending


MAX_INT_DIGITS = 308  # the longest integer that is surely a finite float (10**308 < 1.8e308); Python's
#                       int() refuses more than 4,300 digits with a ValueError, float() past ~1.8e308 overflows


class _Unreadable:
    """Stands in, while parsing, for a number the project cannot use; `why` says why."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _number_hooks() -> tuple[list[_Unreadable], dict[str, Any]]:
    """`json.loads` hooks that parse every number as usual but put an `_Unreadable` in the place of an
    integer longer than MAX_INT_DIGITS, a float that overflows and NaN/Infinity (which JSON itself does
    not allow); the list collects them, so a clean document costs no walk."""
    found: list[_Unreadable] = []

    def unreadable(why: str) -> _Unreadable:
        found.append(_Unreadable(why))
        return found[-1]

    def parse_int(text: str) -> int | _Unreadable:
        digits = len(text) - text.startswith("-")
        if digits > MAX_INT_DIGITS:
            return unreadable(f"a number of {digits:,} digits, too large to read (at most {MAX_INT_DIGITS})")
        return int(text)

    def parse_float(text: str) -> float | _Unreadable:
        value = float(text)
        if not math.isfinite(value):
            return unreadable(f"the number {text[:20]}{'...' if len(text) > 20 else ''} overflows "
                              "(not a finite number)")
        return value

    def parse_constant(text: str) -> _Unreadable:
        return unreadable(f"{text} is not a finite number")

    return found, {"parse_int": parse_int, "parse_float": parse_float, "parse_constant": parse_constant}


def _key_of(value: Any, target: _Unreadable) -> str:
    """The key path (`human_scores.A.coherence`, `items[3]`) of `target` within `value`, found without
    recursion (JSON may nest ~1,000 levels); "" at the top level."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))
    return ""


def loads_json(text: str | bytes, where: str) -> Any:
    """`json.loads(text)`; invalid JSON and JSON nested deeper than Python can parse are one-line
    SumpipeErrors naming `where` (a file, or `file:line`). So is a number the project cannot use: an
    integer of more than MAX_INT_DIGITS digits (past 4,300, `int()` itself raises ValueError; past 308 it
    overflows a float), a float that overflows (`1e999`) and NaN/Infinity (not JSON, though Python reads
    them); the line names the key (`human_scores.A.coherence`)."""
    found, hooks = _number_hooks()
    try:
        value = json.loads(text, **hooks)
    except RecursionError:
        raise SumpipeError(f"{where}: JSON nested too deeply (more than ~1,000 levels)") from None
    except json.JSONDecodeError as exc:
        raise SumpipeError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError:
        raise SumpipeError(f"{where}: not valid JSON (not UTF-8 text)") from None
    if found:
        key = _key_of(value, found[0])
        raise SumpipeError(f"{where}: {'key ' + key + ': ' if key else ''}{found[0].why}")
    return value
