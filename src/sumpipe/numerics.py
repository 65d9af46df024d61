"""`train.numerics`: pin the CPU kernels torch uses, before torch is imported.

PyTorch picks its CPU code when it loads: ATen's vectorised kernels by instruction set
(`ATEN_CPU_CAPABILITY`: AVX-512, AVX2 or the generic `default`), MKL's GEMM by CPU (MKL's Conditional
Numerical Reproducibility, `MKL_CBWR`, fixes one code path), oneDNN's by its maximum ISA. Each choice
fixes the order of float sums, so the same seed trains other weights on another CPU kind.

- `native`: nothing is pinned (the fastest kernels of this CPU);
- `portable`: kernels that run the same instructions on every x86-64 CPU with AVX2 (Intel since 2013,
  AMD since 2015): ATen's AVX2 kernels (`ATEN_CPU_CAPABILITY=avx2`: the same machine code on each such
  CPU, so the same bytes), OpenBLAS's Haswell kernels for the Linear layers' and attention's products
  (`OPENBLAS_CORETYPE=Haswell`, `sumpipe.models.linear`: AVX2 + FMA with fixed blocking, about three
  times MKL's COMPATIBLE speed), MKL's `COMPATIBLE` branch for the products torch still makes itself
  (the recurrent cells: the one branch MKL keeps on Intel and non-Intel CPUs alike;
  its AVX2 and AVX-512 branches fall back to automatic dispatch on AMD), oneDNN limited to SSE4.1.
  torch and OpenBLAS run AVX2 code when told to, whatever the CPU, so `portable` refuses a CPU
  without AVX2 and FMA (a one-line error: use `native` there). The thread count is
  `train.threads` (set by the training loop). The variables are read once, when torch loads:
  `pin_numerics` must run before the first `import torch` (or `import numpy`: OpenBLAS reads its
  variable when NumPy loads) of the process, so each torch-using command calls it first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sumpipe.errors import SumpipeError

MODES = ("native", "portable")

PORTABLE: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "OPENBLAS_CORETYPE": "Haswell",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "DNNL_MAX_CPU_ISA": "SSE41",
}


def pin_numerics(mode: str, key: str = "train.numerics") -> None:
    """Set the environment of `mode` (module docstring) for torch to read when it loads. `portable`
    replaces other values of these variables (a process started under `ATEN_CPU_CAPABILITY=default` gets
    the AVX2 kernels too); `portable` after torch was imported with other settings is a one-line error:
    the kernels are chosen."""
    if mode not in MODES:
        raise SumpipeError(f"{key}: must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "native":
        return
    differs = {name: value for name, value in PORTABLE.items() if os.environ.get(name) != value}
    if not differs:
        return
    if not _has_avx2():
        raise SumpipeError(f"{key}: portable runs AVX2 kernels and this CPU has no AVX2 and FMA: use native")
    loaded = [name for name in ("torch", "numpy") if name in sys.modules]
    if loaded:
        raise SumpipeError(f"{key}: portable must be set before torch and NumPy are imported, and this process "
                           f"has already imported {loaded[0]}: run the command in a new process")
    os.environ.update(differs)


def _has_avx2(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU has AVX2 and FMA, by its flags in /proc/cpuinfo (elsewhere: assumed)."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), None)
    return flags is None or {"avx2", "fma"} <= set(flags)
