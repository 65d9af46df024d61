"""`sumpipe decode` through the real entry point (`sumpipe.cli.main`): summaries of raw text, and
every kind of bad input giving one line on stderr and exit status 1 — never a traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ARTICLE = ("Police said the man was arrested on Monday after a long chase through the city. "
           "A bird flew over the house. The dog ate the bone, and the cat sat on the mat.")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    """A folder without params.yaml (built-in defaults) holding models/M1 and models/M2."""
    root = tmp_path_factory.mktemp("work")
    make_model_dir(root / "models" / "M1", seed=0)
    make_model_dir(root / "models" / "M2", seed=1)
    (root / "article.txt").write_text(ARTICLE, encoding="utf-8")
    return root


def run(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        cwd: Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    from sumpipe.cli import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["sumpipe", "decode", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = 0
    threads = torch.get_num_threads()              # the command sets 1 thread for itself
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        torch.set_num_threads(threads)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(result: tuple[int, str, str], fragment: str) -> None:
    code, out, err = result
    assert code == 1
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert fragment in err
    assert "Traceback" not in err and out == ""


# --------------------------------------------------------------------------------------------
# Good input
# --------------------------------------------------------------------------------------------
def test_summarises_a_file(workdir, monkeypatch, capsys) -> None:
    code, out, err = run(["--beam", "4", "--model", "M1", "article.txt"], monkeypatch, capsys, workdir)
    assert code == 0, err
    words = out.split()
    assert 1 <= len(words) <= 10 and "<unk>" not in words


def test_stdin_json_lines_with_details(workdir, monkeypatch, capsys) -> None:
    data = f"{ARTICLE}\n\nzebra quixotic walrus police\n".encode()
    code, out, err = run(["--json", "--per-block", "-m", "M2", "-"], monkeypatch, capsys, workdir, stdin=data)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["document"] for r in records] == [1, 2]
    for r in records:
        assert r["model"] == "M2" and len(r["p_gen"]) == len(r["tokens"]) >= 1
        assert len(r["attention"]) == len(r["tokens"])
        assert all(len(row) == len(r["source_tokens"]) for row in r["attention"])
    assert records[1]["source_tokens"] == ["zebra", "quixotic", "walrus", "police"]


def test_greedy_and_sampling_options(workdir, monkeypatch, capsys) -> None:
    greedy = run(["--greedy", "article.txt"], monkeypatch, capsys, workdir)
    beam1 = run(["--beam", "1", "article.txt"], monkeypatch, capsys, workdir)
    assert greedy[0] == 0 and greedy[1] == beam1[1]
    sampled = [run(["--sample", "--top-k", "5", "--top-p", "0.9", "--seed", "7", "article.txt"],
                   monkeypatch, capsys, workdir)[1] for _ in range(2)]
    assert sampled[0] == sampled[1] and sampled[0].strip()
    short = run(["--max-length", "3", "--min-length", "3", "article.txt"], monkeypatch, capsys, workdir)
    assert len(short[1].split()) == 3


def test_per_line_keeps_line_order_and_flags_non_latin_lines(workdir, monkeypatch, capsys) -> None:
    data = "the cat sat on the mat .\nПривет мир\n\npolice said the man was arrested\n".encode()
    code, out, err = run(["--per-line", "-"], monkeypatch, capsys, workdir, stdin=data)
    assert code == 0
    lines = out.split("\n")[:-1]
    assert len(lines) == 3 and lines[0] and lines[1] == "" and lines[2]
    assert "document 2: no Latin-script text" in err


def test_default_model_is_the_best_by_rouge_l(workdir, monkeypatch, capsys) -> None:
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    (metrics / "rouge.json").write_text(json.dumps(
        {"M1": {"rougeL": 20.0}, "M2": {"rougeL": 21.5}, "lead3": {"rougeL": 30.0}}))
    try:
        code, out, _ = run(["--json", "article.txt"], monkeypatch, capsys, workdir)
        assert code == 0 and json.loads(out)["model"] == "M2"
    finally:
        (metrics / "rouge.json").unlink()
    code, out, _ = run(["--json", "article.txt"], monkeypatch, capsys, workdir)
    assert json.loads(out)["model"] == "M1"                        # fallback without metrics


def test_prints_readable_text_and_says_which_model_on_stderr(workdir, monkeypatch, capsys) -> None:
    code, readable_out, err = run(["-m", "M1", "article.txt"], monkeypatch, capsys, workdir)
    code_tokens, tokens_out, _ = run(["-m", "M1", "--tokens", "article.txt"], monkeypatch, capsys, workdir)
    assert code == code_tokens == 0
    from sumpipe.decode.readable import readable

    # the same summary: the tokenized form (lowercase, spaces around punctuation) made readable
    assert tokens_out == tokens_out.lower()
    assert readable_out.strip() == readable(tokens_out.strip(), ARTICLE) != tokens_out.strip()
    assert err == ("note: model M1 (transformer, input first400) trained on pydoc; "
                   "no test ROUGE yet (`dvc repro` writes metrics/rouge.json)\n")


def test_note_gives_the_model_s_test_rouge_beside_lead_3(workdir, monkeypatch, capsys) -> None:
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    (metrics / "rouge.json").write_text(json.dumps({"M1": {"rouge1": 25.256}, "lead3": {"rouge1": 21.4}}))
    try:
        code, _, err = run(["-m", "M1", "article.txt"], monkeypatch, capsys, workdir)
    finally:
        (metrics / "rouge.json").unlink()
    assert code == 0 and err.endswith("trained on pydoc; test ROUGE-1 25.26, Lead-3 21.40 (metrics/rouge.json)\n")


def test_invalid_utf8_is_a_one_line_error_naming_the_byte_offset(workdir, monkeypatch, capsys, tmp_path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("The caf\xe9 owner said the man was arrested.".encode("latin-1"))
    assert_one_line_error(run(["-m", "M1", str(bad)], monkeypatch, capsys, workdir),
                          f"{bad}: not UTF-8 text (byte 0xe9 at offset 7)")


def test_a_utf8_character_cut_by_the_size_cap_is_dropped_not_an_error() -> None:
    from sumpipe.decode.interactive import decode_text
    from sumpipe.errors import SumpipeError

    data = "caf\xe9 au lait".encode()[:4]  # "caf" + the first byte of the two-byte "\xe9"
    assert decode_text(data, "utf-8-sig", "x", truncated=True) == "caf"
    with pytest.raises(SumpipeError, match="^x: not UTF-8 text \\(byte 0xc3 at offset 3\\)"):
        decode_text(data, "utf-8-sig", "x")


def test_a_50_mb_file_is_cut_not_tokenised_in_full(workdir, monkeypatch, capsys, tmp_path) -> None:
    big = tmp_path / "big.txt"
    with big.open("w") as f:
        for _ in range(50 * 1024 * 1024 // len(ARTICLE) + 1):
            f.write(ARTICLE + "\n")
    code, out, err = run(["-m", "M1", str(big)], monkeypatch, capsys, workdir)
    assert code == 0, err
    assert out.strip()


# --------------------------------------------------------------------------------------------
# Bad input: one line, exit 1
# --------------------------------------------------------------------------------------------
def test_missing_file(workdir, monkeypatch, capsys) -> None:
    assert_one_line_error(run(["nope.txt"], monkeypatch, capsys, workdir), "nope.txt: no such file")


def test_directory(workdir, monkeypatch, capsys) -> None:
    assert_one_line_error(run(["models"], monkeypatch, capsys, workdir), "models: is a directory")


@pytest.mark.parametrize("content", [b"", b"  \n\t \n"])
def test_empty_or_whitespace_file(workdir, monkeypatch, capsys, tmp_path, content) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    assert_one_line_error(run([str(path)], monkeypatch, capsys, workdir), "is empty")


def test_empty_stdin(workdir, monkeypatch, capsys) -> None:
    assert_one_line_error(run(["-"], monkeypatch, capsys, workdir, stdin=b""), "stdin: is empty")


def test_binary_file(workdir, monkeypatch, capsys, tmp_path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 10)
    assert_one_line_error(run([str(path)], monkeypatch, capsys, workdir), "binary")


def test_utf16_with_a_byte_order_mark_is_decoded(workdir, monkeypatch, capsys, tmp_path) -> None:
    path = tmp_path / "utf16.txt"
    path.write_bytes(ARTICLE.encode("utf-16"))                    # BOM + UTF-16-LE, as Notepad saves it
    code, out, _ = run(["-m", "M1", str(path)], monkeypatch, capsys, workdir)
    plain = tmp_path / "utf8.txt"
    plain.write_text(ARTICLE, encoding="utf-8")
    assert code == 0 and out == run(["-m", "M1", str(plain)], monkeypatch, capsys, workdir)[1]


def test_utf16_without_a_byte_order_mark_counts_as_binary(workdir, monkeypatch, capsys, tmp_path) -> None:
    path = tmp_path / "utf16.txt"
    path.write_bytes(ARTICLE.encode("utf-16-le"))
    assert_one_line_error(run([str(path)], monkeypatch, capsys, workdir), "give UTF-8 text")


NON_LATIN = ["Привет, мир. Это статья о погоде.", "你好，世界。这是一篇文章。", "مرحبا بالعالم"]


@pytest.mark.parametrize("text", NON_LATIN)
def test_non_latin_script(workdir, monkeypatch, capsys, tmp_path, text) -> None:
    path = tmp_path / "foreign.txt"
    path.write_text(text, encoding="utf-8")
    assert_one_line_error(run(["-m", "M1", str(path)], monkeypatch, capsys, workdir), "no Latin-script text")


def test_unknown_model_lists_the_trained_ones(workdir, monkeypatch, capsys) -> None:
    result = run(["-m", "M9", "article.txt"], monkeypatch, capsys, workdir)
    assert_one_line_error(result, "unknown model 'M9'")
    assert "M1, M2" in result[2]


def test_no_trained_models(monkeypatch, capsys, tmp_path) -> None:
    (tmp_path / "a.txt").write_text(ARTICLE)
    assert_one_line_error(run(["a.txt"], monkeypatch, capsys, tmp_path), "no trained models")


def test_conflicting_and_bad_options(workdir, monkeypatch, capsys) -> None:
    assert_one_line_error(run(["--greedy", "--sample", "article.txt"], monkeypatch, capsys, workdir), "exclude")
    assert_one_line_error(run(["--per-line", "--per-block", "article.txt"], monkeypatch, capsys, workdir), "exclude")
    assert_one_line_error(run(["--beam", "0", "article.txt"], monkeypatch, capsys, workdir), "--beam: must be >= 1")
    assert_one_line_error(run(["--top-p", "1.5", "--sample", "article.txt"], monkeypatch, capsys, workdir), "--top-p: must be in (0, 1]")
    assert_one_line_error(run(["--beam", "2"], monkeypatch, capsys, workdir), "apply to an INPUT file")


def test_no_traceback_from_a_real_process(workdir) -> None:
    """The console entry point, in a fresh process: one line on stderr, exit 1."""
    proc = subprocess.run([sys.executable, "-m", "sumpipe.cli", "decode", "missing.txt"], cwd=workdir,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == "error: missing.txt: no such file\n"


def test_model_given_as_a_directory(workdir, monkeypatch, capsys) -> None:
    code, out, _ = run(["--json", "-m", str(workdir / "models" / "M2"), "article.txt"], monkeypatch, capsys, workdir)
    assert code == 0 and json.loads(out)["model"] == "M2"


def test_stage_mode_writes_predictions(monkeypatch, capsys, tmp_path, repo_root, make_model_dir) -> None:
    import pandas as pd

    (tmp_path / "params.yaml").write_text((repo_root / "params.yaml").read_text())
    make_model_dir(tmp_path / "models" / "M1")
    (tmp_path / "data" / "extracted" / "first400").mkdir(parents=True)
    pd.DataFrame({"id": ["a", "b"], "source": ["the cat sat on the mat .", "police said the man ran ."],
                  "reference": ["cat", "man"]}).to_parquet(tmp_path / "data/extracted/first400/test.parquet")
    code, out, err = run(["--model", "M1"], monkeypatch, capsys, tmp_path)
    assert code == 0, err
    assert out.startswith("decode M1: 2 summaries -> predictions/M1/test.parquet")
    assert pd.read_parquet(tmp_path / "predictions/M1/test.parquet")["id"].tolist() == ["a", "b"]
    assert_one_line_error(run(["--model", "M7"], monkeypatch, capsys, tmp_path), "unknown model 'M7'")
    code, out, _ = run([], monkeypatch, capsys, tmp_path)                 # every trained model
    assert code == 0 and out.count("decode ") == 1
