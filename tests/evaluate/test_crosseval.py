"""The crosseval stage: `crosseval.data` checked by the data-set registry before any model is loaded, read
with the download stage's splits and cap, and decoded where `decode.device` says, like the decode stage (the
full stage is tested with the report: tests/test_report_stage.py::test_crosseval_on_a_multi_reference_corpus)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from sumpipe.config import CrossEvalConfig, DataConfig, DecodeConfig, EvaluateConfig, NumeralsConfig, PathsConfig
from sumpipe.data.download import cap_examples, download, load_examples
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.evaluate.crosseval import decode_corpus, load_corpus, run_crosseval


def _paths(tmp_path: Path) -> PathsConfig:
    return PathsConfig(**{name: str(tmp_path / name) for name in PathsConfig.__dataclass_fields__})


@pytest.mark.parametrize(("data", "message"), [
    (DataConfig(dataset="imdb"), "crosseval.data.dataset: unknown dataset 'imdb' (known: cnn_dailymail, "),
    (DataConfig(dataset="local"), "crosseval.data.path: required when crosseval.data.dataset is 'local'"),
])
def test_a_bad_corpus_is_refused_naming_the_crosseval_key(tmp_path: Path, data: DataConfig, message: str) -> None:
    paths = _paths(tmp_path)
    (Path(paths.models) / "M1").mkdir(parents=True)  # an empty folder: loading it would fail otherwise
    with pytest.raises(ConfigError) as info:
        run_crosseval(paths, CrossEvalConfig(models=["M1"], data=data), DecodeConfig(), EvaluateConfig())
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert not Path(paths.crosseval).exists()


def test_load_corpus_takes_the_download_stages_split_and_caps_it(tmp_path: Path) -> None:
    data = DataConfig(dataset="numerals", seed=3, numerals=NumeralsConfig(size=40, max_length=3, max_number=9))
    download(data, tmp_path)
    raw = pq.read_table(tmp_path / "valid.parquet").to_pylist()
    valid = load_corpus(CrossEvalConfig(data=data, split="valid", max_examples=None))
    assert 0 < len(raw) < 40
    assert valid["id"].tolist() == [r["id"] for r in raw]
    assert valid["references"].tolist() == [[r["reference"]] for r in raw]
    capped = load_corpus(CrossEvalConfig(data=data, split="all", max_examples=5))
    assert capped["id"].tolist() == [r["id"] for r in cap_examples(load_examples(data)[0], 5)]


class Loaded(Exception):
    pass


def test_decode_corpus_loads_the_model_on_the_decode_device(monkeypatch, tmp_path: Path):
    from sumpipe.decode import api

    asked = []

    def load_model(model_dir, device="cpu"):
        asked.append((model_dir, device))
        raise Loaded

    monkeypatch.setattr(api, "load_model", load_model)
    with pytest.raises(Loaded):
        decode_corpus(tmp_path / "M1", ["a text ."], str(tmp_path), DecodeConfig(device="cpu"))
    assert asked == [(tmp_path / "M1", torch.device("cpu"))]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_decode_corpus_refuses_cuda_without_a_gpu(tmp_path: Path):
    with pytest.raises(SumpipeError, match="decode.device: 'cuda' was asked for but no CUDA device is available"):
        decode_corpus(tmp_path / "M1", ["a text ."], str(tmp_path), DecodeConfig(device="cuda"))
