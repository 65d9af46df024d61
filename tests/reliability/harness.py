"""What every reliability case shares: run a `sumpipe` command as a user would, and classify how it
ended.

A case ends in exactly one of
- ``ok``:        exit status 0;
- ``error``:     a non-zero exit whose stderr ends in ONE line ``error: ...`` (earlier progress,
                 ``note:`` or ``warning:`` lines allowed) and holds no Python traceback;
- ``traceback``: an exception escaped (in-process) or stderr shows ``Traceback``;
- ``hang``:      no answer within the case's time limit;
- ``messy``:     anything else (non-zero exit with a multi-line or unlabelled message).

Tables in the test files map a case to the expected outcome, ``"ok"`` or ``"error: <fragment>"``
(the fragment must appear in the error line, so the message names the file, key or model). Every
checked case is counted; the run ends with one totals line (tests/reliability/conftest.py):

    reliability totals: 150 cases; expected ok 40, error 110; ended ok 40, error 110, traceback 0, ...;
    silent 0, lost 0; not as expected 0

Two findings are counted apart from how a case ended: ``silent``, a case that exits 0 where one error
line was due (an all-NaN model trained, a model dropped from the evaluation: a wrong result nobody is
told of), and ``lost``, a case after which a file of the user's (`check(..., kept=False)`: a corpus,
a checkpoint, a symlink) is changed or gone, whatever the exit status.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
IN_PROCESS_LIMIT_S = 120  # far above any fast case; a hang ends as outcome "hang", not a stuck suite


@dataclass
class Result:
    outcome: str  # ok | error | traceback | hang | messy
    code: int | None
    out: str
    err: str

    @property
    def error_line(self) -> str:
        lines = self.err.strip().splitlines()
        return lines[-1] if lines else ""

    def describe(self) -> str:
        return f"{self.outcome} (exit {self.code}): stdout={self.out[-300:]!r} stderr={self.err[-1500:]!r}"


def classify(code: int | None, out: str, err: str, escaped: BaseException | None = None) -> Result:
    if escaped is not None:
        return Result("traceback", code, out, f"{err}\n{type(escaped).__name__}: {escaped}")
    if code is None:
        return Result("hang", code, out, err)
    if "Traceback (most recent call last)" in err:
        return Result("traceback", code, out, err)
    if code == 0:
        return Result("ok", code, out, err)
    lines = [line for line in err.strip().splitlines() if line.strip()]
    # progress lines before it are fine (training logs its epochs); a second error line is not
    if lines and lines[-1].startswith("error: ") and not any(line.startswith("error") for line in lines[:-1]):
        return Result("error", code, out, err)
    return Result("messy", code, out, err)


# (case, expected kind, outcome, the user's files kept) of every `check` this session: the totals line
CHECKED: list[tuple[str, str, str, bool]] = []
OUTCOMES = ("ok", "error", "traceback", "hang", "messy")


def totals_line() -> str:
    """One line: how many cases, what they expected, how they ended, the silent results and lost files,
    how many did not match."""
    expected = Counter(kind for _, kind, _, _ in CHECKED)
    ended = Counter(outcome for _, _, outcome, _ in CHECKED)
    silent = sum(kind == "error" and outcome == "ok" for _, kind, outcome, _ in CHECKED)
    lost = sum(not kept for *_, kept in CHECKED)
    wrong = sum(kind != outcome or not kept for _, kind, outcome, kept in CHECKED)
    return (f"reliability totals: {len(CHECKED)} cases; expected ok {expected['ok']}, error {expected['error']}; "
            f"ended {', '.join(f'{o} {ended[o]}' for o in OUTCOMES)}; silent {silent}, lost {lost}; "
            f"not as expected {wrong}")


def case_table() -> str:
    """Every checked case as a Markdown table (case, expected, result), then the totals line."""
    rows = [f"| {case} | {kind} | {outcome}{'' if kept else ', data lost'} |" for case, kind, outcome, kept in CHECKED]
    return "\n".join(["| case | expected | result |", "|---|---|---|", *rows, "", totals_line(), ""])


def check(result: Result, expected: str, kept: bool = True) -> None:
    """Assert that `result` ended as `expected` ("ok" or "error: <fragment>") and, with `kept` (whether
    the user's files the case put at risk are intact, as the caller found them), that nothing was lost."""
    case = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]  # "<node id> (call)"; ids hold spaces
    CHECKED.append((case, "ok" if expected == "ok" else "error", result.outcome, kept))
    assert kept, f"the user's data was lost: {result.describe()}"
    if expected == "ok":
        assert result.outcome == "ok", result.describe()
        return
    kind, _, fragment = expected.partition(":")
    assert kind == "error", expected
    assert result.outcome == "error", result.describe()
    assert fragment.strip() in result.error_line, result.describe()


class _Alarm(Exception):
    pass


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def ring(signum, frame):  # noqa: ARG001
        raise _Alarm()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_inprocess(args: list[str], cwd: Path, monkeypatch, capsys, stdin: bytes | None = None,
                  limit_s: int = IN_PROCESS_LIMIT_S) -> Result:
    """`sumpipe ARGS` through the console-script entry point, in this process (fast: torch is
    imported once per test session). `capsys` None: output is not captured (module fixtures)."""
    import torch

    from sumpipe.cli import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["sumpipe", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    threads = torch.get_num_threads()
    code: int | None = 0
    escaped = None
    try:
        with _time_limit(limit_s):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except _Alarm:
        code = None
    except Exception as exc:  # noqa: BLE001 - an escaped exception IS the finding
        code, escaped = 1, exc
    finally:
        torch.set_num_threads(threads)
    out, err = capsys.readouterr() if capsys is not None else ("", "")
    return classify(code, out, err, escaped)


def subprocess_env(extra: dict[str, str] | None = None, pythonpath: list[Path] = ()) -> dict[str, str]:
    """The environment of a child `sumpipe`/`dvc`: this checkout's sources, one thread, no analytics."""
    path = [str(p) for p in pythonpath] + [str(SRC)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "DVC_NO_ANALYTICS": "1", "OMP_NUM_THREADS": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", **(extra or {})}


def run_subprocess(argv: list[str], cwd: Path, timeout: float = 300, env: dict[str, str] | None = None,
                   stdin=None, shell_prefix: str | None = None) -> Result:
    """A child process; `shell_prefix` runs it through sh (e.g. "exec 0<&-;" to close stdin)."""
    if shell_prefix is not None:
        import shlex

        command: list[str] | str = f"{shell_prefix} exec {shlex.join(argv)}"
    else:
        command = argv
    try:
        done = subprocess.run(command, cwd=cwd, env=env or subprocess_env(), capture_output=True, text=True,
                              timeout=timeout, stdin=stdin, shell=shell_prefix is not None)
    except subprocess.TimeoutExpired as exc:
        return classify(None, str(exc.stdout or ""), str(exc.stderr or ""))
    return classify(done.returncode, done.stdout, done.stderr)


def sumpipe_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "sumpipe.cli", *args]


# --------------------------------------------------------------------------------------------
# A tiny pipeline, run in-process once per session: download .. decode on 60 numerals examples
# --------------------------------------------------------------------------------------------
TINY = {
    "data": {"dataset": "numerals", "options": {"numerals": {"size": 60, "max_length": 6, "max_number": 30}}},
    "preprocess": {"workers": 1},
    "vocab": {"size": 120},
    "extract": {"workers": 1, "budgets": [{"method": "first", "tokens": 400}, {"method": "ngram", "tokens": 200}]},
    "model": {"d_model": 16, "d_ff": 32, "n_layers": 1, "n_heads": 2, "vocab_size": 100},
    "families": {"rnn": {"embedding_dim": 8, "hidden_dim": 8, "vocab_size": 100}},
    # one model per family: a new family's model is one line here (its stages are then killed too)
    "models": {"M1": {"family": "transformer", "input": "first400"},
               "PG": {"family": "rnn", "input": "first400", "arch": {"coverage": True, "coverage_phase_steps": 2}}},
    "runs": {"M1-1": {"model": "M1", "seed": 1}, "PG-1": {"model": "PG", "seed": 1}},
    "train": {"max_steps": 3, "batch_size": 8, "checkpoint_every": 1, "log_every": 1, "device": "cpu", "seeds": [1]},
    "extractive": {"systems": ["lead", "textrank"]},  # a baseline and a graph method stand for the eight
    "decode": {"max_length": 4, "min_length": 1, "device": "cpu", "beam_size": 2},
    "evaluate": {"bootstrap_samples": 20},
    "crosseval": {"models": ["M1"], "data": {"dataset": "numerals", "seed": 99,
                                             "options": {"numerals": {"size": 20, "max_length": 6,
                                                                      "max_number": 30}}},
                  "max_examples": 8, "name": "numerals-99"},
    "report": {"n_samples": 1, "n_heatmaps": 1},
}
TINY_STAGES = (["download"], ["preprocess"], ["vocab"], ["extract"], ["train", "--model", "M1"],
               ["decode", "--model", "M1"])  # the in-process fixture needs one model only


def _merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(base.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def tiny_params() -> dict:
    """params.yaml with TINY merged in (its `models` and `runs` replace the default ones; the default
    ensembles, of models TINY does not train, are left out)."""
    import yaml

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params = _merge({k: v for k, v in params.items() if k not in ("models", "runs", "ensembles")}, TINY)
    params["ensembles"] = {}  # of models TINY does not train: none here
    return params
