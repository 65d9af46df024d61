"""Atomic artifact writes: a failure mid-write leaves the old file (or nothing), never half a file."""

import os
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import (
    atomic_folder,
    atomic_path,
    folder_lock,
    read_json,
    read_parquet,
    require_writable_folder,
    write_json,
    write_parquet,
)


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


# --------------------------------------------------------------------------------------------
# Folders written as one unit, output folders tested before a long stage
# --------------------------------------------------------------------------------------------
def test_atomic_folder_replaces_the_whole_folder(tmp_path: Path) -> None:
    target = tmp_path / "models" / "M1"
    with atomic_folder(target) as unit:
        (unit / "a").write_text("1")
        (unit / "b").write_text("1")
    with atomic_folder(target) as unit:
        (unit / "c").write_text("2")
    assert sorted(p.name for p in target.iterdir()) == ["c"]  # nothing of the first writer is left
    assert not list(target.parent.glob(".*.tmp"))
    assert target.stat().st_mode & 0o777 == 0o777 & ~_umask()


def test_atomic_folder_keeps_the_gitignore_dvc_wrote(tmp_path: Path) -> None:
    target = tmp_path / "models" / "M1"
    with atomic_folder(target) as unit:
        (unit / "model.safetensors").write_text("1")
    (target / ".gitignore").write_text("/model.safetensors\n")   # DVC lists the stage's outputs there
    with atomic_folder(target) as unit:                            # a `sumpipe train` outside dvc repro
        (unit / "model.safetensors").write_text("2")
    assert sorted(p.name for p in target.iterdir()) == [".gitignore", "model.safetensors"]
    assert (target / ".gitignore").read_text() == "/model.safetensors\n"


def test_atomic_folder_keeps_the_previous_folder_when_the_writer_fails(tmp_path: Path) -> None:
    target = tmp_path / "M1"
    with atomic_folder(target) as unit:
        (unit / "a").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(target) as unit:
        (unit / "a").write_text("half")
        raise RuntimeError("killed half-way")
    assert (target / "a").read_text() == "old"
    assert not list(tmp_path.glob(".*.tmp"))


def test_atomic_folder_waits_for_another_writer_then_says_so(tmp_path: Path, monkeypatch) -> None:
    import sumpipe.io.atomic as io_module

    monkeypatch.setattr(io_module, "LOCK_TIMEOUT_S", 0.2)
    target = tmp_path / "M1"
    with folder_lock(target, timeout=0):  # another writer holds the folder
        with pytest.raises(SumpipeError, match=r"M1: another process is writing it \(lock .*\.M1\.lock\)"):
            with atomic_folder(target):
                pass
    assert not target.exists()


def test_refused_write_inside_a_folder_names_the_folder_not_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "M1"
    with pytest.raises(SumpipeError) as info, atomic_folder(target) as unit:
        raise SumpipeError(f"{unit / 'model.safetensors'}: cannot write (File too large)")
    assert str(info.value) == f"{target / 'model.safetensors'}: cannot write (File too large)"


def test_stale_folder_of_a_killed_writer_is_removed(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".M1.{int(dead.stdout)}.x1.tmp"
    (stale / "half").mkdir(parents=True)
    with atomic_folder(tmp_path / "M1") as unit:
        (unit / "a").write_text("1")
    assert not stale.exists()


@pytest.mark.parametrize(("make", "message"), [
    (lambda root: (root / "file").write_text("x") and root / "file" / "models", "a parent is a file"),
    (lambda root: (root / "models").write_text("x") and root / "models", "a file of that name is in the way"),
])
def test_output_folder_that_cannot_be_created_is_one_line(tmp_path: Path, make, message) -> None:
    with pytest.raises(SumpipeError, match=message):
        require_writable_folder(make(tmp_path))


def test_output_folder_is_created_and_left_clean(tmp_path: Path) -> None:
    folder = require_writable_folder(tmp_path / "a" / "b")
    assert folder.is_dir() and list(folder.iterdir()) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_symlinked_folder_is_replaced_where_it_points(tmp_path: Path) -> None:
    """models/M1 -> store/M1: the new folder goes into the store and the link stays a link."""
    (tmp_path / "store" / "M1").mkdir(parents=True)
    (tmp_path / "store" / "M1" / "old").write_text("old")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "M1").symlink_to(tmp_path / "store" / "M1")
    with atomic_folder(tmp_path / "models" / "M1") as unit:
        (unit / "new").write_text("new")
    assert (tmp_path / "models" / "M1").is_symlink()
    assert sorted(p.name for p in (tmp_path / "store" / "M1").iterdir()) == ["new"]
    assert not list((tmp_path / "models").iterdir())[1:]  # nothing left beside the link
