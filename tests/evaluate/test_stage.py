"""The `evaluate` stage on a tiny pipeline tree: models + Lead-3 + first-N, scores and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.config import EvaluateConfig, ModelSpec, PathsConfig
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.rouge import FastRouge
from sumpipe.evaluate.stage import lead_sentences, run_evaluate
from sumpipe.io.atomic import read_parquet, write_parquet

CFG = EvaluateConfig(bootstrap_samples=200, confidence=0.95, seed=3, use_stemmer=True, lead_sentences=3)
SPECS = {"M1": ModelSpec(input="first200"), "M2": ModelSpec(input="first200", rarity=True),
         "M1-400": ModelSpec(input="first400")}


def evaluate(paths: PathsConfig, names: list[str], baselines: list[str], seeds: list[int] | None = None,
             extractive: list[str] | None = None):
    """run_evaluate with the models `names` of SPECS trained with `seeds` (default [1])."""
    return run_evaluate(paths, CFG, {n: SPECS[n] for n in names}, seeds or [1], extractive or [], baselines)


def test_lead_sentences() -> None:
    assert lead_sentences("a .\nb .\nc .\nd .", 3) == "a .\nb .\nc ."
    assert lead_sentences("only one", 3) == "only one"


def test_evaluate_stage_writes_scores_and_metrics(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path)
    result = evaluate(paths, ["M1", "M2", "M1-400"], ["first200", "first400"])
    assert list(result.summaries) == ["M1", "M2", "lead3", "first200"]
    assert result.skipped == ["M1-400/seed-1", "first400"]

    metrics = json.loads((Path(paths.metrics) / "rouge.json").read_text())
    assert set(metrics) == {"M1", "M2", "lead3", "first200"}
    # the headline (the only DVC metrics): the models' R-1 in params order; figures.json: those and the lead's
    headline = json.loads((Path(paths.metrics) / "headline.json").read_text())
    assert headline == {"R-1": {"M1": round(metrics["M1"]["rouge1"], 2), "M2": round(metrics["M2"]["rouge1"], 2)}}
    assert list(headline["R-1"]) == ["M1", "M2"]
    figures = json.loads((Path(paths.metrics) / "figures.json").read_text())
    assert list(figures["R-1"]) == ["M1", "M2", "lead3"] and figures["R-L"]["M1"] == round(metrics["M1"]["rougeL"], 2)
    for system in metrics.values():
        for key in ("rouge1", "rouge2", "rougeL", "rougeLsum", "rouge1_low", "rouge1_high"):
            assert isinstance(system[key], float)
        assert system["rouge1_low"] <= system["rouge1"] <= system["rouge1_high"]
    assert metrics["M1"]["rougeL"] > metrics["M2"]["rougeL"]

    # Per-example scores: Lead-3 is the first three source sentences, scored like rouge-score.
    lead = read_parquet(Path(paths.scores) / "lead3.parquet")
    assert list(lead["id"]) == [f"ex{i}" for i in range(6)]
    assert lead.at[0, "prediction"] == "the cat sat on the mat .\nit was a sunny day .\nthe dog slept ."
    expected = FastRouge().score(eval_corpus.references[0], lead.at[0, "prediction"])
    assert lead.at[0, "rouge1_fmeasure"] == expected["rouge1"][2]
    assert metrics["lead3"]["rouge1"] == pytest.approx(lead["rouge1_fmeasure"].mean() * 100, abs=1e-4)

    summary = json.loads((Path(paths.scores) / "summary.json").read_text())
    assert summary["config"]["stemming"].startswith("Porter")
    assert summary["config"]["bootstrap_samples"] == 200 and summary["config"]["seed"] == 3
    pairs = [(c["a"], c["b"]) for c in summary["comparisons"]]
    # M2 against its rarity-free twin, every model against Lead-3 and the best extractive system (first200)
    assert pairs == [("M2", "M1"), ("M1", "lead3"), ("M2", "lead3"), ("M1", "first200"), ("M2", "first200")]
    assert summary["best_extractive"] == "first200" and summary["seeds"]["M1"] == summary["seeds"]["M2"] == [1]
    # M2 is far worse than M1 on every example: a large negative difference whose interval excludes 0.
    m2_m1 = summary["comparisons"][0]["rouge1"]
    assert m2_m1["delta"] < 0 and m2_m1["high"] < 0 and m2_m1["p_value"] < 0.05


def test_rare_word_recall_by_hand(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path)
    evaluate(paths, ["M1", "M2"], ["first200"])
    rare = json.loads((Path(paths.metrics) / "rare_words.json").read_text())
    # rare reference words: ex3 {bridge}, ex4 {mars, probe}, ex5 {museum}; every other reference word is
    # a stop word or seen 10 times. M1 keeps all four, M2 none, Lead-3 all four.
    assert (rare["M1"]["recall"], rare["M1"]["n"]) == (100.0, 3)
    assert (rare["M2"]["recall"], rare["M2"]["recall_high"]) == (0.0, 0.0)
    assert rare["lead3"]["recall"] == 100.0
    summary = json.loads((Path(paths.scores) / "summary.json").read_text())
    assert summary["rare_words"] == rare and summary["rare_word_max_count"] == 5
    assert summary["abstractiveness"]["M2"]["distinct"] == 100.0


def test_evaluate_uses_every_reference(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path, models={"M1": eval_corpus.m1})
    processed = read_parquet(Path(paths.processed) / "test.parquet")
    # M1's output is a reference too
    processed["references"] = [[r, m] for r, m in zip(eval_corpus.references, eval_corpus.m1)]
    write_parquet(processed, Path(paths.processed) / "test.parquet")
    result = evaluate(paths, ["M1"], ["first200"])
    assert result.summaries["M1"]["rouge1"] == pytest.approx(100.0)


def test_evaluate_needs_the_processed_test_split(tmp_path: Path) -> None:
    paths = PathsConfig(**{name: str(tmp_path / name) for name in PathsConfig.__dataclass_fields__})
    with pytest.raises(SumpipeError, match="no such file"):
        evaluate(paths, ["M1"], ["first200"])


def test_bad_predictions_file_is_a_user_error(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path, models={})
    write_parquet(pd.DataFrame({"id": ["ex0"], "summary": ["x"]}),
                  Path(paths.predictions) / "M1" / "seed-1" / "test.parquet")
    with pytest.raises(SumpipeError, match="column 'prediction' is missing"):
        evaluate(paths, ["M1"], ["first200"])


@pytest.mark.parametrize(("values", "message"), [
    ([["x"]], r"column 'prediction' is list<element: string>, expected text"),  # was an Arrow cast traceback
    ([3], r"column 'prediction' is int64, expected text"),
])
def test_a_prediction_column_of_another_kind_is_a_user_error(tmp_path: Path, eval_corpus, values, message) -> None:
    paths = eval_corpus.make_tree(tmp_path, models={})
    write_parquet(pd.DataFrame({"id": ["ex0"], "prediction": values}),
                  Path(paths.predictions) / "M1" / "seed-1" / "test.parquet")
    with pytest.raises(SumpipeError, match=message):
        evaluate(paths, ["M1"], ["first200"])


def test_a_prediction_path_that_is_a_folder_is_an_error_not_a_model_left_out(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path, models={})
    (Path(paths.predictions) / "M1" / "seed-1" / "test.parquet").mkdir(parents=True)
    with pytest.raises(SumpipeError, match=r"test\.parquet: is a directory, not a Parquet file of outputs"):
        evaluate(paths, ["M1"], ["first200"])


@pytest.mark.parametrize("ids", [[], ["other0", "other1"]])
def test_predictions_for_no_test_example_are_a_user_error(tmp_path: Path, ids: list[str], eval_corpus) -> None:
    # An empty file, or a stale one from another corpus: both used to end in a ValueError traceback.
    paths = eval_corpus.make_tree(tmp_path, models={})
    preds = pd.DataFrame({"id": pd.Series(ids, dtype=str), "prediction": pd.Series(["x"] * len(ids), dtype=str),
                          "reference": pd.Series(["y"] * len(ids), dtype=str)})  # as decode writes them
    write_parquet(preds, Path(paths.predictions) / "M1" / "seed-1" / "test.parquet")
    with pytest.raises(SumpipeError, match="no prediction for any example"):
        evaluate(paths, ["M1"], ["first200"])


def test_a_model_is_scored_over_its_seeds(tmp_path: Path, eval_corpus) -> None:
    # M1's seed 1 writes the good summaries, its seed 2 the poor ones: the mean is their average, the
    # sd their spread, every seed's figure is kept, and the per-example scores hold both seeds.
    paths = eval_corpus.make_tree(tmp_path, models={"M1": {1: eval_corpus.m1, 2: eval_corpus.m2}})
    result = evaluate(paths, ["M1"], ["first200"], seeds=[1, 2])
    m1 = result.summaries["M1"]
    seed1, seed2 = m1["seeds"]["1"]["rouge1"], m1["seeds"]["2"]["rouge1"]
    assert seed1 > 40 > seed2
    assert m1["rouge1"] == pytest.approx((seed1 + seed2) / 2, abs=1e-3)
    assert m1["rouge1_sd"] == pytest.approx(abs(seed1 - seed2) / 2 ** 0.5, abs=1e-3)
    assert m1["n_seeds"] == 2 and m1["n"] == 6
    scores = read_parquet(Path(paths.scores) / "M1.parquet")
    assert list(scores.columns[:3]) == ["id", "seed", "prediction"] and sorted(set(scores["seed"])) == [1, 2]
    metrics = json.loads((Path(paths.metrics) / "rouge.json").read_text())
    assert metrics["M1"]["seeds"]["2"]["rouge1"] == seed2 and "rouge1_sd" not in metrics["lead3"]
    abstractive = json.loads((Path(paths.metrics) / "abstractiveness.json").read_text())["M1"]
    assert abstractive["seeds"]["2"]["mean_length"] == 2.0 and abstractive["n_seeds"] == 2
    rare = json.loads((Path(paths.metrics) / "rare_words.json").read_text())["M1"]
    assert (rare["recall"], rare["seeds"]) == (50.0, {"1": 100.0, "2": 0.0})


def test_a_missing_seed_is_left_out_and_said(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path, models={"M1": {1: eval_corpus.m1}})
    result = evaluate(paths, ["M1"], ["first200"], seeds=[1, 3])
    assert result.skipped == ["M1/seed-3"] and result.summaries["M1"]["n_seeds"] == 1


def test_prefix_baselines_and_a_byte_cut_protocol(tmp_path: Path, eval_corpus) -> None:
    """`evaluate.prefix_bytes` adds `prefix<B>` (the source's first B bytes); `protocol.max_bytes` cuts every
    system's summaries before they are scored (and stored, so what is shown is what was scored), and with
    `measure: recall` the comparisons and the best baseline are chosen on recall."""
    from sumpipe.config import ScoringProtocol

    paths = eval_corpus.make_tree(tmp_path)
    cfg = EvaluateConfig(bootstrap_samples=100, seed=3, prefix_bytes=[20, 200],
                         protocol=ScoringProtocol(max_bytes=12, references="average", measure="recall"))
    result = run_evaluate(paths, cfg, {"M1": SPECS["M1"]}, [1], [], ["first200"])
    assert list(result.summaries) == ["M1", "lead3", "prefix20", "prefix200", "first200"]
    prefix = read_parquet(Path(paths.scores) / "prefix20.parquet")
    assert prefix.at[0, "prediction"] == "the cat sat "  # "the cat sat on the m" (20 bytes), then the 12-byte cut
    m1 = read_parquet(Path(paths.scores) / "M1.parquet")
    assert m1["prediction"].tolist()[:2] == ["the cat sat ", "stocks fell "]
    expected = FastRouge().score(eval_corpus.references[0], "the cat sat ")["rouge1"][1]
    assert m1.at[0, "rouge1_recall"] == expected  # 3 of the reference's 10 words
    summary = json.loads((Path(paths.scores) / "summary.json").read_text())
    assert summary["config"]["measure"] == "recall" and summary["config"]["max_bytes"] == 12
    assert {c["measure"] for c in summary["comparisons"]} == {"recall"}
    assert [c["b"] for c in summary["comparisons"]] == ["lead3", "prefix20", "prefix200"]  # lead3 is also the best
    recalls = {name: s["rouge1_recall"] for name, s in result.summaries.items() if name != "M1"}
    assert summary["best_extractive"] == max(recalls, key=recalls.get)
    # under a 12-byte cut, Lead-3, both prefixes and first200 are the same text: every baseline ties
    assert len(set(recalls.values())) == 1 and "rouge1_recall_low" in result.summaries["lead3"]


@pytest.mark.shared
@pytest.mark.parametrize(("corpus", "options", "protocol", "expected"), [
    # DUC 2003 task 1 under the DUC protocol: recall averaged over the four references, at 75 bytes
    ("duc2003/duc2003_task1.jsonl.gz", {}, {"max_bytes": 75, "references": "average", "measure": "recall"},
     {"rouge1_recall": 21.88, "rouge2_recall": 6.38, "rougeL_recall": 19.12, "rouge1": 19.57}),
    # the 1,036 Gigaword test pairs (the files' valid split), full-length F1
    ("gigaword/gigaword_pairs.jsonl.gz", {"splits": {"valid": "test"}, "resplit": ["train"]}, {},
     {"rouge1": 31.58, "rouge2": 12.39, "rougeL": 28.86}),
])
def test_the_pipelines_75_byte_prefix_on_the_real_test_sets(shared_data: Path, tmp_path: Path, corpus: str,
                                                            options: dict, protocol: dict, expected: dict) -> None:
    """The prefix75 baseline as the pipeline scores it: download (`local`, the Gigaword valid split renamed to
    test), preprocess (Alg. 2), evaluate. On the texts as stored the same cut scores 21.75 / 6.34 / 19.02 and
    31.56 / 12.41 / 28.82 (tests/evaluate/test_rouge.py); the pipeline's figures sit 0.0-0.13 higher because
    preprocessing drops the PTB escapes and quote marks of the stored inputs (`-lrb-`, two backquotes), writes `<unk>`
    as `unk` and expands contractions (`n't` -> `not`), on both sides, so the 75 bytes hold slightly
    different words."""
    from sumpipe.config import DataConfig, PreprocessConfig, ScoringProtocol, SplitRatios
    from sumpipe.data.download import download
    from sumpipe.text.preprocess import preprocess

    paths = PathsConfig(**{name: str(tmp_path / name) for name in PathsConfig.__dataclass_fields__})
    data = DataConfig(dataset="local", path=str(shared_data / corpus), options={"local": options},
                      split_ratios=SplitRatios(train=0.96, valid=0.04, test=0.0))
    counts = download(data, Path(paths.raw))["counts"]
    assert counts["test"] == (624 if "duc" in corpus else 1036)
    for split in ("train", "valid"):  # only the test split is needed here
        (Path(paths.raw) / f"{split}.parquet").unlink()
    preprocess(paths.raw, paths.processed, PreprocessConfig(workers=1), tmp_path / "preprocess.json")
    write_parquet(pd.DataFrame({"token": ["the"], "count": [1000]}), Path(paths.vocab) / "words.parquet")
    # read quality's names' dots come from the train split's raw texts: the test split stands in for it
    write_parquet(read_parquet(Path(paths.raw) / "test.parquet"), Path(paths.raw) / "train.parquet")
    cfg = EvaluateConfig(bootstrap_samples=20, lead_sentences=1, prefix_bytes=[75],
                         protocol=ScoringProtocol(**protocol))
    prefix = run_evaluate(paths, cfg, {}, [1], [], []).summaries["prefix75"]
    assert {key: round(prefix[key], 2) for key in expected} == expected


def test_the_decoding_rule_is_shown_with_and_without(tmp_path: Path, eval_corpus) -> None:
    # The decode stage kept M1's summaries decoded without the adjacent rule beside its own (with): here
    # the "without" ones say a word twice; evaluate gives both sides' figures and their difference.
    paths = eval_corpus.make_tree(tmp_path, models={"M1": {1: eval_corpus.m1, 2: eval_corpus.m1}})
    twice = [p.replace(" .", " . .").replace("the ", "the the ", 1) for p in eval_corpus.m1]
    for seed in (1, 2):
        write_parquet(pd.DataFrame({"id": [f"ex{i}" for i in range(6)], "prediction": twice,
                                    "reference": eval_corpus.references}),
                      Path(paths.predictions) / "M1" / f"seed-{seed}" / "test.without-adjacent-block.parquet")
    evaluate(paths, ["M1"], ["first200"], seeds=[1, 2])
    rule = json.loads((Path(paths.scores) / "summary.json").read_text())["decoding_rule"]["M1"]
    with_, without = rule["with"], rule["without"]
    # m1 says no word twice in a row; the rewritten ones do in the 2 of 6 that have "the "
    assert (with_["adjacent_repeat"], without["adjacent_repeat"]) == (0.0, 33.33)
    metrics = json.loads((Path(paths.metrics) / "rouge.json").read_text())
    assert with_["rouge1"] == pytest.approx(metrics["M1"]["rouge1"], abs=0.01)
    assert rule["rouge1"]["delta"] == pytest.approx(with_["rouge1"] - without["rouge1"], abs=0.01)
    assert rule["n_seeds"] == 2 and without["mean_words"] == pytest.approx(with_["mean_words"] + 2 / 6, abs=0.01)


# --------------------------------------------------------------------------------------------
# An ensemble of a model's seeds is one system
# --------------------------------------------------------------------------------------------
def test_an_ensemble_is_one_system_compared_with_its_model_and_the_baselines(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path, {"M1": {1: eval_corpus.m1, 2: eval_corpus.m2}})
    ids = [f"ex{i}" for i in range(len(eval_corpus.sources))]
    write_parquet(pd.DataFrame({"id": ids, "prediction": eval_corpus.m1, "reference": eval_corpus.references}),
                  Path(paths.predictions) / "M1-ens" / "test.parquet")
    result = run_evaluate(paths, CFG, {"M1": SPECS["M1"]}, [1, 2], [], ["first200"],
                          ensembles={"M1-ens": "M1", "M9-ens": "M9"})
    assert list(result.summaries) == ["M1", "M1-ens", "lead3", "first200"]
    assert result.skipped == ["M9-ens"]                                   # not decoded yet: left out, and said
    m1_seed_1 = json.loads((Path(paths.metrics) / "rouge.json").read_text())["M1"]["seeds"]["1"]["rouge1"]
    assert result.summaries["M1-ens"]["rouge1"] == pytest.approx(m1_seed_1, abs=0.01)  # the same summaries
    summary = json.loads((Path(paths.scores) / "summary.json").read_text())
    assert summary["best_extractive"] == "first200" and "M1-ens" not in summary["baselines"]  # never a baseline
    assert summary["ensembles"] == {"M1-ens": "M1", "M9-ens": "M9"}
    pairs = {(c["a"], c["b"]): c for c in result.comparisons}
    mine = pairs[("M1-ens", "M1")]
    assert mine["what"] == "the ensemble of its seeds against each seed alone"
    assert (mine["seeds_a"], mine["seeds_b"]) == (1, 2) and mine["rouge1"]["delta"] > 0  # M1's seed 2 is poor
    lead = pairs[("M1-ens", "lead3")]
    assert lead["what"] == "against lead3 (an ensemble: documents only)" and lead["seeds_a"] == lead["seeds_b"] == 1
    assert pairs[("M1-ens", "first200")]["what"] == "against the best extractive system (an ensemble: documents only)"


def test_read_quality_per_seed_and_the_references_anchor(tmp_path: Path, eval_corpus) -> None:
    # M1's seed 2 writes seed 1's summaries but "water on monday found by probe ." for the Mars text:
    # "monday" is not in that source, and a name (another raw source spells it "Monday")
    second = [*eval_corpus.m1[:4], "water on monday found by probe .", eval_corpus.m1[5]]
    paths = eval_corpus.make_tree(tmp_path, models={"M1": {1: eval_corpus.m1, 2: second}, "M2": eval_corpus.m2})
    evaluate(paths, ["M1", "M2"], ["first200"], seeds=[1, 2])  # M2 has seed 1 only
    reading = json.loads((Path(paths.metrics) / "read_quality.json").read_text())
    assert set(reading) == {"references", "systems"}
    assert list(reading["systems"]) == ["M1", "M2", "first200", "lead3"]  # JSON keys are sorted
    assert reading == json.loads((Path(paths.scores) / "summary.json").read_text())["read_quality"]
    # the anchor: one sentence each, every content word (and "mars") in the source
    refs = reading["references"]
    assert (refs["fragment_rate"], refs["sentences_mean"], refs["more_sentences_than_reference"]) == (0.0, 1.0, 0.0)
    assert (refs["unsupported_stems"], refs["unsupported_names"]) == (0.0, 0.0)
    m1 = reading["systems"]["M1"]
    # 4 of 6 summaries end with a 2-word sentence ("stocks fell ."), 11 sentences, 5 of 6 more than the reference
    assert (m1["fragment_rate"], m1["fragment_rate_sd"], m1["sentences_mean"]) == (66.67, 0.0, 1.83)
    assert m1["more_sentences_than_reference"] == 83.33 and m1["n_seeds"] == 2
    # 25 content words a seed; seed 2's "monday" is unsupported (1 of 25) and its only name (mars in seed 1)
    assert (m1["seeds"]["1"]["unsupported_stems"], m1["seeds"]["2"]["unsupported_stems"]) == (0.0, 4.0)
    assert (m1["unsupported_stems"], m1["unsupported_stems_sd"]) == (2.0, 2.83)
    assert (m1["unsupported_names"], m1["unsupported_names_sd"]) == (50.0, 70.71)
    # M2 writes "cat ." and the like: one word, one sentence, each a fragment
    m2 = reading["systems"]["M2"]
    assert (m2["fragment_rate"], m2["sentences_mean"], m2["more_sentences_than_reference"]) == (100.0, 1.0, 0.0)
    assert m2["n_seeds"] == 1 and "fragment_rate_sd" not in m2
    lead = reading["systems"]["lead3"]
    assert (lead["sentences_mean"], lead["unsupported_stems"], lead["fragment_rate"]) == (3.0, 0.0, 0.0)
    # no summary here uses a content word twice
    assert refs["repeated_words"] == m1["repeated_words"] == m2["repeated_words"] == lead["repeated_words"] == 0.0


def test_read_quality_needs_the_train_split_and_the_raw_sources(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path)
    (Path(paths.raw) / "test.parquet").unlink()
    with pytest.raises(SumpipeError, match=r"raw/test.parquet: no such file"):
        evaluate(paths, ["M1"], ["first200"])
    paths = eval_corpus.make_tree(tmp_path / "no-train")
    (Path(paths.raw) / "train.parquet").unlink()
    with pytest.raises(SumpipeError, match=r"raw/train.parquet: no such file"):
        evaluate(paths, ["M1"], ["first200"])
    assert not (Path(paths.scores) / "summary.json").exists()


# --------------------------------------------------------------------------------------------
# Copying where it is read (copy rate, the input's ceiling, M2 - M1 in rare-word recall)
# --------------------------------------------------------------------------------------------
def test_copy_rate_per_seed_against_each_vocabulary_with_the_references_anchor(tmp_path: Path, eval_corpus) -> None:
    from sumpipe.evaluate.copy_rate import OutputVocabularies
    from sumpipe.vocab.vocabulary import Vocabulary

    paths = eval_corpus.make_tree(tmp_path, models={"M1": {1: eval_corpus.m1, 2: eval_corpus.m2}, "M2": eval_corpus.m2})
    # ids 4-7: the . on and (the shared V = 8 ends here); 8-9: fell found (M1's own V = 10 ends here)
    counts = {"the": 1000, ".": 900, "on": 800, "and": 700, "fell": 600, "found": 500, "cat": 400, "mars": 300}
    Vocabulary.from_counts(counts, 12).save(Path(paths.vocab) / "vocab.parquet")
    run_evaluate(paths, CFG, {n: SPECS[n] for n in ("M1", "M2")}, [1, 2], [], ["first200"],
                 vocab_sizes=OutputVocabularies(shared=8, models={"M1": 10}))
    copying = json.loads((Path(paths.metrics) / "copy_rate.json").read_text())
    # The references: 52 tokens; outside {the . on and}: 6+7+5+6+6+5 = 35 (67.31 %); outside the 10 words:
    # 6+6+5+6+5+5 = 33 (63.46 %: "fell" and "found" are M1's).
    # Of those 35, the sources hold 32 ("as" of ex1, "by" and "a" of ex4 are not in theirs): 91.43 %.
    assert copying["references"] == {"copy_rate": 67.31, "in_source": 91.43, "vocab_size": 8}
    m1, m2 = copying["systems"]["M1"], copying["systems"]["M2"]
    # M1 seed 1: 49 tokens, 6+5+5+5+4+5 = 30 outside its 10 words; seed 2 (m2: "cat ." ...): 6 of 12
    # of seed 1's 30, all but "by" (ex4) are in their source; of seed 2's 6 ("cat", "banks", ...), all
    assert m1["seeds"] == {"1": {"copy_rate": 61.22, "in_source": 96.67}, "2": {"copy_rate": 50.0, "in_source": 100.0}}
    assert (m1["copy_rate"], m1["copy_rate_sd"], m1["n_seeds"]) == (55.61, 7.93, 2)
    assert (m1["vocab_size"], m1["own_vocabulary"], m1["references_copy_rate"]) == (10, True, 63.46)
    # M2 has no own vocabulary here (as BERT2S): measured against the shared 8, one seed
    assert (m2["copy_rate"], m2["vocab_size"], m2["own_vocabulary"]) == (50.0, 8, False)
    assert m2["references_copy_rate"] == 67.31
    assert "copy_rate_sd" not in m2
    lead = copying["systems"]["lead3"]
    assert lead["vocab_size"] == 8 and lead["own_vocabulary"] is False and "seeds" not in lead
    summary = json.loads((Path(paths.scores) / "summary.json").read_text())
    assert summary["copy_rate"] == copying


def test_the_copy_rate_needs_the_vocabulary_before_any_work(tmp_path: Path, eval_corpus) -> None:
    from sumpipe.evaluate.copy_rate import OutputVocabularies

    paths = eval_corpus.make_tree(tmp_path)  # no vocab.parquet
    with pytest.raises(SumpipeError, match=r"vocab\.parquet: no such vocabulary file"):
        run_evaluate(paths, CFG, {"M1": SPECS["M1"]}, [1], [], ["first200"], vocab_sizes=OutputVocabularies(8))
    assert not (Path(paths.metrics) / "rouge.json").exists()


def test_rare_word_ceiling_and_the_seed_aware_m2_m1_difference(tmp_path: Path, eval_corpus) -> None:
    # rare reference words: ex3 {bridge}, ex4 {mars, probe}, ex5 {museum}. M1 drops "mars" and "museum":
    # 1, 1/2, 0 -> 50 %; M2 keeps all four -> 100 %; M2 - M1 = +50 on those three documents.
    m1 = [*eval_corpus.m1[:4], "water found by probe .", "reopened .\ntickets sold out ."]
    paths = eval_corpus.make_tree(tmp_path, models={"M1": m1, "M2": eval_corpus.m1})
    # the models read three tokens of each source: "a new bridge", "scientists found water", "the museum
    # reopened" -> 1, 0, 1: their ceiling is 66.67 %, as the first200 baseline's own recall
    first = read_parquet(Path(paths.extracted) / "first200" / "test.parquet")
    first["source"] = [" ".join(s.split()[:3]) for s in eval_corpus.sources]
    write_parquet(first, Path(paths.extracted) / "first200" / "test.parquet")
    evaluate(paths, ["M1", "M2"], ["first200"])
    rare = json.loads((Path(paths.metrics) / "rare_words.json").read_text())
    assert (rare["M1"]["recall"], rare["M2"]["recall"]) == (50.0, 100.0)
    assert (rare["M1"]["input"], rare["M1"]["ceiling"], rare["M2"]["ceiling"]) == ("first200", 66.67, 66.67)
    assert rare["first200"]["recall"] == 66.67 and "ceiling" not in rare["first200"]
    comparisons = json.loads((Path(paths.metrics) / "comparisons.json").read_text())
    m2_m1 = comparisons["M2 vs M1"]["rare_word_recall"]
    # per-document differences 0, 50, 100: every resample's mean lies in [0, 100]; only the 2 of 27
    # one-document resamples (all 0 or all 100) are >= 50 from it (p about 0.07)
    assert m2_m1["delta"] == 50.0 and 0.0 <= m2_m1["low"] < 50.0 < m2_m1["high"] <= 100.0
    assert 0.02 < m2_m1["p_value"] < 0.15
    # against Lead-3 (which keeps all four): M1 is 50 below, and the summary carries the same figures
    assert comparisons["M1 vs lead3"]["rare_word_recall"]["delta"] == -50.0
    summary = json.loads((Path(paths.scores) / "summary.json").read_text())
    assert summary["comparisons"][0]["rare_word_recall"] == m2_m1
