"""Fault injection for tests/reliability/test_rel_faults.py, loaded by every `sumpipe` child process
whose PYTHONPATH starts with this folder (Python imports `sitecustomize` at start-up).

It labels the process by its stage: DVC_STAGE, the name `dvc repro` gives it (`train@M1-1` for a matrix
item), else one made from the command line (`extractive@lead` for `sumpipe extractive --system lead`),
and wraps os.replace,
the commit step of every atomic artifact write (sumpipe.io.atomic_path). Environment:

- RELIABILITY_LOG:   a file that gets one JSON line per stage process: {"stage", "writes", "seconds"}
                     at a normal exit, {"stage", "killed_at", "when"} just before a kill, {"stage",
                     "started"} when it holds (below);
- RELIABILITY_FAULT: "<stage>:before:<k>" / "<stage>:after:<k>": SIGKILL this process just before / just
                     after its k-th os.replace; "<stage>:hold:<seconds>": sleep that long at start-up
                     (a stage that holds DVC's lock for a while); "<stage>:enospc:<name>": os.open
                     fails with ENOSPC when it creates the file <name> or a temporary beside it
                     (`.<name>.*`), as on a full disk (the create of a lock and of every atomic write's
                     temporary file is an os.open).
Other processes (dvc itself, pytest) are left alone.
"""

import json
import os
import signal
import sys
import time


def _label():
    argv = getattr(sys, "argv", None) or []
    if os.environ.get("SUMPIPE_RUN") and os.environ.get("DVC_STAGE") and (
            "--multiprocessing-fork" in argv or argv[:1] == ["-m"]):
        # a worker of the train stage's pool (sumpipe.train.pool, a spawned process) trains one run: train@M1-1;
        # a job of the predict stage's pool (sumpipe.decode.pool, `python -m sumpipe.cli ...`) runs one
        # summarizer: predict@M1-1, predict@lead
        return f"{os.environ['DVC_STAGE']}@{os.environ['SUMPIPE_RUN']}"
    if not argv or not os.path.basename(argv[0]).startswith("sumpipe") or len(argv) < 2:
        return None
    if os.environ.get("DVC_STAGE"):  # set by `dvc repro` for every stage command
        return os.environ["DVC_STAGE"]
    label = argv[1]
    if len(argv) >= 4 and argv[2].startswith("--"):  # `train --model M1`, `extractive --system lead`:
        label += "@" + argv[3]                         # as a foreach stage names an item: train@M1, extractive@lead
    return label


def _log(record):
    path = os.environ.get("RELIABILITY_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())


def _install(label):
    start = time.monotonic()
    stage, when, arg = (os.environ.get("RELIABILITY_FAULT", "") + "::").split(":")[:3]
    active = stage == label
    if active and when == "hold":
        _log({"stage": label, "started": True})
        time.sleep(float(arg))
    if active and when == "enospc":
        _refuse_creates(arg)
    count = [0]
    real_replace = os.replace

    def kill(k):
        _log({"stage": label, "killed_at": k, "when": when})
        os.kill(os.getpid(), signal.SIGKILL)

    def replace(src, dst, *args, **kwargs):
        count[0] += 1
        if active and when == "before" and count[0] == int(arg):
            kill(count[0])
        result = real_replace(src, dst, *args, **kwargs)
        if active and when == "after" and count[0] == int(arg):
            kill(count[0])
        return result

    os.replace = replace

    import atexit

    atexit.register(lambda: _log({"stage": label, "writes": count[0], "seconds": round(time.monotonic() - start, 2)}))


def _refuse_creates(name):
    import errno

    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        base = os.path.basename(os.fsdecode(path))
        if flags & os.O_CREAT and (base == name or base.startswith("." + name + ".")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real_open(path, flags, *args, **kwargs)

    os.open = refusing_open


_LABEL = _label()
if _LABEL is not None:
    _install(_LABEL)
