"""ROUGE check and speed: the five XSum systems of ../shared/data/rouge_check.

1. Scores each system with `sumpipe rouge`'s function (`score_files`, the same code path as
   `sumpipe rouge FILE FILE --column system_outputs.<system> --ref-column reference`) and compares
   with the published ROUGE-1.5.5 figures: same ranking per metric, each within 0.5.
2. Times the fast scorer against a plain `RougeScorer.score` loop over the same 5 x 11,334 pairs and
   checks that every precision, recall and F1 is identical.

    python bench/bench_rouge.py [--data PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from sumpipe.evaluate.rouge import FIELDS, FastRouge, score_pairs
from sumpipe.evaluate.score_files import score_files

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
TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def ranking(values: dict[str, float]) -> list[str]:
    return sorted(values, key=values.get)


def check_figures(path: Path) -> bool:
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


def check_speed(path: Path, limit: int | None) -> bool:
    from rouge_score import rouge_scorer

    rows = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")][:limit]
    refs = [r["reference"] for r in rows]
    pairs = {s: [r["system_outputs"][s] for r in rows] for s in SYSTEMS}
    n_pairs = len(rows) * len(SYSTEMS)

    timings = {}
    fast = {}
    for procs in (1, 2):
        scorer = FastRouge(TYPES, use_stemmer=True)
        start = time.perf_counter()
        fast[procs] = {s: score_pairs(pairs[s], refs, scorer=scorer, processes=procs) for s in SYSTEMS}
        timings[procs] = time.perf_counter() - start

    plain = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=True)
    start = time.perf_counter()
    slow = {s: [plain.score(t, p) for t, p in zip(refs, pairs[s])] for s in SYSTEMS}
    t_plain = time.perf_counter() - start

    worst = 0.0
    for s in SYSTEMS:
        for t in TYPES:
            for f in FIELDS:
                expected = np.array([getattr(x[t], f) for x in slow[s]])
                for procs in fast:
                    worst = max(worst, float(np.max(np.abs(fast[procs][s][f"{t}_{f}"].to_numpy() - expected))))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nspeed on {n_pairs} pairs (4 ROUGE types, stemming; {os.cpu_count()} cores, shared machine, "
          f"load average {load}):")
    print(f"  plain RougeScorer.score loop : {t_plain:7.2f} s")
    for procs, t in timings.items():
        print(f"  sumpipe fast, {procs} process(es)  : {t:7.2f} s   speed-up x{t_plain / t:.1f}")
    print(f"  largest |difference| over every P, R, F1: {worst:.3g} ({'identical' if worst == 0 else 'NOT identical'})")
    return worst <= 1e-12 and t_plain / min(timings.values()) >= 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None, help="time only the first N examples")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"{args.data}: not found (the shared data is optional)", file=sys.stderr)
        return 1
    ok = check_figures(args.data)
    ok &= check_speed(args.data, args.limit)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
