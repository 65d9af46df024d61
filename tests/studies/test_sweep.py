"""The hyper-parameter sweep: a point is params.yaml with the sweep's keys, never the test split."""

from __future__ import annotations

from pathlib import Path

import yaml

from sumpipe.config import load_config
from sumpipe.studies.sweep import SweepConfig, swept_params


def test_the_committed_point_is_the_default_configuration(repo_root: Path) -> None:
    # The sweep's params.yaml holds params.yaml's values, so its baseline point is the default run's M1
    # (only `threads`, which changes speed, not results, may differ).
    sweep = yaml.safe_load((repo_root / "experiments/sweep/params.yaml").read_text())
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    for section in ("model", "train"):
        for key, value in sweep[section].items():
            if key != "threads":
                assert params[section][key] == value, f"experiments/sweep/params.yaml {section}.{key}"


def test_swept_params_set_the_keys_and_keep_outputs_in_the_sweep(repo_root: Path, tmp_path: Path) -> None:
    cfg = SweepConfig(model={"d_model": 128, "d_ff": 512}, train={"lr": 0.005}, out=str(tmp_path / "runs"))
    params = swept_params(cfg, repo_root)
    from sumpipe.models.registry import resolve_model

    arch = resolve_model(params, cfg.model_name)[2]  # what the point trains
    assert (arch.d_model, arch.d_ff, params.train.lr) == (128, 512, 0.005)
    assert arch.n_heads == yaml.safe_load((repo_root / "params.yaml").read_text())["model"]["n_heads"]
    assert Path(params.paths.extracted) == repo_root / "data/extracted"      # reads the main pipeline's data
    assert Path(params.paths.models) == tmp_path / "runs/models"              # writes only under the sweep


def test_sweep_params_file_validates(repo_root: Path) -> None:
    cfg = load_config(repo_root / "experiments/sweep/params.yaml", SweepConfig)
    assert cfg.model_name == "M1" and cfg.repo == "../.."
