#!/usr/bin/env bash
# The prepared GPU check (docs/gpu.md, "The prepared check"). What it measures: bench/gpu_check.py.
#
#   bench/gpu_check.sh --prepare            here, once: the data into .gpucheck/ and the wheels into .whl/ (both ignored)
#   bench/gpu_check.sh [gpu_check.py args]  on the device: installs .whl/ into /tmp/site, then the check (<= 8 min)
#   bench/gpu_check.sh --smoke | --dry-run  on CPU (the smoke runs in tests/bench/test_gpu_check.py)
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 DVC_NO_ANALYTICS=1
PY=${PYTHON:-python3}

case "${1:-}" in
  --prepare)
    "$PY" bench/gpu_check.py --prepare
    # The device's python is 3.12 on x86-64 (/work/.library/device/KINDS.md): wheels for it, or pure-Python
    # wheels built here from an sdist (rouge-score and docopt publish no wheel).
    rm -rf .whl && mkdir .whl
    for req in $("$PY" bench/gpu_check.py --wheels); do
      "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$req" 2>/dev/null \
        || "$PY" -m pip wheel -q --no-deps -w .whl "$req"
    done
    for whl in .whl/*.whl; do  # a wheel built here from an sdist must be pure Python to run there
      case "$whl" in *-none-any.whl|*-cp3*-abi3-manylinux*|*-cp312-cp312-manylinux*) ;;
        *) echo "gpu_check: $whl does not install on the device's python 3.12 (x86-64)" >&2; exit 2 ;; esac
    done
    ls -l .whl
    du -ch .gpucheck .whl | tail -n 1
    exit 0 ;;
  --smoke|--dry-run|--wheels|-h|--help)
    exec "$PY" bench/gpu_check.py "$@" ;;
esac

if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "gpu_check: the carried wheels (.whl) did not install" >&2; exit 2; }
  export PYTHONPATH="/tmp/site:$PYTHONPATH"
fi
# 8 minutes at most: the phases' own budgets end well before; this is the backstop (the JSON is written after
# every phase, so what was measured comes back).
exec timeout -k 10 470 "$PY" bench/gpu_check.py "$@"
