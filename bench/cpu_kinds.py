"""Does the portable build write the same bytes on other x86-64 CPU kinds? Emulated, family by family.

    python bench/cpu_kinds.py                                  # M1, PG-cov, BERT2S: this CPU, an Intel, an AMD
    python bench/cpu_kinds.py --numerics native                # the control: native kernels follow the CPU
    python bench/cpu_kinds.py --models M1 --cpus Skylake-Client-v4 --steps 4

Trains each model of `--models` for `--steps` updates (its first seed, `--no-resume`), once on this CPU and
once under QEMU's user-mode emulation (`qemu-x86_64 -cpu NAME`, Debian's `qemu-user`) of each CPU of
`--cpus`, and compares the SHA-256 of the weights (`model.safetensors`). QEMU hands the program another
CPU's CPUID: its vendor (GenuineIntel, AuthenticAMD), family and model, and its instruction sets, up to
AVX2 and FMA (QEMU 7.2 emulates no AVX-512). So every library that picks its code by CPU (ATen, MKL,
oneDNN, OpenBLAS, glibc's libm) picks as it would on that CPU, while the arithmetic runs in QEMU's
software, IEEE-exact. Under `train.numerics: portable` the choice is pinned (`sumpipe.numerics`), and the
bytes must not move; under `native` they may. What emulation cannot show: an instruction whose result
differs between two vendors' silicon (none of the pinned kernels is known to use one), and AVX-512 or
AMX, which portable never runs.

It reads a built pipeline (`dvc repro`: data/, the vocabulary, the subword model and the pre-trained
encoder) through a copy of the params file whose paths are absolute and whose outputs (models,
checkpoints, timings, training curves) go to `--work`/<cpu>/. An emulated run is about 40 times slower
than the CPU itself: 4 minutes for M1 at 12 updates and its validation (6.4 s on the CPU). Exits 1 when a
model's bytes differ under portable.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import shutil
import subprocess
import sys
from copy import deepcopy
from pathlib import Path

import yaml

from sumpipe.names import seed_folder

HOST = "this CPU"
CPUS = ("Haswell-v4", "EPYC-Rome")  # an Intel and an AMD, both AVX2 + FMA and no AVX-512 in QEMU 7.2
OUTPUTS = ("models", "checkpoints", "timings", "dvclive")  # the paths a training run writes


def run_params(params: dict, project: Path, out: Path, steps: int, numerics: str) -> dict:
    """A copy of `params` for a short run: every path absolute (under `project`), the outputs under `out`,
    `steps` updates and no checkpoint on the way, `numerics` as given. A model's own `train:` keys stay."""
    run = deepcopy(params)
    run["paths"] = {key: str(out / key if key in OUTPUTS else (project / value).resolve())
                    for key, value in run["paths"].items()}
    run["train"] |= {"max_steps": steps, "checkpoint_every": 10**6, "numerics": numerics}
    return run


def train_command(model: str, seed: int, params_path: Path, cpu: str) -> list[str]:
    """`sumpipe train` of one run in a fresh process: on this CPU, or under QEMU's emulation of `cpu`."""
    command = [sys.executable, "-m", "sumpipe.cli", "train", "--model", model, "--seed", str(seed),
               "--no-resume", "--params", str(params_path)]
    return command if cpu == HOST else ["qemu-x86_64", "-cpu", cpu, *command]


def weights_digest(out: Path, model: str, seed: int) -> str:
    return hashlib.sha256((out / "models" / model / seed_folder(seed) / "model.safetensors").read_bytes()).hexdigest()


def verdict(digests: dict[str, dict[str, str]]) -> dict[str, bool]:
    """{model: whether every CPU wrote the same bytes} from {model: {cpu: digest}}."""
    return {model: len(set(by_cpu.values())) == 1 for model, by_cpu in digests.items()}


def train_one(model: str, seed: int, params_path: Path, cpu: str) -> None:
    done = subprocess.run(train_command(model, seed, params_path, cpu), capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"cpu_kinds: {model} on {cpu}: {last}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", type=Path, default=Path("params.yaml"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/cpu-kinds"))
    ap.add_argument("--models", nargs="+", default=["M1", "PG-cov", "BERT2S"])
    ap.add_argument("--cpus", nargs="+", default=list(CPUS), help="QEMU CPU models (qemu-x86_64 -cpu help)")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--numerics", choices=["portable", "native"], default="portable")
    ap.add_argument("--jobs", type=int, default=2, help="runs side by side (each on train.threads threads)")
    args = ap.parse_args()
    if shutil.which("qemu-x86_64") is None:
        sys.exit("cpu_kinds: qemu-x86_64 is not installed (Debian: apt-get install qemu-user)")
    params = yaml.safe_load(args.params.read_text())
    seed = params["train"]["seeds"][0]
    cpus = [HOST, *args.cpus]
    paths = {}
    for cpu in cpus:
        out = args.work / cpu.replace(" ", "-")
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        paths[cpu] = out / "params.yaml"
        paths[cpu].write_text(yaml.safe_dump(run_params(params, args.params.parent, out, args.steps, args.numerics)))
    print(f"{len(args.models)} models x {len(cpus)} CPUs, {args.steps} updates each, seed {seed}, "
          f"train.numerics {args.numerics}", flush=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for future in [pool.submit(train_one, m, seed, paths[c], c) for c in cpus for m in args.models]:
            future.result()
    digests = {m: {c: weights_digest(paths[c].parent, m, seed) for c in cpus} for m in args.models}
    same = verdict(digests)
    print("| model | " + " | ".join(cpus) + " | same bytes |")
    print("|---|" + "---|" * len(cpus) + "---|")
    for model, by_cpu in digests.items():
        print(f"| {model} | " + " | ".join(by_cpu[c][:12] for c in cpus) + f" | {'yes' if same[model] else 'no'} |")
    return 0 if args.numerics == "native" or all(same.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
