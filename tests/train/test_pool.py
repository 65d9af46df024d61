"""Training runs side by side (sumpipe.train.pool): the same bytes with 1 and 2 workers, a failing run,
a stopped pool resumed, the worker count and the schedule."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from sumpipe.errors import SumpipeError
from sumpipe.train.pool import (
    PoolRun,
    _cgroup_cpu_quota,
    expected_seconds,
    longest_first,
    run_pool,
    worker_count,
)

MODEL_FILES = ("model.safetensors", "config.json", "vocab.parquet", "train_log.csv", "SHA256SUMS")


def _model_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the model folders (not the empty lock files beside them)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "models").rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def _runs(*labels: str) -> list[PoolRun]:
    return [PoolRun(label.split("-")[0], int(label.split("-")[1]), 1) for label in labels]


@pytest.mark.slow  # worker processes, each importing torch
def test_one_and_two_workers_write_the_same_model_bytes(tmp_path: Path, write_fixture) -> None:
    """Each run is its own process on one thread: what runs beside it, and in which order, changes no byte;
    and a run in the pool writes what `train_model` writes in this process."""
    written = {}
    for workers in (1, 2):
        params = write_fixture(tmp_path / f"w{workers}", epochs=2, seeds=[1, 2])
        runs = _runs("T1-1", "T1-2")
        summaries = run_pool(params, runs if workers == 1 else runs[::-1], workers, progress=False)
        assert sorted(summaries) == ["T1/seed-1", "T1/seed-2"]
        assert {s["steps"] for s in summaries.values()} == {12} and summaries["T1/seed-1"]["resumed_from_step"] == 0
        written[workers] = _model_bytes(tmp_path / f"w{workers}")
    assert len(written[1]) == 2 * len(MODEL_FILES)
    assert written[1] == written[2]
    assert written[1]["models/T1/seed-1/model.safetensors"] != written[1]["models/T1/seed-2/model.safetensors"]

    from sumpipe.config import load_params
    from sumpipe.train.stage import resolve_inputs, train_model

    alone = write_fixture(tmp_path / "alone", epochs=2, seeds=[1, 2])
    train_model(resolve_inputs(load_params(alone), "T1", 2), progress=False)
    assert _model_bytes(tmp_path / "alone") == {k: v for k, v in written[2].items() if "seed-2" in k}


@pytest.mark.slow  # worker processes, each importing torch
def test_a_failing_run_is_one_line_naming_it_and_the_run_beside_it_finishes(tmp_path: Path, write_fixture) -> None:
    params = write_fixture(tmp_path, epochs=2)
    config = yaml.safe_load(params.read_text())
    config["extract"]["budgets"].append({"method": "first", "tokens": 10})
    config["models"]["T3"] = {"input": "first10"}
    config["models"]["T1"]["train"] = {"epochs": 6}  # trains well past T3's failure
    params.write_text(yaml.safe_dump(config))
    broken = tmp_path / "data/extracted/first10"
    broken.mkdir(parents=True)
    for split in ("train", "valid"):
        (broken / f"{split}.parquet").write_bytes(b"not parquet")
    runs = [PoolRun("T3", 1, 1, 300.0), PoolRun("T1", 1, 1, 200.0), PoolRun("T2", 1, 1, 100.0)]
    with pytest.raises(SumpipeError) as failure:
        run_pool(params, runs, 2, progress=False)
    message = str(failure.value)
    assert message.startswith(f"train T3/seed-1: {broken / 'train.parquet'}: ") and "\n" not in message
    assert (tmp_path / "models/T1/seed-1/model.safetensors").is_file()  # in flight: it finished
    assert not (tmp_path / "models/T3").exists()
    assert not (tmp_path / "models/T2").exists()  # queued behind the failure: never started


@pytest.mark.slow  # worker processes, each importing torch
def test_cli_trains_every_run_and_prints_them_in_params_order(tmp_path: Path, cli, write_fixture) -> None:
    path = write_fixture(tmp_path, epochs=1)
    result = cli("train", "-p", str(path), "--workers", "2")
    assert result.exit_code == 0, result.stderr
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["T1/seed-1", "T2/seed-1"]
    assert "T2/seed-1: epoch 1: step 6, train loss" in result.stderr  # a worker's line, prefixed with its run
    again = cli("train", "-p", str(path), "--workers", "1")  # finished checkpoints: nothing retrained
    assert again.exit_code == 0 and again.stdout == result.stdout
    assert again.stderr.count("finished earlier (6 steps)") == 2


def test_cli_checks_every_input_before_a_worker_starts(tmp_path: Path, cli, write_fixture) -> None:
    path = write_fixture(tmp_path)
    (tmp_path / "data/extracted/ngram20/valid.parquet").unlink()
    result = cli("train", "-p", str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"error: {tmp_path}/data/extracted/ngram20/valid.parquet: no such file (run the stage "
                             "that writes it first, e.g. `dvc repro`)\n")
    assert not (tmp_path / "models").exists() and not (tmp_path / "checkpoints").exists()
    assert cli("train", "--seed", "1", "-p", str(path)).stderr.startswith("error: --seed needs --model")


def _pool_in_a_child(params: Path) -> subprocess.Popen:
    """`sumpipe train --model T1 --workers 2 -p PARAMS` in a child process (its stderr kept), with Ctrl-C's
    default disposition, as in a terminal: a suite started in the background by a non-interactive shell
    (`cmd &`) ignores SIGINT, the child would inherit that, and Python then installs no KeyboardInterrupt."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "sumpipe.cli", "train", "--model", "T1", "--workers", "2",
                             "-p", str(params)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _stopped(proc: subprocess.Popen, root: Path) -> None:
    """The pool ended as interrupted, and no worker of it trains on (no checkpoint changes after it)."""
    assert proc.returncode == 130 and "train: stopped" in proc.stderr.read().decode()
    checkpoints = sorted((root / "checkpoints").rglob("state.pt"))
    before = [(p, p.stat().st_mtime_ns) for p in checkpoints]
    time.sleep(1.5)  # a worker left running would checkpoint again within this
    assert [(p, p.stat().st_mtime_ns) for p in checkpoints] == before
    assert not (root / "models/T1/seed-1/model.safetensors").exists()


@pytest.mark.slow  # worker processes, each importing torch
def test_a_stopped_pool_stops_its_workers_and_resumes_to_the_same_bytes(tmp_path: Path, write_fixture,
                                                                        kill_at_checkpoint) -> None:
    """`dvc repro` killed mid-pool (SIGTERM): every worker ends, and the next run resumes each run from its
    checkpoint to the bytes of a pool never stopped."""
    settings = dict(epochs=12, checkpoint_every=5, log_every=5, seeds=[1, 2])  # 72 updates a run
    straight = write_fixture(tmp_path / "straight", **settings)
    run_pool(straight, _runs("T1-1", "T1-2"), 2, progress=False)

    params = write_fixture(tmp_path / "stopped", **settings)
    proc = _pool_in_a_child(params)
    step = kill_at_checkpoint(proc, tmp_path / "stopped/checkpoints/T1/seed-1/state.pt", signal.SIGTERM)["step"]
    assert 0 < step < 72, "the stop should land mid-training"
    _stopped(proc, tmp_path / "stopped")

    summaries = run_pool(params, _runs("T1-1", "T1-2"), 2, progress=False)
    assert summaries["T1/seed-1"]["resumed_from_step"] > 0
    assert _model_bytes(tmp_path / "stopped") == _model_bytes(tmp_path / "straight")


@pytest.mark.slow  # worker processes, each importing torch
def test_ctrl_c_stops_the_workers(tmp_path: Path, write_fixture, kill_at_checkpoint) -> None:
    # 360 updates a run (about 5 s), never reached: Ctrl-C comes at the first checkpoint (step 5)
    params = write_fixture(tmp_path, epochs=60, checkpoint_every=5, seeds=[1, 2])
    proc = _pool_in_a_child(params)
    step = kill_at_checkpoint(proc, tmp_path / "checkpoints/T1/seed-1/state.pt", signal.SIGINT)["step"]
    assert 0 < step < 360, "Ctrl-C should land mid-training"
    _stopped(proc, tmp_path)


def test_worker_count_fills_the_cores_with_the_runs_threads() -> None:
    assert worker_count(None, [1] * 10, cores=2) == 2
    assert worker_count(None, [1] * 10, cores=16) == 10  # one worker per run at most
    assert worker_count(None, [2, 1, 1], cores=5) == 2  # the widest run's threads fit each worker
    assert worker_count(None, [None, 1], cores=8) == 1  # threads: null takes every core
    assert worker_count(None, [4], cores=2) == 1
    assert worker_count(3, [1, 1], cores=64) == 2
    assert worker_count(1, [1] * 10, cores=64) == 1
    assert worker_count(None, [], cores=4) == 1


@pytest.mark.parametrize(("text", "cores"), [("200000 100000\n", 2), ("150000 100000", 2), ("50000 100000", 1),
                                             ("max 100000\n", None), ("", None)])
def test_cgroup_cpu_quota(tmp_path: Path, text: str, cores: int | None) -> None:
    (tmp_path / "cpu.max").write_text(text)
    assert _cgroup_cpu_quota(tmp_path / "cpu.max") == cores
    assert _cgroup_cpu_quota(tmp_path / "absent") is None


def test_longest_run_starts_first_from_the_timings_of_this_machine(tmp_path: Path) -> None:
    folder = tmp_path / "train/M1"
    folder.mkdir(parents=True)
    (folder / "seed-1.json").write_text(json.dumps({"train_seconds_this_run": 61.5, "resumed_from_step": 0}))
    (folder / "seed-2.json").write_text(json.dumps({"train_seconds_this_run": 3.0, "resumed_from_step": 400}))
    assert expected_seconds(tmp_path, "M1", 1, "transformer") == 61.5
    assert expected_seconds(tmp_path, "M1", 2, "transformer") == 61.5  # a resumed run's seconds say nothing
    assert expected_seconds(tmp_path, "BERT2S", 1, "bert2stage") == 100.0  # never timed: by family
    assert expected_seconds(tmp_path, "X", 1, "unknown") == 50.0
    runs = [PoolRun("M1", 1, 1, 50.0), PoolRun("PG-cov", 1, 1, 45.0), PoolRun("BERT2S", 1, 1, 100.0),
            PoolRun("M1", 2, 1, 50.0)]
    assert [r.label for r in longest_first(runs)] == ["BERT2S/seed-1", "M1/seed-1", "M1/seed-2", "PG-cov/seed-1"]


def _children(pid: int) -> list[int]:
    """The process ids whose parent is `pid` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


@pytest.mark.slow  # worker processes, each importing torch
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers through /proc")
@pytest.mark.parametrize("victim", ["worker", "pool"])
def test_a_killed_worker_or_a_terminated_pool_ends_in_its_line_once(tmp_path: Path, write_fixture,
                                                                     victim: str) -> None:
    """SIGKILL to a worker (the out-of-memory killer) ends the pool with its error line once; SIGTERM to the
    pool ends it as stopped; neither leaves multiprocessing's "leaked semaphore" warning on stderr, and the
    next run resumes."""
    params = write_fixture(tmp_path, epochs=60, checkpoint_every=5, seeds=[1, 2])
    proc = _pool_in_a_child(params)
    state = tmp_path / "checkpoints/T1/seed-1/state.pt"
    deadline = time.monotonic() + 120
    while not state.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert state.exists(), "the run should reach its first checkpoint"
    if victim == "worker":
        workers = [pid for pid in _children(proc.pid)
                   if "resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")]
        os.kill(workers[0], signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    stderr = proc.stderr.read().decode()
    assert "leaked semaphore" not in stderr and "Traceback" not in stderr, stderr
    if victim == "worker":
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert proc.returncode == 1 and len(errors) == 1, stderr
        assert errors[0].startswith("error: train T1/seed-") and "the worker process died (exit code -9)" in errors[0]
    else:
        assert proc.returncode == 130 and "train: stopped" in stderr, stderr
    assert not (tmp_path / "models/T1/seed-1/model.safetensors").exists()
