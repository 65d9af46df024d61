"""The `local` corpus: summarization pairs from JSONL (optionally .gz), CSV or Parquet files.

`data.path` is one file, or a folder whose supported files (searched recursively, in sorted order)
are concatenated. Each row needs `source` and `reference`, or `references` (a list; in CSV a JSON
list) whose first item becomes `reference`. Optional: `id` (else a digest of the text) and `split`
(train/valid/test; also training/validation/val/dev/testing; else the stable hash split).
Other fields are ignored.

What "loads" means for a file without `source` (e.g. ../shared/data/rouge_check, references and
system outputs for `sumpipe rouge`): `read_records` reads it like any other file; as a corpus it
is a one-line error when named on its own, and is skipped (and listed in stats) inside a folder,
so `data.path` may point at a folder that also holds such files.

A `source` stored as a list (of sentences) is joined with "\n".

Options (`data.options.local`, `LocalOptions`) map the corpus's own splits onto sumpipe's train/valid/test:
`splits` renames them (`{valid: test}`) and `resplit` divides the rows of a split again by the stable
id hash under `data.split_ratios`. The Gigaword pairs of ../shared/data come as 25,156 train and 1,036
valid: `{splits: {valid: test}, resplit: [train]}` with ratios {train: 0.96, valid: 0.04, test: 0} makes
the 1,036 the test set and carves a validation split of about 1,000 pairs from train, the same pairs on
every machine (`sumpipe.data.split.stable_split`).
Text is UTF-8 (UTF-16/32 with a byte order mark; `sumpipe.io.text_lines`), invalid bytes replaced;
rows that needed it are counted as repaired.
Rows with an empty source or reference, or a repeated id, are dropped and counted.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sumpipe.config import DataConfig
from sumpipe.data.datasets import DATASETS, Dataset, Rows
from sumpipe.data.split import SPLIT_ALIASES, content_id, normalize_split
from sumpipe.errors import SumpipeError
from sumpipe.inputs import (
    MAX_GUNZIPPED_GIB,
    MAX_INFLATION,
    GzipLimits,
    data_bytes_limit,
    data_rows_limit,
    open_regular,
    size_text,
)
from sumpipe.io.native import native_path
from sumpipe.io.text import decode_text
from sumpipe.io.userfiles import check_user_table, iter_jsonl, read_bytes
from sumpipe.names import Split
from sumpipe.schemas import decoded_bytes
from sumpipe.validation import child_key, require

SUFFIXES = (".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet")


@dataclass
class LocalStats:
    files: list[str] = field(default_factory=list)
    skipped_files: dict[str, str] = field(default_factory=dict)
    rows: int = 0
    repaired_rows: int = 0
    dropped_empty: int = 0
    dropped_duplicate_id: int = 0


def _suffix(path: Path) -> str | None:
    name = path.name.lower()
    return next((s for s in SUFFIXES if name.endswith(s)), None)


def supported_files(path: Path) -> list[Path]:
    """The file itself, or the supported files under a folder in sorted order."""
    if path.is_file():
        if _suffix(path) is None:
            raise SumpipeError(f"{path}: unsupported file type (expected {', '.join(SUFFIXES)})")
        return [path]
    if path.is_dir():
        files = sorted(p for p in _walk(path) if p.is_file() and _suffix(p) is not None)
        if not files:
            raise SumpipeError(f"{path}: folder holds no {', '.join(SUFFIXES)} files")
        return files
    if path.exists():  # a named pipe, a socket, a device: refused without reading (a FIFO would block)
        with open_regular(path):
            pass
    raise SumpipeError(f"{path}: no such file or folder (data.path)")


def _walk(root: Path) -> list[Path]:
    """Every entry under folder `root` (symlinked folders not followed, as `Path.rglob`); a sub-folder
    that cannot be listed is a one-line error naming it, not a PermissionError traceback."""
    def refuse(exc: OSError) -> None:
        raise SumpipeError(f"{exc.filename}: cannot read this entry of data.path ({exc.strerror or exc})")

    entries = []
    for folder, _dirs, names in os.walk(root, onerror=refuse):
        entries += [Path(folder) / name for name in names]
    return entries


LOCAL_GZIP = GzipLimits(option="data.options.local")  # the defaults, named by the key that raises them


def _read_csv(path: Path, max_rows: int, gzip: GzipLimits = LOCAL_GZIP) -> tuple[list[dict], int]:
    import pandas as pd

    text, fixed = decode_text(read_bytes(path, gzip=gzip))
    if not text.strip():
        return [], 0
    if text.count("\n") - 1 > max_rows:  # a header, then rows: pandas would hold them all before we could count
        raise _too_many_rows(path, max_rows)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise SumpipeError(f"{path}: not valid CSV ({str(exc).splitlines()[0]})") from None
    records = frame.to_dict("records")
    repaired = sum(any("\ufffd" in str(v) for v in r.values()) for r in records) if fixed else 0
    return records, repaired


FIELDS = ("id", "source", "reference", "references", "split")  # what a row may carry; other columns are ignored


def _parquet_records(path: Path, max_rows: int) -> Iterator[tuple[dict, bool]]:
    """The rows of a Parquet file (its FIELDS columns), a batch at a time, once its footer shows it
    within the limits. Text is read dictionary-encoded and its decoded size summed before a batch
    becomes Python objects: past `data_bytes_limit()` in all, a one-line error."""
    parquet = check_user_table(path, max_rows=max_rows)
    columns = [name for name in FIELDS if name in parquet.schema_arrow.names]
    text_paths = [parquet.schema.column(i).path for i in range(len(parquet.schema))
                  if parquet.schema.column(i).physical_type == "BYTE_ARRAY"
                  and parquet.schema.column(i).path.split(".")[0] in columns]
    limit, decoded = data_bytes_limit(), 0
    try:
        parquet = pq.ParquetFile(native_path(path), read_dictionary=text_paths)
        for batch in parquet.iter_batches(batch_size=1024, columns=columns):
            decoded += sum(decoded_bytes(column) for column in batch.columns)
            if decoded > limit:
                raise SumpipeError(f"{path}: its text is larger than {size_text(limit)} once decoded, the most a "
                                   "corpus file may hold here (docs/reliability.md#limits)")
            for record in batch.to_pylist():
                fixed = False
                for key, value in record.items():
                    if isinstance(value, bytes):  # binary columns: repair like any other bytes
                        record[key], was_fixed = decode_text(value, "utf-8")
                        fixed |= was_fixed
                yield record, fixed
    except (pa.ArrowException, OSError) as exc:
        raise SumpipeError(f"{path}: not valid Parquet ({(str(exc).splitlines() or [''])[0]})") from None


def iter_records(path: Path, max_rows: int | None = None,
                 gzip: GzipLimits = LOCAL_GZIP) -> Iterator[tuple[dict, bool]]:
    """The rows of one supported file as dicts (fields as stored), each with whether bytes in it were
    replaced, as a stream (JSONL and Parquet are never held whole). At most `max_rows` rows (default:
    `sumpipe.inputs.data_rows_limit()`), `read_bytes`' cap on bytes and, for a .gz file, `gzip`'s limits:
    past any, a one-line error naming the file."""
    max_rows = data_rows_limit() if max_rows is None else max_rows
    suffix = _suffix(path)
    if suffix in (".jsonl", ".jsonl.gz"):
        records: Iterable[tuple[dict, bool]] = ((record, fixed) for _, record, fixed in iter_jsonl(path, gzip=gzip))
    elif suffix in (".csv", ".csv.gz"):
        rows, repaired = _read_csv(path, max_rows, gzip)
        records = ((row, "\ufffd" in "".join(map(str, row.values())) and repaired > 0) for row in rows)
    elif suffix == ".parquet":
        records = _parquet_records(path, max_rows)
    else:
        raise SumpipeError(f"{path}: unsupported file type (expected {', '.join(SUFFIXES)})")
    for n, item in enumerate(records, start=1):
        if n > max_rows:
            raise _too_many_rows(path, max_rows)
        yield item


def read_records(path: Path) -> tuple[list[dict], int]:
    """All rows of one supported file as dicts (fields as stored) and the number of repaired rows."""
    records, repaired = [], 0
    for record, fixed in iter_records(path):
        records.append(record)
        repaired += fixed
    return records, repaired


def _too_many_rows(path: Path, limit: int) -> SumpipeError:
    return SumpipeError(f"{path}: more than {limit:,} rows, the most a corpus may hold here "
                        "(docs/reliability.md#limits; the limit follows this machine's memory)")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value)


def _references(value: Any, path: Path) -> list[str]:
    if isinstance(value, str):  # CSV cells hold a JSON list; a plain string is one reference
        try:
            value = json.loads(value) if value.lstrip().startswith("[") else [value]
        except ValueError:  # not JSON, or a number of thousands of digits (int() refuses it): one reference
            value = [value]
        except RecursionError:
            raise SumpipeError(f"{path}: `references` nested too deeply to be a list of strings") from None
    if hasattr(value, "tolist"):  # numpy arrays from pandas
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise SumpipeError(f"{path}: `references` must be a list of strings, got {type(value).__name__}")
    return [str(v).strip() for v in value if not _missing(v) and str(v).strip()]


def _check_fields(fields: set[str], path: Path) -> None:
    if "reference" not in fields and "references" not in fields:
        found = ", ".join(sorted(fields)) or "none"
        raise SumpipeError(f"{path}: no `reference` or `references` field (found: {found})")


def normalize_record(record: dict, path: Path) -> dict:
    """One row -> {id, source, reference, references, split}; an empty reference/source becomes ""."""
    source = record.get("source")
    if isinstance(source, list):  # a document stored as a list of sentences or paragraphs
        source = "\n".join(str(part).strip() for part in source if not _missing(part))
    source = "" if _missing(source) else str(source).strip()
    refs = [] if _missing(record.get("references")) else _references(record["references"], path)
    reference = "" if _missing(record.get("reference")) else str(record["reference"]).strip()
    if not reference and refs:
        reference = refs[0]
    if not refs and reference:
        refs = [reference]
    split = record.get("split")
    example_id = record.get("id")
    return {
        "id": content_id(source, reference, prefix="local-") if _missing(example_id) else str(example_id),
        "source": source,
        "reference": reference,
        "references": refs,
        "split": None if _missing(split) else normalize_split(split, str(path)),
    }


def normalize_records(records: list[dict], path: Path) -> list[dict]:
    """Rows -> {id, source, reference, references, split}; empty reference/source become ""."""
    _check_fields(set().union(*(r.keys() for r in records)) if records else set(), path)
    return [normalize_record(record, path) for record in records]


_NO_SOURCE: dict[str, Any] = {"id": "", "source": "", "reference": "", "references": [], "split": None}


def load_local(path: str | Path, gzip: GzipLimits = LOCAL_GZIP) -> tuple[list[dict], dict]:
    """Rows of the `local` corpus (split None where the data has none) and stats.

    Each file is read as a stream and each row normalised as it comes, so only the normalised rows
    are held; the files together may hold at most `sumpipe.inputs.data_rows_limit()` rows, and a .gz
    file is held to `gzip` (`LocalOptions.max_gunzipped_gib`, `max_inflation`)."""
    root = Path(path)
    files = supported_files(root)
    stats = LocalStats()
    rows: list[dict] = []
    limit = data_rows_limit()
    for file in files:
        fields: set[str] = set()
        file_rows, repaired = [], 0
        for record, fixed in iter_records(file, max_rows=limit - len(rows), gzip=gzip):
            fields.update(map(str, record))
            repaired += fixed
            # a row without a source is dropped (and counted) below; a file of them all is no corpus
            file_rows.append(normalize_record(record, file) if "source" in record else _NO_SOURCE)
        if not file_rows:
            stats.skipped_files[str(file)] = "no rows"
            continue
        if "source" not in fields:
            found = ", ".join(sorted(fields))
            if root.is_file():
                raise SumpipeError(
                    f"{file}: no `source` field (found: {found}); a corpus needs source and reference(s) "
                    "(files of references and system outputs are for `sumpipe rouge`)"
                )
            stats.skipped_files[str(file)] = f"no `source` field (found: {found})"
            continue
        _check_fields(fields, file)
        stats.files.append(str(file))
        stats.repaired_rows += repaired
        rows.extend(file_rows)
    stats.rows = len(rows)

    kept, seen = [], set()
    for row in rows:
        if not row["source"] or not row["reference"]:
            stats.dropped_empty += 1
        elif row["id"] in seen:
            stats.dropped_duplicate_id += 1
        else:
            seen.add(row["id"])
            kept.append(row)
    if not kept:
        raise SumpipeError(f"{root}: no examples with a source and a reference (empty data set)")
    return kept, vars(stats)


@dataclass(frozen=True)
class LocalOptions:
    """`data.options.local`: how the files' own splits become sumpipe's.

    `splits`: a split as the files name it (any spelling `normalize_split` knows: validation, dev, ...)
    -> the split its rows go to, e.g. `{valid: test}`. `resplit`: splits (after renaming) whose rows are
    divided again by the stable id hash under `data.split_ratios`, exactly as rows without a split are,
    e.g. `[train]` to carve a validation split from the training rows. Applied in that order, to every
    row that has a split. Defaults: the files' splits as they are.

    A `.jsonl.gz` or `.csv.gz` file may inflate to at most `max_gunzipped_gib` GiB (default 8: a 1 GB
    corpus loads) and at most `max_inflation` times its compressed size (default 100: text compresses
    2-10 times, a gzip bomb ~1,000), checked as it streams (`sumpipe.inputs.GzipLimits`); the memory
    limits of docs/reliability.md hold as well."""

    splits: dict[str, Split] = field(default_factory=dict)
    resplit: list[Split] = field(default_factory=list)
    max_gunzipped_gib: float = MAX_GUNZIPPED_GIB
    max_inflation: float = MAX_INFLATION

    @property
    def gzip(self) -> GzipLimits:
        return GzipLimits(self.max_gunzipped_gib, self.max_inflation, "data.options.local")

    def check(self, key: str) -> None:
        require(0 < self.max_gunzipped_gib <= 1024, child_key(key, "max_gunzipped_gib"), "must be in (0, 1024]")
        require(1 <= self.max_inflation <= 1100, child_key(key, "max_inflation"),
                "must be in [1, 1100] (gzip inflates at most ~1,032 times)")
        for name in self.splits:
            require(name.strip().lower() in SPLIT_ALIASES, child_key(child_key(key, "splits"), name),
                    f"not a split name (known: {', '.join(sorted(SPLIT_ALIASES))})")
        require(len(set(self.resplit)) == len(self.resplit), child_key(key, "resplit"), "lists a split twice")

    def split_of(self, split: Split | None) -> Split | None:
        """The split a row of file split `split` goes to (None: the stable hash decides)."""
        if split is None:
            return None
        renamed = {SPLIT_ALIASES[k.strip().lower()]: v for k, v in self.splits.items()}
        split = renamed.get(split, split)
        return None if split in self.resplit else split


def check_local(cfg: DataConfig, key: str) -> None:
    """`local` reads `data.path`: without one, a one-line error before any work."""
    require(bool(cfg.path), f"{key}.path",
            f"required when {key}.dataset is 'local' (a JSONL, CSV or Parquet file or a folder)")


def load_local_dataset(cfg: DataConfig, options: LocalOptions) -> Rows:
    """The `local` data set: the file or folder `cfg.path` (`check_local` makes sure there is one), its
    splits mapped by `options` (the stats count the rows of each file split and where they went)."""
    assert cfg.path is not None
    rows, stats = load_local(cfg.path, options.gzip)
    moved: dict[str, int] = {}
    for row in rows:
        before = row["split"]
        row["split"] = options.split_of(before)
        if row["split"] != before:
            key = f"{before} -> {row['split'] or 'hash'}"
            moved[key] = moved.get(key, 0) + 1
    stats["split_changes"] = dict(sorted(moved.items()))
    return rows, stats


DATASETS.register("local", Dataset(load=load_local_dataset, check=check_local, options=LocalOptions))
