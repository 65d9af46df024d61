"""params.yaml survives `dvc exp run -S key=value`: DVC loads it with ruamel.yaml, merges the
override into it and writes it back, and that round trip rewrites what it cannot keep (every list, a
`null`, a long or commented flow mapping, and the comments and blank line after a block list). The file is
written in the form the round trip writes (docs/params.md), so an experiment changes the set key's line
and nothing else: checked here on a small pipeline that tracks the repository's params.yaml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]

# one key of each kind: a float beside comments, a null (an empty value), an entry of a block mapping inside
# `models:`, an integer after a block list
SETTINGS = {"decode.length_penalty": ("1.0", "  length_penalty: 1.0 "),
            "data.max_examples": ("5", "  max_examples: 5"),
            "models.PG-cov.train.lr": ("0.004", "      lr: 0.004"),
            "train.numerics": ("native", "  numerics: native ")}


def run(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_dvc_exp_run_set_changes_only_the_set_keys_lines(tmp_path: Path) -> None:
    original = (REPO / "params.yaml").read_text(encoding="utf-8")
    (tmp_path / "params.yaml").write_text(original, encoding="utf-8")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  s:\n    cmd: python -c \"open('out.txt', 'w').write('x')\"\n"
        "    params: [decode, data, models, train]\n    outs: [out.txt]\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    run(["git", "init", "-q"], tmp_path)
    run([sys.executable, "-m", "dvc", "init", "-q"], tmp_path)
    run(["git", "add", "-A"], tmp_path)
    run([*git, "commit", "-q", "-m", "init"], tmp_path)
    sets = [arg for key, (value, _) in SETTINGS.items() for arg in ("-S", f"{key}={value}")]
    run([sys.executable, "-m", "dvc", "exp", "run", *sets], tmp_path)

    after = (tmp_path / "params.yaml").read_text(encoding="utf-8")
    before_lines, after_lines = original.splitlines(), after.splitlines()
    assert len(after_lines) == len(before_lines), "the round trip added or removed lines"
    changed = [(b, a) for b, a in zip(before_lines, after_lines, strict=True) if a != b]
    assert len(changed) == len(SETTINGS)
    for _, expected in SETTINGS.values():   # each set key's own line, its comment kept in its column
        assert sum(line.startswith(expected) for _, line in changed) == 1, expected
    # the set values, and every other value as it was
    values, new = yaml.safe_load(original), yaml.safe_load(after)
    assert new["decode"]["length_penalty"] == 1.0 and new["data"]["max_examples"] == 5
    new["decode"]["length_penalty"], new["data"]["max_examples"] = 2.0, None
    new["models"]["PG-cov"]["train"]["lr"], new["train"]["numerics"] = 0.005, "portable"
    assert new == values
