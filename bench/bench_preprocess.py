"""Benchmark the preprocess stage on real text: the 6,952 CNN stories, in a scratch directory.

    python bench/bench_preprocess.py [--stories PATH] [--workers N] [--limit N]
    python bench/bench_preprocess.py --raw data/raw [--workers N] [--repeat 3]

Reads ../shared/data/cnndm/cnn_stories.jsonl.gz with pandas, writes it as raw train/valid/test
parquet (by its `split` field; not timed), then times `sumpipe.text.preprocess.preprocess` (the
stage function, default params except `--workers`) and prints wall time, CPU time, stories/s, peak
RSS of this process plus its worker processes (sampled every 50 ms) and the stage's stats.
Target: preprocess + vocab + extract <= 60 s on 2 cores, so preprocess in <~ 25 s.

`--raw DIR` times the stage on a raw folder the download stage wrote instead, e.g. the default
(pydoc) corpus's `data/raw` after `dvc repro download` (the tokenizer's throughput there
before and after a change: run it with PYTHONPATH pointing at the other version's src/ to compare).
`--repeat N` runs the stage N times and reports the fastest run (the least disturbed by other load).
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import psutil

from sumpipe.config import PreprocessConfig
from sumpipe.io.atomic import write_parquet
from sumpipe.text.preprocess import SPLITS, preprocess

REPO = Path(__file__).resolve().parents[1]
STORIES = REPO.parent / "shared" / "data" / "cnndm" / "cnn_stories.jsonl.gz"
MIB = 1 << 20


class PeakRSS:
    """Samples the summed RSS of this process and its descendants in a thread; `.peak` in bytes."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval, self.peak = interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        me = psutil.Process()
        total = me.memory_info().rss
        for child in me.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass  # a worker that just exited
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._sample())


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the pool's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def write_raw(stories: Path, raw_dir: Path, limit: int | None) -> int:
    df = pd.read_json(stories, lines=True, compression="gzip")
    if limit:
        df = df.head(limit)
    for split in SPLITS:
        write_parquet(df[df["split"] == split][["id", "source", "reference"]], raw_dir / f"{split}.parquet")
    return len(df)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=Path, default=STORIES)
    parser.add_argument("--workers", type=int, default=PreprocessConfig().workers)
    parser.add_argument("--limit", type=int, default=None, help="only the first N stories")
    parser.add_argument("--raw", type=Path, default=None,
                        help="time the stage on this raw folder (train/valid/test.parquet) instead")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the fastest is reported")
    args = parser.parse_args()

    cfg = dataclasses.replace(PreprocessConfig(), workers=args.workers)
    with tempfile.TemporaryDirectory(prefix="bench_preprocess_") as tmp:
        work = Path(tmp)
        if args.raw is None:
            raw = work / "raw"
            n = write_raw(args.stories, raw, args.limit)
        else:
            raw = args.raw
            n = sum(len(pd.read_parquet(raw / f"{s}.parquet", columns=["id"])) for s in SPLITS
                    if (raw / f"{s}.parquet").is_file())
        runs = []
        for _ in range(max(1, args.repeat)):
            with PeakRSS() as rss:
                start, cpu_start = time.perf_counter(), cpu_seconds()
                stats = preprocess(raw, work / "processed", cfg, work / "metrics" / "preprocess.json")
                runs.append((time.perf_counter() - start, cpu_seconds() - cpu_start, rss.peak))
        wall, cpu, peak = min(runs)
        size = sum(f.stat().st_size for f in (work / "processed").iterdir())
        if args.repeat > 1:
            print(f"runs           {', '.join(f'{w:.2f}' for w, _, _ in runs)} s wall (fastest below)")

    total = stats["total"]
    per_split = ", ".join(f"{s} {stats[s]['rows_in']:,}" for s in SPLITS if s in stats)
    print(f"stories        {n:,} ({per_split})")
    print(f"workers        {cfg.workers} (machine: {psutil.cpu_count()} CPUs, load avg "
          f"{', '.join(f'{x:.1f}' for x in psutil.getloadavg())})")
    print(f"wall time      {wall:.2f} s")
    print(f"CPU time       {cpu:.2f} s (user + system, this process + workers; unaffected by other load)")
    print(f"stories/s      {n / wall:,.0f}")
    print(f"peak RSS       {peak / MIB:,.0f} MiB (this process + workers)")
    print(f"rows kept      {total['rows_out']:,} / {total['rows_in']:,} "
          f"(dropped {total['dropped_empty']} empty, {total['dropped_short']} short; repaired {total['repaired']})")
    print(f"mean tokens    source {total['mean_source_tokens']:.1f}, reference {total['mean_reference_tokens']:.1f}")
    print(f"tokens/s       {(total['source_tokens'] + total['reference_tokens']) / wall:,.0f}")
    print(f"output         {size / MIB:.1f} MiB parquet")


if __name__ == "__main__":
    main()
