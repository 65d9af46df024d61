"""The extract stage on tiny processed fixtures, and the coverage diagnostic on hand-made examples."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from sumpipe.config import Budget, ExtractConfig, VocabConfig
from sumpipe.errors import SumpipeError
from sumpipe.selection.coverage import CoverageStats, coverage_of_hits, reference_hits, reference_words
from sumpipe.selection.select import cut, render, select_ngram
from sumpipe.selection.stage import extract
from sumpipe.vocab.build import build_vocab, tokenized_sentences
from sumpipe.vocab.ngrams import NgramTable

TRAIN = pd.DataFrame({
    "id": ["t1", "t2", "t3"],
    "source": ["police said a man charged with murder .\nthe court heard .",
               "a man charged with murder appeared .\npolice said .",
               "police said the man charged with murder fled ."],
    "reference": ["man charged", "man appeared", "man fled"],
})
TEST = pd.DataFrame({
    "id": ["x1"],
    "source": ["police arrested a man on monday .\nthe man was charged with murder .\na rare orchid bloomed at kew ."],
    "reference": ["man charged with murder at kew"],
})
CFG = ExtractConfig(budgets=[Budget("ngram", 7, first_k=1), Budget("first", 7),
                             Budget("ngram", 14, first_k=1), Budget("first", 14)])


def coverage(tokens: list[str], ref: frozenset[str]) -> tuple[int, int]:
    return coverage_of_hits([reference_hits(tokens, ref)])


def test_coverage_by_hand():
    ref = reference_words("police charged the man with murder .")
    assert ref == {"police", "charged", "man", "murder"}
    assert coverage("police arrested a man . the man was charged".split(), ref) == (3, 4)
    stats = CoverageStats()
    for selected, r in [("police man man".split(), ref), ("nothing here".split(), ref), ([], frozenset())]:
        stats.add_reference(r)
        stats.add_counts("sel", *coverage(selected, r), r)
    summary = stats.summary()
    assert summary["examples"] == 3 and summary["reference_words"] == pytest.approx(8 / 3, abs=1e-4)
    # share averages the two examples with reference words: (2/4 + 0) / 2
    assert summary["sel"] == {"words_present": round(2 / 3, 4), "share": 0.25, "occurrences": 1.0, "binds": 0.0,
                              "differs": 0.0}
    stats.add_binding("sel", True)
    assert stats.summary()["sel"]["binds"] == round(1 / 3, 4)   # one of the three documents exceeds the budget
    for chosen in ([0, 1, 2], [0, 2], []):  # the leading sentences, a skipped one, nothing: one differs
        stats.add_choice("sel", chosen)
    assert stats.summary()["sel"]["differs"] == round(1 / 3, 4)


def test_merged_batches_sum_like_one():
    ref = reference_words("police charged the man with murder .")
    examples = [("police man man".split(), ref), ("nothing here".split(), ref), ([], frozenset())]
    whole, first, rest = CoverageStats(), CoverageStats(), CoverageStats()
    for i, (selected, r) in enumerate(examples):
        for stats in (whole, first if i == 0 else rest):
            stats.add_reference(r)
            stats.add_counts("sel", *coverage(selected, r), r)
    first.merge(rest)
    assert first.summary() == whole.summary()
    assert first.sums["sel"].share_examples == 2 and first.sums["sel"].occurrences == 3


@pytest.fixture
def pipeline(tmp_path):
    processed = tmp_path / "processed"
    processed.mkdir()
    TRAIN.to_parquet(processed / "train.parquet", index=False)
    TRAIN.iloc[:0].to_parquet(processed / "valid.parquet", index=False)  # an empty split
    TEST.to_parquet(processed / "test.parquet", index=False)
    build_vocab(processed, tmp_path / "vocab", VocabConfig(size=20), progress=False)
    return tmp_path


def test_stage_outputs_and_coverage(pipeline):
    metrics = extract(pipeline / "processed", pipeline / "vocab", pipeline / "extracted", CFG,
                      pipeline / "metrics" / "coverage.json", progress=False)
    out = {name: pd.read_parquet(pipeline / "extracted" / name / "test.parquet")
           for name in ("ngram7", "first7", "ngram14", "first14")}
    for frame in out.values():
        assert list(frame.columns) == ["id", "source", "reference", "n_tokens", "selected"]
        assert str(frame["n_tokens"].dtype) == "int32"
    # Train 3-grams: (man charged murder) x3 -> 1/log10(3); (police said man), (said man charged) x2 ->
    # the maximum 1/log10(2). Sentence 1's only 3-gram is (man charged murder); the orchid sentence's
    # are unknown (maximum), so Alg. 1 takes it after the lead; first-N takes the next sentence.
    assert out["ngram14"]["selected"][0].tolist() == [0, 2]
    assert out["ngram14"]["source"][0] == "police arrested a man on monday .\na rare orchid bloomed at kew ."
    assert out["first14"]["selected"][0].tolist() == [0, 1]
    assert out["first7"]["source"][0] == out["ngram7"]["source"][0] == "police arrested a man on monday ."
    assert out["ngram14"]["n_tokens"][0] == 14

    # Reference content words {man, charged, murder, kew}.
    test = metrics["test"]
    assert test["reference_words"] == 4.0
    # the document's 21 tokens exceed both budgets: every selection binds ("full" never does)
    # and only ngram14 chose a sentence past the first ([0, 2]): the one selection that differs from first-N
    assert test["full"] == {"words_present": 4.0, "share": 1.0, "occurrences": 5.0, "binds": 0.0, "differs": 0.0}
    assert test["first7"] == test["ngram7"] == {"words_present": 1.0, "share": 0.25, "occurrences": 1.0, "binds": 1.0,
                                                "differs": 0.0}
    assert test["first14"] == {"words_present": 3.0, "share": 0.75, "occurrences": 4.0, "binds": 1.0, "differs": 0.0}
    assert test["ngram14"] == {"words_present": 2.0, "share": 0.5, "occurrences": 2.0, "binds": 1.0, "differs": 1.0}
    assert json.loads((pipeline / "metrics" / "coverage.json").read_text()) == metrics

    valid = pd.read_parquet(pipeline / "extracted" / "ngram7" / "valid.parquet")
    assert len(valid) == 0 and "selected" in valid.columns and metrics["valid"]["examples"] == 0
    train = pd.read_parquet(pipeline / "extracted" / "first14" / "train.parquet")
    assert train["id"].tolist() == ["t1", "t2", "t3"] and (train["n_tokens"] <= 14).all()

    # The stage's batched scoring selects what the per-document API selects.
    table = NgramTable.load(pipeline / "vocab")
    for split, frame in (("train", TRAIN), ("test", TEST)):
        got = pd.read_parquet(pipeline / "extracted" / "ngram14" / f"{split}.parquet")
        for source, selected, text in zip(frame["source"], got["selected"], got["source"]):
            sentences = tokenized_sentences(source)
            assert selected.tolist() == select_ngram(sentences, table, 14, 1)
            assert text == render(cut(sentences, selected.tolist(), 14))


def test_references_column_passes_through(pipeline):
    test = TEST.assign(references=[["man charged", "kew orchid"]])
    test.to_parquet(pipeline / "processed" / "test.parquet", index=False)
    extract(pipeline / "processed", pipeline / "vocab", pipeline / "extracted", CFG, pipeline / "cov.json",
            progress=False)
    frame = pd.read_parquet(pipeline / "extracted" / "ngram14" / "test.parquet")
    assert list(frame.columns) == ["id", "source", "reference", "references", "n_tokens", "selected"]
    assert list(frame["references"][0]) == ["man charged", "kew orchid"]


def test_errors(pipeline):
    with pytest.raises(SumpipeError, match="no such folder"):
        extract(pipeline / "nope", pipeline / "vocab", pipeline / "out", CFG, pipeline / "m.json")
    (pipeline / "empty").mkdir()
    with pytest.raises(SumpipeError, match="no train/valid/test"):
        extract(pipeline / "empty", pipeline / "vocab", pipeline / "out", CFG, pipeline / "m.json")
    with pytest.raises(SumpipeError, match="run `sumpipe vocab` first") as exc:
        extract(pipeline / "processed", pipeline / "novocab", pipeline / "out", CFG, pipeline / "m.json")
    assert "\n" not in str(exc.value)


def run_extract_command(pipeline, cli):
    """`sumpipe extract` in `pipeline` with one 7-token budget."""
    params = {"paths": {"processed": "processed", "vocab": "vocab", "extracted": "extracted", "metrics": "metrics"},
              "extract": {"budgets": [{"method": "ngram", "tokens": 7, "first_k": 1},
                                      {"method": "first", "tokens": 7}]}}
    (pipeline / "params.yaml").write_text(yaml.safe_dump(params))
    return cli("extract", cwd=pipeline)


def test_command(pipeline, cli):
    result = run_extract_command(pipeline, cli)
    assert result.exit_code == 0, result.stderr
    assert "ngram7, first7" in result.stdout and "ngram7 25.0%" in result.stdout
    assert (pipeline / "extracted" / "first7" / "test.parquet").is_file()


def test_command_with_an_empty_test_split(pipeline, cli):
    TRAIN.iloc[:0].to_parquet(pipeline / "processed" / "test.parquet", index=False)
    result = run_extract_command(pipeline, cli)
    assert result.exit_code == 0, result.stderr
    assert "coverage" not in result.stdout.split("(")[0]
    assert (pipeline / "extracted" / "first7" / "test.parquet").is_file()


def test_workers_give_the_same_output(pipeline, monkeypatch):
    import sumpipe.selection.stage as stage

    monkeypatch.setattr(stage, "MIN_DOCS_PER_WORKER", 1)
    monkeypatch.setattr(stage, "BATCH_ROWS", 1)  # one document per batch: order across workers matters
    results = {}
    for workers in (1, 2):
        cfg = ExtractConfig(budgets=CFG.budgets, workers=workers)
        metrics = extract(pipeline / "processed", pipeline / "vocab", pipeline / f"out{workers}", cfg,
                          pipeline / f"m{workers}.json", progress=False)
        frames = {name: pd.read_parquet(pipeline / f"out{workers}" / name / "train.parquet")
                  for name in ("ngram14", "first7")}
        results[workers] = (metrics, frames)
    assert results[1][0] == results[2][0]
    for name in ("ngram14", "first7"):
        pd.testing.assert_frame_equal(results[1][1][name], results[2][1][name])
