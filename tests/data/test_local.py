"""The `local` loader on small files of every supported kind, and its one-line errors; then every file in
../shared/data as it is (those tests skip when the folder is absent)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sumpipe.config import DataConfig, SplitRatios
from sumpipe.data.datasets import dataset_of
from sumpipe.data.download import download
from sumpipe.data.local import load_local, read_records
from sumpipe.data.split import content_id, stable_split
from sumpipe.errors import ConfigError, SumpipeError


def write_jsonl(path: Path, rows: list[dict], gz: bool = False) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


ROWS = [
    {"id": "a", "source": "first document text", "reference": "first summary", "split": "train"},
    {"id": "b", "source": "second document text", "reference": "second summary", "split": "validation"},
    {"id": "c", "source": "third document text", "reference": "third summary", "split": "test"},
]


@pytest.mark.parametrize("gz", [False, True])
def test_jsonl_and_jsonl_gz(tmp_path: Path, gz: bool) -> None:
    path = write_jsonl(tmp_path / ("d.jsonl.gz" if gz else "d.jsonl"), ROWS, gz=gz)
    rows, stats = load_local(path)
    assert [(r["id"], r["split"], r["reference"], r["references"]) for r in rows] == [
        ("a", "train", "first summary", ["first summary"]),
        ("b", "valid", "second summary", ["second summary"]),
        ("c", "test", "third summary", ["third summary"]),
    ]
    assert stats["files"] == [str(path)] and stats["repaired_rows"] == 0


def test_csv_with_references_as_json_list_and_no_id_or_split(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    pd.DataFrame({
        "source": ["a long text", "another text"],
        "references": [json.dumps(["r one", "r two"]), json.dumps(["only"])],
    }).to_csv(path, index=False)
    rows, _ = load_local(path)
    assert rows[0]["references"] == ["r one", "r two"] and rows[0]["reference"] == "r one"
    assert rows[1]["references"] == ["only"]
    assert rows[0]["id"] == content_id("a long text", "r one", prefix="local-")
    assert rows[0]["split"] is None  # the stable hash split decides later


def test_parquet_with_list_column(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pd.DataFrame({"id": [1, 2], "source": ["s1", "s2"], "references": [["x", "y", "z"], ["w"]]}).to_parquet(path)
    rows, _ = load_local(path)
    assert [(r["id"], r["reference"], r["references"]) for r in rows] == [
        ("1", "x", ["x", "y", "z"]), ("2", "w", ["w"])]


def test_folder_reads_supported_files_sorted_and_skips_files_without_source(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b.jsonl", ROWS[1:])
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "a.jsonl.gz", ROWS[:1], gz=True)
    write_jsonl(tmp_path / "scores.jsonl", [{"id": "z", "reference": "r", "system_outputs": {"lead": "x"}}])
    (tmp_path / "README.md").write_text("not data")
    rows, stats = load_local(tmp_path)
    assert [r["id"] for r in rows] == ["b", "c", "a"]  # b.jsonl < scores.jsonl < sub/a.jsonl.gz
    assert stats["skipped_files"] == {
        str(tmp_path / "scores.jsonl"): "no `source` field (found: id, reference, system_outputs)"}


def test_invalid_utf8_is_repaired_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    good = json.dumps({"id": "1", "source": "caf\u00e9 text", "reference": "ok"}).encode()
    bad = b'{"id": "2", "source": "bad \xff\xfe bytes", "reference": "ok"}'
    path.write_bytes(good + b"\n" + bad + b"\n")
    rows, stats = load_local(path)
    assert stats["repaired_rows"] == 1
    assert rows[1]["source"] == "bad \ufffd\ufffd bytes"
    assert rows[0]["source"] == "caf\u00e9 text"


def test_empty_rows_and_repeated_ids_are_dropped_and_counted(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [
        {"id": "1", "source": "text", "reference": "sum"},
        {"id": "2", "source": "", "reference": "sum"},
        {"id": "3", "source": "text", "reference": None},
        {"id": "1", "source": "other", "reference": "again"},
    ])
    rows, stats = load_local(path)
    assert [r["id"] for r in rows] == ["1"]
    assert (stats["dropped_empty"], stats["dropped_duplicate_id"], stats["rows"]) == (2, 1, 4)


def test_read_records_reads_any_supported_file_as_is(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "scores.jsonl", [{"id": "z", "reference": "r", "system_outputs": {"a": "b"}}])
    records, repaired = read_records(path)
    assert records == [{"id": "z", "reference": "r", "system_outputs": {"a": "b"}}] and repaired == 0


def one_line_error(path: Path, match: str) -> None:
    with pytest.raises(SumpipeError, match=match) as info:
        load_local(path)
    assert "\n" not in str(info.value)


def test_errors_are_one_line(tmp_path: Path) -> None:
    one_line_error(tmp_path / "missing.jsonl", r"missing\.jsonl: no such file or folder")
    (tmp_path / "d.txt").write_text("x")
    one_line_error(tmp_path / "d.txt", r"d\.txt: unsupported file type")
    one_line_error(write_jsonl(tmp_path / "e.jsonl", []), r"e\.jsonl: no examples .*\(empty data set\)")
    one_line_error(write_jsonl(tmp_path / "n.jsonl", [{"id": 1, "reference": "r"}]),
                   r"n\.jsonl: no `source` field \(found: id, reference\)")
    one_line_error(write_jsonl(tmp_path / "r.jsonl", [{"source": "s", "summary": "r"}]),
                   r"r\.jsonl: no `reference` or `references` field \(found: source, summary\)")
    one_line_error(write_jsonl(tmp_path / "s.jsonl", [{"source": "s", "reference": "r", "split": "holdout"}]),
                   r"s\.jsonl: unknown split 'holdout'")
    (tmp_path / "j.jsonl").write_text('{"source": "s", "reference": "r"}\n{broken\n')
    one_line_error(tmp_path / "j.jsonl", r"j\.jsonl:2: not valid JSON")
    (tmp_path / "empty_dir").mkdir()
    one_line_error(tmp_path / "empty_dir", r"empty_dir: folder holds no .jsonl")
    (tmp_path / "p.parquet").write_bytes(b"not parquet")
    one_line_error(tmp_path / "p.parquet", r"p\.parquet: not valid Parquet")


def test_source_as_a_list_of_sentences_is_joined_by_newlines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "1", "source": ["One.", "Two."], "reference": "r"}])
    rows, _ = load_local(path)
    assert rows[0]["source"] == "One.\nTwo."


def test_local_needs_a_path_and_says_so_before_any_work(tmp_path: Path) -> None:
    what = "(a JSONL, CSV or Parquet file or a folder)"
    with pytest.raises(ConfigError) as info:
        download(DataConfig(dataset="local"), tmp_path / "raw")
    assert str(info.value) == f"data.path: required when data.dataset is 'local' {what}"
    assert not (tmp_path / "raw").exists()
    with pytest.raises(ConfigError) as info:
        dataset_of(DataConfig(dataset="local", path=""), "crosseval.data")
    assert str(info.value) == f"crosseval.data.path: required when crosseval.data.dataset is 'local' {what}"


# --------------------------------------------------------------------------------------------
# data.options.local: the files' splits renamed and re-divided (Gigaword: valid -> test, train -> train/valid)
# --------------------------------------------------------------------------------------------
def _giga_like(tmp_path: Path, n_train: int = 400) -> Path:
    rows = [{"id": f"g{i}", "source": f"source {i}", "reference": f"ref {i}", "split": "train"} for i in range(n_train)]
    rows += [{"id": f"v{i}", "source": f"source v{i}", "reference": f"ref v{i}", "split": "dev"} for i in range(30)]
    rows += [{"id": "n", "source": "no split", "reference": "r"}]
    return write_jsonl(tmp_path / "giga.jsonl", rows)


def test_splits_renamed_and_train_carved_by_the_stable_hash(tmp_path: Path) -> None:
    path = _giga_like(tmp_path)
    ratios = {"train": 0.9, "valid": 0.1, "test": 0.0}
    cfg = DataConfig(dataset="local", path=str(path), split_ratios=SplitRatios(**ratios),
                     options={"local": {"splits": {"validation": "test"}, "resplit": ["train"]}})
    stats = download(cfg, tmp_path / "raw")
    test_ids = pq.read_table(tmp_path / "raw/test.parquet").column("id").to_pylist()
    valid_ids = set(pq.read_table(tmp_path / "raw/valid.parquet").column("id").to_pylist())
    assert test_ids == [f"v{i}" for i in range(30)]  # every dev row, and only those, is the test set
    expected_valid = {f"g{i}" for i in range(400) if stable_split(f"g{i}", SplitRatios(**ratios)) == "valid"}
    expected_valid |= {"n"} if stable_split("n", SplitRatios(**ratios)) == "valid" else set()
    assert valid_ids == expected_valid and 20 <= len(valid_ids) <= 60  # ~10 % of train, by the id hash
    assert stats["counts"]["train"] + stats["counts"]["valid"] == 401
    assert stats["local"]["split_changes"] == {"train -> hash": 400, "valid -> test": 30}
    again = download(cfg, tmp_path / "raw2")
    assert again["counts"] == stats["counts"]  # the same carve on every run


def test_without_options_the_files_splits_stay(tmp_path: Path) -> None:
    stats = download(DataConfig(dataset="local", path=str(_giga_like(tmp_path))), tmp_path / "raw")
    assert (stats["counts"]["valid"], stats["counts"]["train"]) == (30 + (stable_split("n", SplitRatios()) == "valid"),
                                                                    400 + (stable_split("n", SplitRatios()) == "train"))
    assert stats["local"]["split_changes"] == {}


def test_a_gzip_corpus_past_the_local_options_limit_names_the_key(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"source": f"the cat number {i} sat on the mat", "reference": f"cat {i}"}) + "\n"
                   for i in range(20_000))
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(rows.encode()))  # ~1 MiB of text
    tight = DataConfig(dataset="local", path=str(tmp_path / "c.jsonl.gz"),
                       options={"local": {"max_gunzipped_gib": 0.5 / 1024}})
    with pytest.raises(SumpipeError, match=r"c\.jsonl\.gz: larger than 512 KiB once decompressed, the most a data "
                                           r"file may hold \(raise data\.options\.local\.max_gunzipped_gib"):
        download(tight, tmp_path / "raw")
    loose = DataConfig(dataset="local", path=str(tmp_path / "c.jsonl.gz"), options={"local": {"max_gunzipped_gib": 1}})
    assert sum(download(loose, tmp_path / "raw")["counts"].values()) == 20_000


@pytest.mark.parametrize(("options", "message"), [
    ({"splits": {"holdout": "test"}}, "data.options.local.splits.holdout: not a split name (known: dev, test, "),
    ({"splits": {"valid": "dev"}}, "data.options.local.splits.valid: expected one of"),
    ({"resplit": ["train", "train"]}, "data.options.local.resplit: lists a split twice"),
    ({"resplit": ["training"]}, "data.options.local.resplit[0]: expected one of"),
    ({"rename": {}}, "data.options.local.rename: unknown key"),
    ({"max_gunzipped_gib": 0}, "data.options.local.max_gunzipped_gib: must be in (0, 1024]"),
    ({"max_inflation": 0.5}, "data.options.local.max_inflation: must be in [1, 1100]"),
    ({"max_inflation": "lots"}, "data.options.local.max_inflation: expected"),
])
def test_bad_local_options_are_one_line_naming_the_key(tmp_path: Path, options: dict, message: str) -> None:
    cfg = DataConfig(dataset="local", path=str(tmp_path / "x.jsonl"), options={"local": options})
    with pytest.raises(ConfigError) as info:
        download(cfg, tmp_path / "raw")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert not (tmp_path / "raw").exists()


# --------------------------------------------------------------------------------------------
# Every file in ../shared/data loads as it is (skipped when the folder is absent)
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def whole_folder(shared_data: Path) -> tuple[list[dict], dict]:
    return load_local(shared_data)


@pytest.mark.shared
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


@pytest.mark.shared
def test_rouge_check_reads_as_is_but_is_not_a_corpus(shared_data: Path) -> None:
    path = shared_data / "rouge_check" / "xsum_test_outputs.jsonl.gz"
    records, repaired = read_records(path)
    assert len(records) == 11334 and repaired == 0
    assert set(records[0]["system_outputs"]) == {"lead", "ext-oracle", "ptgen", "convs2s", "topic-convs2s"}
    with pytest.raises(SumpipeError, match="no `source` field") as info:
        load_local(path)
    assert "\n" not in str(info.value)


@pytest.mark.shared
def test_duc_download_keeps_four_references(shared_data: Path, tmp_path: Path) -> None:
    stats = download(DataConfig(dataset="local", path=str(shared_data / "duc2003")), tmp_path)
    assert stats["counts"] == {"train": 0, "valid": 0, "test": 624}
    test = pq.read_table(tmp_path / "test.parquet")
    assert test.schema.names == ["id", "source", "reference", "references"]
    assert {len(refs) for refs in test.column("references").to_pylist()} == {4}


# --------------------------------------------------------------------------------------------
# Rows and decoded bytes bounded at the boundary, rows streamed
# --------------------------------------------------------------------------------------------
def _write_rows(path: Path, rows: list[dict]) -> None:
    frame = pd.DataFrame(rows)
    if path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    elif path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False)


@pytest.mark.parametrize("name", ["c.jsonl", "c.parquet", "c.csv"])
def test_a_corpus_past_the_row_limit_is_one_line_naming_the_file(tmp_path: Path, monkeypatch, name: str) -> None:
    import sumpipe.data.local as local

    monkeypatch.setattr(local, "data_rows_limit", lambda: 5)
    rows = [{"id": f"r{i}", "source": f"the cat {i} sat", "reference": "cat"} for i in range(6)]
    _write_rows(tmp_path / name, rows)
    with pytest.raises(SumpipeError, match=rf"{name.replace('.', '[.]')}: .*more than (the )?5"):
        local.load_local(tmp_path / name)
    _write_rows(tmp_path / f"ok{Path(name).suffix}", rows[:5])  # five rows fit
    assert len(local.load_local(tmp_path / f"ok{Path(name).suffix}")[0]) == 5


def test_a_parquet_string_repeated_past_the_byte_limit_is_refused_before_decoding(tmp_path: Path, monkeypatch) -> None:
    """One 10 KB string in 1,000 rows: dictionary-encoded, the file is small and its footer says little; the
    decoded size is summed from the dictionary before the rows become Python strings."""
    import pyarrow as pa

    import sumpipe.data.local as local

    monkeypatch.setattr(local, "data_bytes_limit", lambda: 1 << 20)
    pq.write_table(pa.table({"source": ["x" * 10_000] * 1000, "reference": ["x"] * 1000}), tmp_path / "c.parquet")
    assert (tmp_path / "c.parquet").stat().st_size < 100_000
    with pytest.raises(SumpipeError, match=r"c\.parquet: its text is larger than 1 MiB once decoded"):
        local.load_local(tmp_path / "c.parquet")


def test_only_the_row_fields_of_a_parquet_file_are_read(tmp_path: Path) -> None:
    """A wide extra column (embeddings, HTML) is never decoded: rows carry id, source, reference(s), split."""
    import pyarrow as pa

    from sumpipe.data.local import load_local

    pq.write_table(pa.table({"source": ["the cat sat", "a dog ran"], "reference": ["cat", "dog"],
                             "html": ["<p>" * 1000] * 2}), tmp_path / "c.parquet")
    rows, stats = load_local(tmp_path / "c.parquet")
    assert [r["source"] for r in rows] == ["the cat sat", "a dog ran"] and stats["rows"] == 2
