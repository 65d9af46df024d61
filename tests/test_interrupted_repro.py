"""Ctrl-C in the middle of `dvc repro`, then `dvc repro` again, as a user meets it.

The tiny pipeline (conftest's `tiny_pipeline`) is built twice with the same params: once straight through,
and once with Ctrl-C (SIGINT to the process group of `dvc repro`, as a terminal sends it) as soon as the
train stage has written the first checkpoint of M1/seed-1. M1 trains for LONG_STEPS updates there (3 in
the tiny pipeline, over in a blink), so the interrupt lands mid-run. The interrupted `dvc repro` fails in
lines a user understands (no traceback) and leaves no process of it running. The next `dvc repro`
finishes; it runs only the stages the interrupt left unrecorded in dvc.lock (the train stage and those
after it), resumes every training run from its checkpoint (M1/seed-1 from mid-run; a run that had
finished is not trained again), leaves no temporary file (every write is atomic: sumpipe.io.atomic), and
ends with the straight build's dvc.lock, every output's hash, and a clean `dvc status`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.faults  # two tiny pipeline builds and a resumed one: minutes, with the long suite

LONG_STEPS = 120  # M1's updates a run (about 2 s of training on the shared 2-core machine; each seed)
PARAMS = {"models": {"M1": {"train": {"max_steps": LONG_STEPS}}}}  # checkpoint_every stays 2
WATCHED = "checkpoints/M1/seed-1/state.pt"  # the train stage's first runs: BERT2S/seed-1 and M1/seed-1
START_LIMIT_S = 600  # the stages before train: about a minute here
STOP_LIMIT_S = 120  # from Ctrl-C to the end of `dvc repro`: a few seconds here
NOT_OUTPUTS = (".git", ".dvc", "src")
# DVC runs a stage's cmd through $SHELL (/bin/sh when unset). bash passes on the status sumpipe exits with
# (130); dash, Debian's /bin/sh, stays as the parent and kills itself with the SIGINT it got (DVC: -2).
BASH = shutil.which("bash") or "/bin/bash"


def _ctrl_c_at_first_checkpoint(work: Path, env: dict[str, str], log: Path) -> tuple[int, str, int]:
    """`dvc repro` in `work`, interrupted as Ctrl-C in its terminal once WATCHED exists: its exit status,
    its stderr and its process group. It gets Ctrl-C's default disposition (a suite started in the background by a
    non-interactive shell ignores SIGINT, and Python installs no KeyboardInterrupt for an ignored one) in
    a process group of its own, which the signal reaches whole, as a terminal's foreground job."""
    with (log / "out").open("w") as out, (log / "err").open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "dvc", "repro"], cwd=work, env=env, stdout=out, stderr=err,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            deadline = time.monotonic() + START_LIMIT_S
            while not (work / WATCHED).exists():
                assert proc.poll() is None, f"dvc repro ended before {WATCHED} was written:\n" + \
                    (log / "err").read_text()[-3000:]
                assert time.monotonic() < deadline, f"no {WATCHED} within {START_LIMIT_S} s"
                time.sleep(0.02)
            os.killpg(proc.pid, signal.SIGINT)
            try:
                code = proc.wait(timeout=STOP_LIMIT_S)
            except subprocess.TimeoutExpired:
                pytest.fail(f"dvc repro still running {STOP_LIMIT_S} s after Ctrl-C")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return code, (log / "err").read_text(), proc.pid


def _live_members(group: int) -> list[str]:
    """The processes of process group `group` still running (Linux /proc; a zombie waiting for init to
    reap it holds nothing and is left out)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            comm, rest = stat.read_text().rsplit(")", 1)
        except OSError:  # it ended meanwhile
            continue
        state, _, pgrp = rest.split()[:3]
        if int(pgrp) == group and state not in ("Z", "X"):
            members.append(f"{stat.parent.name} {comm.split('(', 1)[1]}")
    return members


def _labels(runs: dict) -> list[str]:
    """params.yaml's `runs:` as the train stage names them (`M1/seed-1`)."""
    from sumpipe.names import seed_folder

    return [f"{run['model']}/{seed_folder(run['seed'])}" for run in runs.values()]


def _positions(work: Path, runs: dict) -> dict[str, dict]:
    """Every training run's checkpoint position (step, done, ...) by label, where it has one."""
    import torch

    out = {}
    for label in _labels(runs):
        state = work / "checkpoints" / label / "state.pt"
        if state.exists():
            out[label] = torch.load(state, weights_only=True)["position"]
    return out


def _stages(lock: Path) -> list[str]:
    return list(yaml.safe_load(lock.read_text())["stages"]) if lock.exists() else []


def test_ctrl_c_in_dvc_repro_then_dvc_repro_finishes_what_was_left(tiny_pipeline, tmp_path: Path) -> None:
    straight = tiny_pipeline.build(tmp_path / "straight", params=PARAMS)
    work = tiny_pipeline.build(tmp_path / "interrupted", params=PARAMS, repro=False)
    runs = yaml.safe_load((work / "params.yaml").read_text())["runs"]

    code, err, group = _ctrl_c_at_first_checkpoint(work, {**tiny_pipeline.env(), "SHELL": BASH}, tmp_path)
    # what the user reads: the pool names the runs it stopped and that they resume, sumpipe that it was
    # interrupted (exit status 130), DVC which stage failed; no traceback
    assert code != 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert re.search(r"^train: stopped .*M1/seed-1.* \(each resumes from its last checkpoint\)$", err, re.M), err
    assert "\ninterrupted\n" in f"\n{err}", err
    assert "failed to reproduce 'train'" in err and "exited with 130" in err, err
    if Path("/proc").is_dir():  # nothing of the interrupted run trains on behind the prompt
        deadline = time.monotonic() + 30
        while (left := _live_members(group)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"still running after dvc repro ended: {left}"

    done = _stages(work / "dvc.lock")  # the stages that finished before Ctrl-C
    assert "train" not in done and "download" in done, done
    positions = _positions(work, runs)
    m1 = positions["M1/seed-1"]
    assert 0 < m1["step"] < LONG_STEPS and not m1["done"], f"Ctrl-C should land mid-run: {m1}"

    out = tiny_pipeline.run([sys.executable, "-m", "dvc", "repro"], work)
    every = _stages(straight / "dvc.lock")
    ran = re.findall(r"^Running stage '([^']+)'", out, re.M)
    assert sorted(ran) == sorted(set(every) - set(done)), f"finished before Ctrl-C: {done}; ran again: {ran}"
    for label in _labels(runs):  # each from its checkpoint: mid-run, finished (not trained again) or none
        timing = json.loads((work / "timings/train" / f"{label}.json").read_text())
        assert timing["resumed_from_step"] == positions.get(label, {"step": 0})["step"], (label, positions)
    temporaries = [str(p.relative_to(work)) for p in work.rglob(".*.tmp")
                   if p.relative_to(work).parts[0] not in NOT_OUTPUTS]
    assert temporaries == []

    lock, expected = (work / "dvc.lock").read_text(), (straight / "dvc.lock").read_text()
    if lock != expected:  # name the stages whose outputs (or inputs) differ from the straight build's
        ours, theirs = yaml.safe_load(lock)["stages"], yaml.safe_load(expected)["stages"]
        differ = [s for s in sorted(set(ours) | set(theirs)) if ours.get(s) != theirs.get(s)]
        pytest.fail(f"dvc.lock differs from the uninterrupted build's in stages {differ}")
    assert "Data and pipelines are up to date." in tiny_pipeline.run([sys.executable, "-m", "dvc", "status"], work)
