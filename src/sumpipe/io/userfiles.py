"""Files given by the user (a `local` corpus, the summaries `sumpipe rouge` scores): JSON Lines and
Parquet, text gzipped when its name ends in .gz, each read within the limits of `sumpipe.inputs` and
refused in one line naming the file when it is not what it claims. Artifacts the stages wrote are
read with `sumpipe.io.atomic` (`read_table`, `read_parquet`, `read_json`).
"""

from __future__ import annotations

import codecs
import itertools
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sumpipe.errors import SumpipeError
from sumpipe.inputs import (
    GZIP_DEFAULTS,
    GzipLimits,
    data_bytes_limit,
    data_rows_limit,
    iter_lines,
    loads_json,
    open_regular,
    read_capped,
    size_text,
)
from sumpipe.io.native import native_path
from sumpipe.io.text import decode_text, text_encoding, text_lines


def read_bytes(path: Path, max_bytes: int | None = None, gzip: GzipLimits = GZIP_DEFAULTS) -> bytes:
    """The bytes of `path`, gunzipped (as a stream) when its name ends in .gz, at most `max_bytes`
    (default `sumpipe.inputs.data_bytes_limit()`) once decompressed and within `gzip`'s limits; an
    unreadable, non-regular or oversized file is a one-line error naming it."""
    return read_capped(path, data_bytes_limit() if max_bytes is None else max_bytes, "a data file", gzip=gzip)


def iter_text_lines(path: Path, max_bytes: int | None = None,
                    gzip: GzipLimits = GZIP_DEFAULTS) -> Iterator[tuple[str, bool]]:
    """`text_lines` of file `path` as a stream: `read_bytes`'s checks and caps, but a UTF-8 file is
    never held whole (a line at a time; UTF-16/32 files, rare, are decoded whole)."""
    cap = data_bytes_limit() if max_bytes is None else max_bytes
    lines = iter_lines(path, cap, "a data file", gzip)
    first = next(lines, b"")
    if text_encoding(first[:4]) != "utf-8-sig":
        yield from text_lines(first + b"".join(lines))
        return
    for n, raw in enumerate(itertools.chain([first.removeprefix(codecs.BOM_UTF8)], lines)):
        if not raw and n == 0:
            return  # an empty file
        line = raw.removesuffix(b"\n").removesuffix(b"\r")
        for piece in line.split(b"\r"):  # a lone CR ends a line too, as in `text_lines`
            yield decode_text(piece, "utf-8")


MAX_BLANK_LINES = 10_000     # blank lines a JSON Lines file may hold ...
BLANK_LINES_PER_RECORD = 10  # ... past which they may be at most this many per record


def iter_jsonl(path: Path, max_bytes: int | None = None,
               gzip: GzipLimits = GZIP_DEFAULTS) -> Iterator[tuple[int, dict, bool]]:
    """(line number, object, whether bytes were replaced) for each JSON object of a JSON Lines file,
    as a stream (blank lines skipped); a line that is no JSON object, or one nested too deeply, is a
    one-line error naming the file and line. More than MAX_BLANK_LINES blank lines, and more than
    BLANK_LINES_PER_RECORD times the records so far, is an error as soon as it is met: a gzip of blank
    lines compresses a thousand times, and took 42 s to stream through before "no article"."""
    blank = records = 0
    for lineno, (line, fixed) in enumerate(iter_text_lines(path, max_bytes, gzip), start=1):
        if not line.strip():
            blank += 1
            if blank > MAX_BLANK_LINES and blank > BLANK_LINES_PER_RECORD * records:
                raise SumpipeError(f"{path}:{lineno}: {blank:,} blank lines and {records:,} JSON objects so far: "
                                   "not a JSON Lines file (one object a line)")
            continue
        records += 1
        record = loads_json(line, f"{path}:{lineno}")
        if not isinstance(record, dict):
            raise SumpipeError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
        yield lineno, record, fixed


def read_jsonl(path: Path) -> tuple[list[dict], int]:
    """The JSON objects of a JSON Lines file (blank lines skipped) and the number of lines with
    replaced bytes; a line that is no JSON object is a one-line error naming the file and line."""
    records: list[dict] = []
    repaired, limit = 0, data_rows_limit()
    for _, record, fixed in iter_jsonl(path):
        if len(records) == limit:  # a row is a dict: short lines cost far more memory than their bytes
            raise too_many_rows(path, limit)
        repaired += fixed
        records.append(record)
    return records, repaired


def too_many_rows(path: Path, limit: int) -> SumpipeError:
    return SumpipeError(f"{path}: more than {limit:,} rows, the most a file may hold here "
                        "(docs/reliability.md#limits; the limit follows this machine's memory)")


def check_user_table(path: Path, max_rows: int | None = None, max_bytes: int | None = None) -> pq.ParquetFile:
    """A user's Parquet file opened for streaming, once its footer shows it within `max_rows` rows and
    `max_bytes` of uncompressed data (defaults: `sumpipe.inputs`' limits): a Parquet file of a few MB
    can hold millions of rows, so the footer is read first and nothing else until it fits."""
    max_rows = data_rows_limit() if max_rows is None else max_rows
    max_bytes = data_bytes_limit() if max_bytes is None else max_bytes
    try:
        with open_regular(path):  # a FIFO or a device is refused without blocking
            pass
        parquet = pq.ParquetFile(native_path(path))
        meta = parquet.metadata
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except (pa.ArrowException, OSError) as exc:
        raise SumpipeError(f"{path}: not valid Parquet ({(str(exc).splitlines() or [''])[0]})") from None
    if meta.num_rows > max_rows:
        raise SumpipeError(f"{path}: {meta.num_rows:,} rows, more than the {max_rows:,} a file may hold here "
                           "(docs/reliability.md#limits)")
    if size > max_bytes:
        raise SumpipeError(f"{path}: {size_text(size)} once decompressed, more than the {size_text(max_bytes)} "
                           "a file may hold here (docs/reliability.md#limits)")
    return parquet


def read_user_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A Parquet file given by the user (only `columns`, when given), within `check_user_table`'s
    limits; one that is not Parquet is a one-line error."""
    parquet = check_user_table(path)
    try:
        return parquet.read(columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise SumpipeError(f"{path}: not valid Parquet ({(str(exc).splitlines() or [''])[0]})") from None


def user_table_columns(path: Path) -> list[str]:
    """The column names of a user's Parquet file, from its footer (no data read)."""
    try:
        return pq.read_schema(native_path(path)).names
    except (pa.ArrowException, OSError) as exc:
        raise SumpipeError(f"{path}: not valid Parquet ({(str(exc).splitlines() or [''])[0]})") from None
