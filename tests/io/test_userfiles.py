"""The readers of files given by the user (JSON Lines, Parquet, .gz): bounded, and one line naming the
file (and line) when a file is not what it claims."""

import gzip
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import write_parquet
from sumpipe.io.userfiles import read_bytes, read_jsonl, read_user_table


def test_read_jsonl_skips_blank_lines_and_counts_repaired_ones(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n\n  \n{"b": "\xff"}\n'))
    assert read_jsonl(path) == ([{"a": 1}, {"b": "\ufffd"}], 1)


@pytest.mark.parametrize(("name", "data", "message"), [
    ("j.jsonl", b'{"a": 1}\n{broken\n', r"j\.jsonl:2: not valid JSON \(Expecting property name"),
    ("l.jsonl", b'{"a": 1}\n\n[1, 2]\n', r"l\.jsonl:3: expected a JSON object, got list$"),
    ("g.jsonl.gz", b'{"a": 1}\n', r"g\.jsonl\.gz: cannot read \(Not a gzipped file"),
])
def test_read_jsonl_errors_name_the_file_and_line(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(SumpipeError, match=message) as info:
        read_jsonl(tmp_path / name)
    assert "\n" not in str(info.value)


def test_read_bytes_gunzips_by_name_and_user_parquet_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "t.txt.GZ").write_bytes(gzip.compress(b"inside"))
    assert read_bytes(tmp_path / "t.txt.GZ") == b"inside"
    write_parquet(pd.DataFrame({"x": ["a"]}), tmp_path / "ok.parquet")
    assert read_user_table(tmp_path / "ok.parquet").to_pylist() == [{"x": "a"}]
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(SumpipeError, match=r"bad\.parquet: not valid Parquet \(") as info:
        read_user_table(tmp_path / "bad.parquet")
    assert "\n" not in str(info.value)
