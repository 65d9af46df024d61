"""Weights written as safetensors: tied tensors stored once, the same bytes for the same weights, the
mode every artifact gets."""

import json
import os
from pathlib import Path

import torch
from safetensors.torch import load_model, save_model

from sumpipe.io.weights import write_weights


class _Tied(torch.nn.Module):
    """An embedding shared with the output projection, as the BERT encoder's MLM head shares it."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight


def _header(path: Path) -> dict:
    size = int.from_bytes(path.read_bytes()[:8], "little")
    return json.loads(path.read_bytes()[8:8 + size])


def test_write_weights_stores_a_tied_tensor_once_with_format_as_the_only_metadata(tmp_path: Path) -> None:
    # safetensors' metadata is a hash map: two entries come out in a per-process order, so the only
    # entry is the format (save_model would add "head.weight": "embed.weight" and the bytes would vary)
    torch.manual_seed(0)
    model = _Tied()
    path = write_weights(model, tmp_path / "w.safetensors", format="f/1")
    header = _header(path)
    assert header.pop("__metadata__") == {"format": "f/1"}
    assert sorted(header) == ["embed.weight"]

    fresh = _Tied()
    load_model(fresh, str(path))
    assert torch.equal(fresh.head.weight, model.embed.weight)
    assert fresh.head.weight.data_ptr() == fresh.embed.weight.data_ptr()


def test_write_weights_matches_safetensors_save_model_for_untied_weights(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    ours = write_weights(model, tmp_path / "ours.safetensors", format="f/1")
    save_model(model, str(tmp_path / "theirs.safetensors"), metadata={"format": "f/1"})
    assert ours.read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()


def test_weights_file_gets_the_same_mode_as_every_artifact(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_weights(torch.nn.Linear(2, 2), tmp_path / "w.safetensors")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644
