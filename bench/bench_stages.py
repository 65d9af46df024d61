"""The stage-by-stage time profile of one `dvc repro`: where the default run's minutes go.

    python bench/bench_stages.py                  # runs `dvc repro` here, then prints the profile
    python bench/bench_stages.py -- --force       # arguments after -- go to `dvc repro`
    python bench/bench_stages.py --log run.log    # the profile of a finished run's log (below)

The run is `dvc repro` itself, as a user runs it (one DVC process, each stage's command a process of
its own): a stage's time is the wall clock from DVC's "Running stage 'S'" line to the next stage's
(or the end), so it counts the stage's Python start-up (`import torch`: every stage that trains,
decodes, evaluates or reports pays it) and DVC's own hashing of its outputs. Each line of the run is
written with its time (seconds since the start) to `--save` (default `timings/stage_times.log`, beside
the training timings, not tracked), which `--log` reads back. Printed: seconds per stage, sorted, its share of the total, the totals per kind of
stage (the part before `@`: train, decode, extractive, ...) and the start-up cost one stage pays
(`python -c "import torch"`, timed after the run). Run it on an idle machine and name the CPU
(`lscpu`: model, AVX-512 or not) with the figures.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=Path, help="profile this saved log instead of running dvc repro")
    X
    parser.add_argument("dvc_args", nargs="*", help="arguments for `dvc repro` (after --)")
    args = parser.parse_args()
    lines = read_log(args.log) if args.log else run_and_log(args.dvc_args, args.save)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    print_profile(stage_seconds(lines), time.perf_counter() - start)


if __name__ == "__main__":
    main()
