"""Atomic artifact writes: a failure mid-write leaves the old file (or nothing), never half a file."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import torch
from safetensors.torch import load_model, save_model

from sumpipe.errors import SumpipeError
from sumpipe.io import atomic_path, read_json, read_parquet, write_json, write_parquet, write_weights


def test_parquet_round_trip(tmp_path: Path) -> None:
    df = pd.DataFrame({"id": ["a", "b"], "references": [["x", "y"], ["z"]]})
    path = write_parquet(df, tmp_path / "sub" / "t.parquet")
    back = read_parquet(path)
    assert back["id"].tolist() == ["a", "b"]
    assert [list(r) for r in back["references"]] == [["x", "y"], ["z"]]


def test_failed_write_keeps_previous_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_missing_artifact_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SumpipeError, match="no such file"):
        read_parquet(tmp_path / "missing.parquet")


def test_corrupt_artifact_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(SumpipeError, match=r"bad\.parquet: cannot read") as info:
        read_parquet(tmp_path / "bad.parquet")
    assert "\n" not in str(info.value)


def test_corrupt_json_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "cut.json").write_text('{"M1": {"rouge1": 20.1')
    with pytest.raises(SumpipeError, match=r"cut\.json: not valid JSON"):
        read_json(tmp_path / "cut.json")


def test_atomic_files_get_umask_permissions(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        path = write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "p.parquet")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_temporaries_of_a_killed_writer_are_removed_a_live_writers_kept(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".a.parquet.{int(dead.stdout)}.x1.tmp"   # a SIGKILLed writer's leftover
    live = tmp_path / f".a.parquet.{os.getpid()}.x2.tmp"          # another write of this process
    other = tmp_path / f".b.parquet.{int(dead.stdout)}.x3.tmp"    # another artifact's: not ours to judge
    for p in (stale, live, other):
        p.write_bytes(b"half")
    write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "a.parquet")
    assert not stale.exists() and live.exists() and other.exists()


def test_refused_write_is_a_one_line_error_naming_the_artifact(tmp_path: Path, monkeypatch) -> None:
    import errno

    (tmp_path / "a.json").write_text("{}")

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(SumpipeError, match=r"a\.json: cannot write \(No space left on device\)"):
        write_json({"x": 1}, tmp_path / "a.json")
    monkeypatch.undo()
    assert (tmp_path / "a.json").read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


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
