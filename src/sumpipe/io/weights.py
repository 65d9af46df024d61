"""Model weights as safetensors: written atomically and reproducibly (tied tensors stored once), and a
file's tensor shapes read from its header alone.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import atomic_path
from sumpipe.io.native import native_write_errors

if TYPE_CHECKING:
    import torch


def write_weights(module: torch.nn.Module, path: str | os.PathLike, *, format: str | None = None) -> Path:
    """`module`'s weights as safetensors at `path` (atomic), the same bytes for the same weights.

    Tied tensors (a shared embedding and output projection) are stored once, under their first name in
    `state_dict` order; `safetensors.torch.load_model` ties them again from the module. safetensors keeps
    a file's metadata in a hash map whose order changes from process to process, so a file with two or
    more metadata entries is not reproducible: `save_model` adds one per tied tensor it drops, and here
    the metadata is `format` alone.
    """
    from safetensors.torch import save_file

    kept: dict[tuple, str] = {}
    tensors = {}
    for name, tensor in module.state_dict().items():
        view = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape),
                tuple(tensor.stride()))
        if view not in kept:
            kept[view] = name
            tensors[name] = tensor.contiguous()
    with atomic_path(path) as tmp, native_write_errors():
        save_file(tensors, str(tmp), metadata=None if format is None else {"format": format})
    return Path(path)


MAX_HEADER_BYTES = 100 << 20  # safetensors' own limit on the JSON header


def safetensors_shapes(path: Path) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape, from the safetensors header alone (8-byte length + JSON); nothing else is
    read and nothing is allocated. A file that is no safetensors is a one-line error."""
    unreadable = f"{path}: not a readable safetensors file"
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise SumpipeError(f"{unreadable} (shorter than its header)")
        (length,) = struct.unpack("<Q", head)
        if length > min(MAX_HEADER_BYTES, path.stat().st_size - 8):
            raise SumpipeError(f"{unreadable} (header length {length:,} does not fit the file)")
        try:
            header = json.loads(f.read(length))
        except (ValueError, UnicodeDecodeError):
            raise SumpipeError(f"{unreadable} (header is not JSON)") from None
    if not isinstance(header, dict):
        raise SumpipeError(f"{unreadable} (header is not a mapping)")
    shapes = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shape = info.get("shape") if isinstance(info, dict) else None
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise SumpipeError(f"{unreadable} (tensor {name!r} has no valid shape)")
        shapes[name] = tuple(shape)
    return shapes
