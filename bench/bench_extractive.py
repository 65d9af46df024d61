"""Extractive benchmark: every extractive method against sumy 0.13 on CNN stories.

    python bench/bench_extractive.py [--stories ../shared/data/cnndm/cnn_stories.jsonl.gz]
        [--sumy-python /work/venv-sumy/bin/python] [--sentences 3] [--workers 2]

1. Preprocesses the stories as the pipeline does (not timed against sumy: both get the same
   sentences), fits the corpus state (idf, entropy weights) on the train split.
2. On the test stories: each method's 3-sentence summaries, ROUGE-1/2/L F1 (sumpipe's fast
   rouge-score, stemmed) and wall time from sentences to selection (document analysis included), next
   to sumy's implementation of the same method run on the same sentences in its own virtual
   environment (`bench/sumy_runner.py`; sumy is never a sumpipe dependency).
3. Every method over every story (all splits) in `--workers` processes: the wall time of the lot.
Goals: within 0.3 ROUGE-1 of sumy or better, >= 5x faster; step 3 <= 60 s on 2 cores.
The machine is shared: the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import resource
import subprocess
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from sumpipe.evaluate.rouge import FastRouge, score_pairs
from sumpipe.extractive.methods import METHODS, Analyzer, Limit, build_method, fit_corpus
from sumpipe.extractive.methods.edmundson import DEFAULT_BONUS_WORDS, DEFAULT_STIGMA_WORDS
from sumpipe.text.preprocess import preprocess_many

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_STORIES = ROOT.parent / "shared" / "data" / "cnndm" / "cnn_stories.jsonl.gz"
SUMY_METHODS = {"luhn": "luhn", "edmundson": "edmundson", "lsa": "lsa", "lexrank": "lexrank",
                "textrank": "textrank", "sumbasic": "sumbasic", "klsum": "klsum", "reduction": "reduction",
                "random": "random"}  # sumpipe name -> sumy name


def load(path: Path, workers: int, cache: Path | None) -> list[dict]:
    if cache is not None and cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")]
    started = time.perf_counter()
    sources = preprocess_many([r["source"] for r in rows], workers=workers)
    references = preprocess_many([r["reference"] for r in rows], workers=workers)
    for row, (source, _), (reference, _) in zip(rows, sources, references):
        row["source"], row["reference"] = source, reference
    print(f"preprocessed {len(rows):,} stories in {time.perf_counter() - started:.1f} s (not part of any figure below)")
    if cache is not None:
        cache.write_text(json.dumps(rows), encoding="utf-8")
    return rows


def rouge(predictions: list[str], references: list[str]) -> tuple[float, float, float]:
    scores = score_pairs(predictions, references, scorer=FastRouge(("rouge1", "rouge2", "rougeL")))
    return tuple(100 * float(scores[f"{t}_fmeasure"].mean()) for t in ("rouge1", "rouge2", "rougeL"))


def run_sumpipe(name: str, rows: list[dict], corpus, limit: Limit) -> tuple[list[str], float]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    analyzer = Analyzer()  # a fresh stem cache: every method pays for its own document analysis
    method = build_method(name, corpus=corpus)
    texts = []
    for row in rows:
        doc = analyzer.parse(row["source"], row["reference"], row["id"])
        texts.append(doc.text(method.select(doc, limit)))
    return texts, time.perf_counter() - started


def run_sumy(python: str, rows: list[dict], sentences: int) -> dict:
    job = {"documents": [[s for s in row["source"].split("\n") if s.strip()] for row in rows],
           "bonus": list(DEFAULT_BONUS_WORDS), "stigma": list(DEFAULT_STIGMA_WORDS),
           "methods": sorted(set(SUMY_METHODS.values()))}
    done = subprocess.run([python, str(ROOT / "bench" / "sumy_runner.py"), "--sentences", str(sentences)],
                          input=json.dumps(job), capture_output=True, text=True, check=True,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    return json.loads(done.stdout)


# The full run: every method over every story, documents split between worker processes.
def _full_chunk(args: tuple) -> int:  # type: ignore[type-arg]
    rows, corpus, sentences = args
    with threadpool_limits(1):
        analyzer = Analyzer()
        methods = [build_method(name, corpus=corpus) for name in METHODS.names()]
        limit = Limit(sentences=sentences)
        for row in rows:
            doc = analyzer.parse(row["source"], row["reference"], row["id"])
            for method in methods:
                method.select(doc, limit)
    return len(rows)


def full_run(rows: list[dict], corpus, sentences: int, workers: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall seconds, CPU seconds of the worker processes) for every method over every story."""
    chunks = [(rows[i::workers * 8], corpus, sentences) for i in range(workers * 8)]
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        assert sum(pool.map(_full_chunk, chunks)) == len(rows)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime)


def report_full_run(rows: list[dict], corpus, args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    wall, cpu = full_run(rows, corpus, args.sentences, args.workers)
    print(f"\nall {len(METHODS.names())} methods over all {len(rows):,} stories, {args.workers} processes: {wall:.1f} s "
          f"wall, {cpu:.1f} s CPU (about {cpu / args.workers:.1f} s wall on {args.workers} idle cores; "
          f"load average {os.getloadavg()[0]:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stories", type=Path, default=DEFAULT_STORIES)
    parser.add_argument("--sumy-python", default="/work/venv-sumy/bin/python")
    parser.add_argument("--sentences", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-full", action="store_true", help="skip step 3")
    parser.add_argument("--only-full", action="store_true", help="only step 3")
    parser.add_argument("--cache", type=Path, help="JSON file keeping the preprocessed stories between runs")
    args = parser.parse_args()

    rows = load(args.stories, args.workers, args.cache)
    test = [r for r in rows if r["split"] == "test"]
    references = [r["reference"] for r in test]
    analyzer = Analyzer()
    started = time.perf_counter()
    corpus = fit_corpus(analyzer.parse(r["source"]) for r in rows if r["split"] == "train")
    print(f"idf and entropy weights fitted on {sum(r['split'] == 'train' for r in rows):,} train stories in "
          f"{time.perf_counter() - started:.1f} s ({len(corpus.idf):,} terms)")
    limit = Limit(sentences=args.sentences)
    if args.only_full:
        report_full_run(rows, corpus, args)
        return

    sumy = run_sumy(args.sumy_python, test, args.sentences) if args.sumy_python else {}
    print(f"\n{len(test)} test stories, {args.sentences} sentences; ROUGE F1 x 100; seconds for all stories; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| method | sumpipe R-1 | R-2 | R-L | s | sumy R-1 | R-2 | R-L | s | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1):  # tiny per-document matrices: BLAS threads only add overhead
        for name in METHODS.names():
            texts, seconds = run_sumpipe(name, test, corpus, limit)
            r1, r2, rl = rouge(texts, references)
            row = f"| {name} | {r1:.2f} | {r2:.2f} | {rl:.2f} | {seconds:.2f} |"
            peer = sumy.get(SUMY_METHODS.get(name, ""))
            if peer:
                peer_texts = ["\n".join(doc_sents[i] for i in sel) for doc_sents, sel in
                              zip(([s for s in r["source"].split("\n") if s.strip()] for r in test), peer["selected"])]
                p1, p2, pl = rouge(peer_texts, references)
                row += f" {p1:.2f} | {p2:.2f} | {pl:.2f} | {peer['seconds']:.2f} | {peer['seconds'] / seconds:.1f}x |"
            else:
                row += " | | | | |"
            print(row, flush=True)

    if not args.no_full:
        report_full_run(rows, corpus, args)


if __name__ == "__main__":
    main()
