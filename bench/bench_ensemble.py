"""Ensemble decoding's cost: documents/s of one seed and of the ensemble of a model's seeds.

    python bench/bench_ensemble.py                          # every model of ./models with 2+ trained seeds
    python bench/bench_ensemble.py --model PG-cov --limit 200 --repeats 3
    python bench/bench_ensemble.py --project /tmp/proj --documents docs.txt   # any trained project

Decodes the same documents with the seed `sumpipe decode` picks (the lowest validation loss) and with the
ensemble of all the model's trained seeds (`sumpipe.decode.ensemble`), interleaved (seed, ensemble, seed,
...) so both see the same machine load, under the project's `decode:` settings (params.yaml, else the
defaults). The documents are the test split of the model's input selection
(`<paths.extracted>/<input>/test.parquet`), or one per line of `--documents`. The models are loaded once,
before timing; each figure is the median over `--repeats`. Prints per model: documents/s of each, the
ensemble's cost relative to one seed, and whether the ensemble's summaries differ from the seed's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def documents_for(project, card, documents: Path | None, limit: int) -> list[str]:
    import pandas as pd

    if documents is not None:
        docs = [line.strip() for line in documents.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        path = project.path(project.params.paths.extracted) / card.input / f"{project.params.decode.split}.parquet"
        if not path.is_file():
            raise SystemExit(f"{path}: no such file (run `dvc repro`, or give --documents)")
        docs = [s for s in pd.read_parquet(path, columns=["source"])["source"].fillna("").tolist() if s.split()]
    return docs[:limit] if limit else docs


def timed(model, vocab, card, docs: list[str], cfg) -> tuple[float, list[str]]:
    from sumpipe.decode.batches import summarize

    started = time.perf_counter()
    summaries = summarize(model, vocab, card, docs, cfg)
    return time.perf_counter() - started, [s.text for s in summaries]


def bench_model(project, name: str, args: argparse.Namespace) -> None:
    import torch

    from sumpipe.decode.batches import load_model
    from sumpipe.decode.ensemble import load_ensemble
    from sumpipe.decode.members import ensemble_folders
    from sumpipe.models.folders import pick_seed

    group = project.models_root / name
    members = ensemble_folders(group)
    if len(members) < 2:
        print(f"{name}: {len(members)} trained seed, no ensemble to time")
        return
    single_dir = pick_seed(group)
    single = load_model(single_dir)
    ensemble = load_ensemble(members)
    cfg = project.params.decode
    docs = documents_for(project, single[2], args.documents, args.limit)
    torch.set_num_threads(args.threads)
    runs: dict[str, list[float]] = {"seed": [], "ensemble": []}
    texts: dict[str, list[str]] = {}
    for _ in range(args.repeats):  # interleaved: both see the same load
        for label, (model, vocab, card) in (("seed", single), ("ensemble", ensemble)):
            seconds, texts[label] = timed(model, vocab, card, docs, cfg)
            runs[label].append(seconds)
    rate = {label: len(docs) / statistics.median(seconds) for label, seconds in runs.items()}
    differ = sum(a != b for a, b in zip(texts["seed"], texts["ensemble"]))
    print(f"{name}: {len(docs)} documents, {cfg.strategy} k={cfg.beam_size}, batch {cfg.batch_size}, "
          f"{args.threads} thread(s), median of {args.repeats}")
    print(f"  one seed ({single_dir.name})        {rate['seed']:8.1f} docs/s")
    print(f"  ensemble of {len(members)} seeds ({', '.join(m.name for m in members)}) {rate['ensemble']:8.1f} docs/s"
          f"  ({rate['seed'] / rate['ensemble']:.2f}x the time of one seed)")
    print(f"  summaries that differ from the seed's: {differ} of {len(docs)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project", type=Path, default=Path("."), help="the folder `dvc repro` ran in")
    parser.add_argument("--model", action="append", help="a model under paths.models (repeat; default: every "
                                                         "model with 2+ trained seeds)")
    parser.add_argument("--documents", type=Path, help="preprocessed documents, one per line")
    parser.add_argument("--limit", type=int, default=0, help="at most this many documents (0: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    from sumpipe.decode.interactive import trained_models
    from sumpipe.decode.summarizer import open_project
    from sumpipe.models.folders import seed_folders

    project = open_project(args.project)
    names = args.model or [n for n in trained_models(project.models_root, project.params.models)
                           if len(seed_folders(project.models_root / n)) >= 2]
    if not names:
        raise SystemExit(f"no model with 2+ trained seeds under {project.models_root}/")
    for name in names:
        bench_model(project, name, args)


if __name__ == "__main__":
    main()
