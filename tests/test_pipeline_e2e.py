"""The whole pipeline through DVC, as a user runs it: `dvc repro` on a tiny configuration.

The repository's dvc.yaml and params.yaml are copied into a fresh git + DVC repository with small
overrides (the synthetic numerals corpus, a one-layer model, a few training steps: conftest's
`tiny_pipeline`), so every stage, every foreach expansion and every path interpolation is exercised in
about a minute.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

MODELS = ["M1", "M2", "M2-20", "PG-cov", "BERT2S"]  # params.yaml's four, and a hybrid (its pairs and report rows)
Run = Callable[[list[str], Path], str]  # `run(args, cwd)`: the stdout of a command that must succeed


@pytest.fixture(scope="module")
def pipeline(tiny_pipeline, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_pipeline.build(tmp_path_factory.mktemp("pipeline"))


@pytest.fixture(scope="module")
def run(tiny_pipeline) -> Run:
    return tiny_pipeline.run


def test_repro_produces_metrics_for_every_model_and_baseline(pipeline: Path) -> None:
    rouge = json.loads((pipeline / "metrics/rouge.json").read_text())
    assert set(MODELS) | {"lead3", "first40", "lead", "textrank", "oracle"} <= set(rouge)
    assert set(rouge) <= set(json.loads((pipeline / "metrics/abstractiveness.json").read_text()))
    for system in rouge.values():
        assert 0.0 <= system["rouge1"] <= 100.0
    for name in MODELS:
        seeds = (1, 2) if name in ("M1", "M2", "PG-cov") else (1,)  # one seed of BERT2S (params.yaml) and M2-20
        assert rouge[name]["n_seeds"] == len(seeds) and set(rouge[name].get("seeds", {"1": 0})) == set(map(str, seeds))
        for seed in seeds:
            assert (pipeline / "models" / name / f"seed-{seed}" / "model.safetensors").is_file()
            assert (pipeline / "predictions" / name / f"seed-{seed}" / "test.parquet").is_file()
    report = (pipeline / "reports/report.md").read_text()
    assert "Table 5.1" in report and "M2-20" in report and "oracle ‡" in report
    assert "| M2 | M1 | rarity-scaled attention |" in report and "| M2-20 | M2 | ngram20 selection" in report
    assert "Rare words" in report and json.loads((pipeline / "metrics/rare_words.json").read_text())
    assert json.loads((pipeline / "metrics/crosseval.json").read_text())


def test_second_repro_is_a_no_op(pipeline: Path, run: Run) -> None:
    out = run([sys.executable, "-m", "dvc", "repro"], pipeline)
    assert "Running stage" not in out


def test_decode_cli_uses_the_trained_models(pipeline: Path, run: Run) -> None:
    text = pipeline / "input.txt"
    text.write_text("1 2 3 4\n")
    out = run(["sumpipe", "decode", "--beam", "4", str(text)], pipeline)
    assert out.strip() and "<unk>" not in out


def test_bert2s_writes_only_known_words_when_asked(pipeline: Path) -> None:
    # the subword model keeps its training words (vocab.parquet) and `known_words` holds its drafts
    # to them and to the input's words
    import pandas as pd

    import sumpipe
    from sumpipe.models.bert2stage import PieceVocabulary

    trained = PieceVocabulary.from_table(pipeline / "models/BERT2S/seed-1/vocab.parquet").known_words
    assert trained == pd.read_parquet(pipeline / "data/vocab/words.parquet")["token"].tolist()  # the numerals' words
    s = sumpipe.load("BERT2S", project=pipeline)
    text = "1 2 3 4 12345 zorblax 7"
    summary = s.summarize(text, known_words=True, beam=4)
    assert summary.tokens and set(summary.tokens) <= set(trained) | set(s.prepare([text])[0].split())


def test_ensembles_are_systems_of_the_run(pipeline: Path) -> None:
    rouge = json.loads((pipeline / "metrics/rouge.json").read_text())
    for name in ("M1-ens", "M2-ens", "PG-cov-ens"):   # params.yaml's ensembles, of the 2 seeds here
        assert (pipeline / "predictions" / name / "test.parquet").is_file() and "rouge1" in rouge[name]
    reading = json.loads((pipeline / "metrics/read_quality.json").read_text())
    assert {"M1", "M1-ens", "lead3"} <= set(reading["systems"]) and "fragment_rate" in reading["references"]


def test_a_changed_model_retrains_its_runs_alone(pipeline: Path, tmp_path: Path, run: Run) -> None:
    """One train stage trains every run: after a change to one model, `dvc repro` runs it again, the
    changed model's run trains afresh and every other run finds its finished checkpoint (same bytes, no
    training); then the predict stage writes every summarizer again, and only that model's predictions change."""
    work = tmp_path / "copy"
    shutil.copytree(pipeline, work, symlinks=True)
    weights = {p.relative_to(work): p.read_bytes() for p in (work / "models").rglob("model.safetensors")}
    predictions = {p.relative_to(work): p.read_bytes() for p in (work / "predictions").rglob("*.parquet")}
    params = yaml.safe_load((work / "params.yaml").read_text())
    params["models"]["M2-20"]["train"] = {"max_steps": 2}
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    out = run([sys.executable, "-m", "dvc", "repro", "train", "predict"], work)
    assert "Running stage 'train'" in out and "Running stage 'predict'" in out
    for card in (work / "models").glob("*/seed-*/config.json"):  # a finished run resumes from its last step
        label = f"{card.parent.parent.name}/{card.parent.name}"
        resumed = json.loads((work / f"timings/train/{label}.json").read_text())["resumed_from_step"]
        assert resumed == (0 if label == "M2-20/seed-1" else json.loads(card.read_text())["training"]["steps"]), label
    after = {p.relative_to(work): p.read_bytes() for p in (work / "models").rglob("model.safetensors")}
    assert [str(k) for k in after if after[k] != weights[k]] == ["models/M2-20/seed-1/model.safetensors"]
    rewritten = {p.relative_to(work): p.read_bytes() for p in (work / "predictions").rglob("*.parquet")}
    assert rewritten.keys() == predictions.keys()
    assert {k.parts[1] for k in rewritten if rewritten[k] != predictions[k]} <= {"M2-20"}


def test_predictions_do_not_depend_on_the_jobs_beside_them(pipeline: Path, tmp_path: Path, run: Run) -> None:
    """The predict stage ran its summarizers side by side (one process each, sumpipe.decode.pool); one at a time,
    runs, an ensemble and an extractive system write the same bytes."""
    pool = json.loads((pipeline / "timings/pool/predict.json").read_text())
    assert pool["workers"] == min(2, pool["cores"]) and len(pool["jobs"]) == 14
    work = tmp_path / "copy"
    shutil.copytree(pipeline, work, symlinks=True)
    params = yaml.safe_load((work / "params.yaml").read_text())
    params["models"] = {"M1": {**params["models"]["M1"], "seeds": [2]}, "PG-cov": params["models"]["PG-cov"]}
    params["runs"] = {name: run for name, run in params["runs"].items() if name in ("M1-2", "PG-cov-1", "PG-cov-2")}
    params["ensembles"] = {"PG-cov-ens": params["ensembles"]["PG-cov-ens"]}
    params["extractive"]["systems"] = ["textrank"]
    (work / "some.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    before = {p.relative_to(work): p.read_bytes() for p in (work / "predictions").rglob("*.parquet")}
    out = run(["sumpipe", "predict", "--workers", "1", "--params", "some.yaml"], work)
    assert "predict: 5 summarizers in" in out and "(1 side by side)" in out
    after = {p.relative_to(work): p.read_bytes() for p in (work / "predictions").rglob("*.parquet")}
    rewritten = {k for k in after if (work / k).stat().st_mtime_ns > (pipeline / k).stat().st_mtime_ns}
    folders = [Path("predictions", name) for name in ("M1/seed-2", "PG-cov/seed-1", "PG-cov/seed-2", "PG-cov-ens",
                                                     "textrank")]
    assert {folder / "test.parquet" for folder in folders} <= rewritten
    assert {k.parent for k in rewritten} == set(folders)
    assert after == before


def test_the_decoding_sweep_chooses_under_the_guards_on_the_trained_models(pipeline: Path, run: Run) -> None:
    sweep = {"repo": ".", "models": ["M1", "BERT2S"], "ensembles": ["M1"], "split": "valid", "out": "sweep",
             "settings": {"min0": {"min_length": 0}, "min3": {"min_length": 3, "length_penalty": 2.0}}}
    (pipeline / "sweep.yaml").write_text(yaml.safe_dump(sweep))
    out = run(["sumpipe", "decoding", "--params", "sweep.yaml"], pipeline)
    results = json.loads((pipeline / "sweep/decoding.json").read_text())
    assert set(results["models"]) == {"M1", "BERT2S", "M1 ensemble"}
    assert len(results["models"]["M1"]["settings"]["min0"]["rouge1"]["seeds"]) == 2      # each seed of M1
    assert len(results["models"]["M1 ensemble"]["settings"]["min0"]["rouge1"]["seeds"]) == 1  # its seeds as one
    assert set(results["chosen"]) == {"M1", "BERT2S", "M1 ensemble", "all models"}
    assert {"fragment_rate", "sentences_mean"} <= set(results["references"])
    assert "decoding M1" in out and "| M1 ensemble | " in (pipeline / "sweep/decoding.md").read_text()


@pytest.mark.faults  # a second whole pipeline run (3-7 minutes on the shared 2-core machine): with the fault suite
def test_forced_rerun_from_scratch_leaves_dvc_lock_unchanged(pipeline: Path, run: Run) -> None:
    # Every stage runs again and, without the resume checkpoints, every model trains afresh (a rerun that
    # resumes from a finished checkpoint writes the same card: train/test_stage.py). Weights are
    # bit-identical on the same CPU and no output holds a timing (they go to timings/), so every hash in
    # dvc.lock comes out the same.
    lock = (pipeline / "dvc.lock").read_text()
    shutil.rmtree(pipeline / "checkpoints")
    out = run([sys.executable, "-m", "dvc", "repro", "-f"], pipeline)
    assert "Running stage 'train'" in out and "Running stage 'predict'" in out
    assert (pipeline / "dvc.lock").read_text() == lock
    assert json.loads((pipeline / "timings/train/M1/seed-2.json").read_text())["resumed_from_step"] == 0
    assert json.loads((pipeline / "timings/decode/M1/seed-2.json").read_text())["documents"] > 0
