"""Rarity scores (Morozovskii 2022 Eqn 2.20, Table 2.7, Appendix A.1) and the Vocabulary API."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.names import SPECIAL_TOKENS
from sumpipe.vocab.vocabulary import Vocabulary, rarity_shift, raw_rarity

THE, MID_FLIGHT, DEAL = 11_896_156, 170, 1  # Table 2.7 counts on CNN/DM


def test_table_2_7_differences():
    the, mid, deal = raw_rarity(np.array([THE, MID_FLIGHT, DEAL]))
    # Printed: 0.792, 0.926, 2.17 -> the differences agree within the printed rounding.
    assert abs((mid - the) - (0.926 - 0.792)) <= 0.001
    assert abs((deal - the) - (2.17 - 0.792)) <= 0.0055
    assert round(deal - the, 4) == 1.3813  # SEEDS.md §1.2


@pytest.mark.parametrize("shift", [0.731011, 0.73105, 0.731118])
def test_table_2_7_exact_with_cnndm_shift(shift):
    """With the thesis's shift (~0.731; every value in [0.731011, 0.731119)) all three rows print exactly."""
    the, mid, deal = raw_rarity(np.array([THE, MID_FLIGHT, DEAL])) + shift
    assert (round(the, 3), round(mid, 3), round(deal, 2)) == (0.792, 0.926, 2.17)


def test_table_2_7_shift_interval_is_tight():
    the, mid, _ = raw_rarity(np.array([THE, MID_FLIGHT, DEAL]))
    assert round(mid + 0.73101, 3) == 0.925  # just below: mid-flight would print 0.925
    assert round(the + 0.73112, 3) == 0.793  # just above: "the" would print 0.793


def test_appendix_a1_unknown_and_the():
    """Appendix A.1: OOV words get 2.1736 = the count-1 score, and "the" (id 5) gets 0.7923."""
    the, one = raw_rarity(np.array([THE, 1]))
    assert round(2.1736 - (one - the), 4) == 0.7923


def test_raw_rarity_count_one_is_finite():
    assert raw_rarity(np.array([1]))[0] == pytest.approx(1 / np.log(2))


COUNTS = {"the": 1000, ",": 900, "lions": 7, "fly-half": 2, "irish": 7, "wales": 1, "<unk>": 50}


def test_vocabulary_order_mean_and_unknown():
    vocab = Vocabulary.from_counts(COUNTS, size=100)
    assert vocab.itos == list(SPECIAL_TOKENS) + ["the", ",", "irish", "lions", "fly-half", "wales"]  # ties by token
    assert vocab.counts.tolist() == [0, 0, 0, 0, 1000, 900, 7, 7, 2, 1]
    frame = vocab.to_frame()
    assert frame["rarity"].iloc[4:].mean() == pytest.approx(1.0, abs=1e-12)
    assert vocab.unknown_rarity == pytest.approx(1 / np.log(2) + vocab.shift)
    assert vocab.unknown_rarity == pytest.approx(frame["rarity"].iloc[4:].max())  # "wales" was seen once
    assert vocab.rarity[:4].tolist() == pytest.approx([vocab.unknown_rarity, 0.0, 1.0, 1.0])
    assert vocab.rarity.dtype == np.float32
    # Rarer words score higher; scores differ exactly as 1/ln(1 + count).
    r = frame.set_index("token")["rarity"]
    assert r["fly-half"] - r["the"] == pytest.approx(1 / np.log(3) - 1 / np.log(1001))


def test_vocabulary_truncated_and_encode():
    vocab = Vocabulary.from_counts(COUNTS, size=6)
    assert vocab.itos == list(SPECIAL_TOKENS) + ["the", ","]
    assert len(vocab) == 6
    assert vocab.encode(["the", "lions", ",", "<pad>"]) == [4, 0, 5, 1]
    assert vocab.shift == pytest.approx(rarity_shift(np.array([1000, 900])))


def test_vocabulary_save_load_slice(tmp_path):
    path = tmp_path / "vocab.parquet"
    vocab = Vocabulary.from_counts(COUNTS, size=100)
    vocab.save(path)
    frame = pd.read_parquet(path)
    assert list(frame.columns) == ["id", "token", "count", "rarity"]
    assert str(frame["id"].dtype) == "int32" and str(frame["count"].dtype) == "int64"
    loaded = Vocabulary.load(path)
    assert loaded.itos == vocab.itos
    np.testing.assert_allclose(loaded.rarity, frame["rarity"].to_numpy(), rtol=1e-6)
    small = Vocabulary.load(path, size=7)
    assert small.itos == vocab.itos[:7]
    assert small.to_frame()["rarity"].iloc[4:].mean() == pytest.approx(1.0)  # shift recomputed for the slice
    assert small.stoi["irish"] == 6 and small.encode(["lions"]) == [0]


def test_a_slice_keeps_the_train_counts_of_the_words_after_it(tmp_path):
    # the 2 words "the" (1000) and "," (900) make the slice, shift = 1 - (1/ln 1001 + 1/ln 901)/2
    # = 0.854137; "fly-half" (seen twice) scores 1/ln 3 + shift, "irish" (7) 1/ln 8 + shift, and a word
    # training never saw the unknown score 1/ln 2 + shift, as "wales" (seen once)
    path = tmp_path / "vocab.parquet"
    Vocabulary.from_counts(COUNTS, size=100).save(path)
    vocab = Vocabulary.load(path, size=6, keep_tail=True)
    assert vocab.itos == list(SPECIAL_TOKENS) + ["the", ","]
    assert vocab.oov_counts == {"irish": 7, "lions": 7, "fly-half": 2, "wales": 1}
    assert vocab.oov_rarity("fly-half") == pytest.approx(1.764376, abs=1e-6)
    assert vocab.oov_rarity("irish") == pytest.approx(1.335035, abs=1e-6)
    assert vocab.oov_rarity("wales") == vocab.oov_rarity("zebra") == np.float32(vocab.unknown_rarity)
    assert vocab.unknown_rarity == pytest.approx(2.296832, abs=1e-6)
    # without the tail (the thesis's choice), every OOV word is at the unknown score
    assert Vocabulary.load(path, size=6).oov_rarity("irish") == np.float32(vocab.unknown_rarity)
    # saved, the tail follows the slice's rows, and reads back whole
    vocab.save(tmp_path / "kept.parquet")
    assert pd.read_parquet(tmp_path / "kept.parquet")["token"].tolist()[4:] == ["the", ",", "irish", "lions",
                                                                                "fly-half", "wales"]
    again = Vocabulary.load(tmp_path / "kept.parquet", size=6, keep_tail=True)
    assert again.oov_counts == vocab.oov_counts and again.shift == vocab.shift


def test_vocabulary_errors(tmp_path):
    with pytest.raises(SumpipeError, match="no such vocabulary file"):
        Vocabulary.load(tmp_path / "missing.parquet")
    with pytest.raises(SumpipeError):
        Vocabulary.from_counts(COUNTS, size=4)


def test_vocabulary_ids_are_the_model_protocol_specials():
    from sumpipe.names import BOS, EOS, PAD, UNK

    vocab = Vocabulary.from_counts(COUNTS, size=6)
    assert vocab.encode(["<unk>", "<pad>", "<s>", "</s>"]) == [UNK, PAD, BOS, EOS] == [0, 1, 2, 3]
    assert vocab.rarity[PAD] == 0.0 and vocab.rarity[BOS] == vocab.rarity[EOS] == 1.0
    assert vocab.rarity[UNK] == np.float32(vocab.unknown_rarity)
    with pytest.raises(SumpipeError, match="vocabulary must start with <unk>, <pad>, <s>, </s>"):
        Vocabulary(itos=["<pad>", "<unk>", "<s>", "</s>", "the"], counts=np.zeros(5), shift=0.0)


@pytest.mark.parametrize(("counts", "message"), [
    ([5, -2], "vocabulary row 5 ('b'): count -2 (a word's train count is at least 1)"),
    ([5, 0], "vocabulary row 5 ('b'): count 0 (a word's train count is at least 1)"),
    ([0, 0], "every word's count is 0 (a word's train count is at least 1)"),
])
def test_vocabulary_counts_out_of_range_are_one_line_naming_the_file_and_row(tmp_path, counts, message) -> None:
    """A count below -1 was a decimal.InvalidOperation in rarity_shift; all 0 gave M2 NaN attention and an
    empty summary, exit 0."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "vocab.parquet"
    tokens = [*SPECIAL_TOKENS, "a", "b"]
    pq.write_table(pa.table({"id": pa.array(range(6), pa.int32()), "token": tokens,
                             "count": pa.array([0, 0, 0, 0, *counts], pa.int64()),
                             "rarity": pa.array([0.0] * 6)}), path)
    with pytest.raises(SumpipeError) as refused:
        Vocabulary.load(path)
    assert str(refused.value) == f"{path}: {message}"
