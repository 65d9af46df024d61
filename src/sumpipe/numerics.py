"""`train.numerics`: pin the CPU kernels torch uses, before torch is imported (issue 38).

PyTorch picks its CPU code when it loads: ATen's vectorised kernels by instruction set
(`ATEN_CPU_CAPABILITY`: AVX-512, AVX2 or the generic `default`), MKL's GEMM by CPU (MKL's Conditional
Numerical Reproducibility, `MKL_CBWR`, fixes one code path), oneDNN's by its maximum ISA. Each choice
fixes the order of float sums, so the same seed trains other weights on another CPU kind.

- `native`: nothing is pinned (the fastest kernels of this CPU);
- `portable`: the generic kernels every x86-64 CPU runs the same way: `ATEN_CPU_CAPABILITY=default`,
  `MKL_CBWR=COMPATIBLE`, oneDNN limited to SSE4.1. The thread count is `train.threads` (set by the
  training loop). The variables are read once, when torch loads: `pin_numerics` must run before the
  first `import torch` of the process, so each torch-using command calls it first.
"""

from __future__ import annotations

import os
import sys

from sumpipe.errors import SumpipeError

MODES = ("native", "portable")

PORTABLE: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "DNNL_MAX_CPU_ISA": "SSE41",
}


def pin_numerics(mode: str, key: str = "train.numerics") -> None:
    """Set the environment of `mode` (module docstring) for torch to read when it loads. `portable`
    replaces other values of these variables (a process started under `ATEN_CPU_CAPABILITY=avx2` gets the
    generic kernels too: issue 38 measured the same weights then); `portable` after torch was imported
    with other settings is a one-line error: the kernels are chosen."""
    if mode not in MODES:
        raise SumpipeError(f"{key}: must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "native":
        return
    differs = {name: value for name, value in PORTABLE.items() if os.environ.get(name) != value}
    if not differs:
        return
    if "torch" in sys.modules:
        raise SumpipeError(f"{key}: portable must be set before torch is imported, and this process has "
                           f"already imported it: run the command in a new process")
    os.environ.update(differs)
