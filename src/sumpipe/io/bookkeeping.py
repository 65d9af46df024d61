"""The paths sumpipe keeps for itself, and the one place that checks and opens them.

Beside the artifacts params.yaml names, sumpipe creates paths nobody names: the locks beside a model
folder (`models/M1/.seed-1.train.lock` for the trainer, `.seed-1.lock` for the folder's writer), a
training run's resume state (`checkpoints/<model>/seed-<s>/[<phase>/]{state.pt,best.safetensors}`), the
temporary files and folders beside an output (`.<name>.<pid>.<random>.tmp`), and the wall-clock figures
(`timings/<stage>/<name>.{json,csv}`). A model folder's `train_log.csv` and `SHA256SUMS` are written inside
its fresh temporary folder (`sumpipe.io.atomic.atomic_folder`), where only the file system itself (full,
read-only) can refuse them.

Any of these paths can meet what a user, a crash or another tool left there: a folder, a symbolic link
(to a file elsewhere, dangling, or a loop), a named pipe, a file without write permission, a read-only
or full file system, another process holding the lock. Two rules, one per way a path is used:

- a file replaced by rename (`check_replaceable`; `atomic_path` writes it): its folder must take a new
  file and the path must not be a folder. Whatever else is there (a link, a pipe, a read-only file) is
  replaced by the rename: the link itself, never what it leads to, so nothing outside the project is
  written. A folder is never removed: it may hold someone's files.
- a lock (`held_lock`): opened without following a symbolic link (`O_NOFOLLOW`), without blocking on a
  pipe (`O_NONBLOCK`) and never truncated; anything but a regular file there is refused, and so is a
  lock another process holds, at once or after a bounded wait. filelock is not used for this: what it
  does with a link depends on its major version (3.x follows it and truncates the file it leads to).

Every refusal is one `SumpipeError` line naming the path and what to do. The stages run the `check_*`
functions before they spend any training or decoding time; the writes themselves go through the same
rules, for what changes in between.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from sumpipe.errors import SumpipeError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))

# errno values with the remedy a user can act on; anything else is named by its strerror
_REMEDIES = {
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space (the disk quota is used up)",
    errno.EROFS: "the file system is read-only: mount it writable or point params.yaml's paths elsewhere",
    errno.EACCES: "make the folder writable (or point params.yaml's paths elsewhere)",
    errno.EPERM: "make the folder writable (it may be marked immutable: lsattr)",
    errno.ELOOP: "a symbolic link is in the way: remove it",
    errno.EISDIR: "a folder is in the way: remove it",
    errno.ENOTDIR: "a parent is not a folder: remove what is in the way",
}


def kind_of(mode: int) -> str:
    """What an `lstat` mode is, in words ("a folder", "a symbolic link", ...; "a file" for a regular file)."""
    return next((name for test, name in _KINDS if test(mode)), "a file")


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a parent that is a file, an unreadable folder
        raise os_error(path, exc, "sumpipe's own file") from None


def os_error(path: Path, exc: OSError, what: str) -> SumpipeError:
    """A refused open/create/write of `path` (which holds `what`) as one line with what to do."""
    reason = exc.strerror or str(exc)
    remedy = _REMEDIES.get(exc.errno or 0, "check the folder and run again")
    return SumpipeError(f"{path}: cannot write {what} ({reason}); {remedy}, then run again")


def _in_the_way(path: Path, kind: str, what: str) -> SumpipeError:
    return SumpipeError(f"{path}: {kind} is in the way of {what}; remove it and run again")


def require_folder(path: str | os.PathLike, what: str = "the output folder") -> Path:
    """Create folder `path` (and its parents) and prove a file can be created there, before a long stage
    spends its time: a read-only, full or impossible folder is a one-line error now, not a traceback after
    an hour of training. A symbolic link to a folder counts as the folder (a model store)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".write-test.{os.getpid()}.", suffix=".tmp", dir=path)
        os.close(fd)
        os.unlink(probe)
    except FileExistsError:
        st = _lstat(path)
        kind = "a file" if st is None else kind_of(st.st_mode)
        if kind == "a symbolic link":
            kind = "a symbolic link that leads to no folder"
        raise SumpipeError(f"{path}: cannot create {what} ({kind} of that name is in the way); remove it "
                           "and run again") from None
    except NotADirectoryError:
        raise SumpipeError(f"{path}: cannot create {what} (a parent is a file); remove it and run again") from None
    except OSError as exc:
        raise SumpipeError(f"{path}: cannot write ({exc.strerror or exc}); nothing was changed; "
                           f"{_REMEDIES.get(exc.errno or 0, 'check the folder')}, then run again") from None
    return path


def refuse_folder(path: str | os.PathLike, what: str) -> Path:
    """`path`, once it is known not to be a folder: a file replaced by rename (`atomic_path`) cannot
    replace one, and a folder is never removed in its place (it may hold someone's files)."""
    path = Path(path)
    st = _lstat(path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _in_the_way(path, "a folder", what)
    return path


def check_replaceable(path: str | os.PathLike, what: str) -> Path:
    """Before a stage starts: `path` (a file sumpipe replaces by rename, holding `what`) can be written:
    its folder exists or can be created and takes a new file, and `path` is no folder. A link, pipe or
    read-only file at `path` passes: the rename replaces it, and never writes where a link leads."""
    path = Path(path)
    require_folder(path.parent, f"the folder of {what}")
    return refuse_folder(path, what)


FS_IOC_GETFLAGS = 0x80086601  # Linux: a file's attribute flags (lsattr)
FS_IMMUTABLE_FL, FS_APPEND_FL = 0x10, 0x20


def _attribute_flags(path: Path) -> int:
    """`lsattr`'s flags of folder `path` (Linux); 0 where the file system or the platform has none."""
    try:
        import fcntl
        import struct

        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (ImportError, OSError):
        return 0
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 4))[0])
    except OSError:  # ENOTTY: a file system without attributes (tmpfs on older kernels, overlay)
        return 0
    finally:
        os.close(fd)


def _unescape_mount(field: str) -> str:
    """A mount point as /proc/self/mountinfo writes it (space, tab, newline, backslash as octal escapes)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def is_mount_point(path: Path) -> bool:
    """Whether `path` is a mount point: `os.path.ismount`, which misses a bind mount within one file system,
    or a mount point /proc/self/mountinfo lists (Linux)."""
    if os.path.ismount(path):
        return True
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as mounts:
            return any(len(fields) > 4 and _unescape_mount(fields[4]) == real
                       for fields in (line.split() for line in mounts))
    except OSError:
        return False


def check_replaceable_folder(path: str | os.PathLike, what: str) -> Path:
    """Before a stage spends its time: folder `path`, which `sumpipe.io.atomic.atomic_folder` replaces as a
    whole (two renames), can be replaced. Its parent must take a file; `path` may be absent, a folder or a
    link to one (replaced where it leads); a file, pipe or other non-folder there is refused, never removed
    (it was deleted without a word); so is a mount point (a rename of it is EBUSY: a traceback after
    training) and a folder marked immutable or append-only (`chattr +i`: EPERM after training). One line
    naming the path and what to do."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    require_folder(target.parent, f"the folder of {what}")
    st = _lstat(target)
    if st is None:
        return path
    if not stat.S_ISDIR(st.st_mode):
        raise SumpipeError(f"{target}: {kind_of(st.st_mode)} is in the way of {what}, which sumpipe writes as "
                           "a folder; move it away and run again (nothing was changed)")
    if is_mount_point(target):
        raise SumpipeError(f"{target}: is a mount point, and sumpipe replaces {what} as a whole (a rename), "
                           "which a mount point refuses; mount the folder above it instead (or link this "
                           "path to a folder inside the mount), then run again")
    if _attribute_flags(target) & (FS_IMMUTABLE_FL | FS_APPEND_FL):
        raise SumpipeError(f"{target}: cannot replace {what}: the folder is marked immutable or append-only "
                           "(lsattr); clear it (chattr -i -a) and run again (nothing was changed)")
    return path


def remove(path: str | os.PathLike, what: str) -> None:
    """Remove sumpipe's own file `path` (holding `what`) if present: a link is removed, not what it leads
    to; a folder there is refused in one line, never deleted."""
    path = refuse_folder(path, what)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise os_error(path, exc, what) from None


def check_lock(path: str | os.PathLike, what: str = "a lock file") -> Path:
    """Before a stage starts: lock file `path` can be created or opened: its folder takes a file, and
    `path` is absent or a regular file (a link, folder or pipe there is refused, never followed)."""
    path = Path(path)
    require_folder(path.parent, f"the folder of {what}")
    st = _lstat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _in_the_way(path, kind_of(st.st_mode), what)
    return path


POLL_S = 0.1  # how often a waiting lock is tried again


@contextlib.contextmanager
def held_lock(path: str | os.PathLike, held: str, timeout: float = 0, what: str = "a lock file") -> Iterator[Path]:
    """Hold the lock on file `path` (an exclusive `flock`, created if absent, compatible with
    `filelock.FileLock` on the same path) for the `with` block; released when it ends or the process dies.

    Another process holding it: tried again every POLL_S seconds for `timeout` seconds, then
    `SumpipeError(held)`. `path` is opened without following a link, without waiting for a pipe's
    other end, and never truncated; anything but a regular file is refused (`check_lock`)."""
    import fcntl

    path = check_lock(path, what)
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        try:
            fd = os.open(path, flags | os.O_RDWR, 0o666)
        except PermissionError:  # a lock file without write permission: flock needs only a descriptor
            fd = os.open(path, flags | os.O_RDONLY)
    except OSError as exc:
        raise os_error(path, exc, what) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # put there since check_lock looked
            raise _in_the_way(path, kind_of(mode), what)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SumpipeError(held) from None
                time.sleep(POLL_S)
            except OSError as exc:  # a file system without locks (some network mounts)
                raise os_error(path, exc, what) from None
        yield path
    finally:
        os.close(fd)  # releases the flock
