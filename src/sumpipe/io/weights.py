"""Model weights as safetensors: written atomically and reproducibly (tied tensors stored once), and a
file's tensor shapes read from its header alone.
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from sumpipe.errors import SumpipeError
from sumpipe.inputs import open_regular
from sumpipe.io.atomic import atomic_path
from sumpipe.io.native import native_path, native_write_errors

if TYPE_CHECKING:
    import torch


def write_weights(module: torch.nn.Module, path: str | os.PathLike, *, format: str | None = None) -> Path:
    """`module`'s weights as safetensors at `path` (atomic), the same bytes for the same weights.

    Tied tensors (a shared embedding and output projection) are stored once, under their first name in
    `state_dict` order; `read_weights` ties them again from the module. A tensor that is a view into a
    larger buffer (on CUDA, cuDNN lays a recurrent layer's weights out as views of one flat buffer) is
    copied out first: safetensors refuses tensors that share memory. safetensors keeps
    a file's metadata in a hash map whose order changes from process to process, so a file with two or
    more metadata entries is not reproducible: `save_model` adds one per tied tensor it drops, and here
    the metadata is `format` alone.
    """
    from safetensors.torch import save_file

    tensors = {name: _owning(tensor) for name, tensor in _distinct_tensors(module).items()}
    with atomic_path(path) as tmp, native_write_errors():
        try:
            save_file(tensors, str(tmp), metadata=None if format is None else {"format": format})
        except (RuntimeError, ValueError) as exc:  # safetensors' refusals: saving failed, not loading
            raise SumpipeError(f"{path}: the weights cannot be saved ({(str(exc).splitlines() or [''])[0]})") from None
    return Path(path)


def read_weights(module: torch.nn.Module, path: str | os.PathLike, *,
                 strict: bool = True) -> tuple[list[str], list[str]]:
    """Load the safetensors file `path` (written by `write_weights`) into `module`, in place; return the
    (missing, unexpected) names as `load_state_dict` does, a tied tensor's second name not counted missing.

    In place (`load_state_dict` copies into the existing tensors), so the module keeps its devices and
    layouts: unlike `safetensors.torch.load_model`, which refuses a module whose recurrent weights are
    views of one cuDNN buffer ("None is covering the entire storage"). Raises what `load_state_dict` and
    safetensors raise (RuntimeError, SafetensorError); callers turn them into one line naming the file.
    """
    from safetensors.torch import load_file

    state = load_file(checked_safetensors(path))
    tied = set(module.state_dict()) - set(_distinct_tensors(module))
    missing, unexpected = module.load_state_dict(state, strict=False)
    missing = [name for name in missing if name not in tied]
    if strict and (missing or unexpected):
        raise RuntimeError(f"missing tensors {missing[:5]}, unexpected tensors {unexpected[:5]}")
    return missing, list(unexpected)


def _distinct_tensors(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """`module.state_dict()` less the second and later names of a tied tensor (the same view of the same
    memory), in state_dict order."""
    kept: dict[tuple, str] = {}
    tensors = {}
    for name, tensor in module.state_dict().items():
        view = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape),
                tuple(tensor.stride()))
        if view not in kept:
            kept[view] = name
            tensors[name] = tensor
    return tensors


def _owning(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` contiguous and alone in its memory: a copy when it is a view into a larger buffer (the
    same values, so the same bytes on disk)."""
    whole = tensor.storage_offset() == 0 and tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size()
    return tensor.contiguous() if whole else tensor.contiguous().clone()


MAX_HEADER_BYTES = 100 << 20  # safetensors' own limit on the JSON header
# A safetensors header is {name: {dtype, shape: [...], data_offsets: [...]}, "__metadata__": {...}}: 3 levels.
# Deeper is no safetensors file; JSON nested thousands deep was a RecursionError in json.loads.
MAX_HEADER_DEPTH = 16
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)  # unambiguous: linear time
_SCAN_CHUNK = 1 << 20


def json_depth(data: bytes, limit: int) -> int:
    """How deep the brackets of JSON text `data` nest (outside strings), counted by one linear scan, a
    chunk at a time: past `limit`, the scan stops at the end of that chunk and returns the depth seen so
    far (more than `limit`). No recursion, so text nested a million deep costs what its length costs."""
    import numpy as np

    brackets = _JSON_STRING.sub(b"", data)
    depth = deepest = 0
    for start in range(0, len(brackets), _SCAN_CHUNK):
        codes = np.frombuffer(brackets, np.uint8, count=min(_SCAN_CHUNK, len(brackets) - start), offset=start)
        steps = (np.isin(codes, (ord("["), ord("{"))).astype(np.int32)
                 - np.isin(codes, (ord("]"), ord("}"))).astype(np.int32))
        running = depth + np.cumsum(steps)
        if running.size:
            deepest = max(deepest, int(running.max()))
            depth = int(running[-1])
        if deepest > limit:
            return deepest
    return deepest


def read_safetensors_header(path: Path) -> dict:
    """The JSON header of safetensors file `path` (8-byte little-endian length + JSON), checked before it
    is parsed: the length within the file and `MAX_HEADER_BYTES`, the nesting at most `MAX_HEADER_DEPTH`
    (a linear scan, so no parser recurses into a hostile header), a mapping. Every reader of a
    .safetensors file goes through it (`safetensors_shapes`, `checked_safetensors`). One-line errors."""
    unreadable = f"{path}: not a readable safetensors file"
    try:
        with open_regular(path) as f:
            head = f.read(8)
            if len(head) != 8:
                raise SumpipeError(f"{unreadable} (shorter than its header)")
            (length,) = struct.unpack("<Q", head)
            if length > min(MAX_HEADER_BYTES, os.fstat(f.fileno()).st_size - 8):
                raise SumpipeError(f"{unreadable} (header length {length:,} does not fit the file)")
            text = f.read(length)
    except OSError as exc:
        raise SumpipeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    depth = json_depth(text, MAX_HEADER_DEPTH)
    if depth > MAX_HEADER_DEPTH:
        raise SumpipeError(f"{unreadable} (header nested deeper than {MAX_HEADER_DEPTH} levels)")
    try:
        header = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise SumpipeError(f"{unreadable} (header is not JSON)") from None
    if not isinstance(header, dict):
        raise SumpipeError(f"{unreadable} (header is not a mapping)")
    return header


def checked_safetensors(path: str | os.PathLike) -> str:
    """`path` for safetensors' own loaders (`load_model`, `load_file`), once `read_safetensors_header`
    has checked its header: the native parser never sees one this module has not."""
    read_safetensors_header(Path(path))
    return native_path(path)


def safetensors_shapes(path: Path) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape, from the safetensors header alone (`read_safetensors_header`); nothing else is
    read and nothing is allocated. A file that is no safetensors is a one-line error."""
    unreadable = f"{path}: not a readable safetensors file"
    header = read_safetensors_header(path)
    shapes = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shape = info.get("shape") if isinstance(info, dict) else None
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise SumpipeError(f"{unreadable} (tensor {name!r} has no valid shape)")
        shapes[name] = tuple(shape)
    return shapes
