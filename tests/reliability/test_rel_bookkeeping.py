"""The paths sumpipe keeps for itself (sumpipe.io.bookkeeping), each met by every obstacle, for real.

Path kinds (what `sumpipe train --model M1 --no-resume` or `sumpipe decode --model M1` lock, replace or
remove): the trainer's lock, the model folder's lock, the resume checkpoint, the best weights, the
timings and throughput curve of a training run, a decode run's timings, and a training phase's
checkpoint folder. Obstacles: a folder (holding a file), a link to a user's file elsewhere, a dangling
link, a link loop, a named pipe, a file without write permission, a read-only folder (`chattr +i`,
which stops root too; chmod a-w for anyone else), a full disk (ENOSPC from the create itself: os.open
is the syscall of both the lock and the temporary file beside an output) and another process holding
the lock.

Each case ends in one `error:` line naming the path and what to do, before any training time is spent
where the path can be checked up front (a full disk met at the end names the file and keeps the previous
version), or in correct work: a link or pipe where a file is replaced by rename is replaced itself, never
written through. Never a traceback, a hang, a write through a link or a lost file of the user's.

The model folder (`models/M1/seed-1`, replaced as a whole by two renames) met by a plain file of the
user's, a mount point (read-write or read-only: a rename of it is EBUSY), a folder marked immutable
(`chattr +i`), and a read-only mount above it: one `error:` line naming the path, before any training
(the resume checkpoint is left as it was), and the user's file or folder is kept. A file there used to be
deleted without a word, a mount point ended in an OSError traceback, an immutable folder failed after the
whole run had trained. Mounts are built for real (`mount --bind`, root only; skipped elsewhere).
Fault suite: `python -m pytest -m faults`.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.reliability.harness import check, run_inprocess, run_subprocess, subprocess_env

pytestmark = pytest.mark.faults

TRAIN = ["train", "--model", "M1", "--no-resume"]
DECODE = ["decode", "--model", "M1"]
OUTSIDE = "a user's notes\n"

# path kind -> (path, "lock" | "file", the command that keeps it, what its errors call it)
KINDS = {
    "train lock": ("models/M1/.seed-1.train.lock", "lock", TRAIN),
    "model folder lock": ("models/M1/.seed-1.lock", "lock", TRAIN),
    "resume checkpoint": ("checkpoints/M1/seed-1/state.pt", "file", TRAIN),
    "best weights": ("checkpoints/M1/seed-1/best.safetensors", "file", TRAIN),
    "train timings": ("timings/train/M1/seed-1.json", "file", TRAIN),
    "throughput curve": ("timings/train/M1/seed-1.csv", "file", TRAIN),
    "decode timings": ("timings/decode/M1/seed-1.json", "file", DECODE),
}


def _copy(pipeline: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(pipeline, root, symlinks=True)
    return root


def _user_file(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere" / "notes.txt"
    target.parent.mkdir(exist_ok=True)
    target.write_text(OUTSIDE)
    return target


def _clear(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _full_disk(monkeypatch, path: Path) -> None:
    """ENOSPC from os.open when it creates `path` (a lock) or a temporary beside it (`.<name>.*.tmp`)."""
    real_open = os.open

    def refusing_open(name, flags, *args, **kwargs):
        base = os.path.basename(os.fsdecode(name))
        if flags & os.O_CREAT and (base == path.name or base.startswith(f".{path.name}.")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), name)
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)


@contextmanager
def _held(path: Path, monkeypatch) -> Iterator[None]:
    """Another process's lock on `path` (filelock: flock, as any sumpipe process takes it); a waiting
    writer gives up after a second here instead of LOCK_TIMEOUT_S."""
    from filelock import FileLock

    import sumpipe.io.atomic

    monkeypatch.setattr(sumpipe.io.atomic, "LOCK_TIMEOUT_S", 1)
    with FileLock(str(path), timeout=0):
        yield


# obstacle -> what a lock path and a replaced file must end in: "ok", "error: <fragment>" ({path} and
# {parent} filled in), or None (the obstacle means nothing for that kind of path)
OBSTACLES: dict[str, dict[str, str | None]] = {
    "folder": {"lock": "error: {path}: a folder is in the way of", "file": "error: {path}: a folder is in the way of"},
    "link to a user's file": {"lock": "error: {path}: a symbolic link is in the way of", "file": "ok"},
    "dangling link": {"lock": "error: {path}: a symbolic link is in the way of", "file": "ok"},
    "link loop": {"lock": "error: {path}: a symbolic link is in the way of", "file": "ok"},
    "named pipe": {"lock": "error: {path}: a named pipe is in the way of", "file": "ok"},
    "file without write permission": {"lock": "ok", "file": "ok"},
    "read-only folder": {"lock": "error: {parent}: cannot write", "file": "error: {parent}: cannot write"},
    "full disk": {"lock": "error: {path}: cannot write", "file": "error: {path}: cannot write"},
    "held by another process": {"lock": "error: another", "file": None},
}


def _build(obstacle: str, path: Path, tmp_path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _clear(path)
    builders: dict[str, Callable[[], object]] = {
        "folder": lambda: (path.mkdir(), (path / "kept.txt").write_text("mine")),
        "link to a user's file": lambda: path.symlink_to(_user_file(tmp_path)),
        "dangling link": lambda: path.symlink_to(tmp_path / "nowhere" / "x"),
        "link loop": lambda: path.symlink_to(path.name),
        "named pipe": lambda: os.mkfifo(path),
        "file without write permission": lambda: (path.write_text(""), path.chmod(0o444)),
    }
    if obstacle in builders:
        builders[obstacle]()


CASES = [pytest.param(kind, obstacle, id=f"{kind} x {obstacle}")
         for kind, (_, use, _) in KINDS.items() for obstacle, expected in OBSTACLES.items() if expected[use]]


@pytest.mark.parametrize(("kind", "obstacle"), CASES)
def test_a_bookkeeping_path_meets_an_obstacle(kind: str, obstacle: str, pipeline: Path, tmp_path: Path,
                                              monkeypatch, capsys, read_only) -> None:
    relative, use, argv = KINDS[kind]
    root = _copy(pipeline, tmp_path)
    path = root / relative
    _build(obstacle, path, tmp_path)
    model = root / "models/M1/seed-1/model.safetensors"
    weights = model.read_bytes()
    expected = OBSTACLES[obstacle][use]
    assert expected is not None
    expected = expected.format(path=relative, parent=str(Path(relative).parent))

    if obstacle == "read-only folder":
        with read_only(path.parent):
            result = run_inprocess(argv, root, monkeypatch, capsys)
    elif obstacle == "held by another process":
        with _held(path, monkeypatch):
            result = run_inprocess(argv, root, monkeypatch, capsys)
    else:
        if obstacle == "full disk":
            _full_disk(monkeypatch, path)
        result = run_inprocess(argv, root, monkeypatch, capsys)
        monkeypatch.undo()

    outside = tmp_path / "elsewhere" / "notes.txt"
    kept = (not outside.exists() or outside.read_text() == OUTSIDE) and not (tmp_path / "nowhere").exists() \
        and (obstacle != "folder" or (path / "kept.txt").read_text() == "mine")
    check(result, expected, kept=kept)
    if result.outcome == "ok":
        if use == "file" and os.path.lexists(path):  # written by this run: a plain file, no longer the obstacle
            assert not path.is_symlink() and path.is_file(), f"{relative}: still {path.lstat()}"
        return
    if obstacle != "full disk" and not (kind == "model folder lock" and obstacle == "held by another process"):
        assert "epoch" not in result.err, "training ran before the path was checked"
        assert model.read_bytes() == weights


@pytest.mark.parametrize("obstacle", ["a file", "a dangling link", "a named pipe"])
def test_a_training_phases_checkpoint_folder_is_checked_before_training(obstacle: str, pipeline: Path,
                                                                         tmp_path: Path, monkeypatch, capsys) -> None:
    """PG trains in two phases (`main`, `coverage`), each resuming from its own folder: the second
    phase's folder is checked before the first phase trains."""
    root = _copy(pipeline, tmp_path)
    folder = root / "checkpoints/PG/seed-1/coverage"
    folder.parent.mkdir(parents=True, exist_ok=True)
    {"a file": lambda: folder.write_text("x"), "a dangling link": lambda: folder.symlink_to(tmp_path / "nowhere"),
     "a named pipe": lambda: os.mkfifo(folder)}[obstacle]()
    result = run_inprocess(["train", "--model", "PG"], root, monkeypatch, capsys)
    check(result, "error: checkpoints/PG/seed-1/coverage: cannot create the resume checkpoint folder",
          kept=not (tmp_path / "nowhere").exists())
    assert "epoch" not in result.err


# --------------------------------------------------------------------------------------------
# In a child process, as a user meets them: a real read-only mount, and a full disk injected by
# tests/reliability/faultinject (the `sumpipe` console script, which it labels `train@M1`)
# --------------------------------------------------------------------------------------------
FAULTINJECT = Path(__file__).parent / "faultinject"


def test_a_read_only_mount_is_one_line_before_training(pipeline: Path, tmp_path: Path) -> None:
    """timings/ bind-mounted read-only in a mount namespace of its own (`unshare -rm`): EROFS for real."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no user and mount namespaces here (unshare -rm)")
    root = _copy(pipeline, tmp_path)
    command = "mount --bind -o ro timings timings && exec sumpipe train --model M1 --no-resume"
    result = run_subprocess(["unshare", "-rm", "sh", "-c", command], root, timeout=300)
    check(result, "error: timings/train/M1: cannot write (Read-only file system); nothing was changed; the file "
                  "system is read-only")
    assert "epoch" not in result.err


@pytest.mark.parametrize(("name", "expected"), [
    (".seed-1.train.lock", "error: models/M1/.seed-1.train.lock: cannot write the lock on training this model "
                           "(No space left on device); free some space, then run again"),
    ("state.pt", "error: checkpoints/M1/seed-1/state.pt: cannot write (No space left on device)"),
])
def test_a_full_disk_in_a_child_process(name: str, expected: str, pipeline: Path, tmp_path: Path) -> None:
    root = _copy(pipeline, tmp_path)
    before = (root / "checkpoints/M1/seed-1/state.pt").read_bytes()
    env = subprocess_env({"RELIABILITY_FAULT": f"train@M1:enospc:{name}"}, pythonpath=[FAULTINJECT])
    result = run_subprocess(["sumpipe", *TRAIN], root, timeout=300, env=env)
    check(result, expected)
    if name == "state.pt":  # met at the first checkpoint: the previous one is removed by --no-resume, none half-written
        assert not list((root / "checkpoints/M1/seed-1").glob(".*.tmp"))
    else:
        assert (root / "checkpoints/M1/seed-1/state.pt").read_bytes() == before
        assert "epoch" not in result.err


# --------------------------------------------------------------------------------------------
# The model folder, replaced as a whole (check_replaceable_folder): a file, a mount point, an immutable
# folder in its way, or a read-only mount above it
# --------------------------------------------------------------------------------------------
MODEL = "models/M1/seed-1"
STATE = "checkpoints/M1/seed-1/state.pt"


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
