"""Two decode-only experiments queued and run side by side (`dvc queue start -j 2`), as the README offers.

DVC runs each queued experiment in a workspace of its own (a copy under .dvc/tmp/exps), from the last
commit and this cache. The test builds the tiny pipeline (conftest's `tiny_pipeline`), commits it, and
runs the same two decode-only experiments twice: one after the other with `dvc exp run`, and queued with
`dvc queue start -j 2` (with DVC's run cache emptied first, so that they decode rather than restore the
serial runs' outputs). Both queued runs succeed, each decodes and neither trains again (the models come
from the cache), and each writes what its serial twin wrote: the same dvc.lock (every output's hash),
metrics and per-document scores. So the two workers do not collide on checkpoints/, timings/ or anything
else.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.faults  # a tiny pipeline build and four decode-only experiments: minutes, in the long suite

SETTINGS = {"a": "decode.max_length=2", "b": "decode.max_length=4"}  # decode-only changes (the tiny one's: 6)
COMPARED = ("dvc.lock", "metrics", "scores")  # what git holds of an experiment's results
WAIT_LIMIT_S = 600  # the two queued experiments: well under a minute here


def _dvc(args: list[str], work: Path, run) -> str:
    return run([sys.executable, "-m", "dvc", *args], work)


def _experiment_ref(work: Path, name: str, run) -> str:
    """The git ref of experiment `name` (refs/exps/xx/yyyy/<name>)."""
    refs = run(["git", "for-each-ref", "--format=%(refname)", "refs/exps"], work).split()
    found = [ref for ref in refs if ref.rsplit("/", 1)[-1] == name]
    assert len(found) == 1, f"experiment {name}: refs {refs}"
    return found[0]


def _wait_for_the_queue(work: Path, run) -> str:
    """`dvc queue status` once no task is queued or running (or fail after WAIT_LIMIT_S)."""
    deadline = time.monotonic() + WAIT_LIMIT_S
    while True:
        status = _dvc(["queue", "status"], work, run)
        if not re.search(r"\b(Queued|Running)\b", status):
            return status
        assert time.monotonic() < deadline, f"the queue is still busy after {WAIT_LIMIT_S} s:\n{status}"
        time.sleep(1)


def test_two_queued_decode_experiments_run_side_by_side_as_they_run_alone(tiny_pipeline, tmp_path: Path) -> None:
    run = tiny_pipeline.run
    work = tiny_pipeline.build(tmp_path / "work")
    run(["git", "add", "-A"], work)
    run(["git", "commit", "-qm", "built"], work)

    for name, setting in SETTINGS.items():  # queued from the clean commit: each keeps its own params
        _dvc(["exp", "run", "--queue", "-n", f"queued-{name}", "-S", setting], work, run)
    for name, setting in SETTINGS.items():
        _dvc(["exp", "run", "-n", f"serial-{name}", "-S", setting], work, run)
        run(["git", "checkout", "--", "."], work)  # back to the commit; this cache holds its outputs
        _dvc(["checkout", "--force"], work, run)
    # DVC's run cache would hand the queued runs the serial runs' decodes without running them
    run_cache = work / ".dvc" / "cache" / "runs"
    assert run_cache.is_dir(), "DVC keeps its run cache elsewhere: the queued runs would not decode"
    shutil.rmtree(run_cache)
    _dvc(["queue", "start", "-j", "2"], work, run)
    try:  # the workers stay up, idle, until stopped: stop them whatever fails
        status = _wait_for_the_queue(work, run)
        assert len(re.findall(r"\bSuccess\b", status)) == 2, status
        for name in SETTINGS:
            log = _dvc(["queue", "logs", f"queued-{name}"], work, run)
            ran = set(re.findall(r"^Running stage '([^'@]+)", log, re.M))
            assert "predict" in ran and not ran & {"train", "pretrain", "download"}, f"queued-{name} ran {ran}"
            serial, queued = (_experiment_ref(work, f"{kind}-{name}", run) for kind in ("serial", "queued"))
            differ = run(["git", "diff", "--stat", serial, queued, "--", *COMPARED], work)
            assert not differ, f"queued-{name} wrote other results than serial-{name}:\n{differ}"
        # the two settings write other summaries, so the equality above is not one of outputs that never change
        refs = [_experiment_ref(work, f"serial-{name}", run) for name in SETTINGS]
        assert run(["git", "diff", "--stat", *refs, "--", "scores"], work)
    finally:
        subprocess.run([sys.executable, "-m", "dvc", "queue", "stop"], cwd=work, env=tiny_pipeline.env(),
                       capture_output=True, timeout=120)
