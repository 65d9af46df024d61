"""ROUGE check and speed: the five XSum systems of ../shared/data/rouge_check (5 x 11,334 = 56,670 pairs).

1. Scores each system with `sumpipe rouge`'s function (`score_files`, the same code path as
   `sumpipe rouge FILE FILE --column system_outputs.<system> --ref-column reference`) and compares
   with the published ROUGE-1.5.5 figures: same ranking per metric, each within 0.5.
2. Scores all pairs (rouge1, rouge2, rougeL, rougeLsum, stemming) with three tools, each in its own
   child process started by this script, in the same run: a plain `rouge_score` `RougeScorer.score`
   loop (1 core), `rouge_score_rs` `RougeScorer.score_batch` (all cores) and sumpipe's scorer
   (`FastRouge.score_arrays`, and `score_pairs`, which also builds the DataFrame the stages use).
   For each: the whole process (start, imports, reading the data, scoring, writing the scores; wall
   clock measured here) and in-process (the scoring call alone, measured in the child), peak RSS of
   the child, and the largest difference of any P, R or F1 from rouge-score's.
3. Bootstrap intervals (1000 resamples, 4 types) and the paired test (3 types) on 11,490 pairs, the
   size of the CNN/DM test set, as `sumpipe evaluate` runs them.

    python bench/bench_rouge.py [--data PATH] [--limit N] [--skip-plain]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SUMPIPE_SHARED_DATA", REPO.parent / "shared" / "data")) / "rouge_check" / "xsum_test_outputs.jsonl.gz"
SYSTEMS = ["lead", "ext-oracle", "ptgen", "convs2s", "topic-convs2s"]
PUBLISHED = {  # F1 x 100, the authors' ROUGE-1.5.5 runs (README of rouge_check)
    "lead": (16.30, 1.60, 11.95),
    "ext-oracle": (29.79, 8.81, 22.66),
    "ptgen": (29.70, 9.21, 23.24),
    "convs2s": (31.27, 11.07, 25.23),
    "topic-convs2s": (31.89, 11.54, 25.75),
}
METRICS = ("rouge1", "rouge2", "rougeL")
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
TOOLS = {"rouge-score": "plain RougeScorer.score loop", "rouge-score-rs": "rouge_score_rs score_batch",
         "sumpipe": "sumpipe FastRouge.score_arrays", "sumpipe-frame": "sumpipe score_pairs (DataFrame)"}
CNNDM_TEST = 11_490


def read_pairs(path: Path, limit: int | None) -> tuple[list[str], list[str]]:
    """References and predictions of every (example, system) pair, system by system."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:limit]
    refs = [r["reference"] for r in rows] * len(SYSTEMS)
    preds = [r["system_outputs"][s] for s in SYSTEMS for r in rows]
    return refs, preds


# --------------------------------------------------------------------------------------------
# Child process: one tool scores every pair
# --------------------------------------------------------------------------------------------
def scoring_function(tool: str):
    """Import the tool (whole-process cost only) and return f(refs, preds) -> (pairs, 4 types, 3) P/R/F."""
    if tool == "sumpipe":
        from sumpipe.evaluate.rouge import FastRouge

        return lambda refs, preds: FastRouge(TYPES).score_arrays(preds, refs)
    if tool == "sumpipe-frame":
        import pandas  # noqa: F401  score_pairs returns a DataFrame: its import is start-up, not scoring

        from sumpipe.evaluate.rouge import FIELDS, score_pairs

        def score(refs, preds):
            frame = score_pairs(preds, refs, rouge_types=TYPES)
            return frame[[f"{t}_{f}" for t in TYPES for f in FIELDS]].to_numpy().reshape(len(refs), len(TYPES), 3)

        return score
    if tool == "rouge-score":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
        batch = lambda refs, preds: [scorer.score(t, p) for t, p in zip(refs, preds)]  # noqa: E731
    else:
        from rouge_score_rs import rouge_scorer

        batch = rouge_scorer.RougeScorer(TYPES, use_stemmer=True).score_batch
    return lambda refs, preds: np.array([[tuple(r[t]) for t in TYPES] for r in batch(refs, preds)], dtype=np.float64)


def child(tool: str, data: Path, limit: int | None, out: Path) -> None:
    score = scoring_function(tool)
    refs, preds = read_pairs(data, limit)
    start = time.perf_counter()
    scores = score(refs, preds)
    seconds = time.perf_counter() - start
    np.save(out, scores)
    print(json.dumps({"seconds": seconds}))


def run_child(tool: str, data: Path, limit: int | None, out: Path) -> dict:
    """Start the child, wait for it; whole-process wall time, in-process scoring time, peak RSS."""
    cmd = [sys.executable, __file__, "--child", tool, "--data", str(data), "--out", str(out)]
    if limit:
        cmd += ["--limit", str(limit)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{tool}: child failed with status {proc.returncode}")
    inner = json.loads(proc.stdout.read().strip().splitlines()[-1])["seconds"]
    return {"wall": wall, "inner": inner, "rss_mib": usage.ru_maxrss / 1024, "scores": np.load(out)}


def check_speed(data: Path, limit: int | None, skip_plain: bool) -> bool:
    tools = [t for t in TOOLS if not (skip_plain and t == "rouge-score")]
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for tool in tools:
            runs[tool] = run_child(tool, data, limit, Path(tmp) / f"{tool}.npy")
    n_pairs = len(runs[tools[0]]["scores"])
    reference = "rouge-score" if "rouge-score" in runs else "rouge-score-rs"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"speed on {n_pairs:,} pairs (rouge1, rouge2, rougeL, rougeLsum, stemming); {os.cpu_count()} cores, "
          f"shared machine, load average {load}:")
    print(f"  {'tool':32} {'whole process':>13} {'in-process':>10} {'pairs/s':>9} {'peak RSS':>9} "
          f"{'vs plain':>8}  max |diff| vs {reference}")
    ok = True
    base = runs.get("rouge-score", {}).get("inner")
    for tool in tools:
        r = runs[tool]
        diff = float(np.max(np.abs(r["scores"] - runs[reference]["scores"]))) if n_pairs else 0.0
        ok &= diff == 0.0
        ratio = f"x{base / r['inner']:.1f}" if base else "-"
        print(f"  {TOOLS[tool]:32} {r['wall']:11.2f} s {r['inner']:8.2f} s {n_pairs / r['inner']:9,.0f} "
              f"{r['rss_mib']:6.0f} MiB {ratio:>8}  {diff:.3g}")
    if "rouge-score-rs" in runs:
        rs, ours = runs["rouge-score-rs"], runs["sumpipe"]
        print(f"  sumpipe / rouge-score-rs time: whole process x{ours['wall'] / rs['wall']:.2f}, "
              f"in-process x{ours['inner'] / rs['inner']:.2f}")
    print(f"  every P, R, F1 identical to {reference}: {'yes' if ok else 'NO'}")
    return ok


# --------------------------------------------------------------------------------------------
# Bootstrap on CNN/DM-sized input
# --------------------------------------------------------------------------------------------
def check_bootstrap(data: Path) -> None:
    import pandas as pd

    from sumpipe.evaluate.rouge import score_pairs
    from sumpipe.evaluate.summary import ScoringSetup, compare, summarize

    refs, preds = read_pairs(data, None)
    n = min(CNNDM_TEST, len(refs) // 2)
    a = score_pairs(preds[:n], refs[:n])
    b = score_pairs(preds[-n:], refs[-n:])
    a["id"] = b["id"] = np.arange(n)
    setup = ScoringSetup()
    start = time.perf_counter()
    summarize(a, setup)
    t_ci = time.perf_counter() - start
    start = time.perf_counter()
    compare(a, b, setup)
    t_paired = time.perf_counter() - start
    start = time.perf_counter()
    score_pairs(preds[:n], refs[:n])
    t_score = time.perf_counter() - start
    assert isinstance(a, pd.DataFrame)
    print(f"\n{n:,} pairs, {setup.bootstrap_samples} resamples: scoring {t_score:.2f} s; "
          f"bootstrap intervals (4 types) {t_ci:.2f} s; paired test (3 types) {t_paired:.2f} s")


# --------------------------------------------------------------------------------------------
# Agreement with the published ROUGE-1.5.5 figures
# --------------------------------------------------------------------------------------------
def ranking(values: dict[str, float]) -> list[str]:
    return sorted(values, key=values.get)


def check_figures(path: Path) -> bool:
    from sumpipe.evaluate.score_files import score_files

    ours = {s: score_files(path, path, column=f"system_outputs.{s}", ref_column="reference", bootstrap=1000)
            for s in SYSTEMS}
    print(f"ROUGE F1 x 100 on {path.name} (n = {ours[SYSTEMS[0]]['n']}); ours [95% CI] vs published ROUGE-1.5.5")
    print(f"{'system':14} " + "  ".join(f"{m:>27}" for m in ("R-1", "R-2", "R-L")))
    ok = True
    for s in SYSTEMS:
        cells = []
        for k, m in enumerate(METRICS):
            r = ours[s]["scores"][m]
            diff = r["fmeasure"] - PUBLISHED[s][k]
            ok &= abs(diff) <= 0.5
            cells.append(f"{r['fmeasure']:5.2f} [{r['fmeasure_low']:5.2f},{r['fmeasure_high']:5.2f}] "
                         f"{PUBLISHED[s][k]:5.2f} {diff:+.2f}")
        print(f"{s:14} " + "  ".join(cells))
    for k, m in enumerate(METRICS):
        mine = ranking({s: ours[s]["scores"][m]["fmeasure"] for s in SYSTEMS})
        theirs = ranking({s: PUBLISHED[s][k] for s in SYSTEMS})
        same = mine == theirs
        ok &= same
        print(f"ranking by {m}: {'same' if same else 'DIFFERENT'} ({' < '.join(mine)})")
    print(f"every figure within 0.5 and same rankings: {'yes' if ok else 'NO'}")
    print(ours[SYSTEMS[0]]["config_line"])
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None, help="score only the first N examples of each system")
    parser.add_argument("--skip-plain", action="store_true", help="leave out the slow plain rouge-score loop")
    parser.add_argument("--child", choices=list(TOOLS), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"{args.data}: not found (the shared data is optional)", file=sys.stderr)
        return 1
    if args.child:
        child(args.child, args.data, args.limit, args.out)
        return 0
    # Speed first, while this process is small: a child's peak RSS (from wait4) starts from the size
    # of the process that forked it.
    ok = check_speed(args.data, args.limit, args.skip_plain)
    print()
    ok &= check_figures(args.data)
    check_bootstrap(args.data)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
