"""The whole pipeline through DVC, as a user runs it: `dvc repro` on a tiny configuration.

The repository's dvc.yaml and params.yaml are copied into a fresh git + DVC repository with small
overrides (the synthetic numerals corpus, a one-layer model, a few training steps), so every stage,
every foreach expansion and every path interpolation is exercised in about a minute.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sumpipe.config import expand_runs

pytestmark = pytest.mark.slow

MODELS = ["M1", "M2", "M2-20", "PG-cov", "BERT2S"]  # params.yaml's four, and a hybrid (its pairs and report rows)
TINY = {
    "data": {"dataset": "numerals", "options": {"numerals": {"size": 90, "max_length": 6, "max_number": 30}}},
    "preprocess": {"workers": 1},
    "vocab": {"size": 120},
    "extract": {"workers": 1},
    "model": {"d_model": 16, "d_ff": 32, "n_layers": 1, "n_heads": 2, "vocab_size": 100},
    "families": {"rnn": {"embedding_dim": 8, "hidden_dim": 8},
                 "bert2stage": {"max_source_tokens": 40, "max_summary_tokens": 12}},  # seed 003
    "models": {"PG-cov": {"arch": {"coverage_phase_steps": 2}, "train": {"max_steps": 3}},
               "M2-20": {"family": "transformer", "input": "ngram20", "rarity": True, "seeds": [1]}},
    # two seeds: a model per seed (trained side by side by the train stage), scored as a mean over them; a model
    # with seeds of its own (BERT2S in params.yaml, M2-20 here: one) keeps them (`runs` is made below)
    "train": {"max_steps": 3, "batch_size": 8, "checkpoint_every": 2, "log_every": 1, "device": "cpu",
              "seeds": [1, 2]},
    "decode": {"max_length": 6, "min_length": 1, "device": "cpu"},
    "evaluate": {"bootstrap_samples": 50},
    "crosseval": {"data": {"dataset": "numerals", "seed": 99,
                           "options": {"numerals": {"size": 20, "max_length": 6, "max_number": 30}}},
                  "max_examples": 8, "name": "numerals-99"},
    "report": {"n_samples": 1, "n_heatmaps": 1},
    "extractive": {"systems": ["lead", "textrank", "oracle"]},   # the foreach, cheaply
    # seed 003: subword + pretrain stages and the bert2stage family
    "subword": {"size": 60},
    "pretrain": {"encoder": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "max_positions": 64},
                 "max_tokens": 16, "train": {"max_steps": 3, "batch_size": 8, "checkpoint_every": 2, "log_every": 1,
                                             "device": "cpu"}},
}


def merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = merge(base.get(key, {}), value) if isinstance(value, dict) else value
    return out


def run(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "OMP_NUM_THREADS": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = Path(__file__).resolve().parents[1]
    work = tmp_path_factory.mktemp("pipeline")
    shutil.copytree(repo / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(repo / "dvc.yaml", work / "dvc.yaml")
    shutil.copy(repo / "constraints.txt", work / "constraints.txt")
    params = merge(yaml.safe_load((repo / "params.yaml").read_text()), TINY)
    params["runs"] = expand_runs(params["models"], params["train"]["seeds"])
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run(["git", "init", "-q"], work)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"], work)
    run([sys.executable, "-m", "dvc", "init", "-q"], work)
    run([sys.executable, "-m", "dvc", "config", "core.analytics", "false"], work)
    run([sys.executable, "-m", "dvc", "repro"], work)
    return work


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


def test_second_repro_is_a_no_op(pipeline: Path) -> None:
    out = run([sys.executable, "-m", "dvc", "repro"], pipeline)
    assert "Running stage" not in out


def test_decode_cli_uses_the_trained_models(pipeline: Path) -> None:
    text = pipeline / "input.txt"
    text.write_text("1 2 3 4\n")
    out = run(["sumpipe", "decode", "--beam", "4", str(text)], pipeline)
    assert out.strip() and "<unk>" not in out


def test_bert2s_writes_only_known_words_when_asked(pipeline: Path) -> None:
    # issue 54: the subword model keeps its training words (vocab.parquet) and `known_words` holds its drafts
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


def test_a_changed_model_retrains_its_runs_alone(pipeline: Path, tmp_path: Path) -> None:
    """One train stage trains every run (issue 44): after a change to one model, `dvc repro` runs it again, the
    changed model's run trains afresh and every other run finds its finished checkpoint (same bytes, no
    training); then only that model's decode stages follow."""
    work = tmp_path / "copy"
    shutil.copytree(pipeline, work, symlinks=True)
    weights = {p.relative_to(work): p.read_bytes() for p in (work / "models").rglob("model.safetensors")}
    params = yaml.safe_load((work / "params.yaml").read_text())
    params["models"]["M2-20"]["train"] = {"max_steps": 2}
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    out = run([sys.executable, "-m", "dvc", "repro", "train", "decode@M2-20-1", "decode@M1-1"], work)
    assert "Running stage 'train'" in out and "Running stage 'decode@M2-20-1'" in out
    assert "decode@M1-1" not in out.replace("Stage 'decode@M1-1' didn't change", "")
    for card in (work / "models").glob("*/seed-*/config.json"):  # a finished run resumes from its last step
        label = f"{card.parent.parent.name}/{card.parent.name}"
        resumed = json.loads((work / f"timings/train/{label}.json").read_text())["resumed_from_step"]
        assert resumed == (0 if label == "M2-20/seed-1" else json.loads(card.read_text())["training"]["steps"]), label
    after = {p.relative_to(work): p.read_bytes() for p in (work / "models").rglob("model.safetensors")}
    assert [str(k) for k in after if after[k] != weights[k]] == ["models/M2-20/seed-1/model.safetensors"]


def test_the_decoding_sweep_chooses_under_the_guards_on_the_trained_models(pipeline: Path) -> None:
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
def test_forced_rerun_from_scratch_leaves_dvc_lock_unchanged(pipeline: Path) -> None:
    # Every stage runs again and, without the resume checkpoints, every model trains afresh (a rerun that
    # resumes from a finished checkpoint writes the same card: train/test_stage.py). Weights are
    # bit-identical on the same CPU and no output holds a timing (they go to timings/), so every hash in
    # dvc.lock comes out the same.
    lock = (pipeline / "dvc.lock").read_text()
    shutil.rmtree(pipeline / "checkpoints")
    out = run([sys.executable, "-m", "dvc", "repro", "-f"], pipeline)
    assert "Running stage 'train'" in out and "Running stage 'decode@M1-2'" in out
    assert (pipeline / "dvc.lock").read_text() == lock
    assert json.loads((pipeline / "timings/train/M1/seed-2.json").read_text())["resumed_from_step"] == 0
    assert json.loads((pipeline / "timings/decode/M1/seed-2.json").read_text())["documents"] > 0
