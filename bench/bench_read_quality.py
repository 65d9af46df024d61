"""Benchmark of the read-quality measures as `sumpipe evaluate` computes them, on a processed corpus.

    python bench/bench_read_quality.py [--root .] [--systems 20]

Reads `<root>/data/processed/test.parquet` and `<root>/data/raw/test.parquet` (a checkout after
`sumpipe download && sumpipe preprocess`), then times `read_quality` over the test split `--systems` times
(the references and the Lead-1 baseline in turn stand in for the systems) and prints the wall seconds,
the references' own figures (the anchor) and Lead-1's.
Goal: every system's figures <= 20 s on the default corpus (454 test summaries, ~20 systems).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from sumpipe.evaluate.read_quality import read_quality


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--systems", type=int, default=20)
    args = parser.parse_args()
    test = pd.read_parquet(args.root / "data/processed/test.parquet")
    raw = dict(zip(*pd.read_parquet(args.root / "data/raw/test.parquet", columns=["id", "source"]).to_dict("list")
                   .values()))
    sources, references = test["source"].tolist(), test["reference"].tolist()
    raw_sources = [raw[i] for i in test["id"]]
    lead = [s.split("\n")[0] for s in sources]

    start = time.perf_counter()
    figures = [read_quality(references if k % 2 == 0 else lead, sources, references, raw_sources)
               for k in range(args.systems)]
    scored = time.perf_counter() - start
    print(f"read_quality x {args.systems} systems of {len(test)} summaries: {scored:.2f} s "
          f"({scored / args.systems:.3f} s a system)")
    print("references (anchor):", figures[0])
    print("lead1:", figures[1])


if __name__ == "__main__":
    main()
