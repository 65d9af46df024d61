"""Artifacts damaged between stages: the next stage names the file in one line (and writes nothing),
never a traceback and never a silently wrong result.

The `pipeline` fixture (harness) runs the stages in-process on a tiny numerals corpus; each case
copies that folder, damages one artifact and runs the next stage. Artifacts whose text is encoded
another valid way (dictionary-encoded, large strings) are read as text (in the fault suite:
`python -m pytest -m faults`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.reliability.harness import check, run_inprocess


def _truncate(path: str):
    def mutate(root: Path) -> None:
        p = root / path
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    return mutate


def _delete(path: str):
    return lambda root: (root / path).unlink()


def _rewrite_predictions(change):
    def mutate(root: Path) -> None:
        p = root / "predictions/M1/seed-1/test.parquet"
        pd.read_parquet(p).pipe(change).to_parquet(p)
    return mutate


def _rewrite(path: str, change):
    """Rewrite the Parquet file at `path` through pandas with `change` applied."""
    def mutate(root: Path) -> None:
        p = root / path
        pd.read_parquet(p).pipe(change).to_parquet(p)
    return mutate


def _set_column(path: str, column: str, values):
    def change(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(**{column: values(frame)})
    return _rewrite(path, change)


def _null_first(column: str):
    return lambda f: [None] + f[column].tolist()[1:]


def _corpus_without_idf(root: Path) -> None:
    (root / "data/extractive").mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"term": ["", "cat"], "entropy": [0.0, 1.0]}).to_parquet(root / "data/extractive/corpus.parquet")


TRAIN = "data/processed/train.parquet"
EXTRACTED_TEST = "data/extracted/first400/test.parquet"
EXTRACTED_TRAIN = "data/extracted/first400/train.parquet"
VOCAB = "data/vocab/vocab.parquet"

# case -> (damage, command, expected, the artifact the command must not have written)
CASES = {
    "truncated processed train.parquet before vocab": (
        _truncate("data/processed/train.parquet"), ["vocab"],
        "error: data/processed/train.parquet: cannot read", "data/vocab/vocab.parquet"),
    # by design a stage works on the splits present (a corpus may lack one) and says which it did
    "deleted processed test.parquet before extract": (
        _delete("data/processed/test.parquet"), ["extract"], "ok", None),
    "truncated words.parquet before extract": (
        _truncate("data/vocab/words.parquet"), ["extract"], "error: data/vocab/words.parquet", None),
    "truncated ngrams.parquet before extract": (
        _truncate("data/vocab/ngrams.parquet"), ["extract"], "error: data/vocab/ngrams.parquet", None),
    "deleted config.json before decode": (
        _delete("models/M1/seed-1/config.json"), ["decode", "--model", "M1"],
        "error: models/M1/seed-1: incomplete model directory, config.json is missing", None),
    "truncated extracted selection before decode": (
        _truncate("data/extracted/first400/test.parquet"), ["decode", "--model", "M1"],
        "error: data/extracted/first400/test.parquet: cannot read", None),
    "predictions of the wrong length before evaluate": (
        _rewrite_predictions(lambda f: f.iloc[:-2]), ["evaluate"], "error: predictions/M1/seed-1/test.parquet", None),
    "predictions with extra rows before evaluate": (
        _rewrite_predictions(lambda f: pd.concat([f, f.iloc[:1]])), ["evaluate"],
        "error: predictions/M1/seed-1/test.parquet", None),
    "predictions without the prediction column": (
        _rewrite_predictions(lambda f: f.drop(columns=["prediction"])), ["evaluate"],
        "error: predictions/M1/seed-1/test.parquet", None),
    "truncated predictions before evaluate": (
        _truncate("predictions/M1/seed-1/test.parquet"), ["evaluate"], "error: predictions/M1/seed-1/test.parquet",
        None),
    # --- Parquet read through each stage's contract (sumpipe.schemas)
    "NULL source in processed train before vocab": (
        _set_column(TRAIN, "source", _null_first("source")), ["vocab"],
        f"error: {TRAIN}: column 'source' has 1 NULL value(s)", "data/vocab/vocab.parquet"),
    "no reference column before vocab": (
        _rewrite(TRAIN, lambda f: f.drop(columns=["reference"])), ["vocab"],
        f"error: {TRAIN}: column 'reference' is missing", "data/vocab/vocab.parquet"),
    "int sources before extract": (
        _set_column(TRAIN, "source", lambda f: list(range(len(f)))), ["extract"],
        f"error: {TRAIN}: column 'source' is int64, expected text", None),
    "no id column before extract": (
        _rewrite(TRAIN, lambda f: f.drop(columns=["id"])), ["extract"], f"error: {TRAIN}: column 'id' is missing",
        None),
    "NULL id in extracted test before decode": (
        _set_column(EXTRACTED_TEST, "id", _null_first("id")), ["decode", "--model", "M1"],
        f"error: {EXTRACTED_TEST}: column 'id' has 1 NULL", None),
    "int sources in extracted test before decode": (
        _set_column(EXTRACTED_TEST, "source", lambda f: list(range(len(f)))), ["decode", "--model", "M1"],
        f"error: {EXTRACTED_TEST}: column 'source' is int64, expected text", None),
    "NULL reference in extracted train before train": (
        _set_column(EXTRACTED_TRAIN, "reference", _null_first("reference")), ["train", "--model", "M1"],
        f"error: {EXTRACTED_TRAIN}: column 'reference' has 1 NULL", None),
    "NULL token in data/vocab before train": (
        _set_column(VOCAB, "token", _null_first("token")), ["train", "--model", "M1"],
        f"error: {VOCAB}: column 'token' has 1 NULL", None),
    "duplicate token in data/vocab before train": (
        _set_column(VOCAB, "token", lambda f: f["token"].tolist()[:5] + [f["token"][4]] + f["token"].tolist()[6:]),
        ["train", "--model", "M1"], f"error: {VOCAB}: vocabulary rows 4 and 5: token", None),
    "corpus.parquet without idf before extractive": (
        _corpus_without_idf, ["extractive", "--system", "tfidf"],
        "error: data/extractive/corpus.parquet: column 'idf' is missing", None),
    "corrupt metrics/rouge.json before decode INPUT": (
        lambda root: (root / "metrics").mkdir(exist_ok=True) or (root / "metrics/rouge.json").write_text("{oops"),
        ["decode", "input.txt"], "ok", None),
    # metrics/rouge.json only ranks the models for `decode INPUT`: one it cannot read is no reason to refuse
    # (a 5,000-digit number in it was a ValueError traceback from sumpipe.inputs)
    "a 5,000-digit number in metrics/rouge.json before decode INPUT": (
        lambda root: (root / "metrics").mkdir(exist_ok=True)
        or (root / "metrics/rouge.json").write_text('{"M1": {"rougeL": ' + "9" * 5000 + "}}"),
        ["decode", "input.txt"], "ok", None),
}


@pytest.mark.parametrize(("damage", "command", "expected", "not_written"),
                         [pytest.param(*v, id=k) for k, v in CASES.items()])
def test_damaged_artifact(damage, command, expected, not_written, pipeline, tmp_path, monkeypatch, capsys) -> None:
    root = tmp_path / "repo"
    shutil.copytree(pipeline, root, symlinks=True)
    if not_written:
        (root / not_written).unlink()
    damage(root)
    result = run_inprocess(command, root, monkeypatch, capsys)
    check(result, expected)
    if not_written:
        assert not (root / not_written).exists()


# --------------------------------------------------------------------------------------------
# Text in another valid encoding: dictionary-encoded (pandas' `category`) and large strings were refused
# as "expected text"; the contracts (sumpipe.schemas) accept them and the readers hand on plain text
# --------------------------------------------------------------------------------------------
SOURCES = ["the cat sat on the mat . the dog ate the bone .", "a bird flew over the house . police said the man ran ."]


def _frame(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"d{i}" for i in range(n)], "source": pd.Categorical(SOURCES * (n // 2)),
                         "reference": pd.Categorical(["the cat sat", "a bird flew"] * (n // 2))})


@pytest.fixture
def case(tmp_path: Path) -> Path:
    root = tmp_path / "case"
    root.mkdir()
    (root / "params.yaml").write_text(yaml.safe_dump({"preprocess": {"workers": 1}}))
    return root


@pytest.mark.faults
def test_a_processed_split_of_category_text_is_read_as_text(case: Path, monkeypatch, capsys) -> None:
    processed = case / "data" / "processed"
    processed.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        _frame().to_parquet(processed / f"{split}.parquet")
    assert str(pq.read_schema(processed / "train.parquet").field("source").type).startswith("dictionary<values=string")
    for stage in (["vocab"], ["extract"], ["extractive-fit"]):
        check(run_inprocess(stage, case, monkeypatch, capsys), "ok")
    extracted = pq.read_table(case / "data" / "extracted" / "first200" / "test.parquet")
    assert str(extracted.schema.field("source").type) == "string"
    assert extracted.column("source").to_pylist()[:2] == SOURCES


@pytest.mark.faults
def test_a_raw_split_of_category_and_large_text_is_preprocessed(case: Path, monkeypatch, capsys) -> None:
    raw = case / "data" / "raw"
    raw.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        table = pa.Table.from_pandas(_frame(), preserve_index=False)
        table = table.set_column(0, "id", table.column("id").cast(pa.large_string()))
        pq.write_table(table, raw / f"{split}.parquet")
    check(run_inprocess(["preprocess"], case, monkeypatch, capsys), "ok")
    processed = pq.read_table(case / "data" / "processed" / "train.parquet")
    assert processed.num_rows == 40 and not any(pa.types.is_dictionary(t) for t in processed.schema.types)
