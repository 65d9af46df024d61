"""The README's "Compare an experiment" steps, followed verbatim on a clone whose lock came from elsewhere.

On another CPU kind (an ARM laptop, a GPU) the committed dvc.lock names model bytes that this machine
never produces and this cache never held. The test builds the tiny pipeline (conftest's `tiny_pipeline`),
commits it, then gives every trained output in dvc.lock another hash, as a lock committed from another
machine would, and commits that. A clone of it (an empty DVC cache) runs each command of the README
section's bash block, in order: every command exits 0, no trained model is ever deleted, and `sumpipe
compare` reads HEAD, a branch and the experiments from what git holds.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.faults  # two tiny pipeline builds and an experiment: minutes, with the long suite

REPO = Path(__file__).resolve().parents[1]
TRAINED = ("models/", "pretrain/", "predictions/", "checkpoints/")  # what another machine trains other bytes of


def section_commands(readme: str) -> list[str]:
    """The command lines of the first bash block under the README's "## Compare an experiment"."""
    section = readme.split("\n## Compare an experiment", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the README's comparison section has no bash block"
    lines = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def foreign_lock(lock: str) -> str:
    """dvc.lock with another hash for every trained output (and every stage's dep on it)."""
    def rewrite(node: object) -> None:
        if isinstance(node, dict):
            if str(node.get("path", "")).startswith(TRAINED) and "md5" in node:
                suffix = ".dir" if node["md5"].endswith(".dir") else ""
                node["md5"] = hashlib.md5(node["md5"].encode()).hexdigest() + suffix
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for value in node:
                rewrite(value)

    data = yaml.safe_load(lock)
    rewrite(data)
    return yaml.safe_dump(data, sort_keys=False)


def model_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in (root / "models").rglob("model.safetensors")}


def test_the_readme_comparison_section_is_safe_on_a_clone_with_a_foreign_lock(tiny_pipeline, tmp_path: Path) -> None:
    commands = section_commands((REPO / "README.md").read_text())
    assert commands[0] == "dvc repro" and any(c.startswith("sumpipe compare") for c in commands)
    origin = tiny_pipeline.build(tmp_path / "origin")
    tiny_pipeline.run(["git", "add", "-A"], origin)
    tiny_pipeline.run(["git", "commit", "-qm", "built"], origin)
    lock = origin / "dvc.lock"
    lock.write_text(foreign_lock(lock.read_text()))
    tiny_pipeline.run(["git", "commit", "-qam", "a lock committed from another machine"], origin)

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    for key, value in (("user.name", "t"), ("user.email", "t@t")):  # dvc exp save and branch commit
        tiny_pipeline.run(["git", "config", key, value], clone)
    trained: set[str] = set()
    for command in commands:
        tiny_pipeline.run(["bash", "-c", command], clone)
        now = model_files(clone)
        assert trained <= now, f"`{command}` deleted {sorted(trained - now)}"
        trained = now
        if command == "dvc repro":  # the lock was foreign: this machine's build differs from it
            assert trained and tiny_pipeline.run(["git", "diff", "--stat", "dvc.lock"], clone)
    experiment = next(re.search(r"-n (\S+)", c).group(1) for c in commands if c.startswith("dvc exp run"))
    for base in ("HEAD", "main"):
        out = tiny_pipeline.run([sys.executable, "-m", "sumpipe.cli", "compare", base, experiment, "-s", "M1"], clone)
        assert f"A = {base}, B = {experiment}" in out and "M1 (2/2 seeds" in out
