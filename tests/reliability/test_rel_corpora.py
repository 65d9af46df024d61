"""Corpora for `data.dataset: local` through `sumpipe download`: a clear one-line error, or the right
number of examples (rows without a source or a reference, and repeated ids, are dropped). A gzip bomb
stops at the inflation limit (in the fault suite: `python -m pytest -m faults`)."""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.reliability.harness import check, run_inprocess

GOOD = [{"id": f"d{i}", "source": f"The cat number {i} sat on the mat. It was happy.", "reference": f"cat {i} sat"}
        for i in range(6)]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _parquet(rows) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue().to_pybytes()


# name -> (file name, bytes, expected: number of examples kept, or "error: <fragment>")
CASES = {
    "good JSONL": ("c.jsonl", _jsonl(GOOD), 6),
    "some empty sources": ("c.jsonl", _jsonl(GOOD + [{"id": "e", "source": "", "reference": "x y"}]), 6),
    "all sources empty": ("c.jsonl", _jsonl([{**r, "source": ""} for r in GOOD]),
                          "error: no examples with a source and a reference"),
    "null references": ("c.jsonl", _jsonl(GOOD + [{"id": "n", "source": "a b c", "reference": None}]), 6),
    "all references null": ("c.jsonl", _jsonl([{**r, "reference": None} for r in GOOD]),
                            "error: no examples with a source and a reference"),
    "1 MB source": ("c.jsonl", _jsonl(GOOD + [{"id": "big", "source": "The dog ran far. " * 62_000,
                                               "reference": "dog ran"}]), 7),
    "duplicated ids": ("c.jsonl", _jsonl(GOOD + GOOD[:2]), 6),
    "non-UTF-8 lines": ("c.jsonl", _jsonl(GOOD).replace(b"sat on", b"sat \xff\xfe on"), 6),
    "JSONL line not JSON": ("c.jsonl", _jsonl(GOOD[:2]) + b"{source: oops\n" + _jsonl(GOOD[2:]),
                            "error: c.jsonl:3: not valid JSON"),
    "JSONL line is a list": ("c.jsonl", _jsonl(GOOD[:2]) + b"[1, 2]\n", "error: c.jsonl:3: expected a JSON object"),
    "CSV without reference": ("c.csv", b"id,source,summary\n1,the cat sat,cat\n",
                              "error: no `reference` or `references` field"),
    "CSV good": ("c.csv", b"id,source,reference\n1,the cat sat on the mat,cat sat\n2,a dog ran,dog\n", 2),
    "empty file": ("c.jsonl", b"", "error: no examples with a source and a reference"),
    "truncated Parquet": ("c.parquet", _parquet(GOOD)[:200], "error: c.parquet: not valid Parquet"),
    "truncated .jsonl.gz": ("c.jsonl.gz", gzip.compress(_jsonl(GOOD))[:60], "error: c.jsonl.gz: cannot read"),
    "unsupported suffix": ("c.txt", b"hello\n", "error: c.txt: unsupported file type"),
    # numbers no stage can use, and a gzip of blank lines
    "a 5,000-digit number": ("c.jsonl", _jsonl(GOOD[:2]) + b'{"id": ' + b"9" * 5000 + b', "source": "a b c d"}\n',
                             "error: c.jsonl:3: key id: a number of 5,000 digits, too large to read (at most 308)"),
    "1e999 in a line": ("c.jsonl", _jsonl(GOOD[:2]) + b'{"id": "x", "score": 1e999, "source": "a b"}\n',
                        "error: c.jsonl:3: key score: the number 1e999 overflows (not a finite number)"),
    "NaN in a line": ("c.jsonl", _jsonl(GOOD[:2]) + b'{"id": "x", "score": [1, NaN], "source": "a b"}\n',
                      "error: c.jsonl:3: key score[1]: NaN is not a finite number"),
    "CSV references cell of a 5,000-digit number": (
        "c.csv", b'id,source,references\n1,the cat sat on the mat,"[' + b"9" * 5000 + b']"\n2,a dog ran,dog\n', 2),
    "gzip of blank lines": ("c.jsonl.gz", gzip.compress(b"\n" * (64 << 20), compresslevel=1),
                            "error: c.jsonl.gz:10001: 10,001 blank lines and 0 JSON objects so far: not a JSON Lines"),
    "references not a list": ("c.jsonl", _jsonl([{**r, "references": 5} for r in GOOD]),
                              "error: `references` must be a list of strings"),
}


def _params(path: str) -> str:
    return yaml.safe_dump({"data": {"dataset": "local", "path": path}, "preprocess": {"workers": 1}})


@pytest.mark.parametrize(("name", "content", "expected"), [pytest.param(*v, id=k) for k, v in CASES.items()])
def test_local_corpus(name, content, expected, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / name).write_bytes(content)
    (tmp_path / "params.yaml").write_text(_params(name))
    result = run_inprocess(["download"], tmp_path, monkeypatch, capsys)
    if isinstance(expected, int):
        check(result, "ok")
        counts = [int(n) for n in re.findall(r"(\d+) (?:train|valid|test)", result.out)]
        assert sum(counts) == expected, result.out
        total = sum(pq.read_metadata(tmp_path / "data/raw" / f"{s}.parquet").num_rows
                    for s in ("train", "valid", "test"))
        assert total == expected
    else:
        check(result, expected)
        assert not (tmp_path / "data/raw/train.parquet").exists(), "a failed download left an artifact"


def test_missing_path(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "params.yaml").write_text(_params("nowhere.jsonl"))
    check(run_inprocess(["download"], tmp_path, monkeypatch, capsys), "error: nowhere.jsonl: no such file or folder")


def _unreadable(path, monkeypatch) -> None:
    """Make folder `path` unlistable: chmod 000, or (as root, whom permissions do not stop) a scandir
    that fails on it with EACCES exactly as it would for anyone else."""
    if os.geteuid() != 0:
        path.chmod(0)  # the test restores it
        return
    real = os.scandir

    def scandir(target=".", *args):
        if os.path.abspath(target) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
        return real(target, *args)

    monkeypatch.setattr(os, "scandir", scandir)


def test_unreadable_entry_in_a_corpus_folder(tmp_path, monkeypatch, capsys) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "locked").mkdir(parents=True)
    (corpus / "a.jsonl").write_bytes(_jsonl(GOOD))
    (tmp_path / "params.yaml").write_text(_params("corpus"))
    _unreadable(corpus / "locked", monkeypatch)
    try:
        result = run_inprocess(["download"], tmp_path, monkeypatch, capsys)
    finally:
        (corpus / "locked").chmod(0o755)
    check(result, "error: ")
    assert "locked: cannot read this entry of data.path" in result.error_line, result.describe()


# --------------------------------------------------------------------------------------------
# A small gzip corpus that inflates to gigabytes: parsed for minutes, up to the size cap, before the
# inflation limit (sumpipe.inputs.GzipLimits) stopped it in seconds
# --------------------------------------------------------------------------------------------
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


@pytest.mark.faults
@pytest.mark.parametrize(("name", "write", "line", "gib"), [pytest.param(*v, id=k) for k, v in BOMBS.items()])
def test_a_gzip_bomb_stops_at_the_inflation_limit(name: str, write, line: bytes, gib: float, tmp_path: Path,
                                                  monkeypatch, capsys) -> None:
    write(tmp_path / name, line, gib)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"data": {"dataset": "local", "path": name}}))
    check(run_inprocess(["download"], tmp_path, monkeypatch, capsys, limit_s=60),
          f"error: {name}: inflates more than 100 times")
    assert (tmp_path / name).is_file()
    # the option raises it, and then the size cap (also an option) stops it
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"data": {"dataset": "local", "path": name, "options": {
        "local": {"max_inflation": 1100, "max_gunzipped_gib": 0.05}}}}))
    check(run_inprocess(["download"], tmp_path, monkeypatch, capsys, limit_s=60),
          f"error: {name}: larger than 51.2 MiB once decompressed, the most a data file may hold (raise "
          "data.options.local.max_gunzipped_gib if it is real)")
