"""Prepare the shared data of the side-by-side benchmark (runs in sumpipe's venv).

    python bench/sidebyside/prepare.py --work DIR [--train 800] [--test 100] [--vocab 20000]

Reads ../shared/data/cnndm/cnn_stories.jsonl.gz, preprocesses the first `--train` train stories and the
first `--test` test stories with sumpipe's preprocessing (Alg. 2), cuts sources to 400 and references to
100 tokens and writes, one example per line (tokens joined by spaces, sentence breaks dropped):
  DIR/src-train.txt, DIR/tgt-train.txt, DIR/src-test.txt     both tools read exactly these lines
  DIR/vocab.txt                                              "word count", the most frequent words of
                                                             the train sources + targets, vocab - 4 of them
                                                             (each tool adds its own 4 specials)
  DIR/onmt_train.yaml                                        onmt_train.yaml with WORK set to DIR
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CNN = Path(os.environ.get("SUMPIPE_SHARED_DATA", REPO.parent / "shared" / "data")) / "cnndm" / "cnn_stories.jsonl.gz"
SPECIALS = 4


def stories(split: str, limit: int) -> list[dict]:
    rows = []
    with gzip.open(CNN, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["split"] == split:
                rows.append(row)
                if len(rows) >= limit:
                    break
    return rows


def one_line(text: str, max_tokens: int) -> str:
    return " ".join(text.split()[:max_tokens])


def prepare(work: Path, n_train: int, n_test: int, vocab_size: int) -> None:
    from sumpipe.text.preprocess import preprocess_text

    work.mkdir(parents=True, exist_ok=True)
    train = stories("train", n_train)
    test = stories("test", n_test)
    src = [one_line(preprocess_text(r["source"]), 400) for r in train]
    tgt = [one_line(preprocess_text(r["reference"]), 100) for r in train]
    src_test = [one_line(preprocess_text(r["source"]), 400) for r in test]
    for name, lines in (("src-train", src), ("tgt-train", tgt), ("src-test", src_test)):
        (work / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = Counter(w for line in src + tgt for w in line.split())
    words = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: vocab_size - SPECIALS]
    (work / "vocab.txt").write_text("".join(f"{w} {c}\n" for w, c in words), encoding="utf-8")
    config = (HERE / "onmt_train.yaml").read_text(encoding="utf-8").replace("WORK", str(work))
    (work / "onmt_train.yaml").write_text(config, encoding="utf-8")
    print(f"{len(train)} train / {len(test)} test stories, {len(words) + SPECIALS} vocabulary rows -> {work}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--train", type=int, default=800)
    ap.add_argument("--test", type=int, default=100)
    ap.add_argument("--vocab", type=int, default=20000)
    args = ap.parse_args()
    prepare(args.work, args.train, args.test, args.vocab)


if __name__ == "__main__":
    main()
