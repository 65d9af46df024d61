"""The download stage end to end: raw splits, stats, max_examples, hub loaders and the command."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sumpipe.config import DataConfig, SplitRatios
from sumpipe.data.download import cap_examples, download
from sumpipe.errors import SumpipeError


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_local_download_writes_typed_splits_and_stats(tmp_path: Path) -> None:
    rows = [{"id": f"e{i}", "source": f"text number {i}", "reference": f"sum {i}", "split": "train"}
            for i in range(5)]
    rows.append({"id": "t", "source": "test text", "references": ["ref a", "ref b"], "split": "test"})
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "raw"
    stats = download(DataConfig(dataset="local", path=str(data)), out)
    assert stats["counts"] == {"train": 5, "valid": 0, "test": 1}
    assert stats["multiple_references"] is True
    test = pq.read_table(out / "test.parquet").to_pylist()
    assert test == [{"id": "t", "source": "test text", "reference": "ref a", "references": ["ref a", "ref b"]}]
    train = pq.read_table(out / "train.parquet")
    assert train.column("references").to_pylist()[0] == ["sum 0"]
    valid = pq.read_table(out / "valid.parquet")
    assert valid.num_rows == 0 and str(valid.schema.field("source").type) == "string"
    assert json.loads((out / "stats.json").read_text())["counts"] == stats["counts"]


def test_single_reference_corpus_has_no_references_column(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [{"id": f"{i}", "source": "s", "reference": "r"} for i in range(30)])
    out = tmp_path / "raw"
    stats = download(DataConfig(dataset="local", path=str(data), split_ratios=SplitRatios(0.5, 0.25, 0.25)), out)
    assert sum(stats["counts"].values()) == 30 and min(stats["counts"].values()) > 0
    for split in ("train", "valid", "test"):
        assert pq.read_schema(out / f"{split}.parquet").names == ["id", "source", "reference"]


def test_numerals_download(tmp_path: Path) -> None:
    stats = download(DataConfig(dataset="numerals", options={"numerals": {"size": 50}}), tmp_path)
    assert sum(stats["counts"].values()) == 50
    assert pq.read_table(tmp_path / "train.parquet").column("id").to_pylist()[0].startswith("numerals-")


def test_max_examples_is_a_deterministic_nested_sample() -> None:
    rows = [{"id": f"id-{i}"} for i in range(1000)]
    small, large = cap_examples(rows, 50), cap_examples(rows, 200)
    assert len(small) == 50 and len(large) == 200
    assert small == cap_examples(list(rows), 50)
    assert {r["id"] for r in small} <= {r["id"] for r in large}
    assert [r["id"] for r in small] == sorted((r["id"] for r in small), key=lambda x: int(x[3:]))  # order kept
    assert cap_examples(rows, None) is rows


def test_hub_without_datasets_package_says_how_to_go_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` raise ImportError
    with pytest.raises(SumpipeError) as info:
        download(DataConfig(dataset="cnn_dailymail"), Path("unused"))
    message = str(info.value)
    assert "pip install 'sumpipe[hf]'" in message and "data.dataset: local" in message and "\n" not in message


def _fake_datasets(parts: dict | Exception) -> types.ModuleType:
    class Part(dict):
        @property
        def column_names(self) -> list[str]:
            return list(self)

    def load_dataset(repo: str, config: str | None = None) -> dict:
        if isinstance(parts, Exception):
            raise parts
        assert (repo, config) == ("Harvard/gigaword", None)
        return {name: Part(columns) for name, columns in parts.items()}

    module = types.ModuleType("datasets")
    module.load_dataset = load_dataset
    return module


def test_hub_loader_maps_columns_and_splits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parts = {
        "train": {"document": ["doc one", "doc two"], "summary": ["sum one", ""]},
        "validation": {"document": ["doc three"], "summary": ["sum three"]},
    }
    monkeypatch.setitem(sys.modules, "datasets", _fake_datasets(parts))
    stats = download(DataConfig(dataset="gigaword"), tmp_path)
    assert stats["counts"] == {"train": 1, "valid": 1, "test": 0}
    assert stats["gigaword"]["dropped_empty"] == 1
    assert pq.read_table(tmp_path / "valid.parquet").to_pylist() == [
        {"id": "gigaword-valid-0000000", "source": "doc three", "reference": "sum three"}]


def test_hub_offline_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", _fake_datasets(ConnectionError("no network\nmore detail")))
    with pytest.raises(SumpipeError, match=r"could not load Harvard/gigaword \(ConnectionError: no network\)") as info:
        download(DataConfig(dataset="gigaword"), Path("unused"))
    assert "\n" not in str(info.value) and "data.dataset: local" in str(info.value)


def _params(tmp_path: Path, data: dict) -> Path:
    import yaml

    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"paths": {"raw": str(tmp_path / "raw")}, "data": data}))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sumpipe.cli", *args], capture_output=True, text=True)


def test_command_prints_a_summary_and_errors_are_one_line(tmp_path: Path) -> None:
    numerals = {"dataset": "numerals", "options": {"numerals": {"size": 40}}}
    done = _cli("download", "-p", str(_params(tmp_path, numerals)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("download: numerals: ") and "examples -> " in done.stdout
    assert (tmp_path / "raw" / "stats.json").is_file()

    failed = _cli("download", "-p", str(_params(tmp_path, {"dataset": "local", "path": str(tmp_path / "nope")})))
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope'}: no such file or folder (data.path)"]

    unknown = _cli("download", "-p", str(_params(tmp_path, {"dataset": "imdb"})))
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        "error: data.dataset: unknown dataset 'imdb' (known: cnn_dailymail, gigaword, local, numerals, pydoc, xsum)"]
