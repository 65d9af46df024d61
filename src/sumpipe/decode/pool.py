"""The predict stage: every summarizer of params.yaml writes its summaries of the decode split, side by side.

params.yaml names three kinds of summarizer; each is one command, which writes `predictions/<name>/`:

    extractive.systems: lead  ──→ sumpipe extractive --system lead           ──→ predictions/lead/
    runs: M1-2                ──→ sumpipe decode --model M1 --train-seed 2   ──→ predictions/M1/seed-2/
    ensembles: M1-ens         ──→ sumpipe decode --model M1-ens              ──→ predictions/M1-ens/

One such command keeps one core busy for a few seconds (`decode.threads: 1`), about 2 s of which are
Python's and torch's start-up, and `dvc repro` runs one stage at a time. So one stage runs all the
commands, each in a process of its own, at most `decode.workers` at a time (null: the cores this process
may use divided by `decode.threads`, counted as the train stage's pool counts them), longest first:

- **Same bytes as the command run alone.** A job is that command line in a fresh process (`python -m
  sumpipe.cli ...`, the same params file): what runs beside it, the worker count and the order cannot
  reach its output. `tests/decode/test_pool.py` checks 1 and 2 workers write the same bytes.
- **Longest first.** Ensembles (every seed's model at each step), then the training runs, then the
  extractive systems (a second or two each), each kind in params.yaml's order.
- **One terminal.** A job draws no progress bar (`TQDM_DISABLE`); its lines go to a file of its own and
  are printed whole when it ends, under one bar of finished jobs.
- **Failures.** A job that fails ends no other: the jobs in flight finish, none starts, and the stage
  ends with the first failure's last line, naming its job. Ctrl-C or SIGTERM stops every job; a job's
  process gets SIGTERM when the stage's process dies (Linux), so none writes after the stage failed.
  Each prediction file is written atomically, and DVC re-runs the whole stage after a failure.

A job's environment names it (`SUMPIPE_RUN`, as `runs:` and the train stage's pool do: "M1-2",
"M1-ens", "lead"), for whoever watches the stage's processes (tests/reliability's fault injection).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from sumpipe.errors import SumpipeError
from sumpipe.train.pool import RUN_VARIABLE
from sumpipe.train.pool import worker_count as runs_side_by_side

POLL_S = 0.05  # how often the stage looks for a finished job (a job takes seconds)
STOP_GRACE_S = 10.0  # SIGTERM, then SIGKILL after this long


@dataclasses.dataclass(frozen=True)
class Job:
    """One summarizer's command: `name` as params.yaml spells it ("M1-2", "M1-ens", "lead")."""

    name: str
    args: tuple[str, ...]  # after `sumpipe`, e.g. ("decode", "--model", "M1", "--train-seed", "2")


def plan_jobs(params: Any) -> list[Job]:
    """Every summarizer of `params` (a loaded `Params`) as a job, longest first (module docstring)."""
    ensembles = [Job(name, ("decode", "--model", name)) for name in params.ensembles]
    runs = [Job(name, ("decode", "--model", run.model, "--train-seed", str(run.seed)))
            for name, run in params.runs.items()]
    systems = [Job(name, ("extractive", "--system", name)) for name in params.extractive.systems]
    return [*ensembles, *runs, *systems]


def worker_count(requested: int | None, threads: int | None, jobs: int, cores: int | None = None) -> int:
    """Jobs side by side, by the train stage's rule for its runs: `requested` (`decode.workers`), else as
    many as the cores hold jobs of `threads` torch threads (null: every core, so one), counting the cores
    as `sumpipe.train.pool.available_cores` does (the affinity, capped by a cgroup CPU quota); at least
    one, never more than the jobs."""
    return runs_side_by_side(requested, [threads] * jobs, cores)


def run_jobs(params_path: Path, jobs: Sequence[Job], workers: int, *, progress: bool | None = None,
             echo: Any = None) -> dict[str, float]:
    """Run `jobs` at most `workers` at a time (module docstring); return each job's wall seconds by name.
    `echo(line)` prints a job's lines as it ends (default: to stderr above the bar)."""
    from tqdm import tqdm

    from sumpipe.terminal import printable

    bar = tqdm(total=len(jobs), desc=f"predict ({workers} worker{'s' * (workers > 1)})", unit="job",
               file=sys.stderr, disable=None if progress is None else not progress, dynamic_ncols=True)
    say = echo or (lambda line: tqdm.write(printable(line), file=sys.stderr))
    waiting, going = list(jobs), list[_Going]()
    seconds: dict[str, float] = {}
    failures: list[tuple[str, str]] = []
    try:
        with _sigterm_stops_the_stage(), tempfile.TemporaryDirectory(prefix="sumpipe-predict-") as logs:
            while waiting or going:
                while waiting and len(going) < workers and not failures:
                    going.append(_Going.start(waiting.pop(0), params_path, Path(logs), len(jobs) - len(waiting)))
                if not going:
                    break
                time.sleep(POLL_S)
                for current in [g for g in going if g.process.poll() is not None]:
                    going.remove(current)
                    seconds[current.job.name] = round(time.monotonic() - current.started, 2)
                    lines = current.lines()
                    for line in lines:
                        say(line)
                    if current.process.returncode != 0:
                        failures.append((current.job.name, _failure(current.process.returncode, lines)))
                    bar.update(1)
                bar.set_postfix_str(", ".join(g.job.name for g in going), refresh=False)
    finally:
        _stop(going)
        bar.close()
    if failures:
        (name, message), others = failures[0], [f[0] for f in failures[1:]]
        also = f" (also failed: {', '.join(others)})" if others else ""
        raise SumpipeError(f"predict {name}: {message}{also}")
    return seconds


@dataclasses.dataclass
class _Going:
    job: Job
    process: subprocess.Popen
    log: IO[bytes]
    started: float

    @classmethod
    def start(cls, job: Job, params_path: Path, logs: Path, number: int) -> _Going:
        log = open(logs / f"{number}.log", "w+b")  # noqa: SIM115 (closed by `lines` or `_stop`)
        env = {**os.environ, RUN_VARIABLE: job.name, "TQDM_DISABLE": "1"}
        command = [sys.executable, "-m", "sumpipe.cli", *job.args, "--params", str(params_path)]
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, preexec_fn=_death_signal())
        return cls(job, process, log, time.monotonic())

    def lines(self) -> list[str]:
        """What the job printed, one string a line (its end, or so far when it was stopped)."""
        self.log.seek(0)
        text = self.log.read().decode("utf-8", errors="replace")
        self.log.close()
        return [line.rstrip("\r") for line in text.splitlines() if line.strip()]


def _failure(returncode: int, lines: list[str]) -> str:
    """A failed job's one line: its `error:` line (the command's own words), else how it ended."""
    errors = [line.removeprefix("error: ") for line in lines if line.startswith("error: ")]
    if errors:
        return errors[-1]
    if returncode < 0:
        return f"its process was killed ({signal.Signals(-returncode).name})"
    return f"exit status {returncode}" + (f": {lines[-1]}" if lines else "")


def _death_signal() -> Any:
    """What a job's process runs before its command (Linux): ask for SIGTERM when the stage's process dies,
    even by SIGKILL. prctl is looked up here, in the stage's process, so the forked child calls it alone."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class _Stopped(Exception):
    """SIGTERM reached the stage."""


@contextlib.contextmanager
def _sigterm_stops_the_stage() -> Iterator[None]:
    """Within it, SIGTERM raises `_Stopped` (main thread only), so the jobs are stopped first."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Stopped()

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except _Stopped:
        raise KeyboardInterrupt from None
    finally:
        signal.signal(signal.SIGTERM, before)


def _stop(going: Sequence[_Going]) -> None:
    """SIGTERM every job still running, then wait for it (SIGKILL after STOP_GRACE_S)."""
    for current in going:
        if current.process.poll() is None:
            current.process.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for current in going:
        try:
            current.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            current.process.kill()
            current.process.wait()
        current.log.close()
