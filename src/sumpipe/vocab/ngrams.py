"""The n-gram (3-gram) table of Morozovskii 2022 §2.3.3: counts over the training sources and scores.

Score of an n-gram seen `count` times (count >= 2; n-grams seen once are dropped, their score
1/log(1) would be infinite):

    score = 1 / log10(count)          (no shift; Table 2.8: 45 -> 0.605, 504 -> 0.370, 6 -> 1.285)

N-grams are taken inside one sentence, over its content words (stop words and punctuation removed,
see `sumpipe.vocab.words`), of the *source* texts of the train split only: they describe how common
a phrase of an input document is; counting the references too would make exactly the phrases
summaries repeat look common.

Scale: full CNN/DM has ~10^8 distinct 3-grams, so nothing here is a dict of tuples. Every train word
gets an integer id (first-seen order, `words.parquet`); an n-gram of ids packs into one uint64 key:

- exact: with b = 63 // n bits per id (21 for 3-grams), key = id_1 << b(n-1) | ... | id_n when every
  id < 2**b (2,097,152 distinct train words for 3-grams; 6,289 CNN stories have 93k); bit 63 stays 0.
- hashed: an n-gram with a larger id gets a 63-bit splitmix64 hash with bit 63 set, so it can only
  collide with another hashed n-gram (about n_hashed**2 / 2**64 expected collisions: none in practice).

Counting (`NgramCounter`) keeps sorted unique keys (uint64) + counts (uint32) and merges buffered
chunks into them with `np.searchsorted` + `np.insert`: ~12 bytes per distinct n-gram at rest, under
~32 at the peak of a merge. The table (`NgramTable`) keeps the n-grams seen >= min_count times,
sorted, and scores a document's sentences with one vectorised `np.searchsorted`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import read_table, write_parquet
from sumpipe.vocab.exact import inverse_log10, per_count
from sumpipe.vocab.words import is_content_word

NGRAMS_FILE = "ngrams.parquet"  # the vocab stage's n-gram table
WORDS_FILE = "words.parquet"  # beside it: every train word
HASHED_BIT = np.uint64(1 << 63)

# Word codes when scoring text: a train content word has its id (>= 0); these mark the rest.
UNKNOWN = -1  # a content word never seen in training: any n-gram containing it is unknown
DROPPED = -2  # a stop word or punctuation: removed before forming n-grams


def bits_per_id(n: int) -> int:
    """Bits per word id in an exactly packed n-gram key (21 for 3-grams)."""
    return 63 // n


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on uint64 arrays (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def pack_ngrams(windows: np.ndarray) -> np.ndarray:
    """Pack n-grams of word ids into uint64 keys.

    windows: (m, n) int64, ids >= 0. Returns (m,) uint64: exact packing when every id of a row fits
    in `bits_per_id(n)` bits (bit 63 clear), else a 63-bit hash with bit 63 set.
    """
    windows = np.asarray(windows, dtype=np.int64)
    m, n = windows.shape
    bits = bits_per_id(n)
    ids = windows.astype(np.uint64)
    keys = np.zeros(m, dtype=np.uint64)
    for j in range(n):
        keys |= ids[:, j] << np.uint64(bits * (n - 1 - j))
    too_big = (windows >= (1 << bits)).any(axis=1)
    if too_big.any():
        h = np.full(int(too_big.sum()), 0x9E3779B97F4A7C15, dtype=np.uint64)
        for j in range(n):
            h = _splitmix64(h ^ ids[too_big, j])
        keys[too_big] = h | HASHED_BIT
    return keys


def unpack_ngrams(keys: np.ndarray, n: int) -> np.ndarray:
    """Inverse of `pack_ngrams` for exactly packed keys: (m,) uint64 -> (m, n) int64.

    Hashed keys (bit 63 set) cannot be unpacked and raise ValueError.
    """
    keys = np.asarray(keys, dtype=np.uint64)
    if (keys & HASHED_BIT).any():
        raise ValueError("hashed n-gram keys cannot be unpacked")
    bits = bits_per_id(n)
    mask = np.uint64((1 << bits) - 1)
    cols = [(keys >> np.uint64(bits * (n - 1 - j))) & mask for j in range(n)]
    return np.stack(cols, axis=1).astype(np.int64)


def ngram_windows(codes: np.ndarray, sentence_lengths: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The n-grams of content words inside each sentence.

    codes: (T,) int64 word codes of all tokens of consecutive sentences (id, UNKNOWN or DROPPED);
    sentence_lengths: (S,) tokens per sentence, summing to T.
    Returns windows (m, n) int64 of codes (DROPPED removed first, so n-grams skip stop words) and
    sentence (m,) int64, the sentence each n-gram lies in (never across a sentence boundary).
    """
    codes = np.asarray(codes, dtype=np.int64)
    sentence = np.repeat(np.arange(len(sentence_lengths), dtype=np.int64), sentence_lengths)
    keep = codes != DROPPED
    codes, sentence = codes[keep], sentence[keep]
    m = len(codes) - n + 1
    if m <= 0:
        return np.empty((0, n), dtype=np.int64), np.empty(0, dtype=np.int64)
    same_sentence = sentence[: m] == sentence[n - 1:]
    windows = np.stack([codes[j: j + m] for j in range(n)], axis=1)[same_sentence]
    return windows, sentence[: m][same_sentence]


class NgramCounter:
    """Exact counts of uint64 keys, held as sorted unique keys + uint32 counts.

    `add` buffers chunks; a buffer grown to 1/8 of the table (or `min_flush`) is sorted, reduced
    and merged in. Small merges keep the peak near 12 bytes x 2 (old and new arrays during
    `np.insert`) + the buffer, i.e. under 32 bytes per distinct key once the table is large.
    """

    def __init__(self, min_flush: int = 1 << 18) -> None:
        self.keys = np.empty(0, dtype=np.uint64)
        self.counts = np.empty(0, dtype=np.uint32)
        self.min_flush = min_flush
        self.total = 0
        self._pending: list[np.ndarray] = []
        self._pending_size = 0

    def add(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.uint64)
        self._pending.append(keys)
        self._pending_size += len(keys)
        self.total += len(keys)
        if self._pending_size >= max(self.min_flush, len(self.keys) // 8):
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        chunk = np.concatenate(self._pending)
        self._pending, self._pending_size = [], 0
        chunk.sort()
        starts = np.flatnonzero(np.concatenate(([True], chunk[1:] != chunk[:-1])))
        new_keys = chunk[starts]
        new_counts = np.diff(np.append(starts, len(chunk))).astype(np.uint32)
        del chunk, starts
        pos = np.searchsorted(self.keys, new_keys)
        found = pos < len(self.keys)
        found[found] = self.keys[pos[found]] == new_keys[found]
        self.counts[pos[found]] += new_counts[found]  # positions are distinct: plain += is exact
        fresh = ~found
        pos, new_keys, new_counts = pos[fresh], new_keys[fresh], new_counts[fresh]
        self.keys = np.insert(self.keys, pos, new_keys)
        self.counts = np.insert(self.counts, pos, new_counts)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, counts): every distinct key seen, sorted, with its count."""
        self._flush()
        return self.keys, self.counts


def ngram_score(counts: np.ndarray) -> np.ndarray:
    """1 / log10(count) for counts >= 2 (Table 2.8), float64, same shape as `counts`; the same bits
    on every machine (`sumpipe.vocab.exact`)."""
    return per_count(inverse_log10, counts)


class _WordCodes(dict):
    """token -> word code; a token never seen in training is UNKNOWN (content) or DROPPED."""

    def __missing__(self, token: str) -> int:
        return UNKNOWN if is_content_word(token) else DROPPED


@dataclass
class NgramTable:
    """Scored n-grams of the training sources.

    keys: (K,) uint64 sorted packed n-grams; counts: (K,) uint32 (each >= min_count);
    words: id -> train word (every train word, stop words included; the ids packed in the keys).
    """

    n: int
    keys: np.ndarray
    counts: np.ndarray
    words: list[str]
    min_count: int = 2

    def __post_init__(self) -> None:
        self.scores = ngram_score(self.counts).astype(np.float32)
        # Unknown n-grams get the table's maximum (Alg. 1); an empty table's would-be maximum is that
        # of the rarest n-gram it could hold.
        self.max_score = float(self.scores.max()) if len(self.scores) else inverse_log10(self.min_count)
        self._codes = _WordCodes((w, i if is_content_word(w) else DROPPED) for i, w in enumerate(self.words))

    # ---- scoring ------------------------------------------------------------------------------
    def codes(self, tokens: Sequence[str]) -> np.ndarray:
        """(T,) int64 word codes: train content word -> its id, stop word/punctuation -> DROPPED,
        unseen content word -> UNKNOWN."""
        return np.fromiter(map(self._codes.__getitem__, tokens), dtype=np.int64, count=len(tokens))

    def lookup(self, windows: np.ndarray) -> np.ndarray:
        """Scores (m,) float64 of n-grams of word codes (m, n); unknown n-grams (an UNKNOWN word,
        or not in the table) get `max_score`."""
        scores = np.full(len(windows), self.max_score, dtype=np.float64)
        known = (windows >= 0).all(axis=1)
        if known.any() and len(self.keys):
            keys = pack_ngrams(windows[known])
            pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
            hit = self.keys[pos] == keys
            idx = np.flatnonzero(known)[hit]
            scores[idx] = self.scores[pos[hit]]
        return scores

    def sentence_scores(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """(S,) float64: each sentence's mean n-gram score; 0 for a sentence with fewer than n
        content words (no n-gram), which ranks it after every sentence that has one."""
        return self.documents_sentence_scores([sentences])[0]

    def documents_sentence_scores(self, documents: Sequence[Sequence[Sequence[str]]]) -> list[np.ndarray]:
        """`sentence_scores` of many documents at once (one vectorised pass; the stage's fast path).

        The means are the same bits on every machine whatever the summation order: every score is a
        float32 in [2**-4, 4) (1/log10 of a uint32 count >= 2), i.e. a multiple of 2**-27, so any sum
        of fewer than 2**24 of them is exact in float64; one division follows."""
        lengths = np.array([len(s) for doc in documents for s in doc], dtype=np.int64)
        codes = self.codes([t for doc in documents for s in doc for t in s])
        windows, sentence = ngram_windows(codes, lengths, self.n)
        totals = np.bincount(sentence, weights=self.lookup(windows), minlength=len(lengths))
        numbers = np.bincount(sentence, minlength=len(lengths))
        means = np.divide(totals, numbers, out=np.zeros(len(lengths)), where=numbers > 0)
        return np.split(means, np.cumsum([len(doc) for doc in documents])[:-1])

    # ---- persistence --------------------------------------------------------------------------
    def save(self, path: str | os.PathLike, word_counts: np.ndarray | None = None) -> Path:
        """Write `path` (key uint64, count uint32) and `words.parquet` beside it (id, token, count)."""
        path = Path(path)
        table = pa.table({"key": pa.array(self.keys, pa.uint64()), "count": pa.array(self.counts, pa.uint32())})
        table = table.replace_schema_metadata({
            b"sumpipe.n": str(self.n).encode(),
            b"sumpipe.min_count": str(self.min_count).encode(),
            b"sumpipe.bits_per_id": str(bits_per_id(self.n)).encode(),
            b"sumpipe.words": WORDS_FILE.encode(),
        })
        write_parquet(table, path)
        words = {"id": pa.array(np.arange(len(self.words), dtype=np.int32)), "token": pa.array(self.words, pa.string())}
        if word_counts is not None:
            words["count"] = pa.array(np.asarray(word_counts, dtype=np.int64))
        write_parquet(pa.table(words), path.parent / WORDS_FILE)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> NgramTable:
        """Read `ngrams.parquet` (or the folder holding it) and the `words.parquet` beside it."""
        path = Path(path)
        if path.is_dir():
            path = path / NGRAMS_FILE
        words_path = path.parent / WORDS_FILE
        for p in (path, words_path):
            if not p.is_file():
                raise SumpipeError(f"{p}: no such file (run `sumpipe vocab` first)")
        table = read_table(path)
        meta = table.schema.metadata or {}
        words = read_table(words_path, columns=["id", "token"])
        if not np.array_equal(words.column("id").to_numpy(), np.arange(words.num_rows)):
            raise SumpipeError(f"{words_path}: ids must be 0..{words.num_rows - 1} in order")
        return cls(
            n=int(meta.get(b"sumpipe.n", b"3")),
            keys=table.column("key").to_numpy(),
            counts=table.column("count").to_numpy(),
            words=words.column("token").to_pylist(),
            min_count=int(meta.get(b"sumpipe.min_count", b"2")),
        )
