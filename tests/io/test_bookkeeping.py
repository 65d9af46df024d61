"""sumpipe.io.bookkeeping: each obstacle a bookkeeping path can meet, built for real on disk.

A lock refuses anything but a regular file (never following a link, never truncating); a file that is
replaced by rename refuses only a folder in its place, and replaces a link (never writing through it);
a refused create is one line naming the path and the remedy. The whole pipeline under the same
obstacles: tests/reliability/test_rel_bookkeeping.py (`-m faults`).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import write_text
from sumpipe.io.bookkeeping import check_lock, check_replaceable, held_lock, kind_of, remove, require_folder

OUTSIDE = "precious\n"


def _outside(tmp_path: Path) -> Path:
    """A user's file outside the folder under test: no obstacle may change it."""
    target = tmp_path / "elsewhere" / "notes.txt"
    target.parent.mkdir()
    target.write_text(OUTSIDE)
    return target


# name -> builder(path, tmp_path): each obstacle made for real at `path`
OBSTACLES = {
    "folder": lambda path, tmp: (path.mkdir(), (path / "kept.txt").write_text("mine")),
    "link to a file elsewhere": lambda path, tmp: path.symlink_to(_outside(tmp)),
    "dangling link": lambda path, tmp: path.symlink_to(tmp / "nowhere" / "x"),
    "link loop": lambda path, tmp: path.symlink_to(path.name),
    "named pipe": lambda path, tmp: os.mkfifo(path),
}


def _make(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    path = folder / ".seed-1.train.lock"
    OBSTACLES[name](path, tmp_path)
    return path


def _untouched(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.txt"
    if outside.exists():
        assert outside.read_text() == OUTSIDE
    assert not (tmp_path / "nowhere").exists(), "a dangling link was followed"


@pytest.mark.parametrize(("name", "kind"), [("folder", "a folder"), ("link to a file elsewhere", "a symbolic link"),
                                            ("dangling link", "a symbolic link"), ("link loop", "a symbolic link"),
                                            ("named pipe", "a named pipe")])
def test_a_lock_refuses_what_is_no_regular_file(name: str, kind: str, tmp_path: Path) -> None:
    path = _make(name, tmp_path)
    with pytest.raises(SumpipeError) as info, held_lock(path, "held", what="the lock on training this model"):
        pytest.fail("the lock was taken")
    assert str(info.value) == (f"{path}: {kind} is in the way of the lock on training this model; "
                               "remove it and run again")
    _untouched(tmp_path)
    if name == "folder":
        assert (path / "kept.txt").read_text() == "mine"


def test_a_lock_file_without_write_permission_is_still_a_lock(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / ".M1.lock"
    path.write_text("")
    path.chmod(0o444)
    real_open = os.open

    def as_a_user(name, flags, *args, **kwargs):  # root may open it for writing; nobody else may
        if os.fsdecode(name) == str(path) and flags & os.O_RDWR:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", as_a_user)
    with held_lock(path, "held"):
        with pytest.raises(SumpipeError, match="^someone else$"), held_lock(path, "someone else"):
            pass
    assert path.stat().st_mode & 0o777 == 0o444


def test_a_held_lock_is_refused_with_the_callers_message_and_freed_after(tmp_path: Path) -> None:
    path = tmp_path / ".M1.lock"
    with held_lock(path, "first"):
        with pytest.raises(SumpipeError, match="^models/M1: another process is writing it$"), \
                held_lock(path, "models/M1: another process is writing it", timeout=0.2):
            pass
    with held_lock(path, "free again") as taken:
        assert taken == path


def test_a_lock_held_by_another_process_through_filelock_is_seen(tmp_path: Path) -> None:
    """The tests and older sumpipe versions hold these locks with filelock: both are flock."""
    from filelock import FileLock

    path = tmp_path / ".M1.train.lock"
    with FileLock(str(path), timeout=0), pytest.raises(SumpipeError, match="^busy$"), held_lock(path, "busy"):
        pass


def test_a_lock_never_truncates_its_file(tmp_path: Path) -> None:
    path = tmp_path / ".M1.lock"
    path.write_text("written by someone")
    with held_lock(path, "held"):
        pass
    assert path.read_text() == "written by someone"


@pytest.mark.parametrize("name", ["link to a file elsewhere", "dangling link", "link loop", "named pipe"])
def test_a_replaced_file_replaces_a_link_or_pipe_and_never_writes_through(name: str, tmp_path: Path) -> None:
    path = _make(name, tmp_path)
    assert check_replaceable(path, "this run's timings") == path
    write_text("new figures\n", path)
    assert kind_of(path.lstat().st_mode) == "a file" and path.read_text() == "new figures\n"
    _untouched(tmp_path)


def test_a_folder_in_a_replaced_files_place_is_refused_and_kept(tmp_path: Path) -> None:
    path = _make("folder", tmp_path)
    message = f"{path}: a folder is in the way of the resume checkpoint; remove it and run again"
    with pytest.raises(SumpipeError, match=f"^{message}$"):
        check_replaceable(path, "the resume checkpoint")
    with pytest.raises(SumpipeError, match="a folder is in the way of the file sumpipe writes there"):
        write_text("x", path)  # the write itself refuses it too, before anything is written
    with pytest.raises(SumpipeError, match=f"^{message}$"):
        remove(path, "the resume checkpoint")
    assert (path / "kept.txt").read_text() == "mine"


def test_remove_takes_the_link_not_what_it_leads_to(tmp_path: Path) -> None:
    path = _make("link to a file elsewhere", tmp_path)
    remove(path, "the resume checkpoint")
    assert not os.path.lexists(path)
    remove(path, "the resume checkpoint")  # absent: nothing to do
    _untouched(tmp_path)


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p.symlink_to(p.parent / "nowhere"), "a symbolic link that leads to no folder of that name"),
    (lambda p: p.symlink_to(p.name), "a symbolic link that leads to no folder of that name"),
    (lambda p: os.mkfifo(p), "a named pipe of that name is in the way"),
    (lambda p: p.write_text("x"), "a file of that name is in the way"),
])
def test_a_bookkeeping_folder_that_is_no_folder_is_one_line(make, message: str, tmp_path: Path) -> None:
    folder = tmp_path / "timings"
    make(folder)
    with pytest.raises(SumpipeError, match=f"^{folder}: cannot create the folder of this run's timings \\({message}"):
        check_replaceable(folder / "seed-1.json", "this run's timings")
    with pytest.raises(SumpipeError, match=f"^{folder}: cannot create the folder of a lock file"):
        check_lock(folder / ".M1.lock")


def test_a_folder_linked_to_a_store_is_the_folder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (tmp_path / "checkpoints").symlink_to(store)
    assert require_folder(tmp_path / "checkpoints" / "M1") == tmp_path / "checkpoints" / "M1"
    assert (store / "M1").is_dir() and list((store / "M1").iterdir()) == []


def _refuse_creates(monkeypatch, folder: Path, code: int) -> None:
    """os.open (the lock's open, mkstemp's) failing with `code` when it creates a file in `folder`, as
    a full disk or read-only mount makes it fail."""
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and Path(os.fsdecode(path)).parent.resolve() == folder.resolve():
            raise OSError(code, os.strerror(code), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)


@pytest.mark.parametrize(("code", "remedy"), [(errno.ENOSPC, "free some space"),
                                              (errno.EROFS, "the file system is read-only"),
                                              (errno.EACCES, "make the folder writable")])
def test_a_refused_create_is_one_line_with_the_remedy(code: int, remedy: str, tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    _refuse_creates(monkeypatch, folder, code)
    for attempt in (lambda: check_replaceable(folder / "seed-1.json", "this run's timings"),
                    lambda: held_lock(folder / ".M1.lock", "held").__enter__()):
        with pytest.raises(SumpipeError) as info:
            attempt()
        message = str(info.value)
        assert message.startswith(f"{folder}: cannot write ({os.strerror(code)}); nothing was changed; {remedy}")
        assert "\n" not in message


def test_a_lock_file_whose_create_fails_names_the_lock(tmp_path: Path, monkeypatch) -> None:
    """The folder takes the probe, the lock's own create fails (the last inode went in between)."""
    lock = tmp_path / ".M1.lock"
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if os.fsdecode(path) == str(lock):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(SumpipeError, match=f"^{lock}: cannot write a lock file \\(No space left on device\\); "
                                           "free some space, then run again$"):
        with held_lock(lock, "held"):
            pass


@pytest.fixture
def immutable_folder(tmp_path: Path, read_only):
    """A folder nobody can create a file in, root included (the `read_only` fixture)."""
    folder = tmp_path / "frozen"
    folder.mkdir()
    with read_only(folder):
        yield folder


def test_a_read_only_folder_is_one_line_before_any_write(immutable_folder: Path) -> None:
    for attempt in (lambda: check_replaceable(immutable_folder / "state.pt", "the resume checkpoint"),
                    lambda: held_lock(immutable_folder / ".M1.lock", "held").__enter__()):
        with pytest.raises(SumpipeError, match=f"^{immutable_folder}: cannot write \\((Operation not permitted|"
                                               "Permission denied)\\); nothing was changed; make the folder"):
            attempt()
    assert list(immutable_folder.iterdir()) == []
