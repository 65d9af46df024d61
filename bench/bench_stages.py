"""The stage-by-stage time profile of the pipeline: each dvc.yaml stage run alone, timed.

    python bench/bench_stages.py                         # every stage, in `dvc stage list` order (a full run)
    python bench/bench_stages.py download preprocess     # the stages named (`dvc stage list` names)

Each stage runs as `dvc repro --single-item --force <stage>` (its inputs must exist: run the stages in
order, as the default does), timed on the wall clock. Printed: seconds per stage, its share of the total,
and the start-up cost every stage pays: one `sumpipe --help` (Python, Typer, and the imports of the
command layer) and one `python -c "import torch"`, the latter paid by every stage that trains, decodes,
evaluates or reports. Run it on an idle machine; it changes the workspace like `dvc repro` does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def stage_names() -> list[str]:
    out = subprocess.run(["dvc", "stage", "list", "--name-only"], check=True, capture_output=True, text=True)
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stages", nargs="*", help="stages to time (default: all, in `dvc stage list` order)")
    args = parser.parse_args()
    stages = args.stages or stage_names()
    startup = timed(["sumpipe", "--help"])
    torch_import = timed([sys.executable, "-c", "import torch"])
    seconds = {}
    for stage in stages:
        seconds[stage] = timed(["dvc", "repro", "--single-item", "--force", stage])
        print(f"{stage:<32} {seconds[stage]:8.1f} s", file=sys.stderr, flush=True)
    total = sum(seconds.values())
    print(f"{'stage':<32} {'seconds':>8} {'share':>7}")
    for stage, s in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"{stage:<32} {s:8.1f} {100 * s / total:6.1f}%")
    print(f"{'total':<32} {total:8.1f}")
    print(f"start-up: `sumpipe --help` {startup:.2f} s, `import torch` {torch_import:.2f} s; "
          f"x {len(stages)} stages: {startup * len(stages):.0f} s and at most {torch_import * len(stages):.0f} s "
          f"({100 * (startup + torch_import) * len(stages) / total:.0f}% of the total at most)")


if __name__ == "__main__":
    main()
