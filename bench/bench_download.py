"""Download-stage figures: pydoc corpus size and build time per package, local loading speed.

    python bench/bench_download.py [--shared ../shared/data]

Prints one line per package (files parsed, pairs kept, CPU and wall seconds) and, when the shared
data folder exists, the time to load every file in it through the `local` loader.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from sumpipe.data.pydoc_corpus import PydocOptions
from sumpipe.data.local import load_local
from sumpipe.data.pydoc_corpus import build_pydoc


def timed(fn):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = parser.parse_args()

    total_pairs = total_wall = total_cpu = 0.0
    for package in PydocOptions().packages:
        (pairs, info), wall, cpu = timed(lambda: build_pydoc(PydocOptions(packages=[package])))
        version = info["packages"].get(package, "not installed")
        print(f"pydoc {package:8s} {version:22s} files {info['files']:5d}  pairs {len(pairs):5d}  "
              f"cpu {cpu:5.1f} s  wall {wall:5.1f} s")
        total_pairs, total_wall, total_cpu = total_pairs + len(pairs), total_wall + wall, total_cpu + cpu
    print(f"pydoc total: {int(total_pairs)} pairs before cross-package deduplication, "
          f"cpu {total_cpu:.1f} s, wall {total_wall:.1f} s")

    if args.shared.is_dir():
        (rows, stats), wall, cpu = timed(lambda: load_local(args.shared))
        print(f"local {args.shared}: {len(rows)} examples from {len(stats['files'])} files "
              f"({len(stats['skipped_files'])} skipped), cpu {cpu:.1f} s, wall {wall:.1f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
