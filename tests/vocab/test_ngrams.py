"""The 3-gram table: Table 2.8 scores, packing, counting, scoring sentences."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sumpipe.vocab.ngrams import (
    DROPPED,
    HASHED_BIT,
    UNKNOWN,
    NgramCounter,
    NgramTable,
    ngram_score,
    ngram_windows,
    pack_ngrams,
    unpack_ngrams,
)


def test_table_2_8_scores_exact():
    # ('wales','british','irish') 45, ('british','irish','lions') 504, ('irish','lions','fly-half') 6
    assert [round(float(s), 3) for s in ngram_score(np.array([45, 504, 6]))] == [0.605, 0.370, 1.285]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pack_round_trip_and_order(n):
    rng = np.random.default_rng(n)
    bits = 63 // n
    windows = rng.integers(0, 1 << bits, size=(2000, n))
    keys = pack_ngrams(windows)
    assert keys.dtype == np.uint64 and not (keys & HASHED_BIT).any()
    np.testing.assert_array_equal(unpack_ngrams(keys, n), windows)
    # Exact keys sort like the id tuples, and distinct tuples get distinct keys.
    order = np.lexsort(windows.T[::-1])
    np.testing.assert_array_equal(np.argsort(keys, kind="stable"), order)
    assert len(np.unique(keys)) == len(np.unique(windows, axis=0))


def test_pack_extremes_and_hash_fallback():
    top = (1 << 21) - 1
    assert pack_ngrams(np.array([[top, top, top]]))[0] == np.uint64((1 << 63) - 1)
    assert pack_ngrams(np.array([[1, 2, 3]]))[0] == np.uint64((1 << 42) | (2 << 21) | 3)
    big = np.array([[1 << 21, 2, 3], [1 << 21, 2, 4], [5, 6, 1 << 30]])
    keys = pack_ngrams(big)
    assert ((keys & HASHED_BIT) != 0).all() and len(set(keys.tolist())) == 3
    np.testing.assert_array_equal(pack_ngrams(big), keys)  # deterministic
    with pytest.raises(ValueError):
        unpack_ngrams(keys, 3)


def test_ngram_windows_skip_stop_words_and_stay_in_sentences():
    codes = np.array([1, DROPPED, 2, 3, 4, DROPPED, 5, 6, UNKNOWN])
    windows, sentence = ngram_windows(codes, np.array([5, 4]), 3)
    assert windows.tolist() == [[1, 2, 3], [2, 3, 4], [5, 6, UNKNOWN]]
    assert sentence.tolist() == [0, 0, 1]
    empty, _ = ngram_windows(np.array([1, 2]), np.array([2]), 3)
    assert empty.shape == (0, 3)


def test_counter_matches_unique_across_merges():
    rng = np.random.default_rng(0)
    chunks = [rng.integers(0, 5000, size=rng.integers(1, 3000)).astype(np.uint64) for _ in range(40)]
    counter = NgramCounter(min_flush=1000)
    for c in chunks:
        counter.add(c)
    keys, counts = counter.result()
    expected_keys, expected_counts = np.unique(np.concatenate(chunks), return_counts=True)
    np.testing.assert_array_equal(keys, expected_keys)
    np.testing.assert_array_equal(counts, expected_counts)
    assert counts.dtype == np.uint32 and counter.total == sum(map(len, chunks))


def _table(grams: dict[tuple[str, str, str], int]) -> NgramTable:
    words = sorted({w for g in grams for w in g} | {"the", ","})
    ids = {w: i for i, w in enumerate(words)}
    keys = pack_ngrams(np.array([[ids[w] for w in g] for g in grams]))
    order = np.argsort(keys)
    counts = np.array(list(grams.values()), dtype=np.uint32)
    return NgramTable(n=3, keys=keys[order], counts=counts[order], words=words)


def test_sentence_scores_mean_unknown_max_and_no_gram_zero():
    table = _table({("british", "irish", "lions"): 504, ("irish", "lions", "fly-half"): 6, ("a1", "b1", "c1"): 2})
    assert table.max_score == pytest.approx(1 / np.log10(2))
    sentences = [
        "the british , irish lions fly-half".split(),  # two known 3-grams
        "british irish lions kicked".split(),  # one known, one with an unseen word
        "the lions .".split(),  # one content word: no 3-gram
        "irish british lions".split(),  # only words known, 3-gram unknown
    ]
    scores = table.sentence_scores(sentences)
    assert scores[0] == pytest.approx((1 / np.log10(504) + 1 / np.log10(6)) / 2)
    assert scores[1] == pytest.approx((1 / np.log10(504) + table.max_score) / 2)
    assert scores[2] == 0.0
    assert scores[3] == pytest.approx(table.max_score)


def test_table_save_load(tmp_path):
    table = _table({("british", "irish", "lions"): 504, ("irish", "lions", "fly-half"): 6})
    table.save(tmp_path / "ngrams.parquet", word_counts=np.arange(len(table.words)))
    loaded = NgramTable.load(tmp_path)
    assert loaded.words == table.words and loaded.n == 3
    np.testing.assert_array_equal(loaded.keys, table.keys)
    np.testing.assert_array_equal(loaded.counts, table.counts)


def test_sentence_sums_do_not_depend_on_order():
    """float32 scores in [2**-4, 4) add up exactly in float64, so a sentence's mean is the same bits
    whichever order (or SIMD width) sums it."""
    table = NgramTable(n=3, keys=np.arange(5000, dtype=np.uint64), counts=np.arange(2, 5002, dtype=np.uint32),
                       words=[])
    scores = table.scores.astype(np.float64)
    rng = np.random.default_rng(1)
    for size in (3, 50, 5000):
        picked = rng.choice(scores, size)
        sums = {math.fsum(picked), float(np.sum(picked)), float(np.cumsum(picked[::-1])[-1]),
                float(np.sum(np.sort(picked))), sum(picked.tolist())}
        assert len(sums) == 1
