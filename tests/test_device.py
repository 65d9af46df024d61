"""sumpipe.device: how a command loads torch (the garbage collector paused, then frozen) and how the
Python API leaves the collector alone. Each case runs in a fresh process: this one has torch loaded."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _fresh(repo_root, code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(repo_root / "src")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                          timeout=120).stdout.strip()


def test_a_command_loads_torch_with_the_collector_paused_then_frozen(repo_root) -> None:
    # torch's objects (some 170,000) go to the permanent generation, where no collection walks them again,
    # and no full collection runs while torch loads (three did, each walking all of them: gc.callbacks sees them)
    code = ("import gc, sumpipe.cli; full = []\n"
            "gc.callbacks.append(lambda phase, info: info['generation'] == 2 and full.append(phase))\n"
            "sumpipe.cli.COMMAND_LINE = True; import sumpipe.device; during = len(full)\n"
            "print(gc.get_freeze_count() > 100_000, gc.isenabled(), during)")
    assert _fresh(repo_root, code) == "True True 0"


@pytest.mark.parametrize(("before", "expected"), [
    ("", "0 True"),                                   # the Python API: the heap is the caller's
    ("import sumpipe.cli\n", "0 True"),               # the CLI's module imported, no command run
    ("import torch, sumpipe.cli; sumpipe.cli.COMMAND_LINE = True\n", "0 True"),  # torch loaded already
    ("import gc, sumpipe.cli; sumpipe.cli.COMMAND_LINE = True; gc.disable()\n", "False"),  # stays off
])
def test_otherwise_the_collector_is_left_as_it_is(repo_root, before: str, expected: str) -> None:
    code = before + "import gc, sumpipe.device\nprint(gc.get_freeze_count(), gc.isenabled())"
    if expected == "False":
        code = before + "import gc, sumpipe.device\nprint(gc.isenabled())"
    assert _fresh(repo_root, code) == expected
