"""The decode stage (`sumpipe.decode.stage`) on a tiny real model: predictions, timings, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.config import Budget, DecodeConfig
from sumpipe.decode.stage import decode_stage
from sumpipe.errors import SumpipeError


def test_decode_stage_writes_predictions(tmp_path: Path, decode_docs, make_model_dir) -> None:
    model_dir = make_model_dir(tmp_path / "models" / "M1", selection=Budget("first", 400))
    frame = pd.DataFrame({"id": ["a", "b", "c"], "source": [decode_docs[0], "", decode_docs[2]],
                          "reference": ["r1", "r2", "r3"], "references": [["r1", "x"], ["r2"], ["r3"]]})
    (tmp_path / "extracted" / "first400").mkdir(parents=True)
    frame.to_parquet(tmp_path / "extracted" / "first400" / "test.parquet")
    result = decode_stage(model_dir, tmp_path / "extracted", tmp_path / "predictions" / "M1",
                          DecodeConfig(batch_size=2, device="cpu"), timings_dir=tmp_path / "timings")
    out = pd.read_parquet(result.path)
    assert list(out.columns) == ["id", "prediction", "reference", "references"]  # no timing: DVC hashes it
    assert out["id"].tolist() == ["a", "b", "c"]
    assert out["prediction"][1] == "" and out["prediction"][0] and out["prediction"][2]
    timings = json.loads((tmp_path / "timings" / "decode" / "M1.json").read_text())
    assert (timings["documents"], timings["decoded"], timings["batch_size"]) == (3, 2, 2)
    assert timings["seconds"] > 0
    assert result.max_length == 10                            # pydoc: 1.2 x 8 summary tokens
    with pytest.raises(SumpipeError, match="no such file"):
        decode_stage(model_dir, tmp_path / "nowhere", tmp_path / "p", DecodeConfig(device="cpu"))
