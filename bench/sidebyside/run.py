"""sumpipe against OpenNMT-py 3.5.1 on this CPU: training and beam-4 decoding, same shape, same data.

    bench/sidebyside/setup_onmt.sh                      # once: OpenNMT-py's own venv (/work/venv-onmt)
    python bench/sidebyside/run.py [--work DIR] [--repeats 3] [--warmup 2] [--steps 6] [--batch-size 16]
                                   [--decode-length 60] [--threads 2] [--onmt-python /work/venv-onmt/bin/python]

Both tools train the same model shape (onmt_train.yaml, sumpipe_side.ARCH) on the same prepared lines
(prepare.py) with the same batch (examples), `--threads` torch threads, and run `--warmup` + `--steps`
updates; the timed window starts at the end of the last warm-up update. Runs are interleaved
(sumpipe, OpenNMT-py, sumpipe, ...) because the machine is shared; each is a fresh process whose peak
RSS comes from wait4(). Then both decode the 100 test stories with beam 4 and min = max length
(`--decode-length`, so the work is equal however little the models learned), interleaved again.
Printed: per run and min / median of source+target tokens/s, s/update, peak RSS, loss at the start and
end of the run; decode documents/s; ratios sumpipe / OpenNMT-py of the medians and of the best runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TOOLS = ("sumpipe", "OpenNMT-py")


def child_env(threads: int) -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "PYTHONWARNINGS": "ignore"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run(cmd: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """Run a child to completion; (wall seconds, peak RSS MiB). Its output goes to `log`."""
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed; see {log}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def command(tool: str, what: str, args: argparse.Namespace, out: Path) -> list[str]:
    common = ["--work", str(args.work), "--threads", str(args.threads), "--out", str(out)]
    if tool == "sumpipe":
        base = [sys.executable, str(HERE / "sumpipe_side.py"), what, *common]
    else:
        base = [args.onmt_python, str(HERE / "onmt_side.py"), what, *common]
        if what == "train":
            base += ["--config", str(args.work / "onmt_train.yaml")]
    if what == "train":
        return base + ["--steps", str(args.warmup + args.steps), "--batch-size", str(args.batch_size)]
    return base + ["--beam", "4", "--length", str(args.decode_length), "--batch-size", str(args.batch_size)]


def train_figures(result: dict, warmup: int) -> dict:
    steps = result["steps"]
    timed = steps[warmup:]
    seconds = timed[-1]["t"] - steps[warmup - 1]["t"] if warmup else timed[-1]["t"] - result["start"]
    tokens = sum(s["src"] + s["tgt"] for s in timed)
    return {"tokens_s": tokens / seconds, "s_update": seconds / len(timed), "updates": len(timed),
            "loss_first": steps[0]["loss"], "loss_last": steps[-1]["loss"],
            "tokens_update": tokens / len(timed)}


def summary(values: list[float]) -> str:
    return f"min {min(values):8.2f}  median {statistics.median(values):8.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "sumpipe-sidebyside")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6, help="timed updates after the warm-up")
    ap.add_argument("--batch-size", type=int, default=16, help="examples per update (and per decode batch)")
    ap.add_argument("--decode-length", type=int, default=60)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--onmt-python", default="/work/venv-onmt/bin/python")
    ap.add_argument("--skip-train", action="store_true", help="decode the models of an earlier run")
    args = ap.parse_args()
    if not (args.work / "vocab.txt").is_file():
        from prepare import prepare  # noqa: PLC0415  (this folder is on sys.path when run as a script)

        prepare(args.work, 800, 100, 20000)
    env = child_env(args.threads)
    load = lambda: ", ".join(f"{x:.1f}" for x in os.getloadavg())  # noqa: E731
    print(f"{os.cpu_count()} cores, {args.threads} threads each; load average at start {load()}", flush=True)

    train: dict[str, list[dict]] = {t: [] for t in TOOLS}
    if not args.skip_train:
        print(f"\ntraining: {args.warmup} warm-up + {args.steps} timed updates of {args.batch_size} examples", flush=True)
        for rep in range(args.repeats):
            for tool in TOOLS:
                out = args.work / f"train-{tool}-{rep}.json"
                wall, rss = run(command(tool, "train", args, out), env, args.work / f"train-{tool}-{rep}.log")
                fig = {**train_figures(json.loads(out.read_text()), args.warmup), "rss": rss, "wall": wall}
                train[tool].append(fig)
                print(f"  run {rep + 1} {tool:10}: {fig['tokens_s']:8.0f} tokens/s  {fig['s_update']:6.2f} s/update  "
                      f"({fig['tokens_update']:.0f} tokens/update)  peak RSS {rss:6.0f} MiB  loss "
                      f"{fig['loss_first']:.2f} -> {fig['loss_last']:.2f}  process {wall:.0f} s; load {load()}",
                      flush=True)
        print("\ntraining summary (source+target tokens/s, padding excluded; s/update; peak RSS MiB):")
        for tool in TOOLS:
            rows = train[tool]
            print(f"  {tool:10} tokens/s {summary([r['tokens_s'] for r in rows])} | s/update "
                  f"{summary([r['s_update'] for r in rows])} | peak RSS {summary([r['rss'] for r in rows])} | "
                  f"loss falls in every run: {all(r['loss_last'] < r['loss_first'] for r in rows)}")
        ours, theirs = ([r["tokens_s"] for r in train[t]] for t in TOOLS)
        print(f"  ratio sumpipe / OpenNMT-py tokens/s: median x{statistics.median(ours) / statistics.median(theirs):.2f}, "
              f"best run x{max(ours) / max(theirs):.2f}")

    decode: dict[str, list[dict]] = {t: [] for t in TOOLS}
    print(f"\ndecoding: 100 test stories, beam 4, min = max length {args.decode_length}, batch {args.batch_size}",
          flush=True)
    for rep in range(args.repeats):
        for tool in TOOLS:
            out = args.work / f"decode-{tool}-{rep}.json"
            wall, rss = run(command(tool, "decode", args, out), env, args.work / f"decode-{tool}-{rep}.log")
            fig = json.loads(out.read_text())
            fig.update(docs_s=fig["docs"] / fig["seconds"], rss=rss)
            decode[tool].append(fig)
            print(f"  run {rep + 1} {tool:10}: {fig['docs_s']:6.2f} documents/s ({fig['docs']} in {fig['seconds']:.1f} s, "
                  f"mean {fig['mean_words']:.1f} words)  peak RSS {rss:6.0f} MiB; load {load()}", flush=True)
    print("\ndecoding summary (documents/s):")
    for tool in TOOLS:
        print(f"  {tool:10} {summary([r['docs_s'] for r in decode[tool]])}")
    ours, theirs = ([r["docs_s"] for r in decode[t]] for t in TOOLS)
    print(f"  ratio sumpipe / OpenNMT-py documents/s: median x{statistics.median(ours) / statistics.median(theirs):.2f}, "
          f"best run x{max(ours) / max(theirs):.2f}")
    print(f"load average at the end {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
