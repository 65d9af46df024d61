"""Batching (Morozovskii 2022 Table 4.4): exact ids, extended ids, rarity scores, padding, bucketing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from sumpipe.errors import SumpipeError
from sumpipe.models.batching import (
    bucket_batches,
    collate,
    decoder_input,
    encode_example,
    encode_examples,
    example_lengths,
    spelling_hashes,
    spelling_table,
)
from sumpipe.names import BOS, EOS, PAD, UNK


class TinyVocab:
    """Duck-typed stand-in for sumpipe.vocab.vocabulary.Vocabulary (ids 0..3 are the specials)."""

    def __init__(self, words: list[str], rarity: list[float], unknown_rarity: float,
                 oov_scores: dict[str, float] | None = None) -> None:
        self.itos = ["<unk>", "<pad>", "<s>", "</s>", *words]
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.rarity = np.array([unknown_rarity, 0.0, 1.0, 1.0, *rarity], dtype=np.float32)
        self.unknown_rarity = unknown_rarity
        self.oov_scores = oov_scores or {}

    def oov_rarity(self, word: str) -> float:
        return self.oov_scores.get(word, self.unknown_rarity)

    def __len__(self) -> int:
        return len(self.itos)


# ids:           4      5       6      7      8
VOCAB = TinyVocab(["the", "madden", "is", "nfl", "."], [0.5, 1.25, 0.75, 1.5, 0.25], 2.0)
V = len(VOCAB)  # 9


def test_encode_example_matches_table_4_4_by_hand() -> None:
    source = "the madden is ebullient .\nthe analyst/personality is ebullient"
    summary = "ebullient madden retires ."
    ex = encode_example("x1", source, summary, VOCAB, max_source_tokens=100, max_summary_tokens=10)
    assert ex.src.tolist() == [4, 5, 6, UNK, 8, 4, UNK, 6, UNK]
    # OOVs numbered from V in order of first occurrence; a repeated OOV keeps its id
    assert ex.oov_words == ["ebullient", "analyst/personality"]
    assert ex.src_ext.tolist() == [4, 5, 6, V, 8, 4, V + 1, 6, V]
    assert ex.src_freq.tolist() == [0.5, 1.25, 0.75, 2.0, 0.25, 0.5, 2.0, 0.75, 2.0]
    assert ex.src_freq.dtype == np.float32
    # decoder input: <s> + summary with <unk> for OOV; target: summary + </s>, OOV copied from
    # the source gets its extended id, an OOV absent from the source stays <unk>
    assert ex.trg_inp.tolist() == [BOS, UNK, 5, UNK, 8]
    assert ex.trg_ext.tolist() == [V, 5, UNK, 8, EOS]
    # what the decoder reads (and decoding feeds back): the copied "ebullient" as its extended id;
    # "retires", not in the source, stays <unk>
    inp = decoder_input(torch.from_numpy(ex.trg_inp)[None], torch.from_numpy(ex.trg_ext)[None])
    assert inp.tolist() == [[BOS, V, 5, UNK, 8]]


def test_an_oov_word_with_a_train_count_scores_by_it() -> None:
    # "analyst/personality" has a score of its own (the vocabulary kept its train count);
    # "ebullient", unseen in training, keeps the unknown score
    vocab = TinyVocab(["the", "madden", "is", "nfl", "."], [0.5, 1.25, 0.75, 1.5, 0.25], 2.0,
                      oov_scores={"analyst/personality": 0.625})
    ex = encode_example("x1", "the analyst/personality is ebullient", "", vocab, 100, 10)
    assert ex.src_freq.tolist() == [0.5, 0.625, 0.75, 2.0]


def test_spelling_hashes_are_the_crc32_of_the_marked_3grams() -> None:
    # "<ab>" -> "<ab", "ab>"; a one-letter word still has one 3-gram, "<x>"; a long word keeps 16
    assert spelling_hashes("ab") == (225091444, 553544843)
    assert len(spelling_hashes("x")) == 1 and len(spelling_hashes("a" * 40)) == 16
    table = spelling_table([["ab", "x"], []])
    assert table.shape == (2, 2, 2) and table.dtype == np.int64
    assert table.tolist() == [[[225091444, 553544843], [spelling_hashes("x")[0], -1]], [[-1, -1], [-1, -1]]]
    assert spelling_table([[], []]).shape == (2, 0, 1)


def test_truncation_and_literal_special_tokens() -> None:
    ex = encode_example("x", "the <s> nfl is the", "the nfl is .", VOCAB, max_source_tokens=3, max_summary_tokens=2)
    # "<s>" in the text is a word (an OOV), not the control symbol
    assert ex.src.tolist() == [4, UNK, 7]
    assert ex.src_ext.tolist() == [4, V, 7]
    assert ex.oov_words == ["<s>"]
    assert ex.trg_inp.tolist() == [BOS, 4, 7]
    assert ex.trg_ext.tolist() == [4, 7, EOS]


def test_empty_source_is_a_user_error() -> None:
    with pytest.raises(SumpipeError, match="'e1'.*empty"):
        encode_example("e1", " \n ", "the", VOCAB, 10, 10)


def test_encode_examples_without_reference_column() -> None:
    df = pd.DataFrame({"id": [7], "source": ["the nfl"]})
    (ex,) = encode_examples(df, VOCAB, 10, 10)
    assert ex.id == "7"
    assert ex.trg_inp.tolist() == [BOS] and ex.trg_ext.tolist() == [EOS]


def test_collate_pads_and_masks() -> None:
    df = pd.DataFrame({"id": ["a", "b"], "source": ["the zz nfl", "is"], "reference": ["zz", "the nfl is"]})
    batch = collate(encode_examples(df, VOCAB, 10, 10))
    assert batch.src.tolist() == [[4, UNK, 7], [6, PAD, PAD]]
    assert batch.src_ext.tolist() == [[4, V, 7], [6, PAD, PAD]]
    assert batch.src_freq.tolist() == [[0.5, 2.0, 1.5], [0.75, 0.0, 0.0]]
    assert batch.src_mask.tolist() == [[True, True, True], [True, False, False]]
    assert batch.trg_inp.tolist() == [[BOS, UNK, PAD, PAD], [BOS, 4, 7, 6]]
    assert batch.trg_ext.tolist() == [[V, EOS, PAD, PAD], [4, 7, 6, EOS]]
    assert batch.trg_mask.tolist() == [[True, True, False, False], [True, True, True, True]]
    assert batch.n_oov == 1 and batch.oov_words == [["zz"], []] and batch.ids == ["a", "b"]
    assert batch.oov_spelling.tolist() == [[list(spelling_hashes("zz"))], [[-1] * 2]]  # "<zz", "zz>"
    assert batch.src.dtype == torch.long and batch.src_freq.dtype == torch.float32
    assert batch.n_target_tokens == 6
    assert batch.trg_positions.tolist() == [0, 1, 4, 5, 6, 7]  # flat b * T + t of the True entries
    sub = batch.index_select([1])
    assert sub.ids == ["b"] and sub.src.tolist() == [[6, PAD, PAD]] and sub.oov_words == [[]]
    assert sub.trg_positions.tolist() == [0, 1, 2, 3]
    moved = batch.to("cpu")
    assert torch.equal(moved.src_ext, batch.src_ext) and moved.n_oov == 1


def test_bucket_batches_is_deterministic_and_length_sorted_within_pools() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 400, size=103)
    a = bucket_batches(lengths, batch_size=8, seed=5, epoch=2, pool_batches=4)
    assert a == bucket_batches(lengths, batch_size=8, seed=5, epoch=2, pool_batches=4)
    assert a != bucket_batches(lengths, batch_size=8, seed=5, epoch=3, pool_batches=4)
    flat = [i for batch in a for i in batch]
    assert sorted(flat) == list(range(103))  # every example exactly once
    assert sum(len(b) < 8 for b in a) <= 4  # only a pool's last batch may be short
    for batch in a:
        assert lengths[batch].tolist() == sorted(lengths[batch].tolist())
    # bucketing keeps padding far below that of random batches
    spread = np.mean([np.ptp(lengths[b]) for b in a])
    assert spread < 0.5 * np.ptp(lengths)


def test_bucket_batches_without_shuffle_sorts_longest_first() -> None:
    assert bucket_batches([3, 9, 1, 9, 5], batch_size=2, seed=0, epoch=0, shuffle=False) == [[1, 3], [4, 0], [2]]


def test_example_lengths() -> None:
    df = pd.DataFrame({"id": ["a", "b"], "source": ["the zz nfl", "is"]})
    assert example_lengths(encode_examples(df, VOCAB, 10, 10)).tolist() == [3, 1]


# --------------------------------------------------------------------------------------------
# Golden example: Morozovskii 2022, Appendix A.1 (Tables A.1 and A.2), a 50,000-word vocabulary
# --------------------------------------------------------------------------------------------
APPENDIX_SOURCE = (
    "new york legendary football coach and broadcaster john madden is retiring , he announced "
    "thursday . john madden appears at the tv critics association press tour in beverly hills , "
    "california , in 2008 . it is been such a great ride ... the nfl has been my life for more than "
    "40 years , it has been my passion it still is , he said in a statement released by nbc sports . "
    "madden , 73 , was a hall of fame coach for the oakland raiders , but is best known to millions "
    "as an ebullient football commentator . he won 16 emmy awards for outstanding sports "
    "analyst/personality , nbc said ."
)

APPENDIX_SUMMARY = (
    "legendary football coach and broadcaster john madden announces he is retiring . the nfl has been "
    "my life for more than 40 years , it has been my passion , he says . madden is best known to "
    "millions as an ebullient football commentator ."
)

APPENDIX_SRC = [
    62, 256, 5217, 467, 998, 9, 5710, 347, 16059, 13, 7605, 6, 19, 648, 365, 4, 347, 16059, 1136, 25, 5,
    588, 1930, 1255, 658, 931, 11, 6994, 3430, 6, 646, 6, 11, 785, 4, 20, 13, 45, 162, 8, 298, 2157,
    279, 5, 2587, 33, 45, 84, 137, 15, 55, 72, 849, 81, 6, 20, 33, 45, 84, 3762, 20, 145, 13, 6, 19, 22,
    11, 8, 311, 381, 30, 2627, 1108, 4, 16059, 6, 6344, 6, 14, 8, 1393, 10, 3095, 998, 15, 5, 7542,
    11952, 6, 36, 13, 244, 306, 7, 1248, 26, 39, 0, 467, 8903, 4, 19, 471, 694, 11538, 2266, 15, 4246,
    1108, 0, 6, 2627, 22, 4,
]

APPENDIX_SRC_EXT = [
    62, 256, 5217, 467, 998, 9, 5710, 347, 16059, 13, 7605, 6, 19, 648, 365, 4, 347, 16059, 1136, 25, 5,
    588, 1930, 1255, 658, 931, 11, 6994, 3430, 6, 646, 6, 11, 785, 4, 20, 13, 45, 162, 8, 298, 2157,
    279, 5, 2587, 33, 45, 84, 137, 15, 55, 72, 849, 81, 6, 20, 33, 45, 84, 3762, 20, 145, 13, 6, 19, 22,
    11, 8, 311, 381, 30, 2627, 1108, 4, 16059, 6, 6344, 6, 14, 8, 1393, 10, 3095, 998, 15, 5, 7542,
    11952, 6, 36, 13, 244, 306, 7, 1248, 26, 39, 50000, 467, 8903, 4, 19, 471, 694, 11538, 2266, 15,
    4246, 1108, 50001, 6, 2627, 22, 4,
]

APPENDIX_SRC_FREQ = [
    0.8087, 0.8195, 0.8524, 0.8233, 0.8295, 0.7958, 0.8543, 0.8213, 0.8844, 0.7992, 0.8613, 0.7931,
    0.8007, 0.8259, 0.8216, 0.7922, 0.8213, 0.8844, 0.8308, 0.8021, 0.7923, 0.8251, 0.8369, 0.8319,
    0.826, 0.829, 0.7962, 0.8593, 0.845, 0.7931, 0.8259, 0.7931, 0.7962, 0.8273, 0.7922, 0.8009, 0.7992,
    0.8056, 0.8162, 0.7957, 0.8204, 0.8384, 0.82, 0.7923, 0.8407, 0.8035, 0.8056, 0.8108, 0.8148,
    0.7998, 0.808, 0.8101, 0.8281, 0.8104, 0.7931, 0.8009, 0.8035, 0.8056, 0.8108, 0.8464, 0.8009,
    0.8153, 0.7992, 0.7931, 0.8007, 0.8018, 0.7962, 0.7957, 0.8207, 0.822, 0.803, 0.841, 0.8306, 0.7922,
    0.8844, 0.7931, 0.8568, 0.7931, 0.7996, 0.7957, 0.8329, 0.7958, 0.8434, 0.8295, 0.7998, 0.7923,
    0.861, 0.8739, 0.7931, 0.8039, 0.7992, 0.8189, 0.8205, 0.7952, 0.8318, 0.8022, 0.8047, 2.1736,
    0.8233, 0.8652, 0.7922, 0.8007, 0.8234, 0.8264, 0.8728, 0.839, 0.7998, 0.8485, 0.8306, 2.1736,
    0.7931, 0.841, 0.8018, 0.7922,
]

APPENDIX_TRG_INP = [
    2, 5217, 467, 998, 9, 5710, 347, 16059, 9634, 19, 13, 7605, 4, 5, 2587, 33, 45, 84, 137, 15, 55, 72,
    849, 81, 6, 20, 33, 45, 84, 3762, 6, 19, 98, 4, 16059, 13, 244, 306, 7, 1248, 26, 39, 0, 467, 8903,
    4,
]

APPENDIX_TRG_EXT = [
    5217, 467, 998, 9, 5710, 347, 16059, 9634, 19, 13, 7605, 4, 5, 2587, 33, 45, 84, 137, 15, 55, 72,
    849, 81, 6, 20, 33, 45, 84, 3762, 6, 19, 98, 4, 16059, 13, 244, 306, 7, 1248, 26, 39, 50000, 467,
    8903, 4, 3,
]


def test_appendix_a1_trace_is_reproduced() -> None:
    """The thesis's own trace: the same ids, OOV ids 50000/50001, rarity 2.1736 for OOV words.

    The vocabulary puts every in-vocabulary word of the example at the id the thesis shows (and
    filler words elsewhere); its rarity column carries the thesis's per-word scores, with the OOV
    score 2.1736 = 1/ln 2 + shift of the CNN/DM vocabulary.
    """
    size = 50000
    itos = ["<unk>", "<pad>", "<s>", "</s>"] + [f"filler{i}" for i in range(4, size)]
    rarity = np.ones(size, dtype=np.float32)
    pairs = [*zip(APPENDIX_SOURCE.split(), APPENDIX_SRC, APPENDIX_SRC_FREQ),
             *((w, i, None) for w, i in zip(APPENDIX_SUMMARY.split(), APPENDIX_TRG_INP[1:]))]
    for word, i, freq in pairs:
        if i != UNK:
            itos[i] = word
            if freq is not None:
                rarity[i] = freq
    vocab = TinyVocab([], [], 2.1736)
    vocab.itos, vocab.stoi, vocab.rarity = itos, {w: i for i, w in enumerate(itos)}, rarity

    ex = encode_example("madden", APPENDIX_SOURCE, APPENDIX_SUMMARY, vocab, 400, 100)
    assert ex.src.tolist() == APPENDIX_SRC
    assert ex.src_ext.tolist() == APPENDIX_SRC_EXT
    assert ex.oov_words == ["ebullient", "analyst/personality"]
    assert ex.trg_inp.tolist() == APPENDIX_TRG_INP
    assert ex.trg_ext.tolist() == APPENDIX_TRG_EXT
    np.testing.assert_allclose(ex.src_freq, APPENDIX_SRC_FREQ, rtol=0, atol=1e-6)
    # after padding to the thesis's fixed lengths: <pad> = 1 ids, rarity 0, masked
    padded = collate([ex, encode_example("long", " ".join(["the"] * 400), " ".join(["the"] * 100), vocab, 400, 100)])
    assert padded.src.shape == (2, 400) and padded.trg_ext.shape == (2, 101)
    assert torch.all(padded.src[0, 114:] == PAD) and torch.all(padded.src_freq[0, 114:] == 0)
    assert torch.all(padded.trg_ext[0, 46:] == PAD) and padded.trg_mask[0].sum() == 46


def test_the_word_codec_knows_which_ids_end_a_sentence() -> None:
    from sumpipe.models.batching import WordCodec
    from sumpipe.vocab.vocabulary import Vocabulary

    vocab = Vocabulary.from_counts({"the": 3, ".": 2, "!": 1, ",": 1}, 8)
    codec = WordCodec(vocab, 10)
    assert sorted(codec.itos[i] for i in codec.sentence_end_ids) == ["!", "."]
