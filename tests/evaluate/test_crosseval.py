"""The crosseval stage: `crosseval.data` checked by the data-set registry before any model is loaded, read
with the download stage's splits and cap, and decoded where `decode.device` says, like the decode stage ; then
the whole stage on a tiny model and a corpus with three references an example."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from sumpipe.config import (
    Budget,
    CrossEvalConfig,
    DataConfig,
    DecodeConfig,
    EvaluateConfig,
    PathsConfig,
)
from sumpipe.data.download import cap_examples, download, load_examples
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.evaluate.crosseval import decode_corpus, load_corpus, run_crosseval
from sumpipe.io.atomic import read_parquet


def _paths(tmp_path: Path, counts: dict[str, int] | None = None) -> PathsConfig:
    """Every folder under tmp_path; the vocab stage's training word counts where `counts` is given."""
    import pandas as pd

    from sumpipe.io.atomic import write_parquet

    paths = PathsConfig(**{name: str(tmp_path / name) for name in PathsConfig.__dataclass_fields__})
    if counts is not None:
        write_parquet(pd.DataFrame({"id": range(len(counts)), "token": list(counts), "count": list(counts.values())}),
                      Path(paths.vocab) / "words.parquet")
    return paths


def _counts(eval_corpus) -> dict[str, int]:
    """Every source word seen 10 times in training, but "mars" and "probe" once: the Mars story's rare words."""
    return {w: 10 for text in eval_corpus.sources for w in text.split()} | {"mars": 1, "probe": 1}


@pytest.mark.parametrize(("data", "message"), [
    (DataConfig(dataset="imdb"), "crosseval.data.dataset: unknown dataset 'imdb' (known: cnn_dailymail, "),
    (DataConfig(dataset="local"), "crosseval.data.path: required when crosseval.data.dataset is 'local'"),
])
def test_a_bad_corpus_is_refused_naming_the_crosseval_key(tmp_path: Path, data: DataConfig, message: str) -> None:
    paths = _paths(tmp_path)
    (Path(paths.models) / "M1" / "seed-1").mkdir(parents=True)  # an empty folder: loading it would fail otherwise
    with pytest.raises(ConfigError) as info:
        run_crosseval(paths, CrossEvalConfig(models=["M1"], data=data), DecodeConfig(), EvaluateConfig(), [1])
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert not Path(paths.crosseval).exists()


def test_load_corpus_takes_the_download_stages_split_and_caps_it(tmp_path: Path) -> None:
    data = DataConfig(dataset="numerals", seed=3, options={"numerals": {"size": 40, "max_length": 3, "max_number": 9}})
    download(data, tmp_path)
    raw = pq.read_table(tmp_path / "valid.parquet").to_pylist()
    valid = load_corpus(CrossEvalConfig(data=data, split="valid", max_examples=None))
    assert 0 < len(raw) < 40
    assert valid["id"].tolist() == [r["id"] for r in raw]
    assert valid["references"].tolist() == [[r["reference"]] for r in raw]
    capped = load_corpus(CrossEvalConfig(data=data, split="all", max_examples=5))
    assert capped["id"].tolist() == [r["id"] for r in cap_examples(load_examples(data)[0], 5)]


class Loaded(Exception):
    pass


def test_decode_corpus_loads_the_model_on_the_decode_device(monkeypatch, tmp_path: Path):
    from sumpipe.decode import batches

    asked = []

    def load_model(model_dir, device="cpu"):
        asked.append((model_dir, device))
        raise Loaded

    monkeypatch.setattr(batches, "load_model", load_model)
    with pytest.raises(Loaded):
        decode_corpus(tmp_path / "M1", ["a text ."], str(tmp_path), DecodeConfig(device="cpu"))
    assert asked == [(tmp_path / "M1", torch.device("cpu"))]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_decode_corpus_refuses_cuda_without_a_gpu(tmp_path: Path):
    with pytest.raises(SumpipeError, match="decode.device: 'cuda' was asked for but no CUDA device is available"):
        decode_corpus(tmp_path / "M1", ["a text ."], str(tmp_path), DecodeConfig(device="cuda"))


def test_crosseval_on_a_multi_reference_corpus(tmp_path: Path, eval_corpus, make_eval_model) -> None:
    paths = _paths(tmp_path, _counts(eval_corpus))
    for seed in (1, 2):  # two seeds of one model (the same untrained weights): every seed is tested
        make_eval_model(Path(paths.models) / "M1" / f"seed-{seed}", Budget("first", 200), seed=seed)
    corpus = tmp_path / "duc.jsonl"
    rows = [{"id": f"d{i}", "split": "test", "source": s.replace("\n", " "),
             "references": [r, "The " + r.upper(), "something else entirely ."]}
            for i, (s, r) in enumerate(zip(eval_corpus.sources, eval_corpus.references))]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = CrossEvalConfig(models=["M1"], data=DataConfig(dataset="local", path=str(corpus)), split="test",
                          max_examples=4, name="tiny-duc")
    decode = DecodeConfig(beam_size=2, max_length=6, batch_size=4)
    summaries = run_crosseval(paths, cfg, decode, EvaluateConfig(bootstrap_samples=100, seed=5), [1, 2]).summaries
    # the corpus's own one-sentence lead and Lead-3 beside the model
    assert list(summaries) == ["M1 (tiny-duc)", "lead1 (tiny-duc)", "lead3 (tiny-duc)"]
    m1 = summaries["M1 (tiny-duc)"]
    assert (m1["n"], m1["n_seeds"], m1["rouge1_sd"]) == (4, 2, 0.0)
    assert m1["seeds"]["1"] == m1["seeds"]["2"]
    # degeneracy on the unseen corpus: Lead-3 of four different stories is four distinct summaries
    lead3 = summaries["lead3 (tiny-duc)"]
    assert lead3["distinct"] == 100.0 and lead3["adjacent_repeat"] == 0.0
    # rare-word recall over the pooled references of the 4 documents kept (d0, d2, d4, d5): each has the three
    # unseen content words of its third reference ("something else entirely"); the Mars story (d4) also "mars"
    # and "probe". Its lead sentence holds "mars" (1/5), its Lead-3 "probe" as well (2/5); the others none
    assert summaries["lead1 (tiny-duc)"]["rare_word_recall"] == 5.0
    assert lead3["rare_word_recall"] == 10.0
    assert m1["seeds"]["1"]["rare_word_recall"] == m1["rare_word_recall"] and m1["rare_word_recall_sd"] == 0.0
    assert {"distinct", "adjacent_repeat", "mean_length"} <= set(summaries["M1 (tiny-duc)"])
    frame = read_parquet(tmp_path / "crosseval" / "M1.parquet")
    assert len(frame) == 8 and all(len(refs) == 3 for refs in frame["references"])
    assert frame["seed"].tolist() == [1] * 4 + [2] * 4
    # Every per-example score is the best over the three (preprocessed) references.
    from sumpipe.evaluate.rouge import FastRouge

    fr = FastRouge()
    for _, row in frame.iterrows():
        best = fr.score_multi(list(row["references"]), row["prediction"])
        assert row["rouge1_fmeasure"] == best["rouge1"][2]
    summary = json.loads((tmp_path / "crosseval" / "summary.json").read_text())
    assert summary["corpus"] == "tiny-duc" and "3 reference(s)" in summary["references_note"]
    assert "ensembles" not in summary  # none tested: the summary a run without them always wrote
    assert json.loads((Path(paths.metrics) / "crosseval.json").read_text()) == summaries


def test_crosseval_under_the_duc_protocol(tmp_path: Path, eval_corpus, make_eval_model) -> None:
    """DUC: every summary (models, lead, prefix) cut to its first N bytes, recall averaged over the
    references, F1 beside it; M2 compared with M1 and every model with Lead-k and the best baseline."""
    from sumpipe.config import ModelSpec, ScoringProtocol
    from sumpipe.evaluate.rouge import FastRouge

    paths = _paths(tmp_path, _counts(eval_corpus))
    for name in ("M1", "M2"):
        make_eval_model(Path(paths.models) / name / "seed-1", Budget("first", 200), seed=1)
    corpus = tmp_path / "duc.jsonl"
    rows = [{"id": f"d{i}", "split": "test", "source": s.replace("\n", " "), "references": [r, "something else ."]}
            for i, (s, r) in enumerate(zip(eval_corpus.sources, eval_corpus.references))]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = CrossEvalConfig(models=["M1", "M2"], data=DataConfig(dataset="local", path=str(corpus)), name="duc",
                          protocol=ScoringProtocol(max_bytes=15, references="average", measure="recall"))
    specs = {"M1": ModelSpec(input="first200"), "M2": ModelSpec(input="first200", rarity=True)}
    result = run_crosseval(paths, cfg, DecodeConfig(beam_size=2, max_length=12, batch_size=4),
                           EvaluateConfig(bootstrap_samples=100, seed=5, lead_sentences=1, prefix_bytes=[75]), [1],
                           specs)
    assert list(result.summaries) == ["M1 (duc)", "M2 (duc)", "lead1 (duc)", "prefix75 (duc)"]
    frame = read_parquet(tmp_path / "crosseval" / "M1.parquet")
    assert all(len(p.encode()) <= 15 for p in frame["prediction"])
    row = frame.iloc[0]
    mean_recall = sum(FastRouge().score(ref, row["prediction"])["rouge1"][1] for ref in row["references"]) / 2
    assert row["rouge1_recall"] == pytest.approx(mean_recall)
    lead = result.summaries["lead1 (duc)"]  # the whole first sentence, cut to 15 bytes: "the cat sat on " ...
    assert lead == {**lead, "rouge1_recall": result.summaries["prefix75 (duc)"]["rouge1_recall"]}
    assert {"rouge1_recall_low", "rouge1_recall_high", "rouge1", "rouge1_low"} <= set(result.summaries["M1 (duc)"])
    pairs = [(c["a"], c["b"], c["measure"]) for c in result.comparisons]
    assert pairs == [("M2 (duc)", "M1 (duc)", "recall"), ("M1 (duc)", "lead1 (duc)", "recall"),
                     ("M2 (duc)", "lead1 (duc)", "recall"), ("M1 (duc)", "prefix75 (duc)", "recall"),
                     ("M2 (duc)", "prefix75 (duc)", "recall")]  # every model against every baseline
    summary = json.loads((tmp_path / "crosseval" / "summary.json").read_text())
    assert summary["references_note"] == ("2 reference(s) per example; with several, P, R and F1 averaged over the "
                                          "references (ROUGE-1.5.5 -f A); every summary cut to its first 15 bytes.")
    assert summary["order"] == list(result.summaries) and summary["measure"] == "recall"


def test_an_ensemble_is_one_system_decoded_from_its_models_seeds(tmp_path: Path, eval_corpus,
                                                                  make_eval_model) -> None:
    """M1's two seeds hold the same weights (make_eval_model seeds torch with 0), so their ensemble's mean
    distribution is each seed's: the same headlines and scores, one run (seed 0) instead of two, compared with
    M1 (a difference of 0) and with the baselines."""
    from sumpipe.config import ScoringProtocol
    from sumpipe.evaluate.crosseval import CrossEnsemble

    paths = _paths(tmp_path, _counts(eval_corpus))
    for seed in (1, 2):
        make_eval_model(Path(paths.models) / "M1" / f"seed-{seed}", Budget("first", 200), seed=seed)
    corpus = tmp_path / "duc.jsonl"
    rows = [{"id": f"d{i}", "split": "test", "source": s.replace("\n", " "), "references": [r, "something else ."]}
            for i, (s, r) in enumerate(zip(eval_corpus.sources, eval_corpus.references))]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = CrossEvalConfig(models=["M1"], ensembles=["M1-ens"], data=DataConfig(dataset="local", path=str(corpus)),
                          name="duc", protocol=ScoringProtocol(max_bytes=15, references="average", measure="recall"))
    result = run_crosseval(paths, cfg, DecodeConfig(beam_size=2, max_length=12, batch_size=4),
                           EvaluateConfig(bootstrap_samples=100, seed=5, lead_sentences=1, prefix_bytes=[75]), [1, 2],
                           ensembles={"M1-ens": CrossEnsemble("M1", [1, 2])})
    assert list(result.summaries) == ["M1 (duc)", "M1-ens (duc)", "lead1 (duc)", "prefix75 (duc)"]
    single, ensemble = read_parquet(tmp_path / "crosseval" / "M1.parquet"), read_parquet(
        tmp_path / "crosseval" / "M1-ens.parquet")
    assert ensemble["seed"].tolist() == [0] * 6 and ensemble["id"].tolist() == [f"d{i}" for i in range(6)]
    assert ensemble["prediction"].tolist() == single[single["seed"] == 1]["prediction"].tolist()
    assert all(len(p.encode()) <= 15 for p in ensemble["prediction"])
    m1, ens = result.summaries["M1 (duc)"], result.summaries["M1-ens (duc)"]
    assert "n_seeds" not in ens and ens["n"] == 6
    assert ens["rouge1_recall"] == m1["rouge1_recall"] and ens["rare_word_recall"] == m1["rare_word_recall"]
    pairs = {(c["a"], c["b"]): c for c in result.comparisons}
    assert list(pairs)[-3:] == [("M1-ens (duc)", "M1 (duc)"), ("M1-ens (duc)", "lead1 (duc)"),
                                ("M1-ens (duc)", "prefix75 (duc)")]
    assert pairs[("M1-ens (duc)", "M1 (duc)")]["rouge1"]["delta"] == 0.0
    summary = json.loads((tmp_path / "crosseval" / "summary.json").read_text())
    assert summary["ensembles"] == {"M1-ens": {"model": "M1", "seeds": [1, 2]}} and summary["models"] == ["M1"]


def test_an_ensemble_needs_its_trained_seeds_and_a_params_entry(tmp_path: Path, make_eval_model) -> None:
    from sumpipe.evaluate.crosseval import CrossEnsemble

    paths = _paths(tmp_path, {"a": 1})
    make_eval_model(Path(paths.models) / "M1" / "seed-1", Budget("first", 200), seed=1)
    cfg = CrossEvalConfig(models=["M1"], ensembles=["M1-ens"])
    with pytest.raises(SumpipeError, match=r"^crosseval.ensembles: 'M1-ens' is not an ensemble of params"):
        run_crosseval(paths, cfg, DecodeConfig(), EvaluateConfig(), [1])
    with pytest.raises(SumpipeError, match=r"^crosseval.ensembles: M1-ens needs the trained model .*M1/seed-2 \(run "
                                           r"`sumpipe train --model M1 --seed 2`\)$"):
        run_crosseval(paths, cfg, DecodeConfig(), EvaluateConfig(), [1],
                      ensembles={"M1-ens": CrossEnsemble("M1", [1, 2])})


def test_missing_training_word_counts_are_one_line_before_any_decoding(tmp_path: Path, make_eval_model,
                                                                        monkeypatch) -> None:
    import sumpipe.evaluate.crosseval as crosseval

    paths = _paths(tmp_path)  # no words.parquet: the vocab stage has not run
    make_eval_model(Path(paths.models) / "M1" / "seed-1", Budget("first", 200), seed=1)
    monkeypatch.setattr(crosseval, "decode_corpus", lambda *a, **k: pytest.fail("decoded before the check"))
    corpus = tmp_path / "duc.jsonl"
    corpus.write_text(json.dumps({"id": "d0", "split": "test", "source": "a probe .", "references": ["x ."]}) + "\n")
    cfg = CrossEvalConfig(models=["M1"], data=DataConfig(dataset="local", path=str(corpus)))
    with pytest.raises(SumpipeError, match=r"words\.parquet: no training word counts .*; run `sumpipe vocab` first$"):
        run_crosseval(paths, cfg, DecodeConfig(), EvaluateConfig(), [1])
