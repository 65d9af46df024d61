"""Device and CPU-thread choices, made one way for every stage (train, decode, crosseval, report).

- `resolve_device("auto" | "cpu" | "cuda", key)`: `auto` is this process's CUDA device when there
  is one (under torchrun, the local rank's), else the CPU; `cuda` without a GPU is a one-line error
  naming the params key (`train.device`, `decode.device`).
- `torch_threads(n)`: torch's intra-op CPU threads set to n for a block, then restored, so a
  setting never leaks into the rest of the process (n = None leaves them alone).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

from sumpipe.errors import SumpipeError


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
    try:
        yield
    finally:
        with _THREADS_LOCK:
            _threads_state["inside"] -= 1
            if _threads_state["inside"] == 0:
                torch.set_num_threads(_threads_state["before"])
