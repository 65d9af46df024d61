"""`sumpipe docs`: the repository's README.md and docs/ are what metrics/ and the registries give, and a
changed figure fails `--check` until the docs are regenerated."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest


def test_the_repository_docs_are_current(repo_root: Path, cli) -> None:
    done = cli("docs", "--check", cwd=repo_root)
    assert (done.exit_code, done.stdout) == (0, "docs: every generated block is current\n"), done.stderr


def test_the_experiments_readmes_are_kept_current_too(repo_root: Path) -> None:
    from sumpipe.docs.commands import documents

    paths = documents(repo_root)
    assert {repo_root / "README.md", repo_root / "docs" / "realtext.md"} <= set(paths)
    assert {path.parent.name for path in paths if path.parent.parent == repo_root / "experiments"} >= {
        "gigaword", "cnn"}


@pytest.fixture
def copy(repo_root: Path, tmp_path: Path) -> Path:
    """The docs, params files and metrics of the repository, in a folder of their own."""
    for name in ("README.md", "params.yaml", "params-paper.yaml"):
        shutil.copy(repo_root / name, tmp_path / name)
    shutil.copytree(repo_root / "docs", tmp_path / "docs")
    shutil.copytree(repo_root / "metrics", tmp_path / "metrics")
    numerals = Path("experiments") / "numerals"
    (tmp_path / numerals / "reports").mkdir(parents=True)
    for name in ("params.yaml", "reports/numerals.json"):
        shutil.copy(repo_root / numerals / name, tmp_path / numerals / name)
    measures = Path("experiments") / "measures"  # the meta-evaluation's committed results (docs/measures.md)
    (tmp_path / measures / "results").mkdir(parents=True)
    for name in ("params.yaml", "results/meta_eval.json"):
        shutil.copy(repo_root / measures / name, tmp_path / measures / name)
    for name in ("gigaword", "cnn"):  # the real-text experiments: their params, and metrics once they have run
        experiment = Path("experiments") / name
        (tmp_path / experiment).mkdir(parents=True)
        shutil.copy(repo_root / experiment / "params.yaml", tmp_path / experiment / "params.yaml")
        if (repo_root / experiment / "metrics").is_dir():
            shutil.copytree(repo_root / experiment / "metrics", tmp_path / experiment / "metrics")
    for readme in (repo_root / "experiments").glob("*/README.md"):  # their blocks are generated too
        (tmp_path / readme.relative_to(repo_root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(readme, tmp_path / readme.relative_to(repo_root))
    return tmp_path


def _set(root: Path, system: str, **figures: float) -> None:
    path = root / "metrics" / "rouge.json"
    scores = json.loads(path.read_text())
    scores[system].update(figures)
    path.write_text(json.dumps(scores))


FIGURES = {f"{key}{end}": value + shift for key, value in (("rouge1", 30.0), ("rouge2", 9.87), ("rougeL", 12.34))
           for end, shift in (("", 0.0), ("_low", -1.0), ("_high", 1.0))}


def test_a_changed_figure_fails_the_check_until_the_docs_are_regenerated(copy: Path, cli) -> None:
    _set(copy, "M2", **FIGURES)                        # in the README's table and docs/results.md's
    done = cli("docs", "--check", cwd=copy)
    assert done.exit_code == 1
    assert done.stderr == ("error: generated blocks out of date: README.md (summary); docs/results.md (results); "
                           "run `sumpipe docs`\n")
    _set(copy, "lexrank", **FIGURES)                   # not in the README's table: docs/extractive.md, docs/results.md
    done = cli("docs", "--check", cwd=copy)
    assert "README.md (summary); docs/extractive.md (extractive-results); docs/results.md (results)" in done.stderr
    assert "9.87" not in (copy / "README.md").read_text()            # --check writes nothing

    done = cli("docs", cwd=copy)
    assert done.stdout == ("docs: rewrote README.md (summary); docs/extractive.md (extractive-results); "
                           "docs/results.md (results)\n")
    readme = (copy / "README.md").read_text()  # M2 has 3 seeds: each figure with its sd, which stayed as it was
    assert re.search(r"\| M2 \| [^|]+ \| 30\.00 ± [0-9.]+ \| 9\.87 ± [0-9.]+ \| 12\.34 ± [0-9.]+ \|", readme)
    results = (copy / "docs" / "results.md").read_text()
    assert re.search(r"\| M2 \(transformer\) \| first40 \| 3 \| 30\.00 ± [0-9.]+ \[29\.00, 31\.00\] \| "
                     r"9\.87 ± [0-9.]+ \| 12\.34 ± [0-9.]+ \|", results)
    extractive = (copy / "docs" / "extractive.md").read_text()
    assert "| lexrank | 30.00 [29.00, 31.00] | 9.87 [8.87, 10.87] | 12.34 [11.34, 13.34] |" in extractive
    assert cli("docs", "--check", cwd=copy).exit_code == 0


def test_missing_metrics_are_one_line(copy: Path, cli) -> None:
    (copy / "metrics" / "rouge.json").unlink()
    done = cli("docs", "--check", cwd=copy)
    assert done.exit_code == 1 and done.stderr.startswith("error: metrics/rouge.json: not found")
