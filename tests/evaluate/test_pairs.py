"""The comparisons the report discusses, derived from params.yaml's models."""

from __future__ import annotations

from sumpipe.config import ModelSpec
from sumpipe.evaluate.pairs import Pair, baseline_pairs, ensemble_pairs, model_pairs

MODELS = {
    "M1": ModelSpec(input="first40"),
    "M2": ModelSpec(input="first40", rarity=True),
    "M1-20": ModelSpec(input="ngram20"),
    "M2-20": ModelSpec(input="ngram20", rarity=True),
    "PG-cov": ModelSpec(family="rnn", input="first40"),
    "M2-wide": ModelSpec(input="first40", rarity=True, arch={"d_model": 128}),  # no M1 twin of that width
}


def test_rarity_and_selection_pairs_come_from_the_specs_and_names() -> None:
    assert model_pairs(MODELS) == [
        Pair("M2", "M1", "rarity-scaled attention"),
        Pair("M1-20", "M1", "ngram20 selection against first40"),
        Pair("M2-20", "M1-20", "rarity-scaled attention"),
        Pair("M2-20", "M2", "ngram20 selection against first40"),
    ]


def test_every_model_meets_lead_and_the_best_extractive_system() -> None:
    assert baseline_pairs(["M1", "M2"], "lead3", "lexrank") == [
        Pair("M1", "lead3", "against lead3"), Pair("M2", "lead3", "against lead3"),
        Pair("M1", "lexrank", "against the best extractive system"),
        Pair("M2", "lexrank", "against the best extractive system")]
    assert baseline_pairs(["M1"], "lead3", "lead3") == [Pair("M1", "lead3", "against lead3")]


def test_an_ensemble_meets_its_model_and_the_baselines_marked_as_an_ensemble() -> None:
    assert ensemble_pairs({"PG-cov-ens": "PG-cov"}, "lead3", "lexrank", ["prefix75"]) == [
        Pair("PG-cov-ens", "PG-cov", "the ensemble of its seeds against each seed alone"),
        Pair("PG-cov-ens", "lead3", "against lead3 (an ensemble: documents only)"),
        Pair("PG-cov-ens", "lexrank", "against the best extractive system (an ensemble: documents only)"),
        Pair("PG-cov-ens", "prefix75", "against prefix75 (an ensemble: documents only)")]
    assert ensemble_pairs({}, "lead3", None) == []
