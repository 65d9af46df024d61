"""The preprocessing of Morozovskii 2022 (Alg. 2) on one document, and the `preprocess` stage on a corpus.

`preprocess_text` turns raw text into the text convention every later artifact uses: lowercased
ASCII tokens separated by single spaces, sentences separated by "\\n". In order:

1. repair broken encodings (mojibake, U+FFFD) and remove extra symbols (HTML, PTB escapes, the
   "(CNN) --" byline) — `ascii.repair_encoding`, `clean.remove_extra_symbols`;
2. split sentences with Punkt on the cleaned, cased text — `sentences.split_sentences`;
3. lowercase; separate the possessive "'s"; fold to ASCII ("£" -> "#") — `tokenize.split_possessive`,
   `ascii.to_ascii`;
4. tokenize with the (fixed) NLTK-book regular expression and join with single spaces —
   `tokenize.tokenize_lines`;
5. expand contractions from a hand-written dictionary — `contractions.expand_contractions`.

Running it on text that is already preprocessed (Gigaword: lowercased PTB tokens, "#" digit masks,
"UNK", "-lrb-") changes nothing harmful: escapes and quotes go, "<unk>"/"UNK" become "unk", "#"
masks and PTB contractions ("does n't" -> "does not") are handled.

The stage (`preprocess`) maps this over every text of `{raw}/{train,valid,test}.parquet` with a
small process pool (order-preserving, so the output is the same for any number of workers), keeps
every column, drops rows left empty or too short, and writes what it did to a metrics file.
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sumpipe.errors import SumpipeError
from sumpipe.names import SPLITS
from sumpipe.text.ascii import repair_encoding, to_ascii
from sumpipe.text.clean import remove_extra_symbols
from sumpipe.text.contractions import expand_contractions
from sumpipe.text.sentences import LineBreaks, split_sentences
from sumpipe.text.tokenize import split_possessive, tokenize_lines

if TYPE_CHECKING:
    from sumpipe.config import PreprocessConfig

MIN_TEXTS_PER_WORKER = 64  # starting a worker process costs about as much as preprocessing 64 texts


# --------------------------------------------------------------------------------------------
# One document
# --------------------------------------------------------------------------------------------
def preprocess_document(raw: str, line_breaks: LineBreaks = "always") -> tuple[str, bool]:
    """Alg. 2 on one document; returns (text convention string, whether the encoding was repaired)."""
    text, repaired = repair_encoding(raw)
    text = remove_extra_symbols(text)
    text = "\n".join(split_sentences(text, line_breaks))
    text = split_possessive(text.lower())
    text = to_ascii(text)
    text = tokenize_lines(text)
    return expand_contractions(text), repaired


def preprocess_sentences(raw: str, line_breaks: LineBreaks = "always") -> list[tuple[str, str]]:
    """Alg. 2 sentence by sentence: (the sentence as written, its preprocessed line) for every
    sentence that keeps a token. "As written" is after step 1 (markup, escapes and bylines removed),
    with its case and punctuation. The lines, joined by "\\n", are `preprocess_text(raw)`: steps 3-5
    work line by line. Extractive summaries use it to print the input's own sentences."""
    text, _ = repair_encoding(raw)
    pairs = []
    for sentence in split_sentences(remove_extra_symbols(text), line_breaks):
        line = expand_contractions(tokenize_lines(to_ascii(split_possessive(sentence.lower()))))
        if line.strip():
            pairs.append((sentence, line))
    return pairs


def preprocess_text(raw: str, line_breaks: LineBreaks = "always") -> str:
    """Alg. 2 on one raw document: tokens joined by " ", sentences by "\\n" ("" if nothing is left)."""
    return preprocess_document(raw, line_breaks)[0]


def count_tokens(text: str) -> int:
    return len(text.split())


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The first `max_tokens` tokens of `text`, keeping its sentence breaks."""
    kept: list[str] = []
    budget = max_tokens
    for line in text.split("\n"):
        tokens = line.split(" ")
        kept.append(" ".join(tokens[:budget]))
        budget -= len(tokens)
        if budget <= 0:
            break
    return "\n".join(kept)


# --------------------------------------------------------------------------------------------
# Many documents
# --------------------------------------------------------------------------------------------
def as_text(value: Any) -> str:
    """A cell of a text column as str: bytes are decoded (bad bytes become U+FFFD), missing is ""."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, float) and math.isnan(value):
        return ""
    return value if isinstance(value, str) else str(value)


def preprocess_many(texts: list[str], line_breaks: LineBreaks = "always", workers: int = 1,
                    desc: str = "preprocess") -> list[tuple[str, bool]]:
    """`preprocess_document` over `texts`, in order, on `workers` processes (1: in this process)."""
    from tqdm import tqdm

    work = functools.partial(preprocess_document, line_breaks=line_breaks)
    progress = functools.partial(tqdm, total=len(texts), desc=desc, unit="doc", disable=None,
                                 file=sys.stderr, leave=False)
    if workers <= 1 or len(texts) < MIN_TEXTS_PER_WORKER * workers:  # a pool would cost more than it saves
        return list(progress(map(work, texts)))
    # Chunks big enough to amortise the pickling, small enough to keep both workers busy to the end.
    chunksize = max(1, min(256, len(texts) // (workers * 16)))
    # Linux: "fork" starts workers at once and never re-runs the caller's __main__ ("spawn" would,
    # and fails when that is a stdin script). Workers run pure Python only, never Arrow, so the idle
    # Arrow threads a fork leaves behind cannot hold anything they need. Elsewhere: "spawn".
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(progress(pool.map(work, texts, chunksize=chunksize)))


# --------------------------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------------------------
@dataclass
class SplitStats:
    """What preprocessing did to one split (written to the metrics file)."""

    rows_in: int = 0
    rows_out: int = 0
    dropped_empty: int = 0        # source or every reference empty (raw, or after preprocessing)
    dropped_short: int = 0        # non-empty but under min_source_tokens / min_reference_tokens
    repaired: int = 0             # rows whose text had mojibake or U+FFFD characters repaired
    empty_references: int = 0     # empty entries removed from a `references` list
    truncated: int = 0            # sources cut to max_source_tokens
    source_tokens: int = 0        # tokens in the kept sources (after truncation)
    reference_tokens: int = 0     # tokens in the kept (first) references
    mean_source_tokens: float = 0.0
    mean_reference_tokens: float = 0.0

    def add(self, other: SplitStats) -> None:
        """Accumulate `other`'s counts (the means are recomputed by `finish`)."""
        for name in ("rows_in", "rows_out", "dropped_empty", "dropped_short", "repaired",
                     "empty_references", "truncated", "source_tokens", "reference_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def finish(self) -> SplitStats:
        if self.rows_out:
            self.mean_source_tokens = round(self.source_tokens / self.rows_out, 4)
            self.mean_reference_tokens = round(self.reference_tokens / self.rows_out, 4)
        return self


@dataclass
class _Split:
    """One raw split while it is processed: its table and the texts it contributes."""

    name: str
    table: Any                    # pyarrow.Table
    sources: list[str]
    references: list[list[str]]   # one list per row: [reference] or the row's `references`
    has_list: bool


def _read_split(path: Path, name: str) -> _Split:
    import pyarrow.parquet as pq

    from sumpipe.io.native import native_path
    from sumpipe.schemas import RAW, plain_columns

    where = native_path(path)  # Arrow opens UTF-8 paths only
    try:
        table = pq.read_table(where, use_threads=False)  # no Arrow threads before the pool forks
    except Exception as exc:  # pyarrow raises several types for a corrupt or non-Parquet file
        raise SumpipeError(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None
    columns = set(table.column_names)
    if "source" not in columns or not columns & {"reference", "references"}:
        raise SumpipeError(f"{path}: needs columns `source` and `reference` or `references` "
                           f"(has: {', '.join(table.column_names)})")
    RAW.check_schema(path, table.schema)  # text (or bytes), never numbers
    table = plain_columns(table)  # dictionary-encoded text (pandas' category) as plain strings
    sources = [as_text(v) for v in table.column("source").to_pylist()]
    has_list = "references" in columns
    if has_list:
        references = [[as_text(r) for r in (refs or [])] for refs in table.column("references").to_pylist()]
    else:
        references = [[as_text(v)] for v in table.column("reference").to_pylist()]
    return _Split(name, table, sources, references, has_list)


def _finish_split(split: _Split, results: Iterable[tuple[str, bool]], cfg: PreprocessConfig) -> tuple[Any, SplitStats]:
    """Apply the row filters to one split's preprocessed texts; return (output table, stats)."""
    import pyarrow as pa

    results = iter(results)
    stats = SplitStats(rows_in=split.table.num_rows)
    keep: list[bool] = []
    sources_out: list[str] = []
    references_out: list[list[str]] = []
    for raw_refs in split.references:
        source, source_repaired = next(results)
        refs = [next(results) for _ in raw_refs]
        stats.repaired += source_repaired or any(repaired for _, repaired in refs)
        refs_text = [text for text, _ in refs if text]
        stats.empty_references += (len(refs) - len(refs_text)) if split.has_list else 0
        if not source or not refs_text:
            stats.dropped_empty += 1
            keep.append(False)
            continue
        n_source, n_reference = count_tokens(source), count_tokens(refs_text[0])
        if n_source < cfg.min_source_tokens or n_reference < cfg.min_reference_tokens:
            stats.dropped_short += 1
            keep.append(False)
            continue
        if cfg.max_source_tokens is not None and n_source > cfg.max_source_tokens:
            source, n_source = truncate_tokens(source, cfg.max_source_tokens), cfg.max_source_tokens
            stats.truncated += 1
        keep.append(True)
        sources_out.append(source)
        references_out.append(refs_text)
        stats.source_tokens += n_source
        stats.reference_tokens += n_reference
    stats.rows_out = len(sources_out)
    stats.finish()

    table = split.table.filter(pa.array(keep, type=pa.bool_()))
    columns = {"source": pa.array(sources_out, type=pa.string())}
    if "reference" in table.column_names or not split.has_list:
        columns["reference"] = pa.array([refs[0] for refs in references_out], type=pa.string())
    if split.has_list:
        columns["references"] = pa.array(references_out, type=pa.list_(pa.string()))
    for name, values in columns.items():
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, values)
        else:
            table = table.append_column(name, values)
    return table, stats


def preprocess(raw_dir: str | os.PathLike, out_dir: str | os.PathLike, cfg: PreprocessConfig,
               metrics_path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """Preprocess `{raw_dir}/{split}.parquet` into `{out_dir}/{split}.parquet`; write and return the stats.

    Every column is kept; `source`, `reference` and each entry of `references` are preprocessed.
    A row is dropped when its source or all its references are empty after preprocessing, or
    shorter than the configured minimum; both are counted, never an error.
    """
    from sumpipe.io.atomic import write_json, write_parquet

    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    paths = {name: raw_dir / f"{name}.parquet" for name in SPLITS}
    present = {name: path for name, path in paths.items() if path.is_file()}
    if not present:
        raise SumpipeError(f"{raw_dir}: no {'/'.join(SPLITS)}.parquet found (run `sumpipe download` first)")
    splits = [_read_split(path, name) for name, path in present.items()]

    texts = [text for split in splits for source, refs in zip(split.sources, split.references)
             for text in (source, *refs)]
    results = iter(preprocess_many(texts, cfg.line_breaks, cfg.workers))

    stats: dict[str, SplitStats] = {}
    tables = {}
    for split in splits:
        tables[split.name], stats[split.name] = _finish_split(split, results, cfg)
    total = SplitStats()
    for split_stats in stats.values():
        total.add(split_stats)
    if total.finish().rows_out == 0:
        raise SumpipeError(f"{raw_dir}: no example left after preprocessing ({total.rows_in} rows read, "
                           "all empty or shorter than preprocess.min_source_tokens/min_reference_tokens)")

    for name, table in tables.items():
        write_parquet(table, out_dir / f"{name}.parquet")
    report = {name: asdict(s) for name, s in stats.items()}
    report["total"] = asdict(total)
    write_json(report, metrics_path)
    return report

