"""Training runs side by side: one worker process per core, one run per process.

The default run trains ten independent runs (M1, M2 and PG-cov with 3 seeds each, BERT2S with one).
These small models gain little from a second thread in one process (M1: x1.31-1.44 on 2 cores), while
two one-thread processes side by side give x1.90 the throughput of one. So `train_runs` starts each
run in a fresh worker process with the run's own fixed thread count (`train.threads`, 1 by default),
at most `workers` at a time:

- **Same bytes whatever runs beside it.** A run's weights depend on its seed, configuration, inputs,
  code and thread count, never on the number of workers, the machine's core count or the order runs
  are scheduled in: each worker is a new process (spawned, not forked, so no state of the parent or of
  an earlier run carries over) running exactly what `sumpipe train --model M --seed S` runs alone.
  `tests/train/test_pool.py` checks 1 and 2 workers write the same bytes.
- **Longest first.** Runs are started in decreasing order of their expected seconds: the last full
  training of the same run (or model) in `timings/train/`, else a rough figure by family
  (`FALLBACK_SECONDS`). A long run started last would leave the other cores idle at the end.
- **Resume and skipping.** Each run keeps its own checkpoint folder and fingerprint
  (`sumpipe.train.stage`): a killed pool resumes each run where it stopped, and a run whose finished
  checkpoint matches its fingerprint only rewrites its (identical) model folder, in seconds, so a
  `dvc repro` after changing one model retrains that model's runs alone.
- **One terminal.** Workers draw no progress bars: they report their steps to this process, which
  shows one bar (runs done, and the step of each run in flight), and prints their lines (epoch ends,
  warnings) prefixed with the run ("M1/seed-2: epoch 1: ...").
- **Failures.** A run that fails ends in a one-line error naming it; runs already going finish (their
  models are written whole), no new run starts, and the pool then raises the first error. Ctrl-C or
  SIGTERM stops every worker (each resumes from its last checkpoint); the parent holds every run's
  lock (`exclusive_model_folder`) while its workers train.

The worker count: `train.workers` (or `--workers`); null = the cores this process may use (its CPU
affinity, e.g. `taskset`, and a cgroup CPU quota) divided by the widest run's thread count, at most
one worker per run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sumpipe.errors import SumpipeError
from sumpipe.inputs import loads_json, read_capped
from sumpipe.names import seed_folder

# Expected seconds of a run never timed on this machine, by family: the measured runs of the default run
# (timings/train on 2 cores with AVX-512: M1/M2 44-59 s, PG-cov 43-48 s, BERT2S 98 s). Only the
# order runs start in depends on them (longest first), never a result.
MAX_TIMINGS_BYTES = 1 << 20  # a timings file is a few hundred bytes
FALLBACK_SECONDS = {"bert2stage": 100.0, "transformer": 50.0, "rnn": 45.0}
DEFAULT_SECONDS = 50.0
PROGRESS_INTERVAL_S = 0.5  # a worker reports its step at most this often
# A worker's environment names its run as params.yaml's `runs:` does ("M1-2"), for whoever watches the processes
# of a stage (tests/reliability's fault injection labels a worker's writes `train@M1-2` with it)
RUN_VARIABLE = "SUMPIPE_RUN"


@dataclasses.dataclass(frozen=True)
class PoolRun:
    """One training run of the pool: a model of params.yaml, one of its seeds, its expected seconds."""

    model: str
    seed: int
    threads: int | None
    expected_seconds: float = DEFAULT_SECONDS

    @property
    def label(self) -> str:
        """The run as `TrainInputs.run` names it ("M1/seed-2")."""
        return f"{self.model}/{seed_folder(self.seed)}"


# --------------------------------------------------------------------------------------------
# How many workers
# --------------------------------------------------------------------------------------------
def available_cores() -> int:
    """The CPU cores this process may use: its affinity (`taskset -c 0` gives 1), capped by a cgroup v2
    CPU quota (a container limited to 2 CPUs on a 64-core host gives 2)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cgroup_cpu_quota()
    return max(1, min(cores, quota) if quota else cores)


def _cgroup_cpu_quota(path: Path = Path("/sys/fs/cgroup/cpu.max")) -> int | None:
    """ceil(quota / period) of the cgroup v2 file `cpu.max` ("200000 100000" -> 2; "max ..." -> None)."""
    try:
        quota, period = path.read_text().split()[:2]
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        return None


def worker_count(requested: int | None, threads: Sequence[int | None], cores: int | None = None) -> int:
    """Workers for runs of the given thread counts: `requested` (`train.workers`), else as many as the
    cores hold the widest run (a run of `threads: null` uses every core: one worker), never more than
    one per run and never fewer than one."""
    if not threads:
        return 1
    if requested is not None:
        return max(1, min(requested, len(threads)))
    cores = cores or available_cores()
    widest = max(min(t or cores, cores) for t in threads)
    return max(1, min(len(threads), cores // widest))


# --------------------------------------------------------------------------------------------
# Which run first
# --------------------------------------------------------------------------------------------
def expected_seconds(timings_dir: Path, model: str, seed: int, family: str) -> float:
    """The seconds the last full training of this run took here (timings/train/<model>/seed-<seed>.json,
    a run that resumed from step 0), else of another seed of the model, else `FALLBACK_SECONDS`."""
    folder = Path(timings_dir) / "train" / model
    own = folder / f"{seed_folder(seed)}.json"
    for path in [own, *sorted(p for p in folder.glob("seed-*.json") if p != own)] if folder.is_dir() else []:
        try:  # only orders the runs: a timings file that cannot be read is passed over
            figures = loads_json(read_capped(path, MAX_TIMINGS_BYTES, "a timings file"), str(path))
        except SumpipeError:
            continue
        if not isinstance(figures, dict):
            continue
        seconds = figures.get("train_seconds_this_run")
        if figures.get("resumed_from_step") == 0 and isinstance(seconds, (int, float)) and seconds > 0:
            return float(seconds)
    return FALLBACK_SECONDS.get(family, DEFAULT_SECONDS)


def longest_first(runs: Sequence[PoolRun]) -> list[PoolRun]:
    """`runs` by decreasing expected seconds; equal ones keep their order (params.yaml's)."""
    return sorted(runs, key=lambda r: -r.expected_seconds)


# --------------------------------------------------------------------------------------------
# The worker process
# --------------------------------------------------------------------------------------------
class _LinesToParent:
    """A text stream that sends each complete line to the parent as ("line", label, text): the engine's
    epoch lines and any warning reach the terminal whole and prefixed with their run."""

    def __init__(self, send: Callable[[tuple], None], label: str) -> None:
        self.send, self.label, self.pending = send, label, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.strip():
                self.send(("line", self.label, line.rstrip("\r")))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _die_with_parent() -> None:
    """Linux: this worker gets SIGTERM when the pool's process dies, even by SIGKILL (no orphan trains on
    and rewrites a model folder after the stage was reported failed)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _no_shared_semaphores() -> None:
    """tqdm's default lock is a multiprocessing semaphore, registered with the pool's resource tracker: a
    worker killed (SIGKILL, the out-of-memory killer) never unlinks it, and the tracker ends the run with
    "There appear to be 1 leaked semaphore objects" after the pool's error line. A worker draws no bar and
    writes from one thread, so a thread lock serves."""
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def _work(params_path: str, model: str, seed: int, resume: bool, queue: Any) -> None:
    """A worker: train one run exactly as `sumpipe train --model MODEL --seed SEED` does alone (its lock is
    held by the pool), reporting steps, lines and the outcome on `queue`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the pool decides
    _die_with_parent()
    _no_shared_semaphores()
    label = f"{model}/{seed_folder(seed)}"
    send = queue.put
    sys.stderr = _LinesToParent(send, label)
    try:
        from sumpipe.config import load_params
        from sumpipe.numerics import pin_numerics

        params = load_params(Path(params_path))
        pin_numerics(params.train.numerics)  # before torch loads (the next import)
        from sumpipe.train.stage import resolve_inputs, train_model

        last = [0.0]

        def on_step(step: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL_S or step >= total:
                last[0] = now
                send(("step", label, (step, total)))

        summary = train_model(resolve_inputs(params, model, seed), resume=resume, progress=False, on_step=on_step)
        send(("done", label, summary))
    except SumpipeError as exc:
        send(("error", label, str(exc)))
    except Exception as exc:  # a bug: its traceback to the terminal, then the one line
        for line in traceback.format_exc().splitlines():
            send(("line", label, line))
        send(("error", label, f"{type(exc).__name__}: {exc}"))
    finally:
        sys.stderr.flush()


# --------------------------------------------------------------------------------------------
# The pool
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass
class _Going:
    run: PoolRun
    process: Any
    started: float = 0.0  # seconds since the pool started
    step: int = 0
    total: int = 0
    finished: bool = False


class _Display:
    """The pool's terminal: one bar of finished runs with each running run's step as its postfix, and the
    workers' lines written above it (escaped: a path or a name in them cannot forge a line)."""

    def __init__(self, n_runs: int, workers: int, progress: bool | None) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=n_runs, desc=f"train ({workers} worker{'s' * (workers > 1)})", unit="run",
                        file=sys.stderr, disable=None if progress is None else not progress, dynamic_ncols=True)

    def line(self, text: str) -> None:
        from tqdm import tqdm

        from sumpipe.terminal import printable

        tqdm.write(printable(text), file=sys.stderr)

    def update(self, going: Sequence[_Going], finished: int = 0) -> None:
        if finished:
            self.bar.update(finished)
        self.bar.set_postfix_str(", ".join(f"{g.run.label} {g.step}/{g.total or '?'}" for g in going), refresh=True)

    def close(self) -> None:
        self.bar.close()


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """`os.environ[name] = value` within the block (a spawned worker starts with the environment of that moment)."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


class _Stopped(Exception):
    """SIGTERM reached the pool."""


@contextlib.contextmanager
def _sigterm_stops_the_pool() -> Iterator[None]:
    """Within it, SIGTERM raises `_Stopped` (in the main thread), so the pool stops its workers first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Stopped()

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def run_pool(params_path: Path, runs: Sequence[PoolRun], workers: int, *, resume: bool = True,
             progress: bool | None = None, timings_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Train `runs` (longest first) in at most `workers` processes at a time; return each run's summary
    (`train_model`'s) by label. The caller holds the runs' locks. On a failed run: the runs in flight
    finish, none starts, and the first failure is raised as one line naming its run; on Ctrl-C or SIGTERM
    every worker is stopped (see the module docstring). With `timings_dir`, the schedule (each run's start
    and wall seconds in its worker, the worker and core counts) goes to `<timings_dir>/pool/train.json`, which
    bench/bench_stages.py projects to other core counts from."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    waiting = list(longest_first(runs))
    going: dict[str, _Going] = {}
    summaries: dict[str, dict[str, Any]] = {}
    schedule: dict[str, dict[str, float]] = {}
    failures: list[tuple[str, str]] = []
    display = _Display(len(runs), workers, progress)
    start = time.monotonic()
    try:
        with _sigterm_stops_the_pool():
            while waiting or going:
                while waiting and len(going) < workers and not failures:
                    run = waiting.pop(0)
                    process = context.Process(target=_work, name=f"train {run.label}", daemon=True,
                                              args=(str(params_path), run.model, run.seed, resume, queue))
                    with _environment(RUN_VARIABLE, f"{run.model}-{run.seed}"):
                        process.start()
                    going[run.label] = _Going(run, process, started=time.monotonic() - start)
                if not going:
                    break
                for current in _handle(queue, going, summaries, failures, display):
                    now = time.monotonic() - start
                    schedule[current.run.label] = {"started_s": round(current.started, 2),
                                                   "seconds": round(now - current.started, 2)}
    except (KeyboardInterrupt, _Stopped):
        _stop(going.values())
        display.close()
        stopped = ", ".join(g.run.label for g in going.values() if not g.finished)
        display.line(f"train: stopped{f' {stopped}' if stopped else ''} (each resumes from its last checkpoint)")
        raise KeyboardInterrupt from None
    finally:
        _stop(going.values())
        display.close()
    if failures:
        label, message = failures[0]
        others = [f[0] for f in failures[1:]]
        also = f" (also failed: {', '.join(others)})" if others else ""
        raise SumpipeError(f"train {label}: {message}{also}")
    if timings_dir is not None:
        from sumpipe.timings import record_run

        record_run(timings_dir, "pool", "train", {"workers": workers, "cores": available_cores(),
                                                   "seconds": round(time.monotonic() - start, 2), "runs": schedule})
    return summaries


def _handle(queue: Any, going: dict[str, _Going], summaries: dict[str, dict[str, Any]],
            failures: list[tuple[str, str]], display: _Display) -> list[_Going]:
    """Wait for the workers' next messages (or a worker's end) and act on them; return the runs that ended."""
    import queue as queues

    try:
        messages = [queue.get(timeout=0.2)]
    except queues.Empty:
        messages = []
    while True:  # everything already sent, so a worker's last message is read before its end is judged
        try:
            messages.append(queue.get_nowait())
        except queues.Empty:
            break
    finished = 0
    for kind, label, payload in messages:
        current = going.get(label)
        if kind == "step" and current is not None:
            current.step, current.total = payload
        elif kind == "line":
            display.line(f"{label}: {payload}")
        elif kind == "done" and current is not None:
            current.finished, finished = True, finished + 1
            summaries[label] = payload
            display.line(_finished_line(current.run, payload))
        elif kind == "error" and current is not None:
            current.finished = True
            _failed(failures, label, payload, going, display)
    ended = []
    for label, current in list(going.items()):
        if current.process.is_alive():
            continue
        current.process.join()
        if not current.finished:  # ended without a word: killed (out of memory?) or crashed in C
            current.finished = True
            _failed(failures, label, f"the worker process died (exit code {current.process.exitcode})", going,
                    display)
        ended.append(going.pop(label))
    display.update(list(going.values()), finished)
    return ended


def _failed(failures: list[tuple[str, str]], label: str, message: str, going: dict[str, _Going],
            display: _Display) -> None:
    """Record a failed run. Its error line is printed once, by the command, when the pool ends (it used to
    be printed here too, so the first failure came twice); here only which runs are still finishing, and a
    later failure's own message (the final line names it among "also failed")."""
    failures.append((label, message))
    if len(failures) > 1:
        display.line(f"train {label} failed too: {message}")
    others = [g.run.label for g in going.values() if not g.finished]
    if len(failures) == 1 and others:
        display.line(f"train {label} failed; the runs in flight finish first ({', '.join(others)}), then its error")


def _finished_line(run: PoolRun, summary: dict[str, Any]) -> str:
    """A run's end on the terminal: its steps and how long it trained (the caller prints each run's result
    line in params.yaml's order once all have finished)."""
    if summary.get("resumed_from_step") == summary.get("steps"):
        return f"{run.label}: finished earlier ({summary.get('steps')} steps): its model written again"
    return f"{run.label}: done, {summary.get('steps')} steps in {summary.get('train_seconds_this_run', 0):.0f} s"


def _stop(going: Any, grace_s: float = 10.0) -> None:
    """SIGTERM every live worker, then wait for them (SIGKILL after `grace_s`)."""
    processes = [g.process for g in going if g.process.is_alive()]
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + grace_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
