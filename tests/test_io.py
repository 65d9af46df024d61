"""Atomic artifact writes: a failure mid-write leaves the old file (or nothing), never half a file."""

import os
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.io import atomic_path, read_json, read_parquet, write_json, write_parquet


def test_parquet_round_trip(tmp_path: Path) -> None:
    df = pd.DataFrame({"id": ["a", "b"], "references": [["x", "y"], ["z"]]})
    path = write_parquet(df, tmp_path / "sub" / "t.parquet")
    back = read_parquet(path)
    assert back["id"].tolist() == ["a", "b"]
    assert [list(r) for r in back["references"]] == [["x", "y"], ["z"]]


def test_failed_write_keeps_previous_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_missing_artifact_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SumpipeError, match="no such file"):
        read_parquet(tmp_path / "missing.parquet")


def test_corrupt_artifact_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(SumpipeError, match=r"bad\.parquet: cannot read") as info:
        read_parquet(tmp_path / "bad.parquet")
    assert "\n" not in str(info.value)


def test_corrupt_json_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "cut.json").write_text('{"M1": {"rouge1": 20.1')
    with pytest.raises(SumpipeError, match=r"cut\.json: not valid JSON"):
        read_json(tmp_path / "cut.json")


def test_atomic_files_get_umask_permissions(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        path = write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "p.parquet")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_temporaries_of_a_killed_writer_are_removed_a_live_writers_kept(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".a.parquet.{int(dead.stdout)}.x1.tmp"   # a SIGKILLed writer's leftover
    live = tmp_path / f".a.parquet.{os.getpid()}.x2.tmp"          # another write of this process
    other = tmp_path / f".b.parquet.{int(dead.stdout)}.x3.tmp"    # another artifact's: not ours to judge
    for p in (stale, live, other):
        p.write_bytes(b"half")
    write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "a.parquet")
    assert not stale.exists() and live.exists() and other.exists()


def test_refused_write_is_a_one_line_error_naming_the_artifact(tmp_path: Path, monkeypatch) -> None:
    import errno

    (tmp_path / "a.json").write_text("{}")

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(SumpipeError, match=r"a\.json: cannot write \(No space left on device\)"):
        write_json({"x": 1}, tmp_path / "a.json")
    monkeypatch.undo()
    assert (tmp_path / "a.json").read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
