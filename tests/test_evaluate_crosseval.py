"""Crosseval decodes where `decode.device` says, like the decode stage (the full stage is tested with the
report: tests/test_report_stage.py::test_crosseval_on_a_multi_reference_corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from sumpipe.config import DecodeConfig
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.crosseval import decode_corpus


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
