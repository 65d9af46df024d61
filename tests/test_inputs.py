"""Files given by the user, read within bounds: regular files only (never blocking on a FIFO), a byte cap
checked as the data streams in (a gzip bomb stops at the cap), and deep JSON as one line."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pytest

from sumpipe.errors import SumpipeError
from sumpipe.inputs import (
    GzipLimits,
    data_bytes_limit,
    data_rows_limit,
    iter_lines,
    loads_json,
    open_regular,
    present_but_not_a_file,
    read_capped,
    size_text,
)


def test_a_named_pipe_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    start = time.perf_counter()
    with pytest.raises(SumpipeError, match=r"in\.fifo: is a named pipe \(FIFO\), not a regular file; use -$"):
        open_regular(fifo, "; use -")
    assert time.perf_counter() - start < 5  # a plain open() would block here until a writer came


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_a_device_is_refused_before_a_byte_is_read(path: str, kind: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    with pytest.raises(SumpipeError, match=f"{path}: is {kind}, not a regular file"):
        read_capped(path, 100)


def test_missing_folder_and_unreadable_files_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(SumpipeError, match=r"nope\.txt: no such file$"):
        read_capped(tmp_path / "nope.txt", 10)
    with pytest.raises(SumpipeError, match="is a directory, not a regular file"):
        read_capped(tmp_path, 10)


def test_a_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_bytes(b"text")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert read_capped(tmp_path / "link.txt", 10) == b"text"


def test_the_cap_names_the_file_what_it_is_and_the_limit(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_bytes(b"x" * 2049)
    assert read_capped(tmp_path / "p.yaml", 2049) == b"x" * 2049
    with pytest.raises(SumpipeError, match=r"p\.yaml: larger than 2 KiB, the most a params file may hold"):
        read_capped(tmp_path / "p.yaml", 2048, "a params file")


def test_a_gzip_bomb_stops_at_the_cap_without_inflating_the_rest(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        zeros = b"\0" * (1 << 20)
        for _ in range(256):  # 256 MiB of zeros in ~250 KB
            f.write(zeros)
    assert bomb.stat().st_size < 1 << 20
    start = time.perf_counter()
    with pytest.raises(SumpipeError, match=r"bomb\.jsonl\.gz: larger than 4 MiB once decompressed"):
        read_capped(bomb, 4 << 20)
    assert time.perf_counter() - start < 5  # it stopped near 4 MiB, not after inflating 256


def _members(path: Path, block: bytes, n: int) -> Path:
    """A gzip file of `n` copies of one compressed member: `n * len(block)` bytes decompressed, built in
    milliseconds and a few KB a member (concatenated members are one valid gzip stream)."""
    member = gzip.compress(block, compresslevel=9)
    with path.open("wb") as f:
        for _ in range(n):
            f.write(member)
    return path


def test_an_inflation_past_the_ratio_is_a_bomb_named_with_its_option(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("sumpipe.inputs.INFLATION_FLOOR", 1 << 20)
    bomb = _members(tmp_path / "c.jsonl.gz", b'{"source": "the cat"}\n' * 50_000, 200)  # 1.1 MB each, ~1000x
    limits = GzipLimits(option="data.options.local")
    with pytest.raises(SumpipeError, match=r"c\.jsonl\.gz: inflates more than 100 times \(.* of gzip so far\): a "
                                           r"gzip bomb, not text \(raise data\.options\.local\.max_inflation if it is "
                                           r"real\)"):
        read_capped(bomb, 1 << 40, gzip=limits)
    # under the floor, a small repetitive file reads whole, whatever its ratio
    small = _members(tmp_path / "s.jsonl.gz", b"ab" * 1000, 3)
    assert read_capped(small, 1 << 20, gzip=limits) == b"ab" * 3000
    # a ratio cap raised past the file's: it reads
    assert len(read_capped(bomb, 1 << 40, gzip=GzipLimits(max_ratio=1100))) == 200 * 22 * 50_000


def test_the_decompressed_size_cap_names_its_option(tmp_path: Path) -> None:
    text = _members(tmp_path / "t.csv.gz", os.urandom(1 << 16).hex().encode(), 40)  # 5 MiB, ratio ~2: like text
    limits = GzipLimits(max_gib=4 / 1024, option="data.options.local")
    with pytest.raises(SumpipeError, match=r"t\.csv\.gz: larger than 4 MiB once decompressed, the most a data file "
                                           r"may hold \(raise data\.options\.local\.max_gunzipped_gib if it is real\)"):
        read_capped(text, 1 << 40, "a data file", gzip=limits)
    assert len(read_capped(text, 1 << 40, gzip=GzipLimits(max_gib=1))) == 40 << 17


@pytest.mark.parametrize(("data", "expected"), [
    (gzip.compress(b"ab") + gzip.compress(b"cd"), b"abcd"),           # concatenated members, as `cat a.gz b.gz`
    (gzip.compress(b"ab") + b"\0" * 8 + gzip.compress(b"cd"), b"abcd"),  # zero padding between them
    (b"", b""),                                                        # an empty file
])
def test_gzip_members_are_read_as_the_gzip_module_reads_them(tmp_path: Path, data: bytes, expected: bytes) -> None:
    (tmp_path / "a.txt.gz").write_bytes(data)
    assert read_capped(tmp_path / "a.txt.gz", 100) == expected == gzip.decompress(data)


@pytest.mark.parametrize(("data", "message"), [
    (b"plain text", r"cannot read \(Not a gzipped file \(b'pl'\)\)"),
    (gzip.compress(b"hello world" * 50)[:30], r"cannot read \(the gzip data ends early"),
])
def test_broken_gzip_is_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    (tmp_path / "c.jsonl.gz").write_bytes(data)
    with pytest.raises(SumpipeError, match=message) as info:
        read_capped(tmp_path / "c.jsonl.gz", 1 << 20)
    assert "\n" not in str(info.value)


def test_lines_stream_with_their_ends(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_bytes(b"a\nb\r\n\nc")
    assert list(iter_lines(tmp_path / "t.txt", 100)) == [b"a\n", b"b\r\n", b"\n", b"c"]


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1" + "}" * 50_000])
def test_json_nested_past_the_recursion_limit_is_one_line(text: str) -> None:
    with pytest.raises(SumpipeError, match=r"card\.json: JSON nested too deeply"):
        loads_json(text, "card.json")


def test_invalid_json_names_the_place() -> None:
    with pytest.raises(SumpipeError, match=r"m\.json:3: not valid JSON \(Expecting value at line 1 column 1\)"):
        loads_json("nope", "m.json:3")
    assert loads_json('{"a": [1]}', "x") == {"a": [1]}


def test_present_but_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert present_but_not_a_file(tmp_path / "f") is None
    assert present_but_not_a_file(tmp_path / "absent") is None
    assert present_but_not_a_file(tmp_path / "d") == "a directory"
    assert present_but_not_a_file(tmp_path / "dangling") == "a broken symbolic link"


def test_the_limits_follow_the_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import sumpipe.inputs as inputs

    monkeypatch.setattr(inputs, "memory_budget_bytes", lambda: 4 << 30)
    assert data_bytes_limit() == 512 << 20 and data_rows_limit() == 2 << 20
    monkeypatch.setattr(inputs, "memory_budget_bytes", lambda: 128 << 20)  # a tiny budget keeps a floor
    assert data_bytes_limit() == 64 << 20 and data_rows_limit() == 100_000


def test_size_text() -> None:
    assert [size_text(n) for n in (300, 2048, 512 << 20, 3 << 29, 1 << 40)] == [
        "300 bytes", "2 KiB", "512 MiB", "1.5 GiB", "1024 GiB"]
