"""The subword -> pretrain -> train (bert2stage) -> decode path on a tiny fixture, kill + resume on CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml
from safetensors.torch import load_file

from sumpipe.config import DecodeConfig, params_from_dict
from sumpipe.errors import SumpipeError
from sumpipe.subword.stage import train_subword
from sumpipe.train import checkpoint as ckpt
from sumpipe.train.pretrain import pretrain_encoder, resolve_pretrain_inputs
from sumpipe.train.stage import resolve_inputs, train_model

WORDS = ("the function returns an array of values computed along the given axis sorted index "
         "string object default copy data frame column").split()


def frame(n: int, seed: int) -> pd.DataFrame:
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(n):
        ids = torch.randint(0, len(WORDS), (int(torch.randint(8, 16, (1,), generator=g)),), generator=g).tolist()
        source = " ".join(WORDS[j] for j in ids)
        rows.append({"id": f"{seed}-{i}", "source": source + " .", "reference": " ".join(source.split()[:4])})
    return pd.DataFrame(rows)


def write_fixture(root: Path) -> dict:
    for split, n, seed in (("train", 40, 1), ("valid", 8, 2), ("test", 4, 3)):
        df = frame(n, seed)
        for folder in ("data/processed", "data/extracted/first20"):
            (root / folder).mkdir(parents=True, exist_ok=True)
            df.to_parquet(root / folder / f"{split}.parquet")
    params = {
        "paths": {k: str(root / k) for k in ("models", "checkpoints", "pretrain", "timings", "dvclive")}
        | {k: str(root / "data" / k) for k in ("processed", "extracted", "vocab", "subword")},
        "extract": {"budgets": [{"method": "first", "tokens": 20}]},
        "subword": {"size": 60},
        "pretrain": {"encoder": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "max_positions": 32},
                     "max_tokens": 12,
                     "train": {"batch_size": 8, "epochs": 2, "log_every": 2, "checkpoint_every": 3, "device": "cpu",
                               "threads": 1, "lr": 0.01, "warmup_steps": 3, "label_smoothing": 0.0}},
        "families": {"bert2stage": {"n_decoder_layers": 1, "max_source_tokens": 24, "max_summary_tokens": 6}},
        "models": {"B": {"family": "bert2stage", "input": "first20"}},
        "train": {"batch_size": 8, "epochs": 2, "log_every": 2, "checkpoint_every": 3, "device": "cpu",
                  "threads": 1, "lr": 0.01, "warmup_steps": 3, "seeds": [1]},
    }
    (root / "data/vocab").mkdir(parents=True, exist_ok=True)
    train_subword(root / "data/processed", root / "data/subword", params_from_dict(params).subword)
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    return params


class Killed(Exception):
    pass


def kill_after_checkpoints(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Stand-in for SIGKILL right after the n-th checkpoint is written."""
    real, calls = ckpt.save_checkpoint, []

    def save_then_die(*args, **kwargs):
        path = real(*args, **kwargs)
        calls.append(path)
        if len(calls) == n:
            raise Killed
        return path

    monkeypatch.setattr(ckpt, "save_checkpoint", save_then_die)


def tensors(path: Path) -> dict[str, torch.Tensor]:
    return load_file(str(path))


def assert_same_tensors(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_pretrain_writes_the_encoder_and_resumes_bit_identical(tmp_path: Path, monkeypatch) -> None:
    straight = params_from_dict(write_fixture(tmp_path / "straight"))
    summary = pretrain_encoder(resolve_pretrain_inputs(straight), progress=False)
    out = tmp_path / "straight/pretrain"
    assert {p.name for p in out.iterdir()} == {"encoder.safetensors", "config.json", "pretrain_log.csv"}
    log = pd.read_csv(out / "pretrain_log.csv")
    assert list(log.columns) == ["step", "epoch", "loss", "valid_loss", "lr"]
    assert log["valid_loss"].notna().sum() == 2 and summary["steps"] == log["step"].iloc[-1]
    curves = tmp_path / "straight/dvclive/pretrain"  # the live curves (sumpipe.train.live), the same rows
    loss = pd.read_csv(curves / "plots/metrics/loss.tsv", sep="\t")
    assert loss["step"].tolist() == log["step"].tolist() and loss["loss"].tolist() == log["loss"].tolist()
    valid = pd.read_csv(curves / "plots/metrics/valid_loss.tsv", sep="\t")
    assert valid["valid_loss"].tolist() == log["valid_loss"].dropna().tolist()
    metrics = json.loads((curves / "metrics.json").read_text())
    assert (metrics["best_step"], metrics["best_valid_loss"]) == (summary["best_step"], summary["best_valid_loss"])
    from sumpipe.io.atomic import file_sha256
    from sumpipe.models.bert import load_encoder

    model, card = load_encoder(out)  # the typed encoder card
    assert card.encoder == straight.pretrain.encoder and card.vocab_size == model.encoder.vocab_size
    assert card.subword_sha256 == file_sha256(tmp_path / "straight/data/subword/subword.model")
    assert card.training["steps"] == summary["steps"] and card.init is None and card.max_tokens == 12

    resumed = params_from_dict(write_fixture(tmp_path / "resumed"))
    with monkeypatch.context() as m:
        kill_after_checkpoints(m, 2)
        with pytest.raises(Killed):
            pretrain_encoder(resolve_pretrain_inputs(resumed), progress=False)
    again = pretrain_encoder(resolve_pretrain_inputs(resumed), progress=False)
    assert again["resumed_from_step"] > 0
    assert_same_tensors(tensors(out / "encoder.safetensors"),
                        tensors(tmp_path / "resumed/pretrain/encoder.safetensors"))
    for name in ("pretrain_log.csv", "config.json"):  # no timings inside: the same bytes (dvc.lock unchanged)
        assert (out / name).read_bytes() == (tmp_path / "resumed/pretrain" / name).read_bytes(), name
    timings = json.loads((tmp_path / "resumed/timings/pretrain/encoder.json").read_text())
    assert timings["resumed_from_step"] == again["resumed_from_step"] and timings["train_seconds_this_run"] > 0
    assert list(pd.read_csv(tmp_path / "resumed/timings/pretrain/encoder.csv").columns) == ["step", "tokens_per_s"]


def test_pretrain_folder_is_written_as_one_unit(tmp_path: Path) -> None:
    params = params_from_dict(write_fixture(tmp_path))
    out = tmp_path / "pretrain"
    out.mkdir()
    (out / "encoder.safetensors").write_bytes(b"half of an older run")
    (out / "pretrain_log.partial").write_text("left by an older writer")  # gone: the folder is one run's set
    (out / ".gitignore").write_text("/encoder.safetensors\n")  # DVC's listing of the stage's outputs
    pretrain_encoder(resolve_pretrain_inputs(params), progress=False)
    assert {p.name for p in out.iterdir()} == {"encoder.safetensors", "config.json", "pretrain_log.csv", ".gitignore"}
    assert tensors(out / "encoder.safetensors")  # the new run's complete set, swapped in
    assert not list(tmp_path.glob(".pretrain.*.tmp"))


def train_straight_and_resumed(tmp_path: Path, monkeypatch, bert2stage: dict | None = None) -> dict:
    """The fixture's encoder pre-trained and B seed 1 trained twice, under straight/ and resumed/ (the second
    killed after 2 checkpoints, then resumed: asserted to resume); `bert2stage` keys added to
    `families.bert2stage`. Returns the two runs' params."""
    params = {}
    for name in ("straight", "resumed"):
        raw = write_fixture(tmp_path / name)
        raw["families"]["bert2stage"] |= bert2stage or {}
        params[name] = params_from_dict(raw)
        pretrain_encoder(resolve_pretrain_inputs(params[name]), progress=False)
    train_model(resolve_inputs(params["straight"], "B", 1), progress=False)
    with monkeypatch.context() as m:
        kill_after_checkpoints(m, 2)
        with pytest.raises(Killed):
            train_model(resolve_inputs(params["resumed"], "B", 1), progress=False)
    assert train_model(resolve_inputs(params["resumed"], "B", 1), progress=False)["resumed_from_step"] > 0
    return params


def test_bert2stage_trains_from_the_encoder_resumes_bit_identical_and_decodes(tmp_path: Path, monkeypatch) -> None:
    from sumpipe.decode.batches import load_model, summarize
    from sumpipe.models.bert import load_encoder

    params = train_straight_and_resumed(tmp_path, monkeypatch)
    model_dir = tmp_path / "straight/models/B/seed-1"
    assert {p.name for p in model_dir.iterdir()} == {"model.safetensors", "config.json", "vocab.parquet", "SHA256SUMS",
                                                     "train_log.csv"}
    assert_same_tensors(tensors(model_dir / "model.safetensors"),
                        tensors(tmp_path / "resumed/models/B/seed-1/model.safetensors"))

    # training starts from the pretrain stage's encoder
    from sumpipe.models.registry import resolve_model

    family, spec, arch = resolve_model(params["straight"], "B")
    _, arch = family.vocabulary.for_training(tmp_path / "straight/data/vocab", arch)
    fresh = family.build(arch, spec)
    files = family.warm_start(fresh, arch)
    assert [f.name for f in files] == ["subword.model", "config.json", "encoder.safetensors"]
    pretrained, _ = load_encoder(tmp_path / "straight/pretrain")
    assert_same_tensors(fresh.encoder.state_dict(), pretrained.encoder.state_dict())

    model, vocab, card = load_model(model_dir)
    assert card.family == "bert2stage" and card.arch.vocab_size == len(vocab) <= 60
    docs = frame(4, 3)["source"].tolist()
    for cfg in (DecodeConfig(beam_size=2, max_length=8), DecodeConfig(strategy="sample", top_k=5, top_p=0.92, seed=7,
                                                                       max_length=8)):
        first = summarize(model, vocab, card, docs, cfg, details=True)
        again = summarize(model, vocab, card, docs, cfg)
        assert [s.tokens for s in first] == [s.tokens for s in again]
        for s in first:
            assert all(t.isascii() and "\u2581" not in t and t not in ("<s>", "</s>", "<mask>") for t in s.tokens)
            assert s.attention is None or s.attention.shape[1] == len(s.source_tokens)


def test_bert2stage_with_length_control_trains_resumes_and_decodes_to_a_budget(tmp_path: Path, monkeypatch) -> None:
    """Length control through the stages: `families.bert2stage: {length_control: bytes, length_dropout: 0.25}`
    trains (the pieces' costs from the subword model, saved with the weights), resumes bit-identical, and
    decodes to a byte budget, without one (length dropout), and refuses another unit in one line."""
    from sumpipe.decode.batches import length_budget, load_model, summarize
    from sumpipe.models.piece_length import PieceBudget, piece_costs
    from sumpipe.models.registry import get_family

    train_straight_and_resumed(tmp_path, monkeypatch,
                               {"length_control": "bytes", "length_dropout": 0.25, "refine": False})
    model_dir = tmp_path / "straight/models/B/seed-1"
    assert_same_tensors(tensors(model_dir / "model.safetensors"),
                        tensors(tmp_path / "resumed/models/B/seed-1/model.safetensors"))
    assert json.loads((model_dir / "config.json").read_text())["arch"]["length_control"] == "bytes"

    model, vocab, card = load_model(model_dir)
    size, starts = piece_costs(vocab.itos)
    assert model.piece_bytes.tolist() == size.tolist() and model.piece_starts_word.tolist() == starts.tolist()
    assert size[vocab.itos.index("\u2581the")] == 3
    codec = get_family("bert2stage").codec(vocab, card.arch)
    budget = length_budget(card, codec, DecodeConfig(target_length=30, length_unit="bytes"))
    assert isinstance(budget, PieceBudget) and budget.vocab_bytes.tolist() == size.tolist()
    docs = frame(4, 3)["source"].tolist()
    for cfg in (DecodeConfig(beam_size=2, max_length=10, target_length=30, length_unit="bytes"),
                DecodeConfig(beam_size=2, max_length=10)):
        summaries = summarize(model, vocab, card, docs, cfg)
        assert len(summaries) == 4 and all(s.tokens and "\u2581" not in s.text for s in summaries)
    with pytest.raises(SumpipeError, match="counts its length in bytes, not words"):
        summarize(model, vocab, card, docs, DecodeConfig(target_length=5, length_unit="words"))


def test_train_needs_a_matching_pretrained_encoder(tmp_path: Path) -> None:
    params = params_from_dict(write_fixture(tmp_path))
    with pytest.raises(SumpipeError, match="encoder.safetensors is missing|config.json is missing"):
        train_model(resolve_inputs(params, "B", 1), progress=False)
    pretrain_encoder(resolve_pretrain_inputs(params), progress=False)
    train_subword(tmp_path / "data/processed", tmp_path / "data/subword", params_from_dict(
        {**write_fixture(tmp_path / "other"), "subword": {"size": 50}}).subword)
    with pytest.raises(SumpipeError, match="pre-trained on another subword model"):
        train_model(resolve_inputs(params, "B", 1), progress=False)


def test_pretrain_checks_its_checkpoint_lock_and_timings_before_training(tmp_path: Path) -> None:
    from sumpipe.train.pretrain import check_pretrain_paths

    inputs = resolve_pretrain_inputs(params_from_dict(write_fixture(tmp_path)))
    check_pretrain_paths(inputs)  # a fresh tree: every path can be written
    lock = inputs.out_dir.parent / f".{inputs.out_dir.name}.lock"
    lock.symlink_to(tmp_path / "nowhere")
    with pytest.raises(SumpipeError, match=r"\.lock: a symbolic link is in the way of the lock on writing the "
                                           "encoder folder; remove it and run again$"):
        check_pretrain_paths(inputs)
    lock.unlink()
    (inputs.timings_dir / "pretrain" / "encoder.csv").mkdir(parents=True)
    with pytest.raises(SumpipeError, match=r"encoder\.csv: a folder is in the way of this run's throughput curve"):
        check_pretrain_paths(inputs)
    assert not (tmp_path / "nowhere").exists()
