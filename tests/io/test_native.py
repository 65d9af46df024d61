"""Paths that native readers (Arrow's C++, safetensors' Rust) can open."""

import os
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import read_parquet, write_parquet
from sumpipe.io.native import native_path


def test_native_path_gives_native_readers_a_utf8_spelling(tmp_path: Path, monkeypatch) -> None:
    latin = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    latin.mkdir()
    assert native_path(tmp_path / "t") == str(tmp_path / "t")
    monkeypatch.chdir(latin)  # a working directory named in Latin-1: its absolute paths are not UTF-8
    write_parquet(pd.DataFrame({"a": [1]}), latin / "t.parquet")
    assert native_path(latin / "t.parquet") == "t.parquet"
    assert read_parquet(latin / "t.parquet")["a"].tolist() == [1]
    monkeypatch.chdir(tmp_path.parent)
    with pytest.raises(SumpipeError, match=r"caf\\udce9/t\.parquet: the path is not UTF-8 text"):
        native_path(Path("/nonexistent") / latin.name / "t.parquet")
