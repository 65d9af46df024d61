"""The `sumpipe decode` command (`sumpipe.decode.commands`) through the real entry point: its decoding
options, their one-line errors, the DVC stage mode (no INPUT), and the console entry point in a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys


def test_greedy_and_sampling_options(workdir, cli) -> None:
    greedy = cli("decode", "--greedy", "article.txt", cwd=workdir)
    beam1 = cli("decode", "--beam", "1", "article.txt", cwd=workdir)
    assert greedy[0] == 0 and greedy[1] == beam1[1]
    sampled = [cli("decode", "--sample", "--top-k", "5", "--top-p", "0.9", "--seed", "7", "article.txt", cwd=workdir)[1]
               for _ in range(2)]
    assert sampled[0] == sampled[1] and sampled[0].strip()
    short = cli("decode", "--max-length", "3", "--min-length", "3", "article.txt", cwd=workdir)
    assert len(short[1].split()) == 3


def test_conflicting_and_bad_options(workdir, cli, assert_one_line_error) -> None:
    assert_one_line_error(cli("decode", "--greedy", "--sample", "article.txt", cwd=workdir), "exclude")
    assert_one_line_error(cli("decode", "--per-line", "--per-block", "article.txt", cwd=workdir), "exclude")
    assert_one_line_error(cli("decode", "--beam", "0", "article.txt", cwd=workdir), "--beam: must be >= 1")
    assert_one_line_error(cli("decode", "--top-p", "1.5", "--sample", "article.txt", cwd=workdir),
                          "--top-p: must be in (0, 1]")
    assert_one_line_error(cli("decode", "--beam", "2", cwd=workdir), "apply to an INPUT file")


def test_no_traceback_from_a_real_process(workdir) -> None:
    """The console entry point, in a fresh process: one line on stderr, exit 1."""
    proc = subprocess.run([sys.executable, "-m", "sumpipe.cli", "decode", "missing.txt"], cwd=workdir,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == "error: missing.txt: no such file\n"


def test_stage_mode_writes_predictions(cli, tmp_path, repo_root, make_model_dir, assert_one_line_error) -> None:
    import pandas as pd

    (tmp_path / "params.yaml").write_text((repo_root / "params.yaml").read_text())
    make_model_dir(tmp_path / "models" / "M1" / "seed-2", training_seed=2)  # params.yaml's seeds are 1, 2, 3
    (tmp_path / "data" / "extracted" / "first400").mkdir(parents=True)
    pd.DataFrame({"id": ["a", "b"], "source": ["the cat sat on the mat .", "police said the man ran ."],
                  "reference": ["cat", "man"]}).to_parquet(tmp_path / "data/extracted/first400/test.parquet")
    code, out, err = cli("decode", "--model", "M1", "--train-seed", "2", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith("decode M1/seed-2: 2 summaries -> predictions/M1/seed-2/test.parquet")
    assert pd.read_parquet(tmp_path / "predictions/M1/seed-2/test.parquet")["id"].tolist() == ["a", "b"]
    assert json.loads((tmp_path / "timings/decode/M1/seed-2.json").read_text())["documents"] == 2
    assert_one_line_error(cli("decode", "--model", "M7", cwd=tmp_path), "unknown model 'M7'")
    assert_one_line_error(cli("decode", "--model", "M1", "--train-seed", "9", cwd=tmp_path),
                          "--train-seed 9: not among M1's seeds (1, 2, 3)")
    for args in (("--model", "M1"), ()):  # every trained seed of M1; every trained model
        code, out, _ = cli("decode", *args, cwd=tmp_path)
        assert code == 0 and out.count("decode ") == 1 and out.startswith("decode M1/seed-2:")
