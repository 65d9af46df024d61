"""The real-text experiments as a user runs them: `dvc repro experiments/<name>/dvc.yaml`.

experiments/gigaword (headlines: Gigaword pairs -> their 1,036 test pairs and DUC 2003 under the DUC
protocol) and experiments/cnn (news: the thesis's six models, Lead-3 and the extractive systems on CNN
stories) reuse the project's stages with their own dvc.yaml and params.yaml. Their params validate as
they are; a tiny version of each pipeline, the experiment's own dvc.yaml with its params shrunk and its
corpus generated in the same shape as ../shared/data's files, runs through DVC in about a minute; and
the Gigaword experiment's data section, on the real files (skipped when ../shared/data is absent), gives
the splits docs/realtext.md states. The stages' deps are checked with the main pipeline's by
tests/test_dvc_stages.py.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from sumpipe.config import expand_runs, load_params

REPO = Path(__file__).resolve().parents[1]
EXPERIMENTS = REPO / "experiments"

# A small shared vocabulary: generated texts that share words, so that every stage has something to count.
WORDS = ("minister officials police company market talks government leaders court report prices rebels "
         "election army bank oil storm team president city state network strike deal rates water fire "
         "plan union trade health school border flight prison museum bridge festival").split()
VERBS = "says said met reached rose fell won lost opened closed warned agreed attacked hit cut plans".split()
FILLERS = "the a of in on to for with after before over at by and".split()


def _sentence(rng: random.Random, words: int) -> str:
    out = []
    for i in range(words):
        pool = FILLERS if i % 3 == 1 else (VERBS if i % 3 == 2 else WORDS)
        out.append(rng.choice(pool))
    return " ".join(out)


def _write_jsonl_gz(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    return path


def gigaword_like(folder: Path, n_train: int = 150, n_valid: int = 20) -> Path:
    """Pairs in the shape of gigaword_pairs.jsonl.gz: a lowercased, tokenized first sentence (with its
    "#" digit masks and `<unk>`) and a headline of its words; split train / valid."""
    rng = random.Random(29)
    rows = []
    for i in range(n_train + n_valid):
        source = _sentence(rng, rng.randint(12, 30)).split()
        source[rng.randrange(len(source))] = rng.choice(["#", "<unk>", "##.#"])
        headline = [w for w in source if w not in FILLERS][: rng.randint(4, 9)]
        rows.append({"id": f"giga-{i:05d}", "source": " ".join(source) + " .", "reference": " ".join(headline),
                     "split": "train" if i < n_train else "valid"})
    return _write_jsonl_gz(folder / "gigaword_pairs.jsonl.gz", rows)


def duc_like(folder: Path, n: int = 12) -> Path:
    """Documents in the shape of duc2003_task1.jsonl.gz: one tokenized sentence, four cased references."""
    rng = random.Random(2003)
    rows = []
    for i in range(n):
        source = _sentence(rng, rng.randint(15, 30))
        refs = [" ".join(w.capitalize() if k == 0 else w for k, w in enumerate(_sentence(rng, 8).split())) + "."
                for _ in range(4)]
        rows.append({"id": f"duc2003-t1-{i:03d}", "split": "test", "source": source + " .", "references": refs})
    return _write_jsonl_gz(folder / "duc2003_task1.jsonl.gz", rows)


def cnn_like(folder: Path, splits: dict[str, int] | None = None) -> Path:
    """Stories in the shape of cnn_stories.jsonl.gz: a "(CNN) --" byline, one paragraph a line, about 450
    tokens (so the 200- and 400-token budgets bind), highlights one a line; each story names someone no
    other story does, in a paragraph and a highlight (a rare word)."""
    rng = random.Random(6952)
    rows = []
    for split, n in (splits or {"train": 40, "valid": 8, "test": 8}).items():
        for _ in range(n):
            name = "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4))
            paragraphs = [_sentence(rng, rng.randint(8, 14)).capitalize() + "." for _ in range(40)]
            paragraphs[0] = f"LONDON, England (CNN) -- {name.capitalize()} " + paragraphs[0]
            highlights = [_sentence(rng, rng.randint(6, 10)) for _ in range(3)]
            highlights[0] = f"{name} {highlights[0]}"
            rows.append({"id": f"cnn-{len(rows)}", "split": split, "source": "\n".join(paragraphs),
                         "reference": "\n".join(highlights)})
    return _write_jsonl_gz(folder / "cnn_stories.jsonl.gz", rows)


def merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = merge(base.get(key, {}), value) if isinstance(value, dict) else value
    return out


TINY_MODEL = {"d_model": 16, "d_ff": 32, "n_layers": 1, "n_heads": 2, "vocab_size": 100}
TINY_TRAIN = {"max_steps": 3, "batch_size": 8, "checkpoint_every": 2, "log_every": 1, "device": "cpu",
              "seeds": [1, 2]}
TINY = {
    "gigaword": {
        "data": {"split_ratios": {"train": 0.8, "valid": 0.2, "test": 0.0}},
        "preprocess": {"workers": 1}, "vocab": {"size": 200}, "extract": {"workers": 1},
        "model": TINY_MODEL,
        "families": {"rnn": {"embedding_dim": 8, "hidden_dim": 8, "vocab_size": 100},
                     "bert2stage": {"max_source_tokens": 40, "max_summary_tokens": 12}},
        "models": {"PG-cov": {"arch": {"coverage_phase_steps": 2}, "train": {"max_steps": 3}},
                   "BERT2S": {"train": {"max_steps": 3}}},
        "train": TINY_TRAIN,
        "decode": {"max_length": 8, "device": "cpu"},
        "evaluate": {"bootstrap_samples": 50},
        "crosseval": {"decode": {"min_length": 6}},
        "report": {"n_samples": 1, "n_heatmaps": 1},
        "subword": {"size": 60},
        "pretrain": {"encoder": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "max_positions": 64},
                     "max_tokens": 16, "train": {"max_steps": 3, "batch_size": 8, "checkpoint_every": 2,
                                                 "log_every": 1, "device": "cpu"}},
    },
    "cnn": {
        "preprocess": {"workers": 1}, "vocab": {"size": 300}, "extract": {"workers": 1},
        "model": TINY_MODEL,
        "families": {"rnn": {"embedding_dim": 8, "hidden_dim": 8, "vocab_size": 100}},
        "models": {**{name: {"train": {"max_steps": 3}} for name in ("M1", "M2")},
                   # two seeds for its ensemble (below), one for the others: eight runs
                   "PG-cov": {"arch": {"coverage_phase_steps": 2}, "train": {"max_steps": 3}, "seeds": [1, 2]}},
        "train": {**TINY_TRAIN, "seeds": [1]},
        "decode": {"max_length": 8, "device": "cpu"},
        "evaluate": {"bootstrap_samples": 50},
        "extractive": {"systems": ["lead", "textrank", "oracle"], "keyword_topics": 3},
        "report": {"n_samples": 1, "n_heatmaps": 1},
    },
}
# whole sections that replace the experiment's (TINY merges into them): an ensemble needs 2 seeds
TINY_REPLACE = {"cnn": {"ensembles": {"PG-cov-ens": {"model": "PG-cov"}}}}


def experiment_pipeline(work: Path, name: str, data: dict, run: Callable[[list[str], Path], str]) -> Path:
    """A git + DVC repository at `work` with the project's code and experiments/<name>/ (its dvc.yaml as
    it is, its params shrunk by TINY and `data` (the generated corpora's paths)), a DVC project of its own
    with its committed .dvc/config (the repository's cache); `dvc repro` run in its folder, as
    docs/realtext.md says. `run`: conftest's `tiny_pipeline.run`."""
    shutil.copytree(REPO / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    folder = work / "experiments" / name
    folder.mkdir(parents=True)
    for file in ("dvc.yaml", ".gitignore"):
        shutil.copy(EXPERIMENTS / name / file, folder / file)
    params = merge(merge(yaml.safe_load((EXPERIMENTS / name / "params.yaml").read_text()), TINY[name]), data)
    params.update(TINY_REPLACE.get(name, {}))
    if "runs" in params:  # the pool's runs follow the shrunk seeds (experiments/cnn trains through the pool)
        params["runs"] = expand_runs(params["models"], params["train"]["seeds"])
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run(["git", "init", "-q"], work)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"], work)
    run([sys.executable, "-m", "dvc", "init", "-q"], work)
    run([sys.executable, "-m", "dvc", "config", "core.analytics", "false"], work)
    run([sys.executable, "-m", "dvc", "init", "-q", "--subdir"], folder)
    shutil.copy(EXPERIMENTS / name / ".dvc" / "config", folder / ".dvc" / "config")
    run([sys.executable, "-m", "dvc", "repro"], folder)
    return folder


# --------------------------------------------------------------------------------------------
# The experiments' params as committed
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gigaword", "cnn"])
def test_the_experiment_params_validate(name: str) -> None:
    params = load_params(EXPERIMENTS / name / "params.yaml")  # Params.check: names, budgets, seeds, overrides
    assert params.data.dataset == "local" and params.data.path.startswith("../../../shared/data/")
    # fixed thread counts (not null, all cores): the weights then do not depend on the machine
    assert params.train.threads in (1, 2) and params.decode.threads == 1 and len(params.train.run_seeds) >= 2
    # 3 seeds of every model, trained side by side through the pool (dvc.yaml's one train stage)
    assert params.train.run_seeds == [1, 2, 3] and len(params.runs) == 3 * len(params.models)
    stages = yaml.safe_load((EXPERIMENTS / name / "dvc.yaml").read_text())["stages"]
    assert stages["train"]["cmd"] == "sumpipe train" and stages["predict"]["cmd"] == "sumpipe predict"
    if name == "gigaword":
        assert list(params.models) == ["M1", "M2", "PG-cov", "BERT2S"]
        assert params.data.options["local"] == {"splits": {"valid": "test"}, "resplit": ["train"]}
        assert params.evaluate.prefix_bytes == [75] and params.evaluate.lead_sentences == 1
        protocol = params.crosseval.protocol
        assert (protocol.max_bytes, protocol.references, protocol.measure) == (75, "average", "recall")
        # DUC is decoded as the Gigaword test pairs, under the read-quality guards: no forced length,
        # but a planned one: the models trained with length control are given DUC's 75 bytes, on
        # the half of DUC 2003 not used to choose it
        duc = params.crosseval.decode_config(params.decode)
        assert (duc.target_length, duc.length_unit, duc.min_length) == (75, "bytes", params.decode.min_length)
        assert params.decode.target_length is None and params.decode.block_ngram_repeat == 1
        assert params.model["length_control"] == "bytes" == params.families["rnn"]["length_control"]
        assert params.crosseval.split == "test" and params.crosseval.data.split_ratios.valid == 0.5
        assert list(params.ensembles) == ["M1-ens", "M2-ens", "PG-cov-ens"] == params.crosseval.ensembles  # DUC too
    else:
        assert list(params.models) == ["M1", "M2", "M1-200", "M2-200", "M1-400", "M2-400", "PG-cov"]
        assert params.train.sentence_ends   # the highlights' sentence ends are in the targets
        assert [f"{b.method}{b.tokens}" for b in params.extract.budgets] == ["first400", "ngram200", "ngram400"]
        assert [b.leading_sentences for b in params.extract.budgets[1:]] == [5, 10]  # the thesis's first_k
        assert params.evaluate.lead_sentences == 3 and "oracle" in params.extractive.systems
        assert list(params.ensembles) == ["M1-ens", "M2-ens", "PG-cov-ens"]   # the best system may be one


@pytest.mark.parametrize("name", ["gigaword", "cnn"])
def test_the_decoding_choice_validates_against_the_experiment(name: str) -> None:
    """decoding.yaml (the validation-split comparison that chose `decode:`) names the experiment's own models,
    reads no test split, and every setting is a valid `decode:` over the experiment's params."""
    from sumpipe.config import load_config
    from sumpipe.studies.decoding import DecodingSweep, setting_configs

    sweep = load_config(EXPERIMENTS / name / "decoding.yaml", DecodingSweep)
    params = load_params(EXPERIMENTS / name / sweep.repo / "params.yaml")
    assert sweep.split == "valid" and sweep.models == list(params.models)
    configs = setting_configs(sweep, params.decode)
    assert configs["base"].block_adjacent_repeat is False and configs["adjacent"].block_adjacent_repeat is True
    assert params.decode.block_adjacent_repeat is True  # what the comparison kept (docs/realtext.md)


@pytest.mark.shared
def test_the_gigaword_data_section_on_the_real_files(shared_data: Path, tmp_path: Path) -> None:
    """The 1,036 pairs of the files' valid split are the test set; train is carved into 24,151 / 1,005."""
    import dataclasses

    from sumpipe.data.download import download

    data = load_params(EXPERIMENTS / "gigaword" / "params.yaml").data
    data = dataclasses.replace(data, path=str(shared_data / "gigaword" / "gigaword_pairs.jsonl.gz"))
    stats = download(data, tmp_path / "raw")
    assert stats["counts"] == {"train": 24151, "valid": 1005, "test": 1036}
    assert stats["local"]["split_changes"] == {"train -> hash": 25156, "valid -> test": 1036}


# --------------------------------------------------------------------------------------------
# The tiny pipelines
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gigaword(tiny_pipeline, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("gigaword")
    corpora = work.parent / f"{work.name}-data"
    data = {"data": {"path": str(gigaword_like(corpora))},
            "crosseval": {"data": {"path": str(duc_like(corpora))}}}
    return experiment_pipeline(work, "gigaword", data, tiny_pipeline.run)


@pytest.fixture(scope="module")
def cnn(tiny_pipeline, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("cnn")
    data = {"data": {"path": str(cnn_like(work.parent / f"{work.name}-data"))}}
    return experiment_pipeline(work, "cnn", data, tiny_pipeline.run)


@pytest.mark.faults  # a whole tiny pipeline through DVC (minutes on 2 cores): the long suite, CI runs it
def test_tiny_gigaword_pipeline(gigaword: Path) -> None:
    from sumpipe.io.atomic import read_parquet

    stats = json.loads((gigaword / "data/raw/stats.json").read_text())
    assert stats["counts"]["test"] == 20 and stats["counts"]["train"] + stats["counts"]["valid"] == 150
    rouge = json.loads((gigaword / "metrics/rouge.json").read_text())
    ensembles = {"M1-ens", "M2-ens", "PG-cov-ens"}  # each model's seeds decoded as one (by the predict stage)
    assert set(rouge) == {"M1", "M2", "PG-cov", "BERT2S", *ensembles, "lead1", "prefix75", "first50", "first8"}
    assert all(rouge[m]["n_seeds"] == 2 and rouge[m]["n"] == 20 for m in ("M1", "M2", "PG-cov", "BERT2S"))
    assert all(rouge[m]["n"] == 20 for m in ensembles)
    prefix = read_parquet(gigaword / "scores/prefix75.parquet")
    assert max(len(p.encode()) for p in prefix["prediction"]) == 75  # every generated input is longer
    summary = json.loads((gigaword / "scores/summary.json").read_text())
    assert {(c["a"], c["b"]) for c in summary["comparisons"]} >= {("M2", "M1"), ("M1", "lead1"), ("M1", "prefix75")}

    cross = json.loads((gigaword / "metrics/crosseval.json").read_text())  # DUC: 75 bytes, recall over 4 refs
    assert set(cross) == {f"{s} (duc2003)" for s in ("M1", "M2", "PG-cov", "BERT2S", *ensembles, "lead1", "prefix75")}
    assert all({"rouge1_recall", "rouge1_recall_low", "rouge1", "rouge1_low", "rare_word_recall"} <= set(v)
               for v in cross.values())
    decoded = read_parquet(gigaword / "crosseval/M1.parquet")
    # the test half of the 12 documents (the other half, by the stable id hash, chose the settings)
    documents = decoded["id"].nunique()
    assert 0 < documents < 12 and len(decoded) == 2 * documents and decoded["references"].map(len).eq(4).all()
    assert decoded["prediction"].map(lambda p: len(p.encode())).max() <= 75
    assert decoded["prediction"].map(lambda p: len(p.split())).min() >= 6 or \
        decoded["prediction"].map(lambda p: len(p.encode())).min() >= 70  # min_length 6, unless cut by the bytes
    report = (gigaword / "reports/report.md").read_text()
    assert "| Model | R-1 recall |" in report and "| M2 (duc2003) | M1 (duc2003) | rarity-scaled attention |" in report
    assert "every summary cut to its first 75 bytes" in report


@pytest.mark.faults  # a whole tiny pipeline through DVC (minutes on 2 cores): the long suite, CI runs it
def test_tiny_gigaword_pipeline_reruns_nothing(gigaword: Path, tiny_pipeline) -> None:
    run = tiny_pipeline.run
    out = run([sys.executable, "-m", "dvc", "repro"], gigaword)
    assert "Running stage" not in out
    # its outputs went to the repository's cache, and the repository's own commands do not see its stages
    assert any((gigaword.parents[1] / ".dvc" / "cache").rglob("*.dir"))
    assert "experiments" not in run([sys.executable, "-m", "dvc", "status"], gigaword.parents[1])


@pytest.mark.faults  # a whole tiny pipeline through DVC (minutes on 2 cores): the long suite, CI runs it
def test_tiny_cnn_pipeline(cnn: Path) -> None:
    rouge = json.loads((cnn / "metrics/rouge.json").read_text())
    models = ["M1", "M2", "M1-200", "M2-200", "M1-400", "M2-400", "PG-cov"]
    assert set(rouge) == {*models, "PG-cov-ens", "lead3", "lead", "textrank", "oracle", "first400"}
    assert all(rouge[m]["n_seeds"] == (2 if m == "PG-cov" else 1) and rouge[m]["n"] == 8 for m in models)
    assert rouge["PG-cov-ens"]["n"] == 8   # its two seeds decoded as one (by the predict stage)
    headline = json.loads((cnn / "metrics/headline.json").read_text())   # its only DVC metrics
    assert list(headline) == ["R-1"] and list(headline["R-1"]) == models
    figures = json.loads((cnn / "metrics/figures.json").read_text())
    assert list(figures["R-1"]) == [*models, "lead3"]   # the models' figures: an ensemble trains nothing
    assert set(figures["valid_loss"]) == {*(f"{m}-1" for m in models), "PG-cov-2"}
    summary = json.loads((cnn / "scores/summary.json").read_text())
    pairs = {(c["a"], c["b"], c["what"]) for c in summary["comparisons"]}
    assert {("M2", "M1", "rarity-scaled attention"), ("M1-200", "M1", "ngram200 selection against first400"),
            ("M2-400", "M2", "ngram400 selection against first400"), ("M1-400", "lead3", "against lead3")} <= pairs
    assert "oracle" in summary["reads_reference"] and summary["best_extractive"] != "oracle"
    rare = json.loads((cnn / "metrics/rare_words.json").read_text())
    assert set(rare) >= set(models) and rare["lead3"]["n"] == 8 and rare["lead3"]["recall"] == 100.0  # the name
    coverage = json.loads((cnn / "metrics/coverage.json").read_text())["test"]
    assert coverage["first400"]["binds"] == coverage["ngram200"]["binds"] == 1.0  # every story is longer
    assert coverage["first400"]["differs"] == 0.0 and coverage["ngram400"]["differs"] > 0.0
    report = (cnn / "reports/report.md").read_text()
    assert "| M1-400 | M1 | ngram400 selection against first400 |" in report and "| differs |" in report
    assert "oracle ‡" in report and "Reference topics" in report
