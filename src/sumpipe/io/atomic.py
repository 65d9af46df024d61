"""Atomic artifact writes, folder locks, and the readers of what the stages wrote.

DVC records whatever file is at an output path when a stage ends, so a stage killed half-way must
never leave half a file there: every writer goes to a temporary file in the same directory and
renames it into place (rename is atomic on POSIX within one file system).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from sumpipe.errors import SumpipeError
from sumpipe.inputs import loads_json, read_capped
from sumpipe.io.bookkeeping import check_replaceable_folder, held_lock, refuse_folder, require_folder
from sumpipe.io.native import native_path

if TYPE_CHECKING:  # pandas costs ~0.3 s to import; `sumpipe decode` never needs it
    import pandas as pd

    from sumpipe.schemas import Contract


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it over `path`, else delete it.

    The file system refusing the write (read-only or permission-less folder, full disk, quota, file
    size limit) is a one-line SumpipeError naming `path`; whatever was at `path` before stays intact.
    A folder at `path` is refused before anything is written; a link there is replaced, never followed
    (`sumpipe.io.bookkeeping`). The temporary file is created with O_EXCL under a fresh random name, so
    nothing left beside `path` can redirect it.
    """
    path = refuse_folder(path, "the file sumpipe writes there")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _write_error(path, exc) from None
    os.close(fd)
    # as relative as `path`: mkstemp makes it absolute, and native writers (Arrow, safetensors) cannot open
    # a path that is not UTF-8, such as any absolute path under a working directory named in Latin-1
    tmp_path = path.parent / Path(tmp).name
    try:
        # mkstemp creates the file 0600; give the artifact the permissions a plain open() would.
        tmp_path.chmod(0o666 & ~_current_umask())
        yield tmp_path
        # again: a writer that replaces the file (safetensors writes 0600) must not change its mode
        tmp_path.chmod(0o666 & ~_current_umask())
        os.replace(tmp_path, path)
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        raise _write_error(path, exc) from None
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _remove_stale_temporaries(path: Path) -> None:
    """Delete temporaries of `path` whose writer is gone: a SIGKILLed writer runs no clean-up, and a
    leftover inside a directory that DVC tracks (models/, checkpoints/) would change its hash. The
    writer's pid is in the name (`.<name>.<pid>.<random>.tmp`); a live writer's file is left alone."""
    prefix = f".{path.name}."
    for tmp in path.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        pid = tmp.name[len(prefix):].split(".", 1)[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            if tmp.is_dir() and not tmp.is_symlink():  # a folder of `atomic_folder`
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)


LOCK_TIMEOUT_S = 120  # a folder's write phase takes seconds; longer means a stuck writer


def folder_lock(path: str | os.PathLike, timeout: float | None = None) -> contextlib.AbstractContextManager[Path]:
    """Hold the inter-process lock on writing folder `path` (`.<name>.lock` beside it, through
    `sumpipe.io.bookkeeping.held_lock`); another writer holding it past `timeout` seconds (default
    LOCK_TIMEOUT_S) is a one-line SumpipeError."""
    path = Path(path)
    lock = folder_lock_path(path)
    return held_lock(lock, f"{path}: another process is writing it (lock {lock}); try again when it has finished",
                     LOCK_TIMEOUT_S if timeout is None else timeout, what="the lock on writing this folder")


def folder_lock_path(path: str | os.PathLike) -> Path:
    """Where `folder_lock(path)` keeps its lock file."""
    path = _written_folder(Path(path))
    return path.parent / f".{path.name}.lock"


def _written_folder(path: Path) -> Path:
    """The folder `atomic_folder(path)` replaces: `path`, or where it leads when it is a symbolic link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside `path`; on success it replaces `path` as one unit.

    Under `folder_lock(path)`, so two writers never interleave their files: each folder a reader
    sees holds one writer's complete set. The swap is two renames (a folder cannot be renamed over a
    non-empty one); a writer killed between them leaves no `path`, and the stage is simply re-run.
    A refused write is a one-line SumpipeError naming `path`. A `path` that is a symbolic link (a model
    folder kept in a model store, `models/M1 -> /store/M1`) is written where it points: the link stays,
    and the new folder replaces the one it leads to (renaming over the link would silently turn it into
    a plain folder, leaving the store behind).
    """
    path = _written_folder(Path(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(path, exc) from None
    check_replaceable_folder(path, "the folder")
    with folder_lock(path):
        tmp: Path | None = None
        try:
            _remove_stale_temporaries(path)
            tmp = path.parent / Path(tempfile.mkdtemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp",
                                                      dir=path.parent)).name  # relative: see atomic_path
            tmp.chmod(0o777 & ~_current_umask())  # mkdtemp makes it 0700
            yield tmp
            _swap_in(tmp, path)
        except SumpipeError as exc:  # a refused write inside: name the folder the user knows, not the temporary
            if tmp is None or str(tmp) not in str(exc):
                raise
            raise SumpipeError(str(exc).replace(str(tmp), str(path))) from None
        except OSError as exc:
            if exc.errno not in WRITE_ERRNOS:
                raise
            raise _write_error(path, exc) from None
        finally:
            if tmp is not None and tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


# Files in an output folder that belong to version control, not to the writer: DVC lists a stage's
# outputs in the folder's .gitignore, and a `sumpipe train` run outside `dvc repro` must not drop it.
KEPT_ACROSS_SWAPS = (".gitignore",)


def _swap_in(new: Path, path: Path) -> None:
    """Rename folder `new` to `path`, the previous `path` (if any) removed after; the previous
    folder's `KEPT_ACROSS_SWAPS` files move into the new one unless the writer made its own. Only a
    folder is ever replaced: a file or anything else at `path` is refused (it used to be moved aside and
    deleted without a word), and a second rename that fails puts the previous folder back."""
    check_replaceable_folder(path, "the folder")
    if not os.path.lexists(path):
        os.rename(new, path)
        return
    for name in KEPT_ACROSS_SWAPS:
        if (path / name).is_file() and not (new / name).exists():
            shutil.copy2(path / name, new / name)
    old = Path(tempfile.mkdtemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent))
    os.rename(path, old / "previous")
    try:
        os.rename(new, path)
    except OSError:
        os.rename(old / "previous", path)
        shutil.rmtree(old, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)


def require_writable_folder(path: str | os.PathLike) -> Path:
    """Create output folder `path` (and its parents) and prove a file can be written there, before a long
    stage spends its time (`sumpipe.io.bookkeeping.require_folder`)."""
    return require_folder(path)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


# errno values that mean "the file system refused the write", not a bug or an unreadable input
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                errno.EBUSY}  # EBUSY: a mount point, or a folder in use, cannot be renamed


def _write_error(path: Path, exc: OSError) -> SumpipeError:
    return SumpipeError(f"{path}: cannot write ({exc.strerror or exc}); the previous version, if any, is unchanged")


def write_parquet(df: pd.DataFrame | pa.Table, path: str | os.PathLike) -> Path:
    """Write a DataFrame or Arrow table to Parquet atomically (zstd, no pandas index)."""
    table = df if isinstance(df, pa.Table) else pa.Table.from_pandas(df, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, native_path(tmp), compression="zstd")
    return Path(path)


def read_table(path: str | os.PathLike, columns: list[str] | None = None,
               contract: Contract | None = None) -> pa.Table:
    """Read a Parquet artifact as an Arrow table; missing, truncated or corrupt files and absent
    columns are one-line errors naming the file. With `contract` (`sumpipe.schemas`), the columns
    the reader relies on are checked first (names, kinds, no NULLs), from the footer."""
    if contract is not None:
        open_parquet(path, contract)
    path = Path(path)
    if not path.is_file():
        raise SumpipeError(f"{path}: no such file (run the stage that writes it first, e.g. `dvc repro`)")
    try:
        # ParquetFile, not pq.read_table: the latter imports pyarrow.dataset (0.4 s of start-up)
        parquet = pq.ParquetFile(native_path(path))
        absent = [name for name in columns or [] if name not in parquet.schema_arrow.names]
        if absent:
            raise SumpipeError(f"{path}: cannot read (no column {absent[0]!r})")
        table = parquet.read(columns=columns)
    except (pa.ArrowException, OSError) as exc:  # a corrupt or truncated file
        raise SumpipeError(f"{path}: cannot read ({(str(exc).splitlines() or [''])[0]})") from None
    return _plain(table, path)


def _plain(data: Any, path: Path) -> Any:
    """`data` (a Table or RecordBatch) with dictionary-encoded columns decoded (`sumpipe.schemas.plain_columns`),
    once their decoded size is within `sumpipe.inputs.data_bytes_limit()`: one short string a million
    times is a few KB of Parquet and gigabytes decoded."""
    from sumpipe.inputs import data_bytes_limit, size_text
    from sumpipe.schemas import decoded_bytes, plain_columns

    encoded = [column for column in data.columns if pa.types.is_dictionary(column.type)]
    if encoded:
        size, limit = sum(decoded_bytes(column) for column in encoded), data_bytes_limit()
        if size > limit:
            raise SumpipeError(f"{path}: its dictionary-encoded columns are {size_text(size)} once decoded, more "
                               f"than the {size_text(limit)} a file may hold here (docs/reliability.md#limits)")
    return plain_columns(data)


def plain_batches(parquet: pq.ParquetFile, path: str | os.PathLike, **options: Any) -> Iterator[pa.RecordBatch]:
    """`parquet.iter_batches(**options)` (a file `open_parquet` opened), each batch with its
    dictionary-encoded columns decoded (`_plain`): a stage reads plain values however the file stores them."""
    try:
        for batch in parquet.iter_batches(**options):
            yield _plain(batch, Path(path))
    except (pa.ArrowException, OSError) as exc:  # a file cut or damaged past its footer
        raise SumpipeError(f"{path}: cannot read ({(str(exc).splitlines() or [''])[0]})") from None


def open_parquet(path: str | os.PathLike, contract: Contract | None = None) -> pq.ParquetFile:
    """A Parquet artifact opened for streaming (`iter_batches`), with `read_table`'s one-line errors
    and its `contract` check."""
    path = Path(path)
    if not path.is_file():
        raise SumpipeError(f"{path}: no such file (run the stage that writes it first, e.g. `dvc repro`)")
    try:
        parquet = pq.ParquetFile(native_path(path))
        if contract is not None:
            contract.check_schema(path, parquet.schema_arrow)
            contract.check_nulls(path, parquet.metadata, lambda name: parquet.read(columns=[name]).column(0))
    except (pa.ArrowException, OSError) as exc:  # truncated or not Parquet at all
        raise SumpipeError(f"{path}: cannot read ({(str(exc).splitlines() or [''])[0]})") from None
    return parquet


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None,
                 contract: Contract | None = None) -> pd.DataFrame:
    """Read a Parquet artifact into pandas, with `read_table`'s one-line errors and `contract` check."""
    return read_table(path, columns, contract).to_pandas()


def write_json(obj: Any, path: str | os.PathLike, sort_keys: bool = True) -> Path:
    """Write JSON atomically, pretty-printed and key-sorted so DVC diffs stay readable (`sort_keys`
    False: in the object's own order, where that order is the point, as DVC's columns of a metrics file)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=sort_keys, ensure_ascii=False) + "\n", encoding="utf-8")
    return Path(path)


def write_text(text: str, path: str | os.PathLike) -> Path:
    """Write a UTF-8 text file atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


MAX_JSON_BYTES = 64 << 20  # a metrics file, a model card: kilobytes; a larger one is not ours


def read_json(path: str | os.PathLike, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A JSON file (at most `max_bytes`); missing, oversized, invalid or too deeply nested JSON is a
    one-line error naming the file."""
    path = Path(path)
    if not path.is_file():
        raise SumpipeError(f"{path}: no such file")
    return loads_json(read_capped(path, max_bytes, "a JSON file"), str(path))


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
