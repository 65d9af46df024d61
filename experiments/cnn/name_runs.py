"""The reading check counted (no summary should run three copied names or more together): the summaries that
pile up copied names ("u.s. elect christopher christie corzine must qualify ..."), for a workspace of
`copy_weight.sh` or this folder after `dvc repro`.

    python name_runs.py [FOLDER] [--split valid]

A *pile* is a run of at least three names in a row (words the story capitalises, as read quality's
`unsupported_names` reads them; no stop word nor punctuation between them, within a line) with at least one
adjacent pair the story never writes side by side (a jammed pair, `sumpipe.evaluate.read_quality.
jammed_pairs`): two names or more without a word between them. A name the story writes whole ("new york
city") is no pile; "christopher christie corzine" of a story naming Christopher Christie and Jon Corzine is one.

Printed per system (the mean over a model's seeds, each seed's in parentheses) with the references' own value:
the share of summaries holding a pile, and piles per 100 summaries.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from sumpipe.config import load_params
from sumpipe.evaluate.read_quality import adjacent_pairs, casing, stop_words
from sumpipe.evaluate.stage import raw_texts_of
from sumpipe.io.atomic import read_parquet

MIN_PILE = 3


def piles(summary: str, source: str, names: frozenset[str]) -> int:
    """The runs of >= MIN_PILE `names` in `summary` with a pair that `source` never writes side by side."""
    stop, source_pairs, found = stop_words(), set(adjacent_pairs(source)), 0
    for line in (summary or "").split("\n"):
        run: list[str] = []
        for token in [*line.split(), ""]:  # "" ends the last run
            if token in names and token not in stop:
                run.append(token)
                continue
            found += len(run) >= MIN_PILE and any(pair not in source_pairs for pair in zip(run, run[1:]))
            run = []
    return found


def figures(summaries: list[str], ids: list[str], sources: dict[str, str], raw: dict[str, tuple[str, str]]
            ) -> tuple[float, float]:
    """(% of summaries with a pile, piles per 100 summaries)."""
    counts = [piles(s, sources[i], casing(raw[i][0]).names) for s, i in zip(summaries, ids)]
    return 100 * sum(c > 0 for c in counts) / len(counts), 100 * sum(counts) / len(counts)


def main(folder: Path, split: str) -> None:
    os.chdir(folder)  # params.yaml's paths are relative to it
    params = load_params(Path("params.yaml"))
    processed = read_parquet(Path(params.paths.processed) / f"{split}.parquet")
    sources = dict(zip(processed["id"], processed["source"].fillna("")))
    refs = dict(zip(processed["id"], processed["reference"].fillna("")))
    raw = raw_texts_of(params.paths, split)
    share, per100 = figures(list(refs.values()), list(refs), sources, raw)
    print("| system | summaries with a pile % | piles per 100 |\n|---|---:|---:|")
    print(f"| references | {share:.1f} | {per100:.1f} |")
    for model in [*params.models, *params.ensembles]:  # an ensemble is one run: predictions/<name>/<split>.parquet
        rows = []
        folder = Path(params.paths.predictions) / model
        for path in sorted(folder.glob(f"seed-*/{split}.parquet")) or sorted(folder.glob(f"{split}.parquet")):
            frame: pd.DataFrame = read_parquet(path)
            rows.append((path.parent.name, *figures(frame["prediction"].tolist(), list(frame["id"]), sources, raw)))
        if rows:
            seeds = ", ".join(f"{share:.1f}" for _, share, _ in rows)
            mean = sum(r[1] for r in rows) / len(rows), sum(r[2] for r in rows) / len(rows)
            print(f"| {model} ({seeds}) | {mean[0]:.1f} | {mean[1]:.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", default=Path("."))
    parser.add_argument("--split", default="valid")
    args = parser.parse_args()
    main(args.folder, args.split)
