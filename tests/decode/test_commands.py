"""The `sumpipe decode` command (`sumpipe.decode.commands`) through the real entry point: its decoding
options, their one-line errors, the DVC stage mode (no INPUT), and the console entry point in a fresh process."""

from __future__ import annotations

import json
import os
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
    # a length budget for a model trained without length control, and one out of range
    assert_one_line_error(cli("decode", "--length", "75", "--unit", "bytes", "article.txt", cwd=workdir),
                          "was trained without length control")
    assert_one_line_error(cli("decode", "--length", "0", "article.txt", cwd=workdir), "--length: must be in [1, 1000]")
    assert_one_line_error(cli("decode", "--unit", "chars", "article.txt", cwd=workdir), "--unit: expected one of")
    assert_one_line_error(cli("decode", "--novel-bigram-penalty", "25", "article.txt", cwd=workdir),
                          "--novel-bigram-penalty: must be in [0, 20] (0 = off)")


def test_no_traceback_from_a_real_process(workdir) -> None:
    """The console entry point, in a fresh process: one line on stderr, exit 1."""
    proc = subprocess.run([sys.executable, "-m", "sumpipe.cli", "decode", "missing.txt"], cwd=workdir,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == "error: missing.txt: no such file\n"


def test_one_text_from_a_fresh_process_loads_no_slow_module(workdir, cli, repo_root) -> None:
    """`sumpipe decode --beam 4 FILE` is mostly start-up: what one text does not need stays unimported (nltk,
    whose package loads SciPy, pandas, scikit-learn and torch._dynamo: see test_summarizer.py), and torch loads
    through `sumpipe.device`, which freezes its objects for the garbage collector (tests/test_device.py)."""
    slow = ["nltk", "pandas", "scipy", "sklearn", "torch._dynamo"]
    code = ("import gc, sys, sumpipe.cli\nsys.argv = ['sumpipe', 'decode', '--beam', '4', 'article.txt']\n"
            "sumpipe.cli.main()\n"
            f"print([m for m in {slow!r} if m in sys.modules], gc.get_freeze_count() > 100_000, file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(repo_root / "src")}
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "[] True"
    assert done.stdout == cli("decode", "--beam", "4", "article.txt", cwd=workdir)[1] != ""


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


# --------------------------------------------------------------------------------------------
# A model's seeds as one summarizer (--ensemble, --train-seed 1,2, params.yaml `ensembles:`)
# --------------------------------------------------------------------------------------------
def test_ensemble_and_a_list_of_seeds_decode_the_seeds_as_one(workdir, cli, article) -> None:
    import sumpipe

    code, out, err = cli("decode", "-m", "M2", "--ensemble", "--tokens", "article.txt", cwd=workdir)
    listed = cli("decode", "-m", "M2", "--train-seed", "1,2", "--tokens", "article.txt", cwd=workdir)
    assert code == listed[0] == 0, err
    assert out == listed[1] and out.strip()
    assert out.strip() == sumpipe.load("M2", ensemble=True, project=workdir).summarize(article).tokenized
    assert err.startswith("note: model M2, an ensemble of 2 seeds (1, 2) (transformer, input first400) ")
    code, out, _ = cli("decode", "-m", "M2", "--ensemble", "--json", "article.txt", cwd=workdir)
    record = json.loads(out)
    assert (record["model"], record["seed"], record["seeds"]) == ("M2", None, [1, 2])


def test_ensemble_options_that_cannot_hold_are_one_line(workdir, cli, assert_one_line_error) -> None:
    assert_one_line_error(cli("decode", "-m", "M2", "--train-seed", "1,x", "article.txt", cwd=workdir),
                          "--train-seed '1,x': give a training seed or a comma list of them, e.g. 1,2")
    assert_one_line_error(cli("decode", "-m", "M2", "--train-seed", "2,2", "article.txt", cwd=workdir),
                          "--train-seed '2,2': lists a seed twice")
    assert_one_line_error(cli("decode", "-m", "M2", "--train-seed", "1,5", "article.txt", cwd=workdir),
                          "--train-seed 5: models/M2 has no such seed (trained: 1, 2)")
    assert_one_line_error(cli("decode", "-m", "M2", "--ensemble", "--train-seed", "2", "article.txt", cwd=workdir),
                          "an ensemble of one seed is that seed")
    assert_one_line_error(cli("decode", "-m", "M2", "--ensemble", cwd=workdir),
                          "--ensemble and a list of --train-seed apply to an INPUT file")


def test_seeds_that_do_not_fit_together_are_one_line_naming_the_folders(tmp_path, cli, make_model_dir, article,
                                                                         assert_one_line_error) -> None:
    from sumpipe.config import Budget

    make_model_dir(tmp_path / "models" / "M3" / "seed-1", training_seed=1)
    make_model_dir(tmp_path / "models" / "M3" / "seed-2", selection=Budget("first", 200), training_seed=2)
    (tmp_path / "a.txt").write_text(article)
    assert_one_line_error(cli("decode", "-m", "M3", "--ensemble", "a.txt", cwd=tmp_path),
                          "models/M3/seed-1 and models/M3/seed-2: different input selections (first400, first200)")


def test_stage_mode_decodes_an_ensemble_of_params_yaml(cli, tmp_path, repo_root, make_model_dir,
                                                       assert_one_line_error) -> None:
    import pandas as pd
    import yaml

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["ensembles"] = {"M1-ens": {"model": "M1", "seeds": [1, 2]}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    for seed in (1, 2):
        make_model_dir(tmp_path / "models" / "M1" / f"seed-{seed}", seed=seed, training_seed=seed)
    (tmp_path / "data" / "extracted" / "first400").mkdir(parents=True)
    pd.DataFrame({"id": ["a", "b", "c"], "source": ["the cat sat on the mat .", "", "police said the man ran ."],
                  "reference": ["cat", "none", "man"]}).to_parquet(tmp_path / "data/extracted/first400/test.parquet")
    code, out, err = cli("decode", "--model", "M1-ens", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith("decode M1-ens (ensemble of M1 seeds 1, 2): 3 summaries -> predictions/M1-ens/test.parquet")
    frame = pd.read_parquet(tmp_path / "predictions/M1-ens/test.parquet")
    assert list(frame.columns) == ["id", "prediction", "reference"] and frame["id"].tolist() == ["a", "b", "c"]
    assert frame["prediction"][1] == "" and frame["prediction"][0] and frame["prediction"][2]
    assert sorted(p.name for p in (tmp_path / "predictions/M1-ens").iterdir()) == ["test.parquet"]  # one output
    assert json.loads((tmp_path / "timings/decode/M1-ens.json").read_text())["documents"] == 3
    assert_one_line_error(cli("decode", "--model", "M1-ens", "--train-seed", "1", cwd=tmp_path),
                          "--train-seed: M1-ens is an ensemble (ensembles.M1-ens)")
    code, out, _ = cli("decode", cwd=tmp_path)  # every trained run, then every ensemble whose seeds are trained
    assert code == 0 and [line.split(":")[0] for line in out.splitlines()] == [
        "decode M1/seed-1", "decode M1/seed-2", "decode M1-ens (ensemble of M1 seeds 1, 2)"]


def test_project_answers_from_another_folder_as_the_api_does(workdir, cli, tmp_path, article,
                                                             assert_one_line_error) -> None:
    (tmp_path / "a.txt").write_text(article)
    assert_one_line_error(cli("decode", "a.txt", cwd=tmp_path), "no trained models in models/")
    code, out, err = cli("decode", "--json", "--project", str(workdir), "a.txt", cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out)["model"] == "M1"                  # the project's models/, its best-known default
    code, out, err = cli("decode", "--json", "--project", str(workdir), "-m", "M2", "a.txt", cwd=tmp_path)
    assert (json.loads(out)["model"], json.loads(out)["seed"]) == ("M2", 2)
    import sumpipe

    same = sumpipe.load("M2", project=workdir).summarize(article)
    assert json.loads(out)["tokens"] == same.tokens
    assert_one_line_error(cli("decode", "--project", str(tmp_path / "nowhere"), "a.txt", cwd=tmp_path),
                          "--project " + str(tmp_path / "nowhere") + ": no such folder")
    assert_one_line_error(cli("decode", "--project", str(workdir), cwd=tmp_path), "--project applies to an INPUT")


def test_project_reads_its_own_params_yaml(workdir, cli, tmp_path, article) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "models").symlink_to(workdir / "models")
    (project / "params.yaml").write_text("decode:\n  max_length: 2\n  min_length: 2\n")
    (tmp_path / "a.txt").write_text(article)
    code, out, err = cli("decode", "--tokens", "--project", str(project), "-m", "M1", "a.txt", cwd=tmp_path)
    assert code == 0, err
    assert len(out.split()) == 2                               # the project's decode.max_length, not the default


def test_predict_refuses_an_untrained_run_before_any_job_starts(tmp_path, cli, assert_one_line_error) -> None:
    import yaml

    (tmp_path / "params.yaml").write_text(yaml.safe_dump({
        "models": {"M1": {"family": "transformer"}}, "train": {"seeds": [1]},
        "runs": {"M1-1": {"model": "M1", "seed": 1}}}))
    assert_one_line_error(cli("predict", cwd=tmp_path),
                          "models/M1/seed-1: run M1-1 is not trained (`dvc repro train`, or `sumpipe train "
                          "--model M1 --seed 1`)")
    assert not (tmp_path / "predictions").exists()


def test_predict_with_nothing_to_predict_says_so(tmp_path, cli, assert_one_line_error) -> None:
    import yaml

    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"models": {}, "runs": {}, "ensembles": {},
                                                          "extractive": {"systems": []}}))
    assert_one_line_error(cli("predict", cwd=tmp_path),
                          "nothing to predict: extractive.systems, runs and ensembles are all empty")
