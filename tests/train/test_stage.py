"""The train stage on a tiny fixture: artifacts per the data contract, resume after a real kill, errors."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sumpipe.config import params_from_dict
from sumpipe.errors import SumpipeError
from sumpipe.train.stage import resolve_inputs, train_model


def load(params_path: Path):
    return params_from_dict(yaml.safe_load(params_path.read_text()))


def test_stage_writes_the_model_directory(tmp_path: Path, write_fixture) -> None:
    params = load(write_fixture(tmp_path))
    summary = train_model(resolve_inputs(params, "T2", 1), progress=False)
    out = tmp_path / "models/T2/seed-1"
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "config.json", "vocab.parquet", "SHA256SUMS",
                                              "train_log.csv"}
    assert (tmp_path / "checkpoints/T2/seed-1/state.pt").is_file()
    log = pd.read_csv(out / "train_log.csv")
    assert list(log.columns) == ["step", "epoch", "loss", "valid_loss", "lr"]
    assert log["step"].tolist() == [2, 4, 6, 8, 10, 12]  # 6 batches of 4 an epoch, 2 epochs
    assert log["valid_loss"].notna().tolist() == [False, False, True, False, False, True]
    assert log["epoch"].iloc[-1] == 2.0
    # the run's timings live outside the model directory (DVC hashes that; a rerun must not change it)
    throughput = pd.read_csv(tmp_path / "timings/train/T2/seed-1.csv")
    assert throughput["step"].tolist() == log["step"].tolist() and (throughput["tokens_per_s"] > 0).all()
    timings = json.loads((tmp_path / "timings/train/T2/seed-1.json").read_text())
    assert timings["stage"] == "train" and timings["resumed_from_step"] == 0 and timings["train_seconds_this_run"] > 0
    from sumpipe.config import Budget
    from sumpipe.models.card import read_card
    from sumpipe.models.io import read_typed_card

    card = read_card(out)  # the card alone: its arch is a mapping until the family types it
    assert card.family == "transformer" and card.name == "T2" and card.spec.rarity is True
    assert card.input == "ngram20" and card.selection == Budget("ngram", 20, first_k=1)
    assert card.arch["max_source_tokens"] == 10
    family, card = read_typed_card(out)
    assert family.name == "transformer" and isinstance(card.arch, family.arch_type)
    assert card.arch.max_source_tokens == 10 and card.arch.vocab_size == 16 == card.vocab_size
    assert card.dataset == "pydoc"
    config = json.loads((out / "config.json").read_text())
    assert not {"train_seconds_this_run", "resumed_from_step", "tokens_per_s"} & set(config["training"])
    assert config["training"]["steps"] == summary["steps"] == 12
    assert config["training"]["best_valid_loss"] == pytest.approx(log["valid_loss"].min())
    assert pd.read_parquet(out / "vocab.parquet").columns.tolist() == ["id", "token", "count", "rarity"]

    from sumpipe.models.io import load_pretrained

    model, vocab, _ = load_pretrained(out)
    assert len(vocab) == 16 and model.rarity


def test_rerun_reuses_a_finished_checkpoint_only_for_the_same_configuration(tmp_path: Path, write_fixture) -> None:
    path = write_fixture(tmp_path, epochs=1)
    first = train_model(resolve_inputs(load(path), "T1", 1), progress=False)
    weights = (tmp_path / "models/T1/seed-1/model.safetensors").read_bytes()
    card = (tmp_path / "models/T1/seed-1/config.json").read_bytes()
    (tmp_path / "models/T1/seed-1/model.safetensors").unlink()  # as `dvc repro` deletes outputs before a run
    again = train_model(resolve_inputs(load(path), "T1", 1), progress=False)
    assert (first["resumed_from_step"], again["resumed_from_step"]) == (0, 6)
    assert (tmp_path / "models/T1/seed-1/model.safetensors").read_bytes() == weights
    assert (tmp_path / "models/T1/seed-1/config.json").read_bytes() == card  # resume provenance: in timings/ only
    assert json.loads((tmp_path / "timings/train/T1/seed-1.json").read_text())["resumed_from_step"] == 6
    assert len(pd.read_csv(tmp_path / "timings/train/T1/seed-1.csv")) == 3  # the first run's curve, kept

    changed = write_fixture(tmp_path, epochs=1, lr=0.02)
    fresh = train_model(resolve_inputs(load(changed), "T1", 1), progress=False)
    assert fresh["resumed_from_step"] == 0 and fresh["steps"] == 6
    assert (tmp_path / "models/T1/seed-1/model.safetensors").read_bytes() != weights


def test_unknown_model_name_lists_the_known_ones(tmp_path: Path, write_fixture) -> None:
    params = load(write_fixture(tmp_path))
    with pytest.raises(SumpipeError, match=r"^unknown model 'M9' \(known: T1, T2\)$"):
        resolve_inputs(params, "M9", 1)


def test_missing_selection_is_a_one_line_error(tmp_path: Path, write_fixture) -> None:
    path = write_fixture(tmp_path)
    (tmp_path / "data/extracted/ngram20/train.parquet").unlink()
    with pytest.raises(SumpipeError, match="train.parquet: no such file"):
        train_model(resolve_inputs(load(path), "T1", 1), progress=False)


def test_model_inputs_are_looked_up_in_the_selection_registry(tmp_path: Path, write_fixture) -> None:
    from sumpipe.config import Budget

    params = load(write_fixture(tmp_path))
    assert resolve_inputs(params, "T1", 1).selection == Budget("ngram", 20, 1)
    bad = dataclasses.replace(params, models={"T3": dataclasses.replace(params.models["T1"], input="tfidf20")})
    with pytest.raises(SumpipeError, match=r"models.T3.input: 'tfidf20' is not an extract selection "
                                           r"\(extract.budgets makes: ngram20\)"):
        resolve_inputs(bad, "T3", 1)


def test_cli_unknown_model_is_one_line_error(tmp_path: Path, cli, write_fixture) -> None:
    result = cli("train", "--model", "M9", "-p", str(write_fixture(tmp_path)))
    assert result.exit_code == 1
    assert result.stderr == "error: unknown model 'M9' (known: T1, T2)\n"


def _train_in_a_child(params: Path, model: str) -> subprocess.Popen:
    """`sumpipe train --model MODEL -p PARAMS` in a child process (one thread, output discarded)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "sumpipe.cli", "train", "--model", model, "-p", str(params)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def _train_t1(params_path: str) -> None:
    train_model(resolve_inputs(load(Path(params_path)), "T1", 1), progress=False)


def test_killed_stage_resumes_to_bit_identical_weights(tmp_path: Path, write_fixture, kill_at_checkpoint) -> None:
    """SIGKILL `sumpipe train` mid-run (as a killed `dvc repro` would be), then run the stage again."""
    settings = dict(epochs=10, checkpoint_every=5, log_every=5)  # 60 steps
    straight = write_fixture(tmp_path / "straight", **settings)
    _train_t1(str(straight))

    params = write_fixture(tmp_path / "killed", **settings)
    state = tmp_path / "killed/checkpoints/T1/seed-1/state.pt"
    step = kill_at_checkpoint(_train_in_a_child(params, "T1"), state)["step"]
    assert 0 < step < 60, "the kill should land mid-training"
    assert not (tmp_path / "killed/models/T1/seed-1/model.safetensors").exists()

    _train_t1(str(params))  # the re-run resumes from the checkpoint
    a = (tmp_path / "straight/models/T1/seed-1/model.safetensors").read_bytes()
    b = (tmp_path / "killed/models/T1/seed-1/model.safetensors").read_bytes()
    assert a == b
    for name in ("train_log.csv", "config.json"):  # no timings inside: the same bytes
        assert ((tmp_path / "straight/models/T1/seed-1" / name).read_bytes()
                == (tmp_path / "killed/models/T1/seed-1" / name).read_bytes())


# ---- the recurrent family: See et al.'s coverage phase through the stage ---------------------------
RNN_ARCH = {"cell": "gru", "embedding_dim": 8, "hidden_dim": 12, "dropout": 0.1, "vocab_size": 16,
            "max_source_tokens": 20, "max_summary_tokens": 6, "coverage": True, "coverage_phase_steps": 5}


@pytest.fixture(scope="module")
def write_rnn_fixture(write_fixture):
    """`write_rnn_fixture(root, **train)`: the fixture plus `R1`, a pointer-generator GRU trained 2 epochs
    (12 updates) without coverage, then 5 updates with it."""

    def write(root: Path, **train: object) -> Path:
        path = write_fixture(root, **train)
        params = yaml.safe_load(path.read_text())
        params["families"] = {"rnn": RNN_ARCH}
        params["models"]["R1"] = {"family": "rnn", "input": "ngram20", "train": {"optimizer": "adagrad", "lr": 0.15}}
        path.write_text(yaml.safe_dump(params))
        return path

    return write


def test_rnn_model_trains_through_its_coverage_phase(tmp_path: Path, write_rnn_fixture) -> None:
    inputs = resolve_inputs(load(write_rnn_fixture(tmp_path)), "R1", 1)
    assert inputs.train.optimizer == "adagrad" and inputs.train.lr == 0.15  # the model's own train overrides
    summary = train_model(inputs, progress=False)
    assert summary["steps"] == 17 and summary["optimizer"] == "adagrad"
    for phase in ("main", "coverage"):
        assert (tmp_path / f"checkpoints/R1/seed-1/{phase}/state.pt").is_file()
    log = pd.read_csv(tmp_path / "models/R1/seed-1/train_log.csv")
    assert log["step"].tolist() == [2, 4, 6, 8, 10, 12, 14, 16, 17]  # the coverage phase numbered on
    assert log["epoch"].tolist()[-1] == pytest.approx(2 + 5 / 6, abs=1e-4)
    curves = tmp_path / "dvclive/train/R1/seed-1/plots/metrics"  # the live curves number on alike
    assert pd.read_csv(curves / "loss.tsv", sep="\t")["loss"].tolist() == log["loss"].tolist()
    assert pd.read_csv(curves / "loss.tsv", sep="\t")["step"].tolist() == log["step"].tolist()
    assert pd.read_csv(curves / "valid_loss.tsv", sep="\t")["step"].tolist() == [6, 12, 17]
    metrics = json.loads((tmp_path / "dvclive/train/R1/seed-1/metrics.json").read_text())
    assert (metrics["best_step"], metrics["best_valid_loss"]) == (summary["best_step"], summary["best_valid_loss"])
    from sumpipe.models.io import load_pretrained

    model, _, card = load_pretrained(tmp_path / "models/R1/seed-1")
    assert card.family == "rnn" and card.arch.coverage_phase_steps == 5
    assert model.coverage_active  # decoding uses the coverage the last phase trained


@pytest.mark.parametrize("name", ["T1", "R1"])
def test_card_records_the_early_stopping_metric_and_patience(tmp_path: Path, name: str, write_rnn_fixture) -> None:
    path = write_rnn_fixture(tmp_path, epochs=3, patience=1, early_stopping_metric="accuracy")
    summary = train_model(resolve_inputs(load(path), name, 1), progress=False)
    card = json.loads((tmp_path / f"models/{name}/seed-1/config.json").read_text())
    stopping = card["training"]["early_stopping"]
    assert stopping["metric"] == "accuracy" and stopping["patience"] == 1
    assert 0.0 <= stopping["best_valid_accuracy"] <= 1.0
    assert summary["early_stopping"] == stopping


def test_card_records_the_default_early_stopping(tmp_path: Path, write_fixture) -> None:
    train_model(resolve_inputs(load(write_fixture(tmp_path, epochs=1)), "T1", 1), progress=False)
    config = json.loads((tmp_path / "models/T1/seed-1/config.json").read_text())
    # the fixture's `train:` leaves patience out: the default, params.yaml's train.patience
    assert config["training"]["early_stopping"] == {"metric": "loss", "patience": 1, "best_valid_accuracy": None}


def test_bad_model_train_override_is_a_one_line_error(tmp_path: Path, write_rnn_fixture) -> None:
    path = write_rnn_fixture(tmp_path)
    params = yaml.safe_load(path.read_text())
    params["models"]["R1"]["train"] = {"optimizer": "lbfgs"}
    path.write_text(yaml.safe_dump(params))
    from sumpipe.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^models.R1.train.optimizer: expected one of"):
        resolve_inputs(load(path), "R1", 1)


@pytest.mark.parametrize("phase", ["main", "coverage"])
def test_killed_rnn_stage_resumes_to_bit_identical_weights(tmp_path: Path, phase: str, write_rnn_fixture,
                                                           kill_at_checkpoint) -> None:
    """SIGKILL `sumpipe train` in the main or in the coverage phase, run it again: same weights, same log."""
    settings = dict(epochs=4, checkpoint_every=2, log_every=2)  # 24 updates, then 5 with coverage
    straight = write_rnn_fixture(tmp_path / "straight", **settings)
    train_model(resolve_inputs(load(straight), "R1", 1), progress=False)

    params = write_rnn_fixture(tmp_path / "killed", **settings)
    state = tmp_path / f"killed/checkpoints/R1/seed-1/{phase}/state.pt"
    saved = kill_at_checkpoint(_train_in_a_child(params, "R1"), state)
    assert not saved["done"], "the kill should land mid-phase"
    assert not (tmp_path / "killed/models/R1/seed-1/model.safetensors").exists()

    again = train_model(resolve_inputs(load(params), "R1", 1), progress=False)
    assert again["resumed_from_step"] == saved["step"] + (24 if phase == "coverage" else 0)
    a = (tmp_path / "straight/models/R1/seed-1/model.safetensors").read_bytes()
    b = (tmp_path / "killed/models/R1/seed-1/model.safetensors").read_bytes()
    assert a == b
    for name in ("train_log.csv", "config.json"):  # no timings inside: the same bytes
        assert ((tmp_path / "straight/models/R1/seed-1" / name).read_bytes()
                == (tmp_path / "killed/models/R1/seed-1" / name).read_bytes())
    for name in ("loss", "valid_loss", "lr"):  # the live curves too: no row twice after the kill
        assert ((tmp_path / f"straight/dvclive/train/R1/seed-1/plots/metrics/{name}.tsv").read_bytes()
                == (tmp_path / f"killed/dvclive/train/R1/seed-1/plots/metrics/{name}.tsv").read_bytes())


def test_each_seed_is_its_own_model_folder(tmp_path: Path, cli, write_fixture) -> None:
    # `sumpipe train` without --seed trains every seed of train.seeds, each into its own folder, with the
    # seed in the card; another seed gives other weights, the same seed the same ones.
    path = write_fixture(tmp_path, epochs=1, seeds=[1, 2])
    result = cli("train", "--model", "T1", "-p", str(path))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["T1/seed-1", "T1/seed-2"]
    weights = {seed: (tmp_path / f"models/T1/seed-{seed}/model.safetensors").read_bytes() for seed in (1, 2)}
    assert weights[1] != weights[2]
    for seed in (1, 2):
        card = json.loads((tmp_path / f"models/T1/seed-{seed}/config.json").read_text())
        assert (card["name"], card["seed"], card["training"]["seed"]) == ("T1", seed, seed)
        assert (tmp_path / f"checkpoints/T1/seed-{seed}/state.pt").is_file()
        assert (tmp_path / f"timings/train/T1/seed-{seed}.json").is_file()
    assert cli("train", "--model", "T1", "--seed", "2", "-p", str(path)).exit_code == 0
    assert (tmp_path / "models/T1/seed-2/model.safetensors").read_bytes() == weights[2]


@pytest.mark.parametrize(("change", "message"), [
    ({"train": {"seed": 7}}, "train.seed: the train stage trains one model per seed of train.seeds: list it there"),
    ({"models": {"T1": {"input": "ngram20", "train": {"seeds": [4]}}}},
     "models.T1.train.seeds: a model's own seeds are models.T1.seeds (default: train.seeds)"),
    ({"train": {"seeds": [1, 1]}}, "train.seeds: lists a seed twice"),
    ({"train": {"seeds": []}}, "train.seeds: needs at least one seed"),
])
def test_seeds_are_set_once_for_every_model(tmp_path: Path, cli, write_fixture, change: dict, message: str) -> None:
    path = write_fixture(tmp_path)
    params = yaml.safe_load(path.read_text())
    for section, values in change.items():
        params[section] = {**params[section], **values}
    path.write_text(yaml.safe_dump(params))
    result = cli("train", "--model", "T1", "-p", str(path))
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and message in result.stderr


def test_a_seed_outside_train_seeds_is_refused(tmp_path: Path, cli, write_fixture) -> None:
    result = cli("train", "--model", "T1", "--seed", "5", "-p", str(write_fixture(tmp_path)))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --seed 5: not among T1's seeds (1); add it to train.seeds (and runs:)")


@pytest.mark.parametrize(("name", "expected"), [("T1", 12), ("R1", 17)])
def test_on_step_counts_the_updates_across_the_phases(tmp_path: Path, name: str, expected: int,
                                                     write_rnn_fixture) -> None:
    """The pool's progress report: after every update, the step counted over the whole run, and the most the
    phases can take (T1: 2 epochs of 6 updates; R1: those, then 5 with coverage)."""
    calls: list[tuple[int, int]] = []
    summary = train_model(resolve_inputs(load(write_rnn_fixture(tmp_path)), name, 1), progress=False,
                          on_step=lambda step, total: calls.append((step, total)))
    assert calls == [(step, expected) for step in range(1, expected + 1)]
    assert summary["steps"] == expected
