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
