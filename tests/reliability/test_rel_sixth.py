"""The sixth pass (issue 55): folders in the way of a model, and numbers and inputs of the research commands.

A model folder (`models/M1/seed-1`, replaced as a whole by two renames) met by a plain file of the user's,
a mount point (read-write or read-only: a rename of it is EBUSY), a folder marked immutable (`chattr +i`),
and a read-only mount above it. Each ends in one `error:` line naming the path, before any training (the
resume checkpoint is left as it was), and the user's file or folder is kept: a file there used to be
deleted without a word, a mount point ended in an OSError traceback, an immutable folder failed after the
whole run had trained. Mounts are built for real (`mount --bind`, root only; skipped elsewhere).

`sumpipe meta-eval` given too few articles, an article twice or an unreadable score, and `sumpipe decode`
next to a metrics/rouge.json holding a number of 5,000 digits (passed over: it only ranks models).
Fault suite: `python -m pytest -m faults`.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.reliability.harness import check, run_inprocess

pytestmark = pytest.mark.faults

TRAIN = ["train", "--model", "M1", "--no-resume"]
MODEL = "models/M1/seed-1"
STATE = "checkpoints/M1/seed-1/state.pt"


def _copy(pipeline: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(pipeline, root, symlinks=True)
    return root


def _run(*argv: str) -> bool:
    return subprocess.run(argv, capture_output=True, check=False).returncode == 0


@contextmanager
def _bind_mount(source: Path, target: Path, read_only: bool) -> Iterator[None]:
    """`source` mounted on `target` (read-only with `read_only`), for the block; skips the test where this
    process may not mount (not root, no CAP_SYS_ADMIN)."""
    if os.geteuid() != 0 or not shutil.which("mount") or not _run("mount", "--bind", str(source), str(target)):
        pytest.skip("needs to mount (root with CAP_SYS_ADMIN)")
    try:
        if read_only and not _run("mount", "-o", "remount,bind,ro", str(target)):
            pytest.skip("cannot remount read-only here")
        yield
    finally:
        _run("umount", str(target))


@contextmanager
def _immutable(path: Path) -> Iterator[None]:
    if not shutil.which("chattr") or not _run("chattr", "+i", str(path)):
        pytest.skip("chattr +i is not possible here (not root, or a file system without attributes)")
    try:
        yield
    finally:
        _run("chattr", "-i", str(path))


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_file_in_the_way_of_the_model_folder_is_kept_and_named(pipeline, tmp_path, monkeypatch, capsys) -> None:
    root = _copy(pipeline, tmp_path)
    state = (root / STATE).read_bytes()
    shutil.rmtree(root / MODEL)
    (root / MODEL).write_text("my notes\n")
    result = run_inprocess(TRAIN, root, monkeypatch, capsys)
    kept = (root / MODEL).is_file() and (root / MODEL).read_text() == "my notes\n"
    check(result, f"error: {MODEL}: a file is in the way of the model folder, which sumpipe writes as a folder; "
                  "move it away and run again (nothing was changed)", kept)
    assert (root / STATE).read_bytes() == state  # refused before training


@pytest.mark.parametrize("read_only", [False, True], ids=["mount point", "read-only mount point"])
def test_a_mount_point_as_the_model_folder_is_refused_before_training(pipeline, tmp_path, monkeypatch, capsys,
                                                                      read_only: bool) -> None:
    root = _copy(pipeline, tmp_path)
    store = tmp_path / "store"
    shutil.copytree(root / MODEL, store)
    before, state = _files(store), (root / STATE).read_bytes()
    with _bind_mount(store, root / MODEL, read_only):
        result = run_inprocess(TRAIN, root, monkeypatch, capsys)
    check(result, f"error: {MODEL}: is a mount point, and sumpipe replaces the model "
                  "folder as a whole (a rename)", _files(store) == before)
    assert (root / STATE).read_bytes() == state


def test_a_read_only_mount_above_the_model_folder_is_refused_before_training(pipeline, tmp_path, monkeypatch,
                                                                             capsys) -> None:
    root = _copy(pipeline, tmp_path)
    store = tmp_path / "store"
    shutil.copytree(root / "models/M1", store, symlinks=True)
    before, state = _files(store), (root / STATE).read_bytes()
    with _bind_mount(store, root / "models/M1", read_only=True):
        result = run_inprocess(TRAIN, root, monkeypatch, capsys)
    check(result, "error: models/M1: cannot write (Read-only file system)", _files(store) == before)
    assert (root / STATE).read_bytes() == state


def test_an_immutable_model_folder_is_refused_before_training(pipeline, tmp_path, monkeypatch, capsys) -> None:
    root = _copy(pipeline, tmp_path)
    before, state = _files(root / MODEL), (root / STATE).read_bytes()
    with _immutable(root / MODEL):
        result = run_inprocess(TRAIN, root, monkeypatch, capsys)
    check(result, f"error: {MODEL}: cannot replace the model folder: the folder is marked immutable or "
                  "append-only (lsattr)", _files(root / MODEL) == before)
    assert (root / STATE).read_bytes() == state


def test_a_number_too_long_in_metrics_rouge_json_is_passed_over(pipeline, tmp_path, monkeypatch, capsys) -> None:
    """metrics/rouge.json only ranks the models for `decode INPUT`: one it cannot read is no reason to refuse
    (a 5,000-digit number in it was a ValueError traceback from sumpipe.inputs)."""
    root = _copy(pipeline, tmp_path)
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics/rouge.json").write_text('{"M1": {"rougeL": ' + "9" * 5000 + "}}")
    check(run_inprocess(["decode", "input.txt"], root, monkeypatch, capsys), "ok")


ARTICLE = {"id": "a1", "source": "The cat sat on the mat . It was a sunny day .",
           "references": ["the cat sat on the mat ."],
           "system_outputs": {"S1": "the cat sat on the mat .", "S2": "a sunny day ."},
           "human_scores": {"S1": {"fluency": 5}, "S2": {"fluency": 2}}}


def _judgments(n: int) -> list[str]:
    return [json.dumps({**ARTICLE, "id": f"a{k}", "source": f"{ARTICLE['source']} Day {k} .",
                        "human_scores": {"S1": {"fluency": 1 + k % 5}, "S2": {"fluency": 5 - k % 5}}})
            for k in range(n)]


META_CASES = {
    "two articles": (lambda: _judgments(2),
                     "error: j.jsonl.gz: 2 articles, fewer than the 10 a meta-evaluation needs (min_articles)"),
    "an article twice": (lambda: [*_judgments(11), _judgments(11)[3]],
                         "error: j.jsonl.gz:12: the same article as line 4 (id 'a3'); each article once"),
    "a score of 401 digits": (lambda: [*_judgments(11), _judgments(12)[11].replace('"fluency": 2}', '"fluency": '
                                                                                   + "7" * 401 + "}", 1)],
                              "error: j.jsonl.gz:12: key human_scores.S1.fluency: a number of 401 digits"),
}


@pytest.mark.parametrize(("lines", "expected"), [pytest.param(*v, id=k) for k, v in META_CASES.items()])
def test_meta_eval_input(tmp_path, monkeypatch, capsys, lines, expected) -> None:
    """Refused before any work: no results folder is made (a 2-article file used to run a minute, write its
    results, then blame the protocol; an article twice counted twice in every mean)."""
    with gzip.open(tmp_path / "j.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(lines()) + "\n")
    (tmp_path / "params.yaml").write_text("judgments: j.jsonl.gz\nbootstrap: 20\npublished:\n"
                                          "  ROUGE-1: {fluency: 0.1}\n")
    check(run_inprocess(["meta-eval"], tmp_path, monkeypatch, capsys), expected)
    assert not (tmp_path / "results").exists()
