"""The stage-by-stage time profile of one `dvc repro`: where the default run's minutes go, and what more
cores would buy.

    python bench/bench_stages.py                  # runs `dvc repro` here, then prints the profile
    python bench/bench_stages.py -- --force       # arguments after -- go to `dvc repro`
    python bench/bench_stages.py --log run.log    # the profile of a finished run's log (below)
    python bench/bench_stages.py --log run.log --project 8 16   # ... and the run projected to 8 and 16 cores

The run is `dvc repro` itself, as a user runs it (one DVC process, each stage's command a process of
its own): a stage's time is the wall clock from DVC's "Running stage 'S'" line to the next stage's
(or the end), so it counts the stage's Python start-up (`import torch`: every stage that trains,
decodes, evaluates or reports pays it) and DVC's own hashing of its outputs. Each line of the run is
written with its time (seconds since the start) to `--save` (default `timings/stage_times.log`, beside
the training timings, not tracked), which `--log` reads back. Printed: seconds per stage, sorted, its share
of the total, the totals per kind of stage (the part before `@`, where a stage has one) and the
start-up cost one stage pays (`python -c "import torch"`, timed after the run). Run it on an idle machine
and name the CPU (`lscpu`: model, AVX-512 or not) with the figures.

`--project N ...`: the train stage trains its runs side by side (`sumpipe.train.pool`), and its schedule
(each run's wall seconds in its worker) is in `timings/pool/train.json` (`--pool`). On N cores the pool has
min(N // threads, runs) workers; the projection replays the runs longest first on that many workers (the
pool's order) and keeps everything else as measured: the train stage's time outside its pool (start-up,
DVC's hashing) and every other stage (each uses the workers or threads params.yaml gives it, not the
cores; the predict stage's summarizers run `decode.workers` at a time, one per core by default, so on more
cores it too would be shorter than projected). The runs' seconds were measured with as many runs side by side as that pool had, so the
projection holds as far as a run on a bigger machine takes as long as here (memory bandwidth shared by
more runs can slow each).

The scaling measurement, each on a fresh clone (or with `rm -rf checkpoints timings` first: a
run whose finished checkpoint matches is not trained again, so a forced rerun alone trains nothing),
alone on the machine:

    taskset -c 0 python bench/bench_stages.py --save timings/stages-1core.log -- --force    # 1 core: 1 worker
    python bench/bench_stages.py --save timings/stages-2core.log --project 8 16 -- --force  # all cores (2 here)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

STAGE = re.compile(r"Running stage '([^']+)'")


def run_and_log(dvc_args: list[str], save: Path) -> list[tuple[float, str]]:
    """Run `dvc repro ARGS`, echoing its output, and return its lines with their times."""
    start = time.perf_counter()
    lines: list[tuple[float, str]] = []
    save.parent.mkdir(parents=True, exist_ok=True)
    with subprocess.Popen(["dvc", "repro", *dvc_args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, bufsize=1) as proc, save.open("w") as log:
        assert proc.stdout is not None
        for line in proc.stdout:
            stamp = time.perf_counter() - start
            lines.append((stamp, line.rstrip("\n")))
            log.write(f"{stamp:.2f}\t{line}")
            sys.stdout.write(line)
        end = time.perf_counter() - start
        log.write(f"{end:.2f}\t(end, exit status {proc.wait()})\n")
    lines.append((end, "(end)"))
    if proc.returncode:
        sys.exit(f"dvc repro exited with status {proc.returncode}; its log: {save}")
    return lines


def read_log(path: Path) -> list[tuple[float, str]]:
    """The (time, line) pairs `run_and_log` saved."""
    out = []
    for row in path.read_text().splitlines():
        stamp, _, line = row.partition("\t")
        out.append((float(stamp), line))
    return out


def stage_seconds(lines: list[tuple[float, str]]) -> dict[str, float]:
    """{stage: seconds from its "Running stage" line to the next one (or the last line)}."""
    starts = [(stamp, match.group(1)) for stamp, line in lines if (match := STAGE.search(line))]
    ends = [stamp for stamp, _ in starts[1:]] + [lines[-1][0]]
    return {name: end - stamp for (stamp, name), end in zip(starts, ends)}


def print_profile(seconds: dict[str, float], torch_import: float | None) -> None:
    total = sum(seconds.values())
    print(f"\n{'stage':<32} {'seconds':>8} {'share':>7}")
    for stage, s in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"{stage:<32} {s:8.1f} {100 * s / total:6.1f}%")
    print(f"{'total (stages)':<32} {total:8.1f}")
    kinds: dict[str, list[float]] = defaultdict(list)
    for stage, s in seconds.items():
        kinds[stage.split("@")[0]].append(s)
    print(f"\n{'kind':<20} {'stages':>6} {'seconds':>8} {'share':>7}")
    for kind, values in sorted(kinds.items(), key=lambda item: -sum(item[1])):
        print(f"{kind:<20} {len(values):6d} {sum(values):8.1f} {100 * sum(values) / total:6.1f}%")
    if torch_import is not None:
        print(f"\nstart-up: `import torch` {torch_import:.2f} s a process; x {len(seconds)} stages: at most "
              f"{torch_import * len(seconds):.0f} s ({100 * torch_import * len(seconds) / total:.0f}% of the total)")


def makespan(seconds: list[float], workers: int) -> float:
    """Wall seconds of jobs of `seconds` started longest first, each on the worker that frees first."""
    loads = [0.0] * max(1, workers)
    for s in sorted(seconds, reverse=True):
        loads[loads.index(min(loads))] += s
    return max(loads)


def project(seconds: dict[str, float], pool: dict, cores: list[int], threads: int = 1) -> list[tuple[int, int, float]]:
    """(cores, workers, projected total seconds) for each core count: the run's stage seconds with the train
    stage's pool replayed on min(cores // threads, runs) workers (module docstring)."""
    runs = [r["seconds"] for r in pool["runs"].values()]
    total = sum(seconds.values())
    outside = seconds.get("train", pool["seconds"]) - pool["seconds"]  # the train stage around its pool
    rest = total - seconds.get("train", pool["seconds"])
    out = []
    for n in cores:
        workers = max(1, min(n // threads, len(runs)))
        out.append((n, workers, rest + outside + makespan(runs, workers)))
    return out


def print_projection(seconds: dict[str, float], pool_path: Path, cores: list[int], threads: int) -> None:
    pool = json.loads(pool_path.read_text())
    measured = sum(seconds.values())
    print(f"\nthe train stage's pool as measured: {len(pool['runs'])} runs on {pool['workers']} workers "
          f"({pool['cores']} cores): {pool['seconds']:.1f} s; the runs' seconds add up to "
          f"{sum(r['seconds'] for r in pool['runs'].values()):.1f} s")
    print(f"{'cores':>5} {'workers':>7} {'total s':>8} {'min:s':>6} {'vs measured':>11}")
    for n, workers, total in project(seconds, pool, cores, threads):
        print(f"{n:5d} {workers:7d} {total:8.1f} {int(total // 60):3d}:{int(total % 60):02d} "
              f"{100 * (total / measured - 1):+10.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=Path, help="profile this saved log instead of running dvc repro")
    parser.add_argument("--save", type=Path, default=Path("timings/stage_times.log"),
                        help="where the run's timed log goes (default: timings/stage_times.log)")
    parser.add_argument("--project", type=int, nargs="+", metavar="CORES",
                        help="also project the run to these core counts from the train stage's pool schedule")
    parser.add_argument("--pool", type=Path, default=Path("timings/pool/train.json"),
                        help="the train stage's pool schedule (default: timings/pool/train.json)")
    parser.add_argument("--threads", type=int, default=1, help="threads per training run (train.threads; default 1)")
    parser.add_argument("dvc_args", nargs="*", help="arguments for `dvc repro` (after --)")
    args = parser.parse_args()
    lines = read_log(args.log) if args.log else run_and_log(args.dvc_args, args.save)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    seconds = stage_seconds(lines)
    print_profile(seconds, time.perf_counter() - start)
    if args.project:
        print_projection(seconds, args.pool, args.project, args.threads)


if __name__ == "__main__":
    main()
