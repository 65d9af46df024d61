""".ci/check_commit_subjects.py: the commit-msg hook on a message file, and CI's check of a revision range."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "check_commit_subjects.py"
SUBJECT_72 = "docs: " + "x" * 66
SUBJECT_73 = "docs: " + "x" * 67
LONG_LINE = "error: the commit subject is 73 characters, over the limit of 72 (a short subject, then a blank line " \
            "and the details in the body)\n"


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd,
                          check=False)


def _hook(tmp_path: Path, message: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return _run(str(path))


def test_the_lengths() -> None:
    assert (len(SUBJECT_72), len(SUBJECT_73)) == (72, 73)


def test_a_subject_of_72_characters_passes(tmp_path: Path) -> None:
    result = _hook(tmp_path, f"{SUBJECT_72}\n\nThe body may be as long as it likes: " + "y" * 200 + "\n")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_a_subject_of_73_characters_fails_with_its_length_and_the_limit(tmp_path: Path) -> None:
    result = _hook(tmp_path, f"{SUBJECT_73}\n")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", LONG_LINE)


@pytest.mark.parametrize("message", ["", "\n\n", "# only a comment\n"], ids=["nothing", "blank lines", "comments"])
def test_an_empty_subject_fails(tmp_path: Path, message: str) -> None:
    result = _hook(tmp_path, message)
    assert (result.returncode, result.stderr) == (1, "error: the commit subject is empty (a short subject, then "
                                                     "a blank line and the details in the body)\n")


def test_a_message_file_is_read_as_git_will_record_it(tmp_path: Path) -> None:
    """Before git's clean-up: comment lines and `git commit -v`'s diff below the scissors do not count; the
    subject is the first paragraph, its lines joined by a space (git log's %s)."""
    comment = "# " + "c" * 100
    diff = "# ------------------------ >8 ------------------------\n# Do not modify the line above.\n" + "d" * 100
    assert _hook(tmp_path, f"\n{comment}\n{SUBJECT_72}\n\nbody\n{comment}\n{diff}\n").returncode == 0
    two_lines = _hook(tmp_path, f"{SUBJECT_72[:40]}\n{SUBJECT_72[40:]}\n\nbody\n")  # 40 + 1 + 32 = 73
    assert (two_lines.returncode, two_lines.stderr) == (1, LONG_LINE)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for key, value in {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull,
                       "GIT_CONFIG_NOSYSTEM": "1"}.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _commit(repo: Path, message: str) -> str:
    subprocess.run(["git", "commit", "-q", "--allow-empty", "--allow-empty-message", "-m", message], cwd=repo,
                   check=True)
    return subprocess.run(["git", "log", "-1", "--format=%h"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_range_lists_each_commit_over_the_limit_after_the_base(repo: Path) -> None:
    _commit(repo, "old: " + "o" * 100)  # before the base: old history stays as it is
    base = _commit(repo, "params: the base")
    _commit(repo, SUBJECT_72)
    long = _commit(repo, SUBJECT_73 + "\n\nbody")
    joined = _commit(repo, f"{SUBJECT_72[:40]}\n{SUBJECT_72[40:]}\n\nbody")  # git log's %s: 73 characters
    empty = _commit(repo, "")
    _commit(repo, "ci: a short one")
    result = _run("--range", f"{base}..HEAD", cwd=repo)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"error: 3 of the 5 commits in {base}..HEAD break the subject rule (at most 72 characters, not empty):",
        f"  {empty}: the commit subject is empty",
        f"  {joined}: the commit subject is 73 characters, over the limit of 72: {SUBJECT_72[:40]} {SUBJECT_72[40:]}",
        f"  {long}: the commit subject is 73 characters, over the limit of 72: {SUBJECT_73}",
    ]


def test_a_range_within_the_rule_passes(repo: Path) -> None:
    base = _commit(repo, "old: " + "o" * 100)
    _commit(repo, SUBJECT_72)
    result = _run("--range", f"{base}..HEAD", cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"commit subjects: 1 commit in {base}..HEAD, each subject at most 72 characters\n"


def test_a_base_that_is_not_there_is_one_line(repo: Path) -> None:
    _commit(repo, "first")
    result = _run("--range", "b38e3c6bb67fd526aa9db01f35dbc57f03546b46..HEAD", cwd=repo)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: cannot list the commits b38e3c6bb67fd526aa9db01f35dbc57f03546b46..HEAD: ")
    assert result.stderr.endswith("(a shallow clone may lack the base commit: clone the whole history)\n")
