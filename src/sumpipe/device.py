"""Device and CPU-thread choices, made one way for every stage (train, decode, crosseval, report).

- `resolve_device("auto" | "cpu" | "cuda", key)`: `auto` is this process's CUDA device when there
  is one (under torchrun, the local rank's), else the CPU; `cuda` without a GPU is a one-line error
  naming the params key (`train.device`, `decode.device`).
- `torch_threads(n)`: torch's intra-op CPU threads set to n for a block, then restored, so a
  setting never leaks into the rest of the process (n = None leaves them alone). OpenBLAS, which
  runs the Linear layers' products (`sumpipe.models.linear`), follows the same count: left at its
  default of every core, two runs side by side would each spin two threads on two cores.

In a `sumpipe` command (`sumpipe.cli.main` sets `COMMAND_LINE`), torch loads here with the garbage
collector paused, and then every object there is moves to the collector's permanent generation
(`gc.freeze`). Loading torch makes some 170,000 objects that live as long as the process, and a full
collection walks them all: three ran while torch loaded and one more at exit (Python's last), about a
quarter of the wall time of `sumpipe decode --beam 4 doc.txt`. A frozen object is still freed
when nothing refers to it; only a reference cycle through one would stay. The Python API
(`sumpipe.load`) leaves the collector alone: the heap there is the caller's.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from sumpipe.errors import SumpipeError

if "torch" in sys.modules or not getattr(sys.modules.get("sumpipe.cli"), "COMMAND_LINE", False):
    import torch
else:  # the command line's first torch: paused collector, then frozen (module docstring)
    _collecting = gc.isenabled()
    gc.disable()
    try:
        import torch

        gc.freeze()
    finally:
        if _collecting:
            gc.enable()


def resolve_device(name: str, key: str, local_rank: int = 0) -> torch.device:
    """The torch device params value `name` (at `key`) asks for; see the module docstring."""
    if name == "cuda" and not torch.cuda.is_available():
        raise SumpipeError(f"{key}: 'cuda' was asked for but no CUDA device is available (use 'auto' or 'cpu')")
    if name in ("auto", "cuda") and torch.cuda.is_available():
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    return torch.device("cpu")


_THREADS_LOCK = threading.Lock()
_threads_state: dict[str, int] = {"inside": 0, "before": 0}  # blocks open in any thread; the count to restore


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's CPU threads = `threads` inside the block (None: unchanged); restored on exit. torch's count is
    the process's: blocks open in several threads at once (the API called from a thread pool) restore the
    count from before the first of them when the last ends, not one another's."""
    if threads is None:
        yield
        return
    with _THREADS_LOCK:
        if _threads_state["inside"] == 0:
            _threads_state["before"] = torch.get_num_threads()
        _threads_state["inside"] += 1
        torch.set_num_threads(threads)
        _set_blas_threads(threads)
    try:
        yield
    finally:
        with _THREADS_LOCK:
            _threads_state["inside"] -= 1
            if _threads_state["inside"] == 0:
                torch.set_num_threads(_threads_state["before"])
                _set_blas_threads(_threads_state["before"])


def _set_blas_threads(threads: int) -> None:
    library = openblas()
    if library is not None:
        library.scipy_openblas_set_num_threads64_(ctypes.c_int(threads))


@functools.cache
def openblas() -> ctypes.CDLL | None:
    """The OpenBLAS library NumPy loaded (its wheels bundle it under numpy.libs/), or None for a NumPy
    built on another BLAS."""
    import numpy

    for library in sorted((Path(numpy.__file__).parent.parent / "numpy.libs").glob("libscipy_openblas64_*.so")):
        handle = ctypes.CDLL(str(library))
        if hasattr(handle, "scipy_openblas_set_num_threads64_"):
            return handle
    return None
