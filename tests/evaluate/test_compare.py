"""`sumpipe compare A B`: two experiments' score files, compared over seeds and documents."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def scores(f1: np.ndarray, seeds: list[int] | None) -> pd.DataFrame:
    """A score file of `sumpipe evaluate`: f1 (k, n) per seed and example (or (1, n) without seeds)."""
    k, n = f1.shape
    frame = pd.DataFrame({"id": [f"d{i}" for i in range(n)] * k, "prediction": "x"})
    if seeds is not None:
        frame.insert(1, "seed", np.repeat(seeds, n))
    for t in TYPES:
        for field in ("precision", "recall", "fmeasure"):
            frame[f"{t}_{field}"] = f1.reshape(-1)
    return frame


def write_experiment(folder: Path, shift: float) -> Path:
    """M1 with three seeds (documents differ a lot, seeds little) and a deterministic lead3."""
    rng = np.random.default_rng(0)
    difficulty = rng.random(200)
    m1 = np.clip(difficulty * 0.5 + rng.normal(0.0, 0.005, size=(3, 200)) + shift, 0, 1)
    folder.mkdir(parents=True)
    scores(m1, [1, 2, 3]).to_parquet(folder / "M1.parquet")
    scores(difficulty[None, :] * 0.4, None).to_parquet(folder / "lead3.parquet")
    return folder


def test_a_real_gain_is_reported_and_an_unchanged_system_is_not(tmp_path: Path, cli) -> None:
    a = write_experiment(tmp_path / "a" / "scores", 0.0)
    b = write_experiment(tmp_path / "b" / "scores", 0.03)  # every M1 score 3 points higher; lead3 the same
    code, out, err = cli("compare", str(a), str(b), "-p", str(tmp_path / "none.yaml"))
    assert code == 0, err
    lines = out.splitlines()
    m1 = lines[lines.index("M1 (3/3 seeds, 200 documents)") + 1]
    assert m1.split()[:2] == ["rouge1", "A"] and "Δ +3.00 [" in m1 and m1.endswith("different")
    lead = lines[lines.index("lead3 (1/1 seeds, 200 documents)") + 1]
    assert "Δ +0.00 [+0.00, +0.00] p 1.000" in lead and lead.endswith("not shown different")


def test_a_project_folder_and_a_system_choice(tmp_path: Path, cli) -> None:
    a = write_experiment(tmp_path / "a" / "out" / "sc", 0.0)
    b = write_experiment(tmp_path / "b" / "sc", 0.0)
    (tmp_path / "a" / "params.yaml").write_text("paths: {scores: out/sc}\n")
    code, out, err = cli("compare", str(tmp_path / "a"), str(b), "--system", "M1", "--json",
                         "-p", str(tmp_path / "none.yaml"))
    assert code == 0, err
    import json

    rows = json.loads(out)
    assert [r["system"] for r in rows] == ["M1"] and rows[0]["rouge1"]["delta"] == 0.0
    assert rows[0]["a"]["n_seeds"] == 3 and "rouge1_sd" in rows[0]["a"]
    assert a.is_dir()


@pytest.mark.parametrize(("args", "message"), [
    (("nowhere-rev", "{b}"), "nowhere-rev: not a folder, a DVC experiment or a Git revision"),
    (("{b}", "{b}", "--system", "M9"), "M9: not scored in both"),
    (("{empty}", "{b}"), "holds no score files and no params.yaml"),
])
def test_bad_experiments_are_one_line_errors(tmp_path: Path, cli, args: tuple, message: str) -> None:
    b = write_experiment(tmp_path / "b", 0.0)
    (tmp_path / "empty").mkdir()
    filled = [a.format(b=b, empty=tmp_path / "empty") for a in args]
    code, out, err = cli("compare", *filled, "-p", str(tmp_path / "none.yaml"), cwd=tmp_path)
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.slow
def test_two_dvc_experiments_are_compared_from_the_cache(tmp_path: Path) -> None:
    # A DVC project whose "evaluate" writes scores shifted by a param: the committed run and an experiment
    # of it (`dvc exp run -n shifted`), compared by name without checking either out.
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def run(*cmd: str) -> str:
        return subprocess.run(cmd, cwd=tmp_path, env=env, check=True, capture_output=True, text=True).stdout

    source = Path(__file__).read_text()
    helpers = source[source.index("TYPES ="):source.index("def test_")]
    (tmp_path / "make.py").write_text("import sys\nfrom pathlib import Path\nimport numpy as np\nimport pandas as pd\n"
                                      + helpers + "import yaml\nshift = yaml.safe_load(open('params.yaml'))['shift']\n"
                                      "write_experiment(Path('scores'), shift)\n")
    (tmp_path / "params.yaml").write_text("shift: 0.0\n")
    (tmp_path / "dvc.yaml").write_text(f"stages:\n  evaluate:\n    cmd: {sys.executable} make.py\n    deps: [make.py]\n"
                                       "    params: [shift]\n    outs: [scores]\n")
    run("git", "init", "-q")
    run(sys.executable, "-m", "dvc", "init", "-q")
    run(sys.executable, "-m", "dvc", "repro", "-q")
    run("git", "add", "-A")
    run("git", "commit", "-qm", "base")
    run(sys.executable, "-m", "dvc", "exp", "run", "-q", "-n", "shifted", "-S", "shift=0.02")
    out = run(sys.executable, "-m", "sumpipe.cli", "compare", "HEAD", "shifted", "--system", "M1", "-p", "none.yaml")
    assert "A = HEAD, B = shifted" in out and "Δ +2.00 [" in out


LONG_SYSTEM = "PG-cov-ngram40-first-k1-copy-target-weight-6-length-control-bytes-75-ensemble-of-seeds-1-2-3-textrank"


def _widest_row(system: str) -> dict:
    r = {"delta": -100.0, "low": -100.0, "high": +100.0, "p_value": 1.0}  # the widest figures scores make
    side = {"n_seeds": 10, **{t: 100.0 for t in TYPES}, **{f"{t}_sd": 50.0 for t in TYPES}}
    return {"system": system, "a": side, "b": side, "n": 1_000_000, **{t: r for t in TYPES}}


@pytest.mark.parametrize("system", ["M1", LONG_SYSTEM, LONG_SYSTEM * 2])
@pytest.mark.parametrize("label", ["a", "/work/main/experiments/cnn/reports/scores-of-the-long-running-branch-" * 2])
def test_every_line_of_the_table_fits_120_columns(system: str, label: str) -> None:
    from sumpipe.evaluate.compare import WIDTH, render

    out = render([_widest_row(system)], label, "exp-0123abcd (" + label + ")", TYPES, 0.95)
    assert WIDTH == 120
    assert all(len(line) <= 120 for line in out.splitlines()), max(out.splitlines(), key=len)
    if len(system) < 100:
        assert system in out  # shortened only when it could not fit on a line of its own
    assert out.splitlines()[-1].startswith("  rougeLsum A 100.00 ± 50.00")


def test_the_table_of_the_cli_fits_120_columns(tmp_path: Path, cli) -> None:
    a = write_experiment(tmp_path / ("a" * 60), 0.0)
    b = write_experiment(tmp_path / ("b" * 60), 0.03)
    for folder in (a, b):
        (folder / "M1.parquet").rename(folder / f"{LONG_SYSTEM}.parquet")
    code, out, err = cli("compare", str(a), str(b), "-p", str(tmp_path / "none.yaml"))
    assert code == 0, err
    assert LONG_SYSTEM in out and all(len(line) <= 120 for line in out.splitlines()), out
