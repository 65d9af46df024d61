"""Read one column of summaries from a text, JSON Lines or Parquet file (for `sumpipe rouge`).

- `*.parquet`: a column by name;
- `*.jsonl`, `*.json` (one object per line), optionally `.gz`: a field by name; a dotted name
  reaches into nested objects (`system_outputs.ptgen`);
- anything else (optionally `.gz`): plain text, one summary per line (it has no columns: naming one
  is an error rather than silently ignored);
  a line is one sentence for ROUGE-Lsum, so use JSONL or Parquet for multi-sentence summaries.

A value may be a list of strings: several references for one example (scored as `score_multi`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sumpipe.errors import SumpipeError
from sumpipe.inputs import data_rows_limit, open_regular
from sumpipe.io.userfiles import iter_text_lines, read_jsonl, read_user_table, too_many_rows, user_table_columns

PREDICTION_COLUMNS = ("prediction", "summary", "hypothesis", "output")
REFERENCE_COLUMNS = ("references", "reference", "target", "summary")


def _suffixes(path: Path) -> list[str]:
    suffixes = [s.lower() for s in path.suffixes]
    return suffixes[:-1] if suffixes and suffixes[-1] == ".gz" else suffixes


def file_kind(path: Path) -> str:
    suffixes = _suffixes(path)
    last = suffixes[-1] if suffixes else ""
    if last == ".parquet":
        return "parquet"
    if last in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    return "lines"


def _lookup(record: Any, dotted: str) -> Any:
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(dotted)
        value = value[part]
    return value


def _pick(available: list[str], column: str | None, defaults: tuple[str, ...], path: Path) -> str:
    if column is not None:
        return column
    for name in defaults:
        if name in available:
            return name
    if len(available) == 1:
        return available[0]
    raise SumpipeError(f"{path}: say which column to score with --column/--ref-column "
                       f"(columns: {', '.join(available)})")


def _normalise(value: Any, path: Path, row: int) -> str | list[str]:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value) and value:
        return list(value)
    raise SumpipeError(f"{path}: row {row + 1}: expected a string or a list of strings, got {type(value).__name__}")


def read_summaries(path: str | Path, column: str | None = None,
                   defaults: tuple[str, ...] = PREDICTION_COLUMNS) -> list[str | list[str]]:
    """The summaries in `path` (see the module docstring), one per example."""
    path = Path(path)
    with open_regular(path):  # a missing file, a folder, a named pipe or a device: one line, at once
        pass
    kind = file_kind(path)
    if kind == "lines" and column is not None:
        raise SumpipeError(f"{path}: plain text (one summary per line) has no column {column!r}; "
                           "drop --column/--ref-column or give a .jsonl or .parquet file")
    if kind == "parquet":
        return _read_parquet(path, column, defaults)
    if kind == "lines":
        lines: list[str | list[str]] = []
        limit = data_rows_limit()
        for line, repaired in iter_text_lines(path):
            if repaired:
                raise SumpipeError(f"{path}: not UTF-8 text")
            if len(lines) == limit:
                raise too_many_rows(path, limit)
            lines.append(line)
        return lines
    return _read_jsonl(path, column, defaults)


def _read_parquet(path: Path, column: str | None, defaults: tuple[str, ...]) -> list[str | list[str]]:
    names = user_table_columns(path)  # the summaries' column alone is read: a system file may hold more
    name = _pick(names, column, defaults, path)
    if name not in names:
        raise SumpipeError(f"{path}: no column {name!r} (columns: {', '.join(names)})")
    values = read_user_table(path, columns=[name]).column(0).to_pylist()
    return [_normalise(v, path, i) for i, v in enumerate(values)]


def _read_jsonl(path: Path, column: str | None, defaults: tuple[str, ...]) -> list[str | list[str]]:
    records, repaired = read_jsonl(path)
    if repaired:
        raise SumpipeError(f"{path}: not UTF-8 text")
    if not records:
        return []
    name = _pick(list(records[0]), column, defaults, path)
    out = []
    for row, record in enumerate(records):
        try:
            out.append(_normalise(_lookup(record, name), path, row))
        except KeyError:
            raise SumpipeError(f"{path}: row {row + 1} has no field {name!r} (fields: {', '.join(record)})") from None
    return out
