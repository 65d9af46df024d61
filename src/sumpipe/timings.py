"""Wall-clock figures of a stage run, kept out of DVC's outputs so a rerun leaves dvc.lock unchanged.

On the same CPU type a rerun rebuilds weights, logs and predictions bit for bit; the time it took
differs every run. Had timings stayed inside those artifacts, every rerun would change their hashes
in dvc.lock. Stages write them instead under `paths.timings` (`timings/`: gitignored and named
nowhere in dvc.yaml, so DVC neither hashes nor caches it):

    timings/<stage>/<name>.json   the last run's figures: {"stage", "name", "finished" (UTC), ...}
    timings/<stage>/<name>.csv    a training run's throughput per logging interval: step, tokens_per_s

Each run overwrites its own files, replaced by rename (a link there is replaced, never followed); a
stage calls `check_writable` before it spends its time, so a folder in a file's place or a read-only
`timings/` is a one-line error at the start, not after the run. A resumed training run's figures cover
the steps it trained (`resumed_from_step` says from where), and one that trained nothing (its
checkpoint was finished) leaves the throughput of the last training in place.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from sumpipe.io.atomic import atomic_path, write_json
from sumpipe.io.bookkeeping import check_replaceable

THROUGHPUT_COLUMNS = ("step", "tokens_per_s")


def check_writable(timings_dir: str | Path, stage: str, name: str, throughput: bool = False) -> None:
    """Before a run: its figures (and, with `throughput`, its throughput curve) can be written."""
    folder = Path(timings_dir) / stage
    check_replaceable(folder / f"{name}.json", "this run's timings")
    if throughput:
        check_replaceable(folder / f"{name}.csv", "this run's throughput curve (timings)")


def record_run(timings_dir: str | Path, stage: str, name: str, figures: dict[str, Any]) -> Path:
    """Write `<timings_dir>/<stage>/<name>.json` with `figures` (seconds, rates, resume provenance)."""
    finished = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    record = {"stage": stage, "name": name, "finished": finished, **figures}
    return write_json(record, Path(timings_dir) / stage / f"{name}.json")


def write_throughput(rows: list[dict[str, Any]], timings_dir: str | Path, stage: str, name: str) -> Path:
    """Write `<timings_dir>/<stage>/<name>.csv` (step, tokens_per_s) for `dvc plots`; atomic."""
    import pandas as pd

    path = Path(timings_dir) / stage / f"{name}.csv"
    with atomic_path(path) as tmp:
        pd.DataFrame(rows, columns=list(THROUGHPUT_COLUMNS)).to_csv(tmp, index=False)
    return path
