"""The fourth pass (issue 40): the classes an outside battery still broke, each built here from a real
hostile input.

1. a safetensors header nested thousands of levels deep (a RecursionError in json.loads);
2. a model card's strings on the terminal raw: a Unicode line separator forging an `error:` line, a
   training count that is no number (a ValueError traceback);
3. a small gzip corpus that inflates to gigabytes (minutes of parsing before the size cap);
4. a valid Parquet refused: dictionary-encoded text (pandas' `category`) was "expected text".

Each ends in one `error:` line or correct work. Fault suite: `python -m pytest -m faults`.
"""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from tests.reliability.harness import check, run_inprocess

pytestmark = pytest.mark.faults

ARTICLE = "Police said the man was arrested on Monday after a long chase through the city.\n"


@pytest.fixture
def case(tmp_path: Path) -> Path:
    root = tmp_path / "case"
    root.mkdir()
    (root / "article.txt").write_text(ARTICLE)
    (root / "params.yaml").write_text(yaml.safe_dump({"preprocess": {"workers": 1}}))
    return root


def _vouched(model: Path, edit_card=None) -> Path:
    """The model folder with its card's weights hash and SHA256SUMS rewritten to vouch for what is there
    (a hostile folder is self-consistent)."""
    from sumpipe.io.atomic import file_sha256
    from sumpipe.models.io import write_manifest

    card = json.loads((model / "config.json").read_text())
    card["weights_sha256"] = file_sha256(model / "model.safetensors")
    if edit_card is not None:
        edit_card(card)
    (model / "config.json").write_text(json.dumps(card))
    write_manifest(model)
    return model


# ============================================================================================
# 1. Deep nesting inside a safetensors header
# ============================================================================================
@pytest.mark.parametrize("header", [
    pytest.param(b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", id="lists 100,000 deep"),
    pytest.param(b'{"__metadata__": ' + b'{"a":' * 5_000 + b"1" + b"}" * 5_000 + b"}", id="mappings 5,000 deep"),
])
def test_a_deep_safetensors_header_is_one_line(header: bytes, case: Path, make_model_dir, monkeypatch,
                                                capsys) -> None:
    model = make_model_dir(case / "deep", seed=0)
    (model / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    _vouched(model)
    check(run_inprocess(["decode", "-m", "deep", "article.txt"], case, monkeypatch, capsys),
          "error: deep/model.safetensors: not a readable safetensors file (header nested deeper than 16 levels)")


# ============================================================================================
# 2. A model card's text on the terminal
# ============================================================================================
FORGERIES = {
    "a line separator": {"dataset": "pydoc\u2028error: forged"},
    "a paragraph separator and NEL": {"dataset": "pydoc\u2029error: forged\x85error: again"},
    "a newline and escape sequences": {"dataset": "pydoc\n\x1b[2Jerror: forged\x1b]0;title\x07"},
    "a model input with a newline": {"input": "first400\nerror: forged"},
    "a training count that is text": {"training": {"train_examples": "5\nerror: forged"}},
    "a training count that is a list": {"training": {"train_examples": [1, 2]}},
}


@pytest.mark.parametrize("changes", [pytest.param(v, id=k) for k, v in FORGERIES.items()])
def test_a_card_cannot_forge_a_line_or_end_in_a_traceback(changes: dict, case: Path, make_model_dir, monkeypatch,
                                                          capsys) -> None:
    model = make_model_dir(case / "esc", seed=0)
    _vouched(model, lambda card: card.update(changes))
    result = run_inprocess(["decode", "-m", "esc", "article.txt"], case, monkeypatch, capsys)
    check(result, "ok")
    note = result.err.strip()
    assert note.startswith("note: model esc ") and len(note.splitlines()) == 1, repr(note)
    for stream in (result.out, result.err):
        assert not any(c in stream for c in "\x1b\x07\x85\u2028\u2029"), repr(stream[-300:])
        assert not any(line.startswith("error: forged") for line in stream.splitlines()), repr(stream[-300:])


def test_a_corpus_file_name_is_escaped_in_the_download_notes(case: Path, monkeypatch, capsys) -> None:
    corpus = case / "corpus"
    corpus.mkdir()
    (corpus / "good.jsonl").write_text("".join(json.dumps({"source": f"the cat {i} sat.", "reference": f"cat {i}"})
                                               + "\n" for i in range(6)))
    (corpus / "x\u2028error: forged\x1b[2J.jsonl").write_text(json.dumps({"reference": "only"}) + "\n")
    (case / "params.yaml").write_text(yaml.safe_dump({"data": {"dataset": "local", "path": "corpus"}}))
    result = run_inprocess(["download"], case, monkeypatch, capsys)
    check(result, "ok")
    assert "note: local: skipped " in result.err and "\\u2028error: forged\\u001b[2J" in result.err
    assert not any(c in result.err for c in "\x1b\u2028")


# ============================================================================================
# 3. A small gzip corpus that inflates to gigabytes
# ============================================================================================
ROW = json.dumps({"source": "The cat sat on the mat. " * 20, "reference": "cat sat"}).encode() + b"\n"


def _members(path: Path, line: bytes, gib: float) -> None:
    """`gib` GiB of `line` as copies of one gzip member of 1 MiB: ~5 KB each, written in milliseconds."""
    member = gzip.compress(line * ((1 << 20) // len(line)), compresslevel=9)
    with path.open("wb") as f:
        for _ in range(int(gib * 1024)):
            f.write(member)


def _one_stream(path: Path, line: bytes, gib: float) -> None:
    """One gzip member, written a block at a time (the test holds 4 MiB, never the whole)."""
    block = line * ((4 << 20) // len(line))
    with gzip.open(path, "wb", compresslevel=1) as f:
        for _ in range(int(gib * 256)):
            f.write(block)


BOMBS = {
    "JSONL, 10 GiB in copies of one member": ("c.jsonl.gz", _members, ROW, 10),
    "JSONL, 0.5 GiB in one stream": ("c.jsonl.gz", _one_stream, ROW, 0.5),
    "CSV, 10 GiB in copies of one member": ("c.csv.gz", _members, b"a,the cat sat on the mat,cat\n", 10),
}


@pytest.mark.parametrize(("name", "write", "line", "gib"), [pytest.param(*v, id=k) for k, v in BOMBS.items()])
def test_a_gzip_bomb_stops_at_the_inflation_limit(name: str, write, line: bytes, gib: float, case: Path,
                                                  monkeypatch, capsys) -> None:
    write(case / name, line, gib)
    (case / "params.yaml").write_text(yaml.safe_dump({"data": {"dataset": "local", "path": name}}))
    check(run_inprocess(["download"], case, monkeypatch, capsys, limit_s=60),
          f"error: {name}: inflates more than 100 times")
    assert (case / name).is_file()
    # the option raises it, and then the size cap (also an option) stops it
    (case / "params.yaml").write_text(yaml.safe_dump({"data": {"dataset": "local", "path": name, "options": {
        "local": {"max_inflation": 1100, "max_gunzipped_gib": 0.05}}}}))
    check(run_inprocess(["download"], case, monkeypatch, capsys, limit_s=60),
          f"error: {name}: larger than 51.2 MiB once decompressed, the most a data file may hold (raise "
          "data.options.local.max_gunzipped_gib if it is real)")


# ============================================================================================
# 4. Dictionary-encoded and large text in Parquet
# ============================================================================================
SOURCES = ["the cat sat on the mat . the dog ate the bone .", "a bird flew over the house . police said the man ran ."]


def _frame(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"d{i}" for i in range(n)], "source": pd.Categorical(SOURCES * (n // 2)),
                         "reference": pd.Categorical(["the cat sat", "a bird flew"] * (n // 2))})


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


def test_a_raw_split_of_category_and_large_text_is_preprocessed(case: Path, monkeypatch, capsys) -> None:
    import pyarrow as pa

    raw = case / "data" / "raw"
    raw.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        table = pa.Table.from_pandas(_frame(), preserve_index=False)
        table = table.set_column(0, "id", table.column("id").cast(pa.large_string()))
        pq.write_table(table, raw / f"{split}.parquet")
    check(run_inprocess(["preprocess"], case, monkeypatch, capsys), "ok")
    processed = pq.read_table(case / "data" / "processed" / "train.parquet")
    assert processed.num_rows == 40 and not any(pa.types.is_dictionary(t) for t in processed.schema.types)
