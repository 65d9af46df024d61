"""Live training curves (DVCLive): the files a run writes, exact resume after a kill, a finished run kept,
and DVCLive kept off the DVC repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from sumpipe.config import params_from_dict
from sumpipe.train import checkpoint as ckpt
from sumpipe.train.engine import fit, seed_everything
from sumpipe.train.live import CURVES, RunCurves, curve_file, train_curves_dir
from tests.train.tiny_task import TinyTask, config


class Killed(Exception):
    """Stands for SIGKILL: the loop stops mid-run and every live object is dropped."""


def tiny_model() -> torch.nn.Module:
    seed_everything(3)  # dropout: the run depends on the torch RNG, which the checkpoint carries
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(16, 4))


def curve(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(curve_file(folder, name), sep="\t")


def run(tmp: Path, kill_at: int | None = None):
    """The engine's tiny run (5 batches an epoch, 3 epochs, a row every 2 updates, a checkpoint every 3)
    with its curves in `tmp/live`; `kill_at`: raise after that update, as a kill would stop it."""
    model = tiny_model()
    cfg = config()
    seed_everything(cfg.seed)

    def stop(position: ckpt.Position) -> bool:
        if position.step == kill_at:
            raise Killed
        return False

    return fit(model, TinyTask(), cfg, tmp / "state", fingerprint="tiny", should_stop=stop, progress=False,
               curves=RunCurves(tmp / "live").phase())


def test_a_run_logs_each_row_validation_and_its_best(tmp_path: Path) -> None:
    result = run(tmp_path)
    live = tmp_path / "live"
    assert sorted(p.name for p in (live / "plots/metrics").iterdir()) == sorted(f"{c}.tsv" for c in CURVES)
    rows = result.log_rows
    loss = curve(live, "loss")
    assert list(loss.columns) == ["step", "loss"]
    assert loss["step"].tolist() == [2, 4, 5, 6, 8, 10, 12, 14, 15]  # every 2 updates and each epoch end
    assert loss["loss"].tolist() == [r["loss"] for r in rows]
    assert curve(live, "lr")["lr"].tolist() == [r["lr"] for r in rows]
    valid = curve(live, "valid_loss")
    assert valid["step"].tolist() == [5, 10, 15]
    assert valid["valid_loss"].tolist() == [r["valid_loss"] for r in rows if r["valid_loss"] is not None]
    speed = curve(live, "tokens_per_s")
    assert speed["step"].tolist() == [t["step"] for t in result.throughput] and (speed["tokens_per_s"] > 0).all()
    metrics = json.loads((live / "metrics.json").read_text())
    assert metrics["step"] == 15
    assert metrics["best_step"] == result.position.best_step
    assert metrics["best_valid_loss"] == result.position.best_valid_loss == valid["valid_loss"].min()
    assert not list(tmp_path.rglob("dvc.yaml"))  # the project's dvc.yaml declares the plots, not DVCLive


def test_logging_leaves_the_weights_as_they_were(tmp_path: Path) -> None:
    """Logging only: a run with curves ends with the same weights and log rows as one without."""
    with_curves = run(tmp_path / "a")
    model = tiny_model()
    seed_everything(config().seed)
    without = fit(model, TinyTask(), config(), tmp_path / "b/state", fingerprint="tiny", progress=False)
    assert without.log_rows == with_curves.log_rows
    states = [(tmp_path / name / "state" / ckpt.STATE_FILE).read_bytes() for name in ("a", "b")]
    assert states[0] == states[1]  # weights, optimizer, RNG states, log rows


@pytest.mark.parametrize("kill_at", [8, 10])  # a row logged after the last checkpoint (6, 9): written again
def test_a_resumed_run_writes_the_curves_of_a_straight_one(tmp_path: Path, kill_at: int) -> None:
    run(tmp_path / "straight")
    with pytest.raises(Killed):
        run(tmp_path / "resumed", kill_at=kill_at)
    assert curve(tmp_path / "resumed/live", "loss")["step"].tolist()[-1] == kill_at  # DVCLive ahead of the state
    result = run(tmp_path / "resumed")
    assert result.resumed_from_step == {8: 6, 10: 9}[kill_at]  # the last checkpoint
    straight, resumed = tmp_path / "straight/live", tmp_path / "resumed/live"
    for name in ("loss", "valid_loss", "lr"):  # no step twice: the same bytes as a straight run
        assert curve_file(resumed, name).read_bytes() == curve_file(straight, name).read_bytes(), name
    assert curve(resumed, "tokens_per_s")["step"].tolist() == curve(straight, "tokens_per_s")["step"].tolist()
    timing = {"tokens_per_s"}
    assert ({k: v for k, v in json.loads((resumed / "metrics.json").read_text()).items() if k not in timing}
            == {k: v for k, v in json.loads((straight / "metrics.json").read_text()).items() if k not in timing})


def test_a_finished_run_found_again_keeps_its_curves(tmp_path: Path) -> None:
    run(tmp_path)
    before = {p.name: p.read_bytes() for p in (tmp_path / "live").rglob("*") if p.is_file()}
    result = run(tmp_path)  # the finished checkpoint: nothing trained
    assert result.resumed_from_step == 15 and not result.throughput
    assert {p.name: p.read_bytes() for p in (tmp_path / "live").rglob("*") if p.is_file()} == before


def test_a_kill_mid_line_loses_only_that_line(tmp_path: Path) -> None:
    run(tmp_path)
    speed = curve_file(tmp_path / "live", "tokens_per_s")
    rows = curve(tmp_path / "live", "tokens_per_s")
    with open(speed, "a", encoding="utf-8") as f:
        f.write("16\t12")  # cut short, no newline
    run(tmp_path)
    assert curve(tmp_path / "live", "tokens_per_s").equals(rows)


def test_dvclive_leaves_the_repository_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a git repository without DVC, DVCLive itself would run `dvc init`; inside `dvc exp run` it would
    `git add` its folder and write dvc.yaml. RunCurves does none of it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    curves = RunCurves(Path("dvclive/train/M1/seed-1"))
    curves.log(2, {"loss": 1.5, "lr": 0.1, "tokens_per_s": 10.0, "valid_loss": None})
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if ".git" not in p.parts) == [
        "dvclive", "dvclive/train", "dvclive/train/M1", "dvclive/train/M1/seed-1",
        "dvclive/train/M1/seed-1/metrics.json", "dvclive/train/M1/seed-1/plots",
        "dvclive/train/M1/seed-1/plots/metrics", "dvclive/train/M1/seed-1/plots/metrics/loss.tsv",
        "dvclive/train/M1/seed-1/plots/metrics/lr.tsv", "dvclive/train/M1/seed-1/plots/metrics/tokens_per_s.tsv"]
    assert curve_file(Path("dvclive/train/M1/seed-1"), "loss").read_text() == "step\tloss\n2\t1.5\n"


def test_the_train_stage_writes_each_runs_folder(tmp_path: Path, write_fixture) -> None:
    from sumpipe.train.stage import resolve_inputs, train_model

    params = params_from_dict(yaml.safe_load(write_fixture(tmp_path).read_text()))
    inputs = resolve_inputs(params, "T1", 1)
    assert inputs.curves_dir == train_curves_dir(tmp_path / "dvclive", "T1", 1) == tmp_path / "dvclive/train/T1/seed-1"
    summary = train_model(inputs, progress=False)
    log = pd.read_csv(tmp_path / "models/T1/seed-1/train_log.csv")
    loss = curve(inputs.curves_dir, "loss")
    assert loss["step"].tolist() == log["step"].tolist() == [2, 4, 6, 8, 10, 12]
    assert loss["loss"].tolist() == log["loss"].tolist()
    assert curve(inputs.curves_dir, "valid_loss")["step"].tolist() == [6, 12]
    metrics = json.loads((inputs.curves_dir / "metrics.json").read_text())
    assert (metrics["best_step"], metrics["best_valid_loss"]) == (summary["best_step"], summary["best_valid_loss"])
