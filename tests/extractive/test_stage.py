"""The extractive systems stages: corpus statistics, predictions in the decode format, evaluation."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from sumpipe.config import params_from_dict
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extractive.stage import fit_stage, load_corpus, system_stage

SOURCES = [
    "the storm hit the coast .\nthousands lost power .\nofficials said repairs take weeks .",
    "the senate passed the budget .\nthe vote was close .",
    "markets rose .",
]
REFERENCES = ["storm cuts power", "senate passes budget", "markets up"]


@pytest.fixture
def params(tmp_path):
    processed = tmp_path / "processed"
    processed.mkdir()
    for split in ("train", "test"):
        pd.DataFrame({"id": [f"{split}{i}" for i in range(3)], "source": SOURCES,
                      "reference": REFERENCES}).to_parquet(processed / f"{split}.parquet")
    return params_from_dict({"paths": {"processed": str(processed), "extractive": str(tmp_path / "extractive"),
                                       "predictions": str(tmp_path / "predictions"),
                                       "timings": str(tmp_path / "timings")},
                             "extractive": {"sentences": 1, "keyword_topics": 2, "keyword_words": 3}})


def test_fit_then_systems_write_the_decode_format(params, tmp_path):
    figures = fit_stage(params.paths, params.extractive)
    assert figures["documents"] == 3 and load_corpus(params.paths.extractive).documents == 3
    assert (tmp_path / "extractive" / "keywords.parquet").is_file()
    for name in ("lead", "tfidf", "oracle"):
        result = system_stage(name, params.paths, params.extractive, "test")
        frame = pd.read_parquet(result.path)
        assert list(frame.columns[:4]) == ["id", "prediction", "reference", "selected"]
        timings = json.loads((tmp_path / "timings" / "extractive" / f"{name}.json").read_text())
        assert timings["documents"] == 3 and timings["seconds"] >= 0
        assert frame["id"].tolist() == ["test0", "test1", "test2"]
        assert all(len(p.split("\n")) == 1 for p in frame["prediction"])
        assert result.binds == pytest.approx(2 / 3)
    oracle = pd.read_parquet(tmp_path / "predictions" / "oracle" / "test.parquet")
    assert oracle["prediction"][0] == "thousands lost power ."       # shares "power" with the reference
    assert oracle["reads_reference"].all()                             # labelled as an upper bound
    assert "reads_reference" not in pd.read_parquet(tmp_path / "predictions" / "lead" / "test.parquet")


def test_ngram_and_lsa_collection_systems_read_their_fitted_state(params, tmp_path):
    from sumpipe.extractive.methods.lsa_collection import SPACE_FILE
    from sumpipe.vocab.ngrams import NgramTable

    figures = fit_stage(params.paths, params.extractive)
    space = pd.read_parquet(tmp_path / "extractive" / SPACE_FILE)
    assert figures["lsa_dimensions"] == 2 and len(space["loadings"][0]) == 2    # k capped at 3 documents - 1
    paths = dataclasses.replace(params.paths, vocab=str(tmp_path / "vocab"))
    with pytest.raises(SumpipeError, match="ngrams.parquet"):                    # no vocab stage output yet
        system_stage("ngram", paths, params.extractive, "test")
    NgramTable(n=3, keys=np.zeros(0, np.uint64), counts=np.zeros(0, np.uint32), words=[]).save(
        tmp_path / "vocab" / "ngrams.parquet")
    for name in ("ngram", "lsa_collection"):
        frame = pd.read_parquet(system_stage(name, paths, params.extractive, "test").path)
        assert frame["id"].tolist() == ["test0", "test1", "test2"]
        assert all(len(p.split("\n")) == 1 for p in frame["prediction"])
    # an empty table scores every 3-gram alike: the ngram system keeps its first_k = 1 lead sentence
    ngram = pd.read_parquet(tmp_path / "predictions" / "ngram" / "test.parquet")
    assert ngram["prediction"].tolist() == [s.split("\n")[0] for s in SOURCES]


def test_unknown_system_is_a_one_line_error(params):
    with pytest.raises(ConfigError, match="extractive"):
        system_stage("lsa9", params.paths, params.extractive, "test")
