"""`sumpipe.timings`: a run's wall-clock figures, written outside DVC's outputs."""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path

import pandas as pd

from sumpipe.timings import record_run, write_throughput


def test_record_run_writes_one_file_per_stage_and_name(tmp_path: Path) -> None:
    path = record_run(tmp_path / "timings", "decode", "M1", {"seconds": 1.25, "documents": 4})
    assert path == tmp_path / "timings/decode/M1.json"
    record = json.loads(path.read_text())
    assert {k: record[k] for k in ("stage", "name", "seconds", "documents")} == \
        {"stage": "decode", "name": "M1", "seconds": 1.25, "documents": 4}
    finished = datetime.datetime.fromisoformat(record["finished"])
    assert finished.utcoffset() == datetime.timedelta(0)


def test_record_run_overwrites_the_previous_run(tmp_path: Path) -> None:
    record_run(tmp_path, "train", "M1", {"resumed_from_step": 0})
    record_run(tmp_path, "train", "M1", {"resumed_from_step": 6})
    assert json.loads((tmp_path / "train/M1.json").read_text())["resumed_from_step"] == 6
    assert [p.name for p in (tmp_path / "train").iterdir()] == ["M1.json"]  # no temporary file left


def test_write_throughput_keeps_step_and_tokens_per_s(tmp_path: Path) -> None:
    rows = [{"step": 2, "tokens_per_s": 100.5}, {"step": 4, "tokens_per_s": math.nan}]
    frame = pd.read_csv(write_throughput(rows, tmp_path, "pretrain", "encoder"))
    assert list(frame.columns) == ["step", "tokens_per_s"]
    assert frame["step"].tolist() == [2, 4] and frame["tokens_per_s"][0] == 100.5
    assert math.isnan(frame["tokens_per_s"][1])


def test_write_throughput_of_a_run_without_log_rows_has_the_header(tmp_path: Path) -> None:
    assert (write_throughput([], tmp_path, "train", "M1")).read_text() == "step,tokens_per_s\n"


def test_check_writable_refuses_a_folder_in_a_figures_place_before_the_run(tmp_path: Path) -> None:
    import pytest

    from sumpipe.errors import SumpipeError
    from sumpipe.timings import check_writable

    (tmp_path / "train/M1/seed-1.csv").mkdir(parents=True)
    check_writable(tmp_path, "train", "M1/seed-1")  # the curve is not this run's to write: no complaint
    with pytest.raises(SumpipeError, match=r"^\S+/train/M1/seed-1\.csv: a folder is in the way of this run's "
                                           r"throughput curve \(timings\); remove it and run again$"):
        check_writable(tmp_path, "train", "M1/seed-1", throughput=True)
    assert (tmp_path / "train/M1/seed-1.csv").is_dir()


def test_a_link_in_the_figures_place_is_replaced_not_followed(tmp_path: Path) -> None:
    from sumpipe.timings import check_writable

    elsewhere = tmp_path / "notes.json"
    elsewhere.write_text("mine")
    (tmp_path / "timings/decode").mkdir(parents=True)
    (tmp_path / "timings/decode/M1.json").symlink_to(elsewhere)
    check_writable(tmp_path / "timings", "decode", "M1")
    path = record_run(tmp_path / "timings", "decode", "M1", {"seconds": 1.0})
    assert not path.is_symlink() and json.loads(path.read_text())["seconds"] == 1.0
    assert elsewhere.read_text() == "mine"
