"""Hansen & Petersen 2019's numerals experiment: data of one kind, a length-4 run that learns the task, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sumpipe.config import TrainConfig, load_config
from sumpipe.errors import ConfigError
from sumpipe.models.rnn import RNNArch
from sumpipe.studies.numerals import (
    NumeralsData,
    NumeralsExperiment,
    last_epoch_train_loss,
    numerals_frames,
    run_numerals,
)
from sumpipe.studies.numerals_report import markdown_table, numerals_report
from sumpipe.validation import from_dict

REPO = Path(__file__).resolve().parents[2]


def test_frames_hold_one_kind_split_by_train_fraction():
    train, valid = numerals_frames(NumeralsData(size=100, train_fraction=0.67), "continuous", 4)
    assert (len(train), len(valid)) == (67, 33)
    assert all(i.startswith("numerals-ordered-") for i in [*train.id, *valid.id])
    first = train.iloc[0]
    numbers = [int(n) for n in first.source.split()]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # an ordered run...
    assert len(first.reference.split()) >= len(numbers)  # ...continued in words
    _, random_valid = numerals_frames(NumeralsData(size=100), "random", 4)
    assert all(i.startswith("numerals-random-") for i in random_valid.id)


def test_last_epoch_loss_weights_rows_by_their_updates():
    rows = [{"step": 4, "epoch": 0.5, "loss": 9.0}, {"step": 8, "epoch": 1.0, "loss": 5.0},
            {"step": 10, "epoch": 1.25, "loss": 3.0}, {"step": 16, "epoch": 2.0, "loss": 1.0}]
    assert last_epoch_train_loss(rows) == pytest.approx((2 * 3.0 + 6 * 1.0) / 8)


def test_experiment_params_are_validated():
    cfg = load_config(REPO / "experiments/numerals/params.yaml", NumeralsExperiment)
    assert cfg.runs == ["continuous-none", "random-none", "random-bahdanau"]
    for name in ("params.yaml", "params-paper.yaml", "params-long.yaml"):  # every run trains all its epochs
        assert load_config(REPO / "experiments/numerals" / name, NumeralsExperiment).train.patience is None
    with pytest.raises(ConfigError, match="data.max_number: must be >= 2 \\* max length - 1 = 89"):
        from_dict(NumeralsExperiment, {"max_lengths": [45], "data": {"max_number": 50}})


def test_length_4_run_with_attention_reaches_95_percent(tmp_path):
    """Random sequences of up to 4 numbers -> words: a small attentional GRU learns it in seconds."""
    cfg = NumeralsExperiment(
        data=NumeralsData(size=900, max_number=30),
        max_lengths=[4],
        runs=["random-bahdanau"],
        model=RNNArch(cell="gru", embedding_dim=32, hidden_dim=64, pointer=False, coverage=False),
        train=TrainConfig(optimizer="adam", lr=0.01, warmup_steps=10, batch_size=32, epochs=6, label_smoothing=0.0,
                          device="cpu", threads=1, log_every=10, patience=None),
        out=str(tmp_path / "runs"),
        reports=str(tmp_path / "reports"),
    )
    metrics = run_numerals(cfg, "random-bahdanau", 4, progress=False)
    assert metrics["valid_token_accuracy"] >= 0.95
    assert metrics["train_examples"] == 603 and metrics["valid_examples"] == 297
    saved = json.loads((tmp_path / "runs/random-bahdanau-4/metrics.json").read_text())
    assert saved == metrics
    assert (tmp_path / "runs/random-bahdanau-4/train_log.csv").is_file()


def test_report_writes_the_four_figures_and_the_table(tmp_path):
    cfg = NumeralsExperiment(max_lengths=[5, 10], out=str(tmp_path / "runs"), reports=str(tmp_path / "reports"))
    planted = {("continuous-none", 5): 0.9, ("continuous-none", 10): 0.5, ("random-none", 5): 0.8,
               ("random-none", 10): 0.3, ("random-bahdanau", 5): 0.99, ("random-bahdanau", 10): 0.95}
    for (run, length), accuracy in planted.items():
        path = cfg.run_dir(run, length) / "metrics.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"valid_token_accuracy": accuracy, "valid_sequence_accuracy": accuracy / 2,
                                    "train_loss": 1 - accuracy}))
    written = numerals_report(cfg)
    names = sorted(p.name for p in written)
    assert names == ["fig5_accuracy_no_attention.png", "fig6_loss_no_attention.png", "fig7_accuracy_attention.png",
                     "fig8_loss_attention.png", "headline.json", "numerals.json", "numerals.md"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written if p.suffix == ".png")
    table = (tmp_path / "reports/numerals.md").read_text()
    assert "| 10 | 50.0 % (25.0 %) / 0.500 | 30.0 % (15.0 %) / 0.700 | 95.0 % (47.5 %) / 0.050 |" in table
    # the DVC metrics: each cell's token accuracy (x 100), nothing else
    headline = json.loads((tmp_path / "reports/headline.json").read_text())
    assert headline == {"accuracy": {"continuous-none-5": 90.0, "continuous-none-10": 50.0, "random-none-5": 80.0,
                                     "random-none-10": 30.0, "random-bahdanau-5": 99.0, "random-bahdanau-10": 95.0}}


def test_markdown_table_has_a_column_per_run():
    metrics = {"random-none": {5: {"valid_token_accuracy": 0.5, "valid_sequence_accuracy": 0.25, "train_loss": 1.0}}}
    assert markdown_table(metrics, [5]).splitlines()[2] == "| 5 | 50.0 % (25.0 %) / 1.000 |"


def test_a_run_builds_the_rnn_family_through_the_registry(tmp_path, monkeypatch):
    """The model and its task come from `get_family("rnn")` (build, make_task), as training builds them."""
    from sumpipe.models import registry

    asked, real = [], registry.get_family
    monkeypatch.setattr(registry, "get_family", lambda name, key="family": asked.append(name) or real(name, key))
    cfg = NumeralsExperiment(
        data=NumeralsData(size=60, max_number=30), max_lengths=[3], runs=["random-none"],
        model=RNNArch(cell="gru", embedding_dim=8, hidden_dim=8, pointer=False, coverage=False),
        train=TrainConfig(batch_size=16, epochs=1, device="cpu", threads=1, log_every=1),
        out=str(tmp_path / "runs"), reports=str(tmp_path / "reports"))
    metrics = run_numerals(cfg, "random-none", 3, progress=False)
    assert asked == ["rnn"]
    assert (metrics["train_examples"], metrics["valid_examples"], metrics["steps"]) == (40, 20, 3)
    assert metrics["attention"] == "none" and 0.0 <= metrics["valid_token_accuracy"] <= 1.0
