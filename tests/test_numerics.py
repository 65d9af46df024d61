"""train.numerics: the environment pinned before torch loads, and the plain error after."""

from __future__ import annotations

import os
import sys

import pytest

from sumpipe.errors import SumpipeError
from sumpipe.numerics import PORTABLE, pin_numerics


@pytest.fixture
def clean_env(monkeypatch):
    """The kernel variables unset, and unset again after the test: `delenv` of an absent variable records
    nothing to undo, so a `setenv` first makes monkeypatch remove what `pin_numerics` writes (left in
    os.environ, `ATEN_CPU_CAPABILITY` reached later tests' training subprocesses)."""
    for name in PORTABLE:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    return monkeypatch


def test_native_changes_nothing(clean_env):
    pin_numerics("native")
    assert [name for name in PORTABLE if name in os.environ] == []


def test_portable_sets_the_avx2_kernels_before_torch_loads(clean_env):
    clean_env.delitem(sys.modules, "torch", raising=False)
    clean_env.delitem(sys.modules, "numpy", raising=False)
    pin_numerics("portable")
    assert {name: os.environ[name] for name in PORTABLE} == {
        "ATEN_CPU_CAPABILITY": "avx2", "OPENBLAS_CORETYPE": "Haswell", "MKL_CBWR": "COMPATIBLE",
        "ONEDNN_MAX_CPU_ISA": "SSE41", "DNNL_MAX_CPU_ISA": "SSE41"}


def test_portable_overrides_other_kernel_settings_in_the_environment(clean_env):
    """Started under other kernel settings (`ATEN_CPU_CAPABILITY=default`, MKL's automatic branch), portable
    still wins: the pinned kernels are what makes the weights the same, so a stray setting must not survive."""
    clean_env.delitem(sys.modules, "torch", raising=False)
    clean_env.delitem(sys.modules, "numpy", raising=False)
    clean_env.setenv("ATEN_CPU_CAPABILITY", "default")
    clean_env.setenv("MKL_CBWR", "AUTO")
    pin_numerics("portable")
    assert (os.environ["ATEN_CPU_CAPABILITY"], os.environ["MKL_CBWR"]) == ("avx2", "COMPATIBLE")


def test_portable_refuses_a_cpu_without_avx2(clean_env, tmp_path, monkeypatch):
    import sumpipe.numerics as numerics

    old = tmp_path / "cpuinfo"
    old.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 sse4_1 sse4_2 avx\n")
    assert not numerics._has_avx2(old)
    (tmp_path / "new").write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f\n")
    assert numerics._has_avx2(tmp_path / "new") and numerics._has_avx2(tmp_path / "absent")
    monkeypatch.setattr(numerics, "_has_avx2", lambda: False)
    with pytest.raises(SumpipeError, match=r"^train.numerics: portable runs AVX2 kernels and this CPU has no AVX2"):
        pin_numerics("portable")


@pytest.mark.parametrize("module", ["torch", "numpy"])
def test_portable_after_torch_or_numpy_loaded_is_a_plain_error(clean_env, module):
    clean_env.delitem(sys.modules, "torch" if module == "numpy" else "numpy", raising=False)
    clean_env.setitem(sys.modules, module, object())
    with pytest.raises(SumpipeError, match=rf"^train.numerics: portable must be set before torch and NumPy are "
                                           rf"imported, and this process has already imported {module}"):
        pin_numerics("portable")


def test_portable_already_in_the_environment_is_fine_after_torch(clean_env):
    for name, value in PORTABLE.items():
        clean_env.setenv(name, value)
    clean_env.setitem(sys.modules, "torch", object())
    pin_numerics("portable")  # nothing to change: no error


def test_an_unknown_mode_names_the_key():
    with pytest.raises(SumpipeError, match=r"^train.numerics: must be one of native, portable, got 'fast'$"):
        pin_numerics("fast")
