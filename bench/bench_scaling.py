"""Cost of the data stages (preprocess, vocab, extract) as the corpus grows, extrapolated to CNN/DM.

    python bench/bench_scaling.py [--scales 1 4 16] [--work DIR] [--stories PATH]

Corpus at scale k: the 6,952 CNN stories of ../shared/data/cnndm, plus (k - 1) x 6,952 synthetic
stories. A synthetic story has as many paragraphs as a random real one; each paragraph is a real
sentence drawn from any story, and 25% of its words are replaced by words drawn from the corpus's own
word distribution (a uniformly drawn position of the whole corpus), so that new 3-grams appear, as in a
larger real corpus, instead of the same sentences again (which would only add counts). Its reference is a
real reference treated the same way; its split is the split of a random real story (same proportions).
Seeded: the same corpus on every run.

Each scale runs `sumpipe download` (not timed), then `sumpipe preprocess`, `sumpipe vocab` and
`sumpipe extract` with the default params, each as a fresh process: its wall time (the time fit leaves out the process start-up, the best of two
`sumpipe --help`) and peak RSS (the
largest of the stage process and its workers, from wait4). Printed per scale: stories, seconds and peak
RSS per stage, distinct 3-grams, the n-gram counter's bytes per distinct 3-gram (vocab stage stats) and
peak RSS of the vocab stage per distinct 3-gram; then per stage the growth exponent b of
time ~ stories^b (least squares on log-log) and a line peak RSS = baseline + per-story bytes, and their
extrapolation to CNN/DM's 287,113 training stories. The rows are also written to WORK/rows.json;
`--from-rows WORK/rows.json` prints the tables again without running anything.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
STORIES = Path(os.environ.get("SUMPIPE_SHARED_DATA", REPO.parent / "shared" / "data")) / "cnndm" / "cnn_stories.jsonl.gz"
CNNDM_STORIES = 287_113
STAGES = ("preprocess", "vocab", "extract")
MEMORY = 24 * 1024  # MiB on this machine
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SUBSTITUTION = 0.25  # about 60% of a synthetic sentence's 3-grams are new, near the ~70% distinct of real text


def read_stories(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def scaled_corpus(stories: list[dict], scale: int, out: Path, seed: int = 0) -> int:
    """Write the real stories plus (scale - 1) x len(stories) synthetic ones to `out` (JSONL.gz)."""
    rng = random.Random(seed)
    sentences = [s for r in stories for p in r["source"].split("\n") for s in SENTENCE_END.split(p) if s.strip()]
    paragraphs = [len([p for p in r["source"].split("\n") if p.strip()]) for r in stories]
    words = [w for r in stories for w in r["source"].split()]

    def perturb(text: str) -> str:
        tokens = text.split()
        for i in range(len(tokens)):
            if rng.random() < SUBSTITUTION:
                tokens[i] = words[rng.randrange(len(words))]
        return " ".join(tokens)

    n = 0
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=1) as f:
        for row in stories:
            f.write(json.dumps({k: row[k] for k in ("id", "split", "source", "reference")}) + "\n")
            n += 1
        for copy in range(1, scale):
            for i in range(len(stories)):
                model = stories[rng.randrange(len(stories))]
                source = "\n".join(perturb(rng.choice(sentences)) for _ in range(paragraphs[rng.randrange(len(stories))]))
                reference = "\n".join(perturb(line) for line in stories[rng.randrange(len(stories))]["reference"].split("\n"))
                f.write(json.dumps({"id": f"syn{copy}-{i}", "split": model["split"], "source": source,
                                    "reference": reference}) + "\n")
                n += 1
    return n


PARAMS = """
data: {{dataset: local, path: {corpus}}}
paths: {{raw: raw, processed: processed, vocab: vocab, extracted: extracted, metrics: metrics}}
"""


def run_stage(stage: str, work: Path) -> tuple[float, float]:
    """`sumpipe STAGE` in `work`: (wall seconds, peak RSS MiB of the largest process)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "sumpipe.cli", *stage.split()], cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"sumpipe {stage} failed in {work}:\n{stderr[-2000:]}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def measure(stories: Path, limit: int | None, scale: int, root: Path) -> dict:
    work = root / f"x{scale}"
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.jsonl.gz"
    # Built in a child process: this one stays small, because a stage process's peak RSS (from
    # wait4) starts from the size of the process that forked it.
    build = subprocess.run([sys.executable, __file__, "--build", str(scale), str(corpus), "--stories", str(stories),
                            *(["--limit", str(limit)] if limit else [])], check=True, capture_output=True, text=True)
    n = int(build.stdout.split()[-1])
    (work / "params.yaml").write_text(PARAMS.format(corpus=corpus), encoding="utf-8")
    run_stage("download", work)
    row: dict = {"scale": scale, "stories": n}
    for stage in STAGES:
        row[f"{stage}_s"], row[f"{stage}_mib"] = run_stage(stage, work)
        print(f"  x{scale}: {stage} {row[f'{stage}_s']:.1f} s, peak {row[f'{stage}_mib']:.0f} MiB; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    vocab = json.loads((work / "metrics" / "vocab.json").read_text())  # the vocab stage's statistics
    row["distinct"] = vocab["ngrams_distinct"]
    row["counter_b"] = vocab["ngram_counter_bytes_per_distinct"]
    return row


def startup_seconds(work: Path) -> float:
    """Start-up of a stage process (interpreter, sumpipe's CLI imports): the best of 2 `sumpipe --help`."""
    return min(run_stage("--help", work)[0] for _ in range(2))


def fit_power(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(b, a) of y = a * x^b by least squares on logs."""
    b, log_a = np.polyfit(np.log(xs), np.log(ys), 1)
    return float(b), float(math.exp(log_a))


def report(rows: list[dict], startup: float) -> None:
    print(f"\n{'scale':>5} {'stories':>8} " + " ".join(f"{s + ' s':>12} {s + ' MiB':>14}" for s in STAGES)
          + f" {'total s':>8} {'3-grams':>11} {'counter B/3g':>12} {'vocab RSS B/3g':>14}")
    for r in rows:
        total = sum(r[f"{s}_s"] for s in STAGES)
        print(f"{r['scale']:>4}x {r['stories']:>8,} " + " ".join(f"{r[f'{s}_s']:>12.1f} {r[f'{s}_mib']:>14.0f}" for s in STAGES)
              + f" {total:>8.1f} {r['distinct']:>11,} {r['counter_b']:>12.1f} "
              + f"{r['vocab_mib'] * 2**20 / max(r['distinct'], 1):>14.1f}")
    if len(rows) < 2:
        return
    xs = [r["stories"] for r in rows]
    print(f"\nfit y = a * stories^b over {len(rows)} scales (time: above the {startup:.1f} s process start-up); "
          f"extrapolated to CNN/DM ({CNNDM_STORIES:,} stories):")
    total_s = 0.0
    peak = 0.0
    for s in STAGES:
        b_t, a_t = fit_power(xs, [max(r[f"{s}_s"] - startup, 0.1) for r in rows])
        # Memory: a start-up baseline plus what the corpus adds, fitted as a line (a power law on
        # the increase over a guessed baseline is too sensitive to the guess).
        slope, intercept = np.polyfit(xs, [r[f"{s}_mib"] for r in rows], 1)
        t = startup + a_t * CNNDM_STORIES ** b_t
        m = intercept + slope * CNNDM_STORIES
        total_s += t
        peak = max(peak, m)
        print(f"  {s:10} time exponent {b_t:.2f} -> {t / 60:7.1f} min;  peak RSS {intercept:.0f} MiB + "
              f"{slope * 1024:.1f} KiB/story -> {m / 1024:6.2f} GiB")
    b_g, a_g = fit_power(xs, [r["distinct"] for r in rows])
    print(f"  distinct 3-grams exponent {b_g:.2f} -> {a_g * CNNDM_STORIES ** b_g:,.0f}")
    print(f"  all three stages: {total_s / 60:.1f} min; largest peak {peak / 1024:.2f} GiB "
          f"({'fits' if peak < MEMORY else 'does NOT fit'} in 24 GiB; goal <= 8 GiB: "
          f"{'met' if peak <= 8 * 1024 else 'NOT met'})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--stories", type=Path, default=STORIES)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N real stories (a quick check)")
    ap.add_argument("--from-rows", type=Path, help="print the tables of an earlier run's rows.json")
    ap.add_argument("--build", nargs=2, metavar=("SCALE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.stories.is_file() and not args.from_rows:
        print(f"{args.stories}: not found (the shared data is optional)", file=sys.stderr)
        return 1
    if args.from_rows:
        saved = json.loads(args.from_rows.read_text())
        report(saved["rows"], saved["startup"])
        return 0
    if args.build:
        scale, out = args.build
        print(scaled_corpus(read_stories(args.stories)[: args.limit], int(scale), Path(out)))
        return 0
    root = args.work or Path(tempfile.mkdtemp(prefix="sumpipe-scaling-"))
    print(f"{args.limit or 'all'} CNN stories; scales {args.scales}; {os.cpu_count()} cores, load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; work folder {root}", flush=True)
    rows = [measure(args.stories, args.limit, k, root) for k in args.scales]
    startup = startup_seconds(root)
    (root / "rows.json").write_text(json.dumps({"rows": rows, "startup": startup}, indent=1))
    report(rows, startup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
