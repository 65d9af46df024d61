"""What native readers and writers (Arrow's C++, safetensors' Rust, torch.save's stream writer) need from
Python: a path they can open (UTF-8 text only), and their refused writes as the OSError that
`sumpipe.io.atomic.atomic_path` reports in one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterator

from sumpipe.errors import SumpipeError


@contextlib.contextmanager
def native_write_errors() -> Iterator[None]:
    """Around a writer implemented in Rust or C++ (safetensors, torch.save): re-raise a refused write
    (full disk, size limit) as the OSError that `atomic_path` reports in one line; these libraries
    raise their own exception types for it."""
    try:
        yield
    except OSError:
        raise
    except Exception as exc:
        text = str(exc)
        code = re.search(r"os error (\d+)", text)  # safetensors: Rust's io::Error
        if code:
            raise OSError(int(code.group(1)), os.strerror(int(code.group(1)))) from exc
        if "inline_container" in text:  # torch.save's stream writer: "unexpected pos", "file write failed"
            raise OSError(errno.EIO, "write failed, is the disk full?") from exc
        raise


def native_path(path: str | os.PathLike) -> str:
    """`path` as a native library (safetensors' Rust, Arrow's C++) can open it: those take UTF-8 text only,
    so a path under a folder whose name is not UTF-8 (bytes of Latin-1, kept by Python as surrogates) is
    given relative to the working directory when that spelling is UTF-8; else a one-line error."""
    text = os.fspath(path)
    for candidate in (text, os.path.relpath(text)):
        try:
            candidate.encode("utf-8")
            return candidate
        except UnicodeEncodeError:
            continue
    raise SumpipeError(f"{text.encode('utf-8', 'backslashreplace').decode()}: the path is not UTF-8 text, which "
                       "the file's reader cannot open; rename the folder or give the path relative to it")
