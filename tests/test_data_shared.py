"""Every file in ../shared/data loads as it is (skipped when the folder is absent)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sumpipe.config import DataConfig
from sumpipe.data.download import download
from sumpipe.data.local import load_local, read_records
from sumpipe.errors import SumpipeError

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def whole_folder(shared_data: Path) -> tuple[list[dict], dict]:
    return load_local(shared_data)


def test_the_whole_folder_loads_with_the_published_counts(whole_folder: tuple[list[dict], dict],
                                                          shared_data: Path) -> None:
    rows, stats = whole_folder
    counts = Counter((r["id"].split("-")[0], r["split"]) for r in rows)
    assert counts == {
        ("cnn", "train"): 6289, ("cnn", "valid"): 340, ("cnn", "test"): 323,
        ("giga", "train"): 25156, ("giga", "valid"): 1036,
        ("duc2003", "test"): 624,
        ("aff", "train"): 200,
    }
    assert stats["repaired_rows"] == 0 and stats["dropped_empty"] == 0 and stats["dropped_duplicate_id"] == 0
    rouge_check = str(shared_data / "rouge_check" / "xsum_test_outputs.jsonl.gz")
    assert list(stats["skipped_files"]) == [rouge_check]
    duc = [r for r in rows if r["id"].startswith("duc2003")]
    assert all(len(r["references"]) == 4 and r["reference"] == r["references"][0] for r in duc)
    amazon = next(r for r in rows if r["id"] == "aff-1")
    assert amazon["reference"] == "Good Quality Dog Food"


def test_rouge_check_reads_as_is_but_is_not_a_corpus(shared_data: Path) -> None:
    path = shared_data / "rouge_check" / "xsum_test_outputs.jsonl.gz"
    records, repaired = read_records(path)
    assert len(records) == 11334 and repaired == 0
    assert set(records[0]["system_outputs"]) == {"lead", "ext-oracle", "ptgen", "convs2s", "topic-convs2s"}
    with pytest.raises(SumpipeError, match="no `source` field") as info:
        load_local(path)
    assert "\n" not in str(info.value)


def test_duc_download_keeps_four_references(shared_data: Path, tmp_path: Path) -> None:
    stats = download(DataConfig(dataset="local", path=str(shared_data / "duc2003")), tmp_path)
    assert stats["counts"] == {"train": 0, "valid": 0, "test": 624}
    test = pq.read_table(tmp_path / "test.parquet")
    assert test.schema.names == ["id", "source", "reference", "references"]
    assert {len(refs) for refs in test.column("references").to_pylist()} == {4}
