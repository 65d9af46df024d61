"""Weights written as safetensors: tied tensors stored once, the same bytes for the same weights, the
mode every artifact gets."""

import json
import os
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_model, save_model

from sumpipe.errors import SumpipeError
from sumpipe.io.weights import (
    checked_safetensors,
    json_depth,
    read_safetensors_header,
    read_weights,
    safetensors_shapes,
    write_weights,
)


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


def _flattened_lstm(seed: int) -> torch.nn.LSTM:
    """A bidirectional LSTM whose weights are views of one flat buffer, laid out as cuDNN lays them out
    on CUDA (`flatten_parameters`, which does nothing on CPU): what PG-cov's encoder holds on a GPU."""
    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(4, 3, bidirectional=True)
    flat = torch.cat([w.detach().reshape(-1) for w in lstm._flat_weights])
    offset = 0
    for name in lstm._flat_weights_names:
        weight = getattr(lstm, name)
        weight.data = flat[offset:offset + weight.numel()].view_as(weight)
        offset += weight.numel()
    return lstm


def test_weights_that_share_one_buffer_are_saved_and_loaded_in_place(tmp_path: Path) -> None:
    model = _flattened_lstm(seed=0)
    buffer = model.weight_ih_l0.untyped_storage().data_ptr()
    assert model.weight_hh_l0_reverse.untyped_storage().data_ptr() == buffer  # the shared-storage case
    with pytest.raises(RuntimeError, match="None is covering the entire storage"):  # the error seen on CUDA
        save_model(model, str(tmp_path / "theirs.safetensors"))
    path = write_weights(model, tmp_path / "w.safetensors")
    # the same bytes as the same weights each in memory of its own
    assert path.read_bytes() == write_weights(_plain_copy(model), tmp_path / "plain.safetensors").read_bytes()

    fresh = _flattened_lstm(seed=1)  # other values, the same flat layout
    assert read_weights(fresh, path) == ([], [])
    for name, tensor in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[name], tensor), name
    assert fresh.weight_ih_l0.untyped_storage().data_ptr() != buffer
    assert fresh.weight_hh_l0_reverse.untyped_storage().data_ptr() == fresh.weight_ih_l0.untyped_storage().data_ptr()


def _plain_copy(model: torch.nn.Module) -> torch.nn.Module:
    """`model`'s weights in a module whose every tensor owns its memory."""
    plain = torch.nn.LSTM(4, 3, bidirectional=True)
    plain.load_state_dict({name: tensor.clone() for name, tensor in model.state_dict().items()})
    return plain


def test_read_weights_ties_a_tied_tensor_again_and_names_a_misfit(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = _Tied()
    path = write_weights(model, tmp_path / "w.safetensors")
    fresh = _Tied()
    assert read_weights(fresh, path) == ([], [])
    assert torch.equal(fresh.head.weight, model.embed.weight)
    with pytest.raises(RuntimeError, match="missing tensors"):
        read_weights(torch.nn.Linear(3, 5), path)


def test_a_refused_save_says_saving(tmp_path: Path, monkeypatch) -> None:
    import safetensors.torch

    def refuse(*args, **kwargs):
        raise RuntimeError("found no suitable name to keep for saving")

    monkeypatch.setattr(safetensors.torch, "save_file", refuse)
    with pytest.raises(SumpipeError, match=r"w\.safetensors: the weights cannot be saved \(found no suitable"):
        write_weights(torch.nn.Linear(2, 2), tmp_path / "w.safetensors")
    assert not (tmp_path / "w.safetensors").exists()


def test_weights_file_gets_the_same_mode_as_every_artifact(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_weights(torch.nn.Linear(2, 2), tmp_path / "w.safetensors")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


# ---- the checked header (a header nested thousands deep was a RecursionError) -----------------------
def _raw_safetensors(path: Path, header: bytes) -> Path:
    path.write_bytes(len(header).to_bytes(8, "little") + header)
    return path


@pytest.mark.parametrize(("text", "depth"), [
    (b"{}", 1),
    (b'{"a": {"shape": [2, 3], "data_offsets": [0, 24]}}', 3),
    (b'{"a": "[[[[{{{{", "b": [1]}', 2),             # brackets inside a string are not nesting
    (b'{"a\\"[[": [[1]]}', 3),                        # nor after an escaped quote
    (b"[" * 20 + b"]" * 20, 20),
])
def test_json_depth_counts_brackets_outside_strings(text: bytes, depth: int) -> None:
    assert json_depth(text, 16) == depth


def test_json_depth_stops_past_the_limit() -> None:
    deep = b"[]" * 3_000_000 + b"[" * 1_000_000 + b"]" * 1_000_000  # the deep part in a later chunk
    assert 16 < json_depth(deep, 16) <= 1_000_000


def test_a_header_nested_too_deeply_is_refused_before_any_parse(tmp_path: Path, monkeypatch) -> None:
    path = _raw_safetensors(tmp_path / "m.safetensors", b'{"x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}")
    monkeypatch.setattr("json.loads", lambda *a, **k: pytest.fail("parsed"))
    for read in (read_safetensors_header, safetensors_shapes, checked_safetensors):
        with pytest.raises(SumpipeError, match=r"m.safetensors: not a readable safetensors file \(header nested "
                                               r"deeper than 16 levels\)"):
            read(path)


def test_a_written_file_passes_the_header_check(tmp_path: Path) -> None:
    path = write_weights(_Tied(), tmp_path / "w.safetensors")
    assert read_safetensors_header(path)["embed.weight"]["shape"] == [5, 3]
    model = _Tied()
    load_model(model, checked_safetensors(path))
    assert checked_safetensors(path) == str(path)
