"""The extract stage: one input selection per `extract.budgets` entry, for every split

    <out_dir>/<method><N>/{split}.parquet   e.g. ngram200 (Morozovskii 2022 Alg. 1), first400 (the first N tokens)

(methods: `sumpipe.selection.methods`)
with columns id, source (selected text, text convention), reference (, references), n_tokens (int32)
and selected (list<int32>: sentence indices, document order); plus the coverage diagnostic
(`sumpipe.selection.coverage`) per split and selection, `full` being the whole document, written as a
DVC metrics file. Splits are streamed in record batches; each document is scored once and the
analysis (e.g. 3-gram scores) serves every budget of its method. On a large corpus
(`MIN_DOCS_PER_WORKER` per worker) batches go to `extract.workers` spawned processes, results written
in input order: the output does not depend on it.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import multiprocessing
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from sumpipe.config import Budget, ExtractConfig
from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import atomic_path, open_parquet, plain_batches, write_json
from sumpipe.names import SPLITS
from sumpipe.schemas import PROCESSED, plain_columns
from sumpipe.selection.coverage import CoverageStats, coverage_of_hits, reference_hits, reference_words
from sumpipe.selection.methods import FitContext, Selection, apply_selection, resolve_selections
from sumpipe.selection.select import render
from sumpipe.vocab.build import tokenized_sentences

BATCH_ROWS = 256
MIN_DOCS_PER_WORKER = 10_000  # a worker costs ~0.7 s CPU to start (imports, table)


def _columns(names: list[str]) -> list[str]:
    missing = {"id", "source", "reference"} - set(names)
    if missing:
        raise SumpipeError(f"processed data lacks column(s) {', '.join(sorted(missing))}")
    return ["id", "source", "reference"] + (["references"] if "references" in names else [])


def extract_batch(batch: pa.RecordBatch, outputs: list[Selection],
                  states: dict[str, Any]) -> tuple[dict[str, pa.Table], CoverageStats]:
    """Select inputs for one batch of processed examples: one Arrow table per selection name, and the
    batch's coverage sums. `states`: each method's fitted state, by method name."""
    stats = CoverageStats()
    passthrough = {name: batch.column(name) for name in batch.schema.names if name != "source"}
    sources = batch.column("source").to_pylist()
    references = batch.column("reference").to_pylist()
    rows: dict[str, tuple[list[str], list[int], list[list[int]]]] = {s.name: ([], [], []) for s in outputs}
    documents = [tokenized_sentences(source or "") for source in sources]
    # each method analyses a document once (e.g. 3-gram scores); the analysis serves all its budgets
    methods = {s.method.name: s.method for s in outputs}
    analyses = {name: m.prepare(states[name], documents) for name, m in methods.items()}
    for d, (sentences, reference) in enumerate(zip(documents, references)):
        lengths = [len(s) for s in sentences]
        ref_words = reference_words(reference or "")
        hits = [reference_hits(s, ref_words) for s in sentences]  # once per document, for every selection
        stats.add_reference(ref_words)
        stats.add_counts("full", *coverage_of_hits(hits), ref_words)
        for sel in outputs:
            chosen, kept = apply_selection(sel.method, sel.budget, sentences, analyses[sel.method.name][d])
            texts, n_tokens, selected = rows[sel.name]
            texts.append(render(kept))
            n_tokens.append(sum(map(len, kept)))
            selected.append(chosen)
            kept_hits = (hits[i] if len(k) == lengths[i] else reference_hits(k, ref_words)  # k: a cut sentence
                         for i, k in zip(chosen, kept))
            stats.add_counts(sel.name, *coverage_of_hits(kept_hits), ref_words)
            stats.add_binding(sel.name, sum(lengths) > sel.budget.tokens)
            stats.add_choice(sel.name, list(chosen))
    tables = {}
    for name, (texts, n_tokens, selected) in rows.items():
        columns = {"id": passthrough["id"], "source": pa.array(texts, pa.string())}
        columns.update({k: v for k, v in passthrough.items() if k != "id"})
        columns["n_tokens"] = pa.array(n_tokens, pa.int32())
        columns["selected"] = pa.array(selected, pa.list_(pa.int32()))
        tables[name] = pa.table(columns)
    return tables, stats


def fit_methods(outputs: list[Selection], context: FitContext) -> dict[str, Any]:
    """Each method's state, fitted once (by method name)."""
    return {s.method.name: s.method.fit(context) for s in outputs}


@dataclass(frozen=True)
class WorkerJob:
    """What a worker process needs besides the batch: the budgets and where methods fit their state
    (methods hold functions, which do not pickle; this does). Hashable, so a worker fits once per job."""

    budgets: tuple[Budget, ...]
    context: FitContext

    def __hash__(self) -> int:
        return hash(repr(self))


@functools.lru_cache(maxsize=1)
def _fitted(job: WorkerJob) -> tuple[list[Selection], dict[str, Any]]:
    """The job's selections and fitted method states: computed on a worker's first batch, then reused."""
    outputs = resolve_selections(job.budgets)
    return outputs, fit_methods(outputs, job.context)


def _extract_in_worker(batch: pa.RecordBatch, job: WorkerJob) -> tuple[dict[str, pa.Table], CoverageStats]:
    return extract_batch(batch, *_fitted(job))


class BatchRunner:
    """Runs `extract_batch` over batches, in this process or on a pool, results in input order."""

    def __init__(self, budgets: list[Budget], context: FitContext, workers: int) -> None:
        self.outputs = resolve_selections(budgets)
        self.states = fit_methods(self.outputs, context)
        self.job = WorkerJob(tuple(budgets), context)
        self.pool: ProcessPoolExecutor | None = None
        if workers > 1:
            self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        self.window = 2 * workers  # batches in flight: bounded memory, both workers kept busy

    def map(self, batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[dict[str, pa.Table], CoverageStats]]:
        if self.pool is None:
            for batch in batches:
                yield extract_batch(batch, self.outputs, self.states)
            return
        pending: collections.deque[Future] = collections.deque()
        for batch in batches:
            pending.append(self.pool.submit(_extract_in_worker, batch, self.job))
            if len(pending) >= self.window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def extract_split(path: Path, out_dir: Path, runner: BatchRunner, progress: bool = True) -> CoverageStats:
    """Stream one processed split into `<out_dir>/<selection>/<split>.parquet` (atomic writes)."""
    outputs = runner.outputs
    parquet = open_parquet(path, PROCESSED)
    columns = _columns(parquet.schema_arrow.names)
    stats = CoverageStats()
    split = path.stem
    with contextlib.ExitStack() as stack:
        tmp = {s.name: stack.enter_context(atomic_path(out_dir / s.name / f"{split}.parquet")) for s in outputs}
        writers: dict[str, pq.ParquetWriter] = {}
        bar = stack.enter_context(tqdm(total=parquet.metadata.num_rows, desc=f"extract: {split}", unit="doc",
                                       disable=None if progress else True))
        for tables, batch_stats in runner.map(plain_batches(parquet, path, batch_size=BATCH_ROWS, columns=columns)):
            for name, t in tables.items():
                if name not in writers:
                    writers[name] = stack.enter_context(pq.ParquetWriter(tmp[name], t.schema, compression="zstd"))
                writers[name].write_table(t)
            stats.merge(batch_stats)
            bar.update(batch_stats.examples)
        if not writers:  # an empty split still gets (empty) files with the right columns
            schema = pa.schema([parquet.schema_arrow.field(c) for c in columns])
            empty = plain_columns(pa.RecordBatch.from_pylist([], schema=schema))
            for name, t in extract_batch(empty, outputs, runner.states)[0].items():
                pq.write_table(t, tmp[name], compression="zstd")
    return stats


def extract(processed_dir: str | Path, vocab_dir: str | Path, out_dir: str | Path, cfg: ExtractConfig,
            metrics_path: str | Path, progress: bool = True) -> dict[str, Any]:
    """Write every selection for every processed split and the coverage metrics; return the metrics."""
    processed_dir, out_dir = Path(processed_dir), Path(out_dir)
    if not processed_dir.is_dir():
        raise SumpipeError(f"{processed_dir}: no such folder (run `sumpipe preprocess` first)")
    paths = [processed_dir / f"{s}.parquet" for s in SPLITS if (processed_dir / f"{s}.parquet").is_file()]
    if not paths:
        raise SumpipeError(f"{processed_dir}: no train/valid/test .parquet files (run `sumpipe preprocess` first)")
    # Worker processes pay a start-up (imports, loading the table): only worth it on a larger corpus.
    n_docs = sum(open_parquet(p).metadata.num_rows for p in paths)
    workers = cfg.workers if n_docs >= MIN_DOCS_PER_WORKER * cfg.workers else 1
    runner = BatchRunner(cfg.budgets, FitContext(Path(vocab_dir), processed_dir), workers)
    try:
        metrics = {p.stem: extract_split(p, out_dir, runner, progress).summary() for p in paths}
    finally:
        runner.close()
    write_json(metrics, metrics_path)
    return metrics
