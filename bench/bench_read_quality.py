"""Issue-37 benchmark: the read-quality measures as `sumpipe evaluate` computes them, on a processed corpus.

    python bench/bench_read_quality.py [--root .] [--systems 20] [--nltk 3]

Reads `<root>/data/processed/{train,test}.parquet` and `<root>/data/raw/test.parquet` (a checkout after
`sumpipe download && sumpipe preprocess`), fits the fluency model on the train references (as evaluate:
the first `evaluate.fluency_references`), then times `read_quality` over the test split `--systems` times
(the references and the Lead-1 baseline in turn stand in for the systems) and prints the wall seconds,
the references' own figures (the anchor) and Lead-1's. `--nltk N`: also time nltk.lm's own `logscore`
on the first N test references (what the fast score replaces) and check both agree.
Goal (issue 37): fit + every system's figures <= 20 s on the default corpus (8,119 train references,
454 test summaries, ~20 systems).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from sumpipe.config import EvaluateConfig
from sumpipe.evaluate.read_quality import FluencyModel, read_quality, split_sentences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--nltk", type=int, default=3)
    args = parser.parse_args()
    train = pd.read_parquet(args.root / "data/processed/train.parquet").head(EvaluateConfig().fluency_references)
    test = pd.read_parquet(args.root / "data/processed/test.parquet")
    raw = dict(zip(*pd.read_parquet(args.root / "data/raw/test.parquet", columns=["id", "source"]).to_dict("list")
                   .values()))
    sources, references = test["source"].tolist(), test["reference"].tolist()
    raw_sources = [raw[i] for i in test["id"]]
    lead = [s.split("\n")[0] for s in sources]

    start = time.perf_counter()
    lm = FluencyModel.fit(train["reference"])
    fit = time.perf_counter() - start
    start = time.perf_counter()
    figures = [read_quality(references if k % 2 == 0 else lead, sources, references, lm, raw_sources)
               for k in range(args.systems)]
    scored = time.perf_counter() - start
    tokens = sum(len(s) + 1 for r in train["reference"] for s in split_sentences(r))
    print(f"fit: {len(train)} train references ({tokens} tokens with </s>), vocabulary {len(lm.known)}: {fit:.2f} s")
    print(f"read_quality x {args.systems} systems of {len(test)} summaries: {scored:.2f} s "
          f"({scored / args.systems:.3f} s a system); total {fit + scored:.2f} s")
    print("references (anchor):", figures[0])
    print("lead1:", figures[1])
    if args.nltk:
        start = time.perf_counter()
        worst = 0.0
        for reference in references[:args.nltk]:
            for sentence in split_sentences(reference):
                padded = ["<s>"] * (lm.order - 1) + sentence + ["</s>"]
                for i in range(lm.order - 1, len(padded)):
                    context = padded[i - lm.order + 1:i]
                    worst = max(worst, abs(lm.lm.logscore(padded[i], context) - lm.logscore(padded[i], context)))
        print(f"nltk.lm logscore on {args.nltk} references: {time.perf_counter() - start:.2f} s; "
              f"largest difference from the fast score {worst:.1e}")


if __name__ == "__main__":
    main()
