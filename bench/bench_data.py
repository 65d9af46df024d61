"""Data-stage benchmark: CNN stories through preprocess + vocab + extract, in-process.

    python bench/bench_data.py [--stories ../shared/data/cnndm/cnn_stories.jsonl.gz] [--work DIR]

Loads the stories with the `local` loader (not timed: it is the download stage), then times the three
stages with the default params and prints wall and CPU seconds per stage, stories/s, peak RSS of this
process and of its worker processes, and the memory of the n-gram counter per distinct 3-gram (traced
with tracemalloc in a separate pass, so the timings above carry no tracing overhead).
Goals: <= 60 s, <= 2 GiB peak, <= 32 bytes per distinct 3-gram, on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path
from unittest import mock

import numpy as np

from sumpipe.config import DataConfig, params_from_dict
from sumpipe.data.download import download
from sumpipe.selection.stage import extract
from sumpipe.text.preprocess import preprocess
from sumpipe.vocab import build as vocab_build
from sumpipe.vocab.build import build_vocab, count_corpus, train_file
from sumpipe.vocab.ngrams import NgramCounter

DEFAULT_STORIES = Path(__file__).resolve().parents[2] / "shared" / "data" / "cnndm" / "cnn_stories.jsonl.gz"


def timed(label: str, fn, rows: list) -> object:  # type: ignore[no-untyped-def]
    wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    result = fn()
    rows.append((label, time.perf_counter() - wall, time.process_time() - cpu + _children_cpu() - children))
    return result


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # ru_maxrss is KiB on Linux


class _KeyRecorder:
    """Stands in for NgramCounter while the corpus is read, keeping the key chunks it is fed."""

    chunks: list[np.ndarray] = []

    def __init__(self) -> None:
        self.total = 0

    def add(self, keys: np.ndarray) -> None:
        self.chunks.append(np.array(keys, dtype=np.uint64))


def counter_bytes_per_ngram(processed: Path, n: int) -> tuple[float, int]:
    """Peak memory of the n-gram counter alone, per distinct n-gram.

    The corpus is read once with a recorder in place of the counter; a fresh counter is then fed the
    same key chunks under tracemalloc, so the peak holds only the counter's own arrays and buffers.
    """
    with mock.patch.object(vocab_build, "NgramCounter", _KeyRecorder):
        count_corpus(train_file(processed), n, progress=False)
    tracemalloc.start()
    counter = NgramCounter()
    for chunk in _KeyRecorder.chunks:
        counter.add(chunk)
    keys, _ = counter.result()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / max(len(keys), 1), len(keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=Path, default=DEFAULT_STORIES)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir)")
    args = parser.parse_args()
    if not args.stories.is_file():
        raise SystemExit(f"{args.stories}: not found (the real data lives in ../shared/data)")

    work = args.work or Path(tempfile.mkdtemp(prefix="sumpipe-bench-"))
    params = params_from_dict({})
    paths = {name: work / name for name in ("raw", "processed", "vocab", "extracted", "metrics")}
    data_cfg = dataclasses.replace(DataConfig(), dataset="local", path=str(args.stories))
    stats = download(data_cfg, paths["raw"])
    n_stories = stats["examples"]

    rows: list[tuple[str, float, float]] = []
    timed("preprocess", lambda: preprocess(paths["raw"], paths["processed"], params.preprocess,
                                           paths["metrics"] / "preprocess.json"), rows)
    vocab_stats = timed("vocab", lambda: build_vocab(paths["processed"], paths["vocab"], params.vocab,
                                                     progress=False), rows)
    timed("extract", lambda: extract(paths["processed"], paths["vocab"], paths["extracted"], params.extract,
                                     paths["metrics"] / "coverage.json", progress=False), rows)
    total_wall = sum(r[1] for r in rows)
    total_cpu = sum(r[2] for r in rows)
    bytes_per, distinct = counter_bytes_per_ngram(paths["processed"], params.vocab.ngram_n)

    print(f"stories: {n_stories}  cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.2f}")
    print(f"{'stage':<12}{'wall s':>9}{'cpu s':>9}")
    for label, wall, cpu in rows:
        print(f"{label:<12}{wall:>9.2f}{cpu:>9.2f}")
    print(f"{'total':<12}{total_wall:>9.2f}{total_cpu:>9.2f}   (goal <= 60 s)")
    print(f"stories/s: {n_stories / total_wall:.1f}")
    print(f"peak RSS: this process {peak_rss_mib(resource.RUSAGE_SELF):.0f} MiB, "
          f"largest worker {peak_rss_mib(resource.RUSAGE_CHILDREN):.0f} MiB   (goal <= 2048 MiB)")
    print(f"3-grams: {distinct:,} distinct, {vocab_stats['ngrams_kept']:,} kept (count >= "
          f"{params.vocab.ngram_min_count}); counter {vocab_stats['ngram_counter_bytes_per_distinct']:.1f} B "
          f"per distinct at rest, {bytes_per:.1f} B at the counting peak (goal <= 32)")
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
