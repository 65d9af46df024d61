"""bench/cpu_kinds.py: the short run's params, the command on this CPU and under QEMU, and the verdict. The
emulated runs themselves take minutes each and need qemu-user: they are the script's, not the suite's."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cpu_kinds(bench_script) -> ModuleType:
    return bench_script("cpu_kinds")


def test_the_short_run_reads_the_project_and_writes_only_under_its_folder(cpu_kinds, tmp_path: Path) -> None:
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    out = tmp_path / "Haswell-v4"
    run = cpu_kinds.run_params(params, REPO, out, steps=12, numerics="portable")
    assert run["paths"]["models"] == str(out / "models")
    assert run["paths"]["checkpoints"] == str(out / "checkpoints")
    assert run["paths"]["timings"] == str(out / "timings")
    assert run["paths"]["dvclive"] == str(out / "dvclive")
    assert run["paths"]["vocab"] == str(REPO / "data" / "vocab")
    assert run["paths"]["pretrain"] == str(REPO / "pretrain")
    assert {k: run["train"][k] for k in ("max_steps", "checkpoint_every", "numerics")} == {
        "max_steps": 12, "checkpoint_every": 10**6, "numerics": "portable"}
    assert run["models"]["PG-cov"]["train"] == params["models"]["PG-cov"]["train"]  # a model's own keys stay
    assert params["paths"]["models"] == "models" and params["train"]["max_steps"] is None  # the input is untouched


def test_an_emulated_run_is_the_same_command_under_qemu(cpu_kinds, tmp_path: Path) -> None:
    here = cpu_kinds.train_command("M1", 1, tmp_path / "p.yaml", cpu_kinds.HOST)
    assert here[1:] == ["-m", "sumpipe.cli", "train", "--model", "M1", "--seed", "1", "--no-resume",
                        "--params", str(tmp_path / "p.yaml")]
    assert cpu_kinds.train_command("M1", 1, tmp_path / "p.yaml", "Haswell-v4") == ["qemu-x86_64", "-cpu", "Haswell-v4",
                                                                                   *here]


def test_the_verdict_is_per_model(cpu_kinds) -> None:
    digests = {"M1": {"this CPU": "a1", "Haswell-v4": "a1", "EPYC-Rome": "a1"},
               "PG-cov": {"this CPU": "b1", "Haswell-v4": "b2", "EPYC-Rome": "b1"}}
    assert cpu_kinds.verdict(digests) == {"M1": True, "PG-cov": False}
