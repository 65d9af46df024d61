"""The attention the decode stage keeps for the report: which examples, the file, and that it is what a
separate decode of those examples (the report's old way) gives, while the predictions stay the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sumpipe.config import Budget, DecodeConfig
from sumpipe.decode.attention import ReportExamples, attention_path, attention_table, pick_examples, read_attention
from sumpipe.decode.batches import load_model, summarize
from sumpipe.decode.stage import decode_stage
from sumpipe.errors import SumpipeError

CFG = DecodeConfig(beam_size=2, batch_size=2, device="cpu")


def test_pick_examples_is_seeded_and_ordered() -> None:
    ids = [f"e{i}" for i in range(50)]
    a = pick_examples(ids, 5, seed=3)
    assert a == pick_examples(ids, 5, seed=3)
    assert a == sorted(a, key=ids.index) and len(set(a)) == 5
    assert pick_examples(ids, 5, seed=4) != a
    assert pick_examples(ids[:2], 5, seed=3) == ids[:2]
    assert pick_examples(ids, 0, seed=3) == [] and pick_examples([], 5, seed=3) == []


def test_heat_maps_go_to_the_first_samples() -> None:
    ids = [f"e{i}" for i in range(50)]
    choice = ReportExamples(n_samples=5, n_heatmaps=2, seed=3)
    assert choice.samples(ids) == pick_examples(ids, 5, 3)
    assert choice.heatmaps(ids) == pick_examples(ids, 5, 3)[:2]
    # more heat maps than samples: drawn on their own
    assert ReportExamples(1, 3, seed=3).heatmaps(ids) == pick_examples(ids, 3, 3)
    assert ReportExamples(3, 0, seed=3).heatmaps(ids) == []


@pytest.fixture(scope="module")
def decoded(tmp_path_factory: pytest.TempPathFactory, decode_docs, make_model_dir):
    root = tmp_path_factory.mktemp("decode")
    model_dir = make_model_dir(root / "models" / "M1", selection=Budget("first", 400), scale=1.5)
    ids = [f"d{i}" for i in range(len(decode_docs))] + ["empty"]
    frame = pd.DataFrame({"id": ids, "source": [*decode_docs, ""], "reference": ["r"] * len(ids)})
    (root / "extracted" / "first400").mkdir(parents=True)
    frame.to_parquet(root / "extracted" / "first400" / "test.parquet")
    return root, model_dir, ids


def test_decode_stage_keeps_the_attention_the_report_draws(decoded, decode_docs) -> None:
    root, model_dir, ids = decoded
    examples = ReportExamples(n_samples=3, n_heatmaps=2, seed=5)
    result = decode_stage(model_dir, root / "extracted", root / "with", CFG, report_examples=examples)
    plain = decode_stage(model_dir, root / "extracted", root / "without", CFG)
    # the predictions are the decode stage's usual ones, byte for byte; no attention file without examples
    assert result.path.read_bytes() == plain.path.read_bytes()
    assert not attention_path(root / "without", "test").exists()

    path = attention_path(root / "with", "test")
    assert path == root / "with" / "test.attention.parquet"
    kept = read_attention(path)
    heat = examples.heatmaps(ids)
    assert list(kept) == heat and len(heat) == 2
    predictions = pd.read_parquet(result.path).set_index("id")["prediction"]
    # what the report drew before: the heat-map examples decoded on their own, with details
    model, vocab, card = load_model(model_dir)
    docs = dict(zip(ids, [*decode_docs, ""]))
    again = summarize(model, vocab, card, [docs[i] for i in heat], CFG, details=True)
    for example_id, s in zip(heat, again):
        k = kept[example_id]
        assert k.prediction == s.text == predictions[example_id]
        assert k.tokens == s.tokens and k.source_tokens == s.source_tokens
        assert k.attention.dtype == np.float32 and k.attention.shape == (len(s.tokens), len(s.source_tokens))
        np.testing.assert_allclose(k.attention, s.attention, atol=1e-5)
        assert k.head_attention.shape == (2, len(s.tokens), len(s.source_tokens))  # 2 heads
        np.testing.assert_allclose(k.head_attention, s.head_attention, atol=1e-5)
        np.testing.assert_allclose(k.head_attention.mean(axis=0), k.attention, atol=1e-5)


def test_an_empty_input_gets_no_attention_row(decoded) -> None:
    root, model_dir, ids = decoded
    every = ReportExamples(n_samples=len(ids), n_heatmaps=len(ids), seed=1)  # the empty source among them
    decode_stage(model_dir, root / "extracted", root / "all", CFG, report_examples=every)
    assert list(read_attention(attention_path(root / "all", "test"))) == ids[:-1]
    # a later run without examples removes the file: it would no longer belong to the predictions
    decode_stage(model_dir, root / "extracted", root / "all", CFG)
    assert not attention_path(root / "all", "test").exists()


def test_attention_file_round_trip_and_errors(tmp_path: Path) -> None:
    from sumpipe.decode.batches import Decoded
    from sumpipe.io.atomic import write_parquet

    heads = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10
    summaries = [Decoded(["a", "."], "a .", -1.0, [0.5, 0.25], heads.mean(axis=0), ["x", "y", "z"], heads),
                 Decoded(["b"], "b", -2.0, None, None, ["w"], None)]  # a family without copy attention
    path = write_parquet(attention_table(["i1", "i2"], summaries), tmp_path / "test.attention.parquet")
    assert pq.read_schema(path).field("attention").type == pa.list_(pa.list_(pa.float32()))
    kept = read_attention(path)
    np.testing.assert_array_equal(kept["i1"].head_attention, heads)
    np.testing.assert_array_equal(kept["i1"].attention, heads.mean(axis=0))
    assert (kept["i1"].tokens, kept["i1"].source_tokens, kept["i1"].prediction) == (["a", "."], ["x", "y", "z"], "a .")
    assert kept["i2"].attention is None and kept["i2"].head_attention is None
    write_parquet(pd.DataFrame({"id": ["i1"]}), tmp_path / "other.parquet")
    with pytest.raises(SumpipeError, match="other.parquet: not an attention file"):
        read_attention(tmp_path / "other.parquet")
