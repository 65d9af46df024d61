"""The renderers of the generated blocks: the results tables from metrics/ (exact rows from a small
project), and the registry lists (every shipped entry once, test registrations never)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sumpipe.config import params_from_dict
from sumpipe.docs.blocks import BLOCKS, Sources


def _entry(r1: float, r2: float, rl: float) -> dict:
    return {f"{key}{end}": value + shift for key, value in (("rouge1", r1), ("rouge2", r2), ("rougeL", rl))
            for end, shift in (("", 0.0), ("_low", -1.0), ("_high", 1.0))} | {"n": 4}


@pytest.fixture
def project(tmp_path: Path) -> Sources:
    params = params_from_dict({
        "models": {"A": {"family": "transformer", "input": "first40"}, "B": {"family": "rnn", "input": "ngram40"}},
        "extract": {"budgets": [{"method": "first", "tokens": 40}, {"method": "ngram", "tokens": 40}]},
        "extractive": {"systems": ["lead", "oracle"], "sentences": 2},
        "evaluate": {"lead_sentences": 3}})
    metrics = {
        "rouge": {"A": _entry(20.0, 5.0, 18.0) | {"rouge1_sd": 0.55, "rouge2_sd": 0.2, "rougeL_sd": 0.4, "n_seeds": 3},
                  "lead": _entry(25.0, 7.0, 20.0), "oracle": _entry(30.0, 9.0, 25.0),
                  "lead3": _entry(21.0, 6.0, 17.0), "first40": _entry(22.0, 6.5, 17.5)},    # B not evaluated
        "rare_words": {"A": {"recall": 4.0, "recall_low": 2.0, "recall_high": 6.0}},
        "abstractiveness": {"A": {"distinct": 95.44, "adjacent_repeat": 6.36, "mean_words": 7.04},
                            "lead": {"distinct": 100.0}},
        "comparisons": {"A vs lead3": {"a": "A", "b": "lead3", "what": "against lead3", "seeds_a": 3, "seeds_b": 1,
                                       "n": 4, **{t: {"delta": -1.0, "low": -2.5, "high": 0.4, "p_value": 0.16}
                                                  for t in ("rouge1", "rouge2", "rougeL")}}},
    }
    (tmp_path / "metrics").mkdir()
    for name, data in metrics.items():
        (tmp_path / "metrics" / f"{name}.json").write_text(json.dumps(data))
    return Sources(tmp_path, params)


def test_the_results_table(project: Sources) -> None:
    assert BLOCKS["results"](project).split("\n") == [
        "| system | reads | seeds | R-1 | R-2 | R-L | rare-word recall | words | distinct % | twice % |",
        "| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: |",
        "| A (transformer) | first40 | 3 | 20.00 ± 0.55 [19.00, 21.00] | 5.00 ± 0.20 | 18.00 ± 0.40 "
        "| 4.00 [2.00, 6.00] | 7.0 | 95.4 | 6.4 |",
        "| lead | 2 sentences | 1 | 25.00 [24.00, 26.00] | 7.00 | 20.00 | – | – | 100.0 | – |",
        "| oracle ‡ | 2 sentences | 1 | 30.00 [29.00, 31.00] | 9.00 | 25.00 | – | – | – | – |",
        "| lead3 | first 3 sentences | 1 | 21.00 [20.00, 22.00] | 6.00 | 17.00 | – | – | – | – |",
        "| first40 | first 40 tokens | 1 | 22.00 [21.00, 23.00] | 6.50 | 17.50 | – | – | – | – |",
    ]


def test_the_summary_table(project: Sources) -> None:
    """The README's table: the models, Lead-k (the extractive `lead`), Lead-3 and the oracle; B is not evaluated."""
    assert BLOCKS["summary"](project).split("\n") == [
        "| system | what it is | R-1 | R-2 | R-L | rare-word recall |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
        "| A | transformer family (Morozovskii 2022), 3 seeds | 20.00 ± 0.55 | 5.00 ± 0.20 | 18.00 ± 0.40 | 4.00 |",
        "| lead (Lead-2) | the first 2 sentences | 25.00 | 7.00 | 20.00 | – |",
        "| lead3 (Lead-3) | the first 3 sentences | 21.00 | 6.00 | 17.00 | – |",
        "| oracle ‡ | the 2 sentences closest to the reference by ROUGE (an upper bound) | 30.00 | 9.00 | 25.00 | – |",
        "",
        "Test split (4 documents), F1 × 100; a model's figures are the mean ± sd over its training seeds.",
        "Rare-word recall: % of the reference's rare words (seen at most 5 times in training)",
        "that the summary contains. ‡ reads the reference.",
    ]


def test_the_summary_table_keeps_the_best_ensemble_only(project: Sources) -> None:
    params = params_from_dict({
        "models": {"A": {"input": "first40", "rarity": True}, "C": {"family": "bert2stage", "input": "first40"}},
        "ensembles": {"A-ens": {"model": "A"}, "C-ens": {"model": "C"}},
        "extract": {"budgets": [{"method": "first", "tokens": 40}]},
        "extractive": {"systems": ["lead"], "sentences": 1}, "train": {"seeds": [1, 2]}})
    rouge = json.loads((project.root / "metrics" / "rouge.json").read_text())
    rouge |= {"C": _entry(19.0, 4.0, 17.0), "A-ens": _entry(23.0, 6.0, 19.0), "C-ens": _entry(24.0, 6.0, 19.0)}
    (project.root / "metrics" / "rouge.json").write_text(json.dumps(rouge))
    rows = BLOCKS["summary"](Sources(project.root, params)).split("\n")[2:6]
    assert [row.split(" | ")[:2] for row in rows] == [
        ["| A", "transformer family, rarity-scaled attention (Morozovskii 2022), 2 seeds"],
        ["| C", "bert2stage family (Roy Choudhury 2020), 2 seeds"],
        ["| C-ens", "C's 2 seeds as one summarizer (the best ensemble)"],
        ["| lead (Lead-1)", "the first sentence"],
    ]


def test_the_read_quality_table_has_the_references_first(project: Sources) -> None:
    assert BLOCKS["read-quality"](project).startswith("*Not in this checkout's metrics yet: `dvc repro evaluate`")
    figures = {"fragment_rate": 0.44, "sentences_mean": 1.11, "more_sentences_than_reference": 0.0,
               "repeated_words": 1.25, "unsupported_words": 63.24, "unsupported_numbers": 71.43,
               "unsupported_names": 33.89, "jammed_pairs": 41.25}
    model = {"fragment_rate": 9.6, "fragment_rate_sd": 1.25, "sentences_mean": 1.2, "sentences_mean_sd": 0.05,
             "more_sentences_than_reference": 14.0, "repeated_words": 4.76, "repeated_words_sd": 0.5,
             "unsupported_words": 20.0, "unsupported_numbers": 0.0, "unsupported_names": None, "jammed_pairs": 60.0,
             "jammed_pairs_sd": 2.04, "n_seeds": 3}
    reading = {"references": figures, "systems": {"A": model, "lead3": figures}}
    (project.root / "metrics" / "read_quality.json").write_text(json.dumps(reading))
    assert BLOCKS["read-quality"](project).split("\n") == [
        "| system | fragments % | sentences | more than ref. % | repeated words % | unsupported % | numbers % "
        "| names % | jammed pairs % |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| *references* | 0.4 | 1.11 | 0.0 | 1.2 | 63.2 | 71.4 | 33.9 | 41.2 |",
        "| A (transformer) | 9.6 ± 1.2 | 1.20 ± 0.05 | 14.0 | 4.8 ± 0.5 | 20.0 | 0.0 | – | 60.0 ± 2.0 |",
        "| lead3 | 0.4 | 1.11 | 0.0 | 1.2 | 63.2 | 71.4 | 33.9 | 41.2 |",
    ]
    # metrics of the evaluate stage that compares stems: that figure fills the faithfulness column
    for entry in (figures, model):
        entry["unsupported_stems"] = entry.pop("unsupported_words") - 10
    (project.root / "metrics" / "read_quality.json").write_text(json.dumps(reading))
    assert BLOCKS["read-quality"](Sources(project.root, project.params)).split("\n")[2:4] == [
        "| *references* | 0.4 | 1.11 | 0.0 | 1.2 | 53.2 | 71.4 | 33.9 | 41.2 |",
        "| A (transformer) | 9.6 ± 1.2 | 1.20 ± 0.05 | 14.0 | 4.8 ± 0.5 | 10.0 | 0.0 | – | 60.0 ± 2.0 |"]


def test_the_comparisons_table(project: Sources) -> None:
    assert BLOCKS["comparisons"](project).split("\n")[2:] == [
        "| A | lead3 | against lead3 | -1.00 [-2.50, +0.40] (0.160) | -1.00 [-2.50, +0.40] (0.160) | 3/1 |"]


def test_the_extractive_results_table(project: Sources) -> None:
    assert BLOCKS["extractive-results"](project).split("\n")[2:] == [
        "| lead | 25.00 [24.00, 26.00] | 7.00 [6.00, 8.00] | 20.00 [19.00, 21.00] |",
        "| oracle ‡ | 30.00 [29.00, 31.00] | 9.00 [8.00, 10.00] | 25.00 [24.00, 26.00] |",
    ]


def test_the_crosseval_table(project: Sources) -> None:
    (project.root / "metrics" / "crosseval.json").write_text(json.dumps({"A (other)": _entry(10.0, 2.0, 9.0)}))
    assert BLOCKS["crosseval"](project).split("\n")[2:] == [
        "| A (other) | 4 | 10.00 [9.00, 11.00] | 2.00 [1.00, 3.00] | 9.00 [8.00, 10.00] | – |"]


def test_every_shipped_extractive_method_once_and_what_may_feed_a_model(project: Sources) -> None:
    from sumpipe.extractive.methods import METHODS

    rows = BLOCKS["extractive-methods"](project).split("\n")[2:]
    assert [row.split(" | ")[0].strip("| `") for row in rows] == sorted(METHODS.builtin)
    system_only = {row.split(" | ")[0].strip("| `") for row in rows if row.endswith("| no: a system only |")}
    assert system_only == {"ngram", "lsa_collection", "oracle"}
    lead = next(row for row in rows if row.startswith("| `lead` |"))
    assert lead == ("| `lead` | Sentences in document order: with a 3-sentence limit, Lead-3. | positions only | "
                    "yes (`lead<N>`) |")


def test_data_sets_with_their_options_and_families_with_their_models(project: Sources) -> None:
    from sumpipe.data.datasets import DATASETS

    datasets = BLOCKS["datasets"](project)
    assert "| `numerals` |" in datasets and "`size` (2000), `max_length` (10), `max_number` (100)" in datasets
    assert datasets.count("\n") == 1 + len(DATASETS.builtin)         # shipped data sets only
    families = BLOCKS["families"](project).split("\n")[2:]
    assert [row.split(" | ")[0] for row in families] == ["| `bert2stage`", "| `rnn`", "| `transformer`"]
    assert families[2].split(" | ")[3] == "A" and families[1].split(" | ")[3] == "B"   # the models of params


def test_the_numerals_table_from_that_pipeline_s_metrics(project: Sources) -> None:
    folder = project.root / "experiments" / "numerals"
    (folder / "reports").mkdir(parents=True)
    (folder / "params.yaml").write_text("max_lengths: [5]\nruns: [random-none, random-bahdanau]\n")
    run = {"valid_token_accuracy": 0.5, "valid_sequence_accuracy": 0.25, "train_loss": 1.5}
    (folder / "reports" / "numerals.json").write_text(json.dumps(
        {"random-bahdanau-5": run | {"valid_token_accuracy": 0.9}, "random-none-5": run}))
    assert BLOCKS["numerals"](project).split("\n")[2:] == ["| 5 | 50.0 % (25.0 %) / 1.500 | 90.0 % (25.0 %) / 1.500 |"]


def _experiment(project: Sources, name: str, params: dict, metrics: dict) -> None:
    import yaml

    folder = project.root / "experiments" / name
    (folder / "metrics").mkdir(parents=True)
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    for file, data in metrics.items():
        (folder / "metrics" / f"{file}.json").write_text(json.dumps(data))


def test_the_real_text_tables_say_when_their_pipeline_has_not_run(project: Sources) -> None:
    for name in ("gigaword", "cnn"):
        (project.root / "experiments" / name).mkdir(parents=True)
        (project.root / "experiments" / name / "params.yaml").write_text("{}\n")
        assert BLOCKS[f"realtext-{name}"](project) == (
            f"*Not run in this checkout yet: `cd experiments/{name} && dvc repro` writes "
            f"`experiments/{name}/metrics/`, then `sumpipe docs` fills this table.*")


def test_the_gigaword_table_beside_the_thesis(project: Sources) -> None:
    """Gigaword test F1 (mean ± sd over seeds [interval]) and DUC recall, each with rare-word recall, the
    ensembles among the systems, beside Tables 5.15 and 5.22 (and Rush et al.'s prefix on DUC 2004)."""
    seeded = _entry(33.0, 12.0, 31.0) | {"rouge1_sd": 0.4, "rouge2_sd": 0.2, "rougeL_sd": 0.3, "n_seeds": 3}
    recall = {"rouge1_recall": 23.0, "rouge1_recall_low": 22.0, "rouge1_recall_high": 24.0, "rouge1_recall_sd": 0.5,
              "rouge2_recall": 5.0, "rougeL_recall": 20.0, "rare_word_recall": 14.5, "rare_word_recall_sd": 1.25}
    params = {"models": {"M1": {"family": "transformer", "input": "first50"}}, "ensembles": {"M1-ens": {"model": "M1"}},
              "extract": {"budgets": [{"method": "first", "tokens": 50}, {"method": "first", "tokens": 8}]},
              "evaluate": {"lead_sentences": 1, "prefix_bytes": [75]}, "crosseval": {"name": "duc2003"}}
    prefix = {"rouge1_recall": 21.88, "rouge1_recall_low": 21.0, "rouge1_recall_high": 22.7, "rouge2_recall": 6.38,
              "rougeL_recall": 19.12}
    _experiment(project, "gigaword", params, {
        "rouge": {"M1": seeded, "M1-ens": _entry(34.0, 13.0, 32.0), "lead1": _entry(31.7, 12.3, 28.0),
                  "prefix75": _entry(31.6, 12.4, 28.9), "first8": _entry(29.2, 11.6, 27.5)},
        "rare_words": {"M1": {"recall": 20.5, "recall_sd": 1.5}, "M1-ens": {"recall": 22.0}, "lead1": {"recall": 51.0}},
        "crosseval": {"M1 (duc2003)": recall, "prefix75 (duc2003)": prefix}})
    rows = BLOCKS["realtext-gigaword"](project).split("\n")
    assert rows[0] == ("| system | Gigaword R-1 (F1) | R-2 | R-L | rare words | duc2003 R-1 (recall) | R-2 | R-L | "
                       "rare words | thesis Gigaword (F1) | published DUC 2004 |")
    assert rows[2:] == [
        "| M1 (transformer) | 33.00 ± 0.40 [32.00, 34.00] | 12.00 ± 0.20 | 31.00 ± 0.30 | 20.50 ± 1.50 "
        "| 23.00 ± 0.50 [22.00, 24.00] | 5.00 | 20.00 | 14.50 ± 1.25 | 33.09 / 15.64 / 31.14 | 26.35 / 9.23 / 24.50 |",
        "| M1-ens (ensemble of 3 M1 seeds) | 34.00 [33.00, 35.00] | 13.00 | 32.00 | 22.00 | – | – | – | – | – | – |",
        "| lead1 | 31.70 [30.70, 32.70] | 12.30 | 28.00 | 51.00 | – | – | – | – | – | – |",
        "| prefix75 | 31.60 [30.60, 32.60] | 12.40 | 28.90 | – | 21.88 [21.00, 22.70] | 6.38 | 19.12 | – | – "
        "| 22.43 / 6.49 / 19.65 |",
        "| first8 | 29.20 [28.20, 30.20] | 11.60 | 27.50 | – | – | – | – | – | – | – |",
    ]


def test_the_cnn_table_beside_the_thesis_and_its_selections(project: Sources) -> None:
    params = {"models": {"M1": {"family": "transformer", "input": "first400"},
                         "M1-400": {"family": "transformer", "input": "ngram400"}},
              "extract": {"budgets": [{"method": "first", "tokens": 400}, {"method": "ngram", "tokens": 400}]},
              "extractive": {"systems": ["oracle"], "sentences": 3}, "evaluate": {"lead_sentences": 3}}
    coverage = {"test": {"examples": 323, "first400": {"share": 0.6543, "binds": 0.98, "differs": 0.0},
                         "ngram400": {"share": 0.651, "binds": 0.98, "differs": 0.81234}}}
    _experiment(project, "cnn", params, {
        "rouge": {"M1": _entry(28.0, 5.0, 17.5), "lead3": _entry(32.7, 11.7, 20.5), "oracle": _entry(40.0, 18.0, 30.0)},
        "rare_words": {"M1": {"recall": 2.5}}, "coverage": coverage})
    text = BLOCKS["realtext-cnn"](project)
    scores, selections = text.split("\n\nThe models' inputs on the 323 test stories:\n\n")
    assert scores.split("\n")[2:] == [
        "| M1 (transformer) | first400 | 28.00 [27.00, 29.00] | 5.00 | 17.50 | 2.50 | 35.56 / 12.90 / 33.08 |",
        "| oracle ‡ | 3 sentences | 40.00 [39.00, 41.00] | 18.00 | 30.00 | – | – |",
        "| lead3 | first 3 sentences | 32.70 [31.70, 33.70] | 11.70 | 20.50 | – | 40.34 / 17.70 / 36.57 |",
    ]   # M1-400 not evaluated: no row
    assert selections.split("\n")[2:] == ["| `first400` | 0.654 | 0.980 | 0.000 |",
                                          "| `ngram400` | 0.651 | 0.980 | 0.812 |"]


def test_an_ensemble_is_a_row_of_its_own_after_the_models(project: Sources) -> None:
    params = params_from_dict({"models": {"A": {"input": "first40"}}, "ensembles": {"A-ens": {"model": "A"}},
                               "extract": {"budgets": [{"method": "first", "tokens": 40}]},
                               "extractive": {"systems": ["lead"]}})
    rouge = json.loads((project.root / "metrics" / "rouge.json").read_text())
    rouge["A-ens"] = _entry(23.0, 6.0, 19.0)
    (project.root / "metrics" / "rouge.json").write_text(json.dumps(rouge))
    rows = BLOCKS["results"](Sources(project.root, params)).split("\n")
    assert rows[2].startswith("| A (transformer) | first40 | 3 |")
    assert rows[3] == ("| A-ens (ensemble of 3 A seeds) | first40 | 1 | 23.00 [22.00, 24.00] | 6.00 | 19.00 "
                       "| – | – | – | – |")


def test_the_rare_words_table_with_its_ceiling_copy_rate_and_the_references_anchor(project: Sources) -> None:
    metrics = project.root / "metrics"
    assert BLOCKS["rare-words"](project).split("\n")[2:] == [
        "| A (transformer) | 1 | 4.00 [2.00, 6.00] | – | – | – | – |",
        "",
        "*Copy rates: not in this checkout's metrics yet: `dvc repro evaluate` writes `metrics/copy_rate.json`, "
        "then `sumpipe docs` fills them in.*"]
    rare = {"A": {"recall": 4.0, "recall_sd": 0.5, "recall_low": 2.0, "recall_high": 6.0, "n_seeds": 3,
                  "input": "first40", "ceiling": 30.35},
            "B": {"recall": 6.0, "recall_low": 3.0, "recall_high": 9.0, "input": "ngram40", "ceiling": 28.0},
            "first40": {"recall": 30.35, "recall_low": 24.38, "recall_high": 36.28}}
    copying = {"references": {"copy_rate": 13.84, "in_source": 26.04, "vocab_size": 2000},
               "systems": {"A": {"copy_rate": 1.61, "copy_rate_sd": 0.31, "in_source": 100.0, "in_source_sd": 0.0,
                                 "vocab_size": 2000, "own_vocabulary": True},
                           "B": {"copy_rate": 5.8, "in_source": None, "vocab_size": 5000, "own_vocabulary": True},
                           "first40": {"copy_rate": 20.1, "in_source": 100.0, "vocab_size": 2000,
                                       "own_vocabulary": False}}}
    test = {"delta": 2.0, "low": -0.5, "high": 4.25, "p_value": 0.12}
    comparisons = json.loads((metrics / "comparisons.json").read_text())
    comparisons["B vs A"] = {"a": "B", "b": "A", "what": "another family", "seeds_a": 1, "seeds_b": 3,
                             "rare_word_recall": test, **{t: test for t in ("rouge1", "rouge2", "rougeL")}}
    comparisons["A vs lead3"]["rare_word_recall"] = test  # against a baseline: in the comparisons table only
    for name, data in (("rare_words", rare), ("copy_rate", copying), ("comparisons", comparisons)):
        (metrics / f"{name}.json").write_text(json.dumps(data))
    fresh = Sources(project.root, project.params)  # metrics are read once per Sources
    assert BLOCKS["rare-words"](fresh).split("\n") == [
        "| system | seeds | rare-word recall | ceiling (input) | copy rate % | in source % | V |",
        "| --- | --- | --- | --- | ---: | ---: | ---: |",
        "| *references* | – | – | – | 13.84 | 26.0 | 2,000 |",
        "| A (transformer) | 3 | 4.00 ± 0.50 [2.00, 6.00] | 30.35 (first40) | 1.61 ± 0.31 | 100.0 ± 0.0 | 2,000 |",
        "| B (rnn) | 1 | 6.00 [3.00, 9.00] | 28.00 (ngram40) | 5.80 | – | 5,000 |",
        "| first40 | 1 | 30.35 [24.38, 36.28] | – | 20.10 | 100.0 | 2,000 * |",
        "",
        "\\* the transformer's output vocabulary (the system has no word vocabulary of its own).",
        "",
        "B − A (another family): +2.00 rare-word recall [-0.50, +4.25], p = 0.120 (two-level bootstrap, 1/3 seeds).",
    ]


def test_the_measures_block_is_the_committed_meta_evaluation(project: Sources) -> None:
    from sumpipe.config import load_params
    from sumpipe.errors import SumpipeError

    root = Path(__file__).resolve().parents[2]
    text = BLOCKS["measures"](Sources(root, load_params(root / "params.yaml")))
    assert text in (root / "docs" / "measures.md").read_text(encoding="utf-8")   # docs/measures.md is current
    assert "| *ROUGE-1 (published)* | +0.126 | +0.130 | +0.094 | +0.252 |" in text
    assert text.splitlines()[-1].startswith("Check: ROUGE-1 per article within 0.01 of the published row: passed")
    (project.root / "experiments" / "measures").mkdir(parents=True)
    (project.root / "experiments" / "measures" / "params.yaml").write_text("published: {ROUGE-1: {}}\n")
    with pytest.raises(SumpipeError, match="meta_eval.json: not found"):
        BLOCKS["measures"](project)


def test_the_comparison_block_is_the_recorded_transcript(project: Sources) -> None:
    (project.root / "docs").mkdir(exist_ok=True)
    (project.root / "docs" / "comparison.txt").write_text("$ dvc params diff\nPath  Param\n\n")
    assert BLOCKS["comparison"](project) == "```console\n$ dvc params diff\nPath  Param\n```"


def test_the_comparison_block_without_its_transcript_is_one_line(project: Sources) -> None:
    from sumpipe.errors import SumpipeError

    with pytest.raises(SumpipeError, match=r"comparison.txt: not found \(docs/comparison.sh records it\)"):
        BLOCKS["comparison"](project)


def test_the_decode_block_is_the_recorded_transcript(project: Sources) -> None:
    from sumpipe.errors import SumpipeError

    with pytest.raises(SumpipeError, match=r"decode.txt: not found \(docs/decode.sh records it\)"):
        BLOCKS["decode"](project)
    (project.root / "docs").mkdir(exist_ok=True)
    (project.root / "docs" / "decode.txt").write_text("$ sumpipe decode --beam 4 doc.txt\nSort a list.\n")
    assert BLOCKS["decode"](project) == "```console\n$ sumpipe decode --beam 4 doc.txt\nSort a list.\n```"


def test_the_decode_example_is_the_transcript_s_first_command(project: Sources) -> None:
    (project.root / "docs").mkdir(exist_ok=True)
    (project.root / "docs" / "decode.txt").write_text(
        "$ cat doc.txt\nSort a list.\n$ sumpipe decode --beam 4 doc.txt\nnote: model A\nSort.\n"
        "$ sumpipe decode --model B doc.txt\nList.\n")
    assert BLOCKS["decode-example"](project) == (
        "```console\n$ cat doc.txt\nSort a list.\n$ sumpipe decode --beam 4 doc.txt\nnote: model A\nSort.\n```")


def test_the_committed_decode_transcript_quotes_the_committed_scores(repo_root: Path) -> None:
    """docs/decode.txt is recorded with the built models: the ROUGE-1 figures its notes quote (each model's
    mean over its seeds, the Lead-3's) must be the committed metrics/rouge.json's, so a result that changes
    asks for a new recording (docs/decode.sh)."""
    import re

    path = repo_root / "docs" / "decode.txt"
    if not path.is_file():
        pytest.skip("docs/decode.txt not recorded yet (docs/decode.sh)")
    transcript = path.read_text(encoding="utf-8")
    rouge = json.loads((repo_root / "metrics" / "rouge.json").read_text(encoding="utf-8"))
    notes = [line for line in transcript.splitlines() if line.startswith("note: model ")]
    assert len(notes) == 4   # the default model, BERT2S, the ensemble, the news story
    for line in notes:
        model = line.split()[2].rstrip(",")
        assert re.search(rf"test ROUGE-1 {rouge[model]['rouge1']:.2f}\b", line), line
        assert f"Lead-3 {rouge['lead3']['rouge1']:.2f}" in line, line
    assert "note: the input has" in transcript.split("$ cat news.txt", 1)[1]   # the news story's domain note


def test_the_committed_transcript_shows_the_committed_headline(repo_root: Path) -> None:
    """docs/comparison.txt is recorded, not rendered: its `dvc exp show` rows must carry the R-1 figures of
    the committed metrics/headline.json (the baseline row), so a result that changes asks for a new
    recording (docs/comparison.sh), as a stale generated block asks for `sumpipe docs`."""
    path = repo_root / "docs" / "comparison.txt"
    if not path.is_file():
        pytest.skip("docs/comparison.txt not recorded yet (docs/comparison.sh)")
    transcript = path.read_text(encoding="utf-8")
    headline = json.loads((repo_root / "metrics" / "headline.json").read_text(encoding="utf-8"))["R-1"]
    show = transcript.split("$ dvc exp show", 1)[1].split("\n$ ", 1)[0]
    header = next(line for line in show.splitlines() if "Experiment" in line)
    assert [f"R-1.{name}" for name in headline] == header.split()[2:2 + len(headline)]
    assert "decode.length_penalty" in header[:120]   # beside them in 120 columns, the set parameter
    figures = [f"{value:g}" for value in headline.values()]   # as DVC prints them (5 significant digits)

    def shows(row: str) -> bool:
        words = row.split()
        return any(words[i:i + len(figures)] == figures for i in range(len(words)))
    assert any(shows(row) for row in show.splitlines() if not row.lstrip().startswith(("└", "├")))   # a baseline row
