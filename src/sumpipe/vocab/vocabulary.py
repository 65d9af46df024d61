"""The word vocabulary and its rarity scores (Morozovskii 2022 §2.3.2, Eqn 2.20, Table 2.7, Appendix A.1).

Rarity of a word seen `occ` times in the training split:

    rarity = 1 / ln(1 + occ) + shift

with `shift` chosen so that the mean rarity over the vocabulary's words is exactly 1. The thesis
writes 1/log(occ); that is infinite for a word seen once, while Table 2.7 gives such a word 2.17.
1/ln(1 + occ) reproduces the table: a shift in [0.731011, 0.731119) (the thesis: ~0.731 on CNN/DM)
turns the counts 11,896,156 / 170 / 1 into exactly 0.792 / 0.926 / 2.17.

Choices (the thesis leaves them open):
- Counts come from the train split, source *and* reference tokens: the vocabulary is also the
  decoder's output vocabulary, so summary words must be counted.
- The mean is taken over the vocabulary's words (its rows after the four specials). The vocabulary
  is a slice: `Vocabulary.load(path, size)` recomputes the shift for that slice, so the mean is 1 over
  the words the model actually uses (a 25,000-word model and a 50,000-word one differ, as in the thesis).
- An unknown word gets the largest possible score, that of a word seen once: 1/ln 2 + shift
  (Appendix A.1 shows OOV words at 2.1736 while in-vocabulary words sit near 0.8). A slice may keep the
  train counts of the words after it (`oov_counts`): then a word outside the slice that training
  saw scores by its own count, 1/ln(1 + occ) + shift with the slice's shift (`oov_rarity`), so M2 can tell
  a word seen once from one seen twelve times; only a word training never saw gets the unknown score.
- Specials: `<unk>` gets the unknown score (it stands for every OOV word); `<pad>` 0 (batching
  masks padding anyway); `<s>` and `</s>` 1, the neutral mean (they never occur in encoder input).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import read_table, write_parquet
from sumpipe.names import BOS, EOS, N_SPECIALS, PAD, SPECIAL_TOKENS, UNK
from sumpipe.schemas import VOCABULARY
from sumpipe.vocab.exact import exact_mean, inverse_ln1p, per_count

VOCAB_FILE = "vocab.parquet"  # the vocab stage's vocabulary

PAD_RARITY = 0.0
BOUNDARY_RARITY = 1.0  # <s>, </s>: the mean score, i.e. neither boosted nor damped


def raw_rarity(counts: np.ndarray) -> np.ndarray:
    """1 / ln(1 + count), float64, same shape as `counts` (counts >= 1); the same bits on every machine
    (`sumpipe.vocab.exact`)."""
    return per_count(inverse_ln1p, counts)


def rarity_shift(word_counts: np.ndarray) -> float:
    """The shift that makes the mean of `raw_rarity(word_counts) + shift` 1 (to the last bit or two;
    an exactly rounded sum, so the same on every machine)."""
    if len(word_counts) == 0:
        return 0.0
    return 1.0 - exact_mean(raw_rarity(word_counts))


def sort_word_counts(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """(word, count) pairs by decreasing count, ties broken by the word; special tokens left out."""
    pairs = [(w, int(c)) for w, c in counts.items() if w not in SPECIAL_TOKENS and c > 0]
    pairs.sort(key=lambda wc: (-wc[1], wc[0]))
    return pairs


@dataclass
class Vocabulary:
    """Ids, counts and rarity scores of a word vocabulary; rows 0..3 are the special tokens.

    `itos[i]` is the token of id i, `counts[i]` its train count (0 for specials) and `rarity[i]`
    (float32) its rarity score; `unknown_rarity` is the score of an out-of-vocabulary word, and
    `oov_counts` the train counts of the words after this slice (empty: every OOV word scores
    `unknown_rarity`, the thesis's choice), read by `oov_rarity`.
    """

    itos: list[str]
    counts: np.ndarray
    shift: float
    oov_counts: Mapping[str, int] = field(default_factory=dict)
    rarity: np.ndarray = field(init=False)
    unknown_rarity: float = field(init=False)
    stoi: dict[str, int] = field(init=False)
    _oov_scores: dict[str, float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.counts = np.asarray(self.counts, dtype=np.int64)
        if list(self.itos[:N_SPECIALS]) != list(SPECIAL_TOKENS):
            raise SumpipeError(f"vocabulary must start with {', '.join(SPECIAL_TOKENS)}")
        _check_tokens(self.itos)
        _check_counts(self.itos, self.counts)
        self.unknown_rarity = inverse_ln1p(1) + self.shift
        self.rarity = self._rarity64().astype(np.float32)
        self.stoi = {token: i for i, token in enumerate(self.itos)}
        # a word seen no time has no score of its own (1/ln 1 is inf); one in the slice is not outside it
        self.oov_counts = dict(sort_word_counts({w: c for w, c in self.oov_counts.items() if w not in self.stoi}))
        scores = raw_rarity(np.fromiter(self.oov_counts.values(), np.int64, len(self.oov_counts))) + self.shift
        self._oov_scores = dict(zip(self.oov_counts, scores.astype(np.float32).tolist()))

    def oov_rarity(self, word: str) -> float:
        """The rarity of a word outside the vocabulary: by its own train count when `oov_counts` has
        it, else `unknown_rarity` (float32-rounded like `rarity`)."""
        return self._oov_scores.get(word, float(np.float32(self.unknown_rarity)))

    def _rarity64(self) -> np.ndarray:
        """Rarity per id in float64 (the stored column; `.rarity` is its float32 copy)."""
        rarity = np.empty(len(self.itos), dtype=np.float64)
        rarity[N_SPECIALS:] = raw_rarity(self.counts[N_SPECIALS:]) + self.shift
        rarity[[UNK, PAD, BOS, EOS]] = [self.unknown_rarity, PAD_RARITY, BOUNDARY_RARITY, BOUNDARY_RARITY]
        return rarity

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], size: int) -> Vocabulary:
        """The `size`-row vocabulary (specials included) of the most frequent words in `counts`."""
        if size <= N_SPECIALS:
            raise SumpipeError(f"vocabulary size must be > {N_SPECIALS}, got {size}")
        words = sort_word_counts(counts)[: size - N_SPECIALS]
        word_counts = np.array([c for _, c in words], dtype=np.int64)
        return cls(
            itos=list(SPECIAL_TOKENS) + [w for w, _ in words],
            counts=np.concatenate([np.zeros(N_SPECIALS, dtype=np.int64), word_counts]),
            shift=rarity_shift(word_counts),
        )

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """Token ids; out-of-vocabulary tokens become `<unk>` (0)."""
        get = self.stoi.get
        return [get(t, UNK) for t in tokens]

    def to_table(self) -> pa.Table:
        """The `vocab.parquet` table: id int32, token str, count int64, rarity float64; the `oov_counts`
        words follow as further rows (rarity by their own count), so `load(path, len(self), keep_tail=True)`
        reads this vocabulary back whole."""
        tail_counts = np.fromiter(self.oov_counts.values(), np.int64, len(self.oov_counts))
        return pa.table({
            "id": pa.array(np.arange(len(self) + len(tail_counts), dtype=np.int32)),
            "token": pa.array(self.itos + list(self.oov_counts), type=pa.string()),
            "count": pa.array(np.concatenate([np.asarray(self.counts, dtype=np.int64), tail_counts])),
            "rarity": pa.array(np.concatenate([self._rarity64(), raw_rarity(tail_counts) + self.shift])),
        })

    def to_frame(self):  # -> pandas.DataFrame; pandas is imported only here, off the decode start-up path
        return self.to_table().to_pandas()

    def save(self, path: str | os.PathLike) -> Path:
        table = self.to_table()
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               b"sumpipe.rarity_shift": repr(self.shift).encode()})
        return write_parquet(table, path)

    @classmethod
    def load(cls, path: str | os.PathLike, size: int | None = None, keep_tail: bool = False) -> Vocabulary:
        """The first `size` rows of a saved vocabulary (all when None), with the shift recomputed so
        that the mean rarity over *this slice's* words is 1; with `keep_tail`, the rows after them
        become `oov_counts`."""
        path = Path(path)
        if not path.is_file():
            raise SumpipeError(f"{path}: no such vocabulary file (run `sumpipe vocab` first)")
        table = read_table(path, columns=["token", "count"], contract=VOCABULARY)  # a corrupt file: one line naming it
        if table.column("count").null_count:
            raise SumpipeError(f"{path}: column 'count' has NULL values")
        tail = table.slice(0, 0)
        if size is not None:
            if size <= N_SPECIALS:
                raise SumpipeError(f"vocabulary size must be > {N_SPECIALS}, got {size}")
            table, tail = table.slice(0, size), table.slice(size)
        itos = table.column("token").to_pylist()
        # from Python ints, not Arrow's to_numpy: that imports pandas, a fifth of `sumpipe decode`'s start-up
        counts = np.asarray(table.column("count").to_pylist(), dtype=np.int64)
        oov_counts = dict(zip(tail.column("token").to_pylist(), tail.column("count").to_pylist())) if keep_tail else {}
        try:
            _check_counts(itos, counts)  # before rarity_shift reads them
            return cls(itos=itos, counts=counts, shift=rarity_shift(counts[N_SPECIALS:]), oov_counts=oov_counts)
        except SumpipeError as exc:
            raise SumpipeError(f"{path}: {exc}") from None


def _check_counts(itos: list, counts: np.ndarray) -> None:
    """Every word row's train count is at least 1 (a word enters the vocabulary by being seen) and no
    count is negative: 1/ln(1 + count) is infinite at 0 and undefined below -1, so a count edited out of
    range gave an InvalidOperation deep in `rarity_shift`, or, all counts 0, an M2 whose every attention
    weight is NaN and whose summaries are empty."""
    if len(counts) != len(itos):
        raise SumpipeError(f"vocabulary has {len(itos)} tokens but {len(counts)} counts")
    words = counts[N_SPECIALS:]
    if len(words) and not words.any():
        raise SumpipeError("every word's count is 0 (a word's train count is at least 1)")
    bad = np.flatnonzero((counts < 0) | (np.arange(len(counts)) >= N_SPECIALS) & (counts < 1))
    if len(bad):
        row = int(bad[0])
        raise SumpipeError(f"vocabulary row {row} ({itos[row]!r}): count {int(counts[row])} "
                           "(a word's train count is at least 1)")


def _check_tokens(itos: list) -> None:
    """Every token is a non-empty string, and none appears twice: a NULL row or a duplicate would give
    two ids one word (or a word None), silently shifting what the model's ids mean."""
    for i, token in enumerate(itos):
        if not isinstance(token, str) or not token:
            raise SumpipeError(f"vocabulary row {i}: token is {token!r} (NULL or empty)")
    if len(set(itos)) != len(itos):
        seen: dict[str, int] = {}
        for i, token in enumerate(itos):
            if token in seen:
                raise SumpipeError(f"vocabulary rows {seen[token]} and {i}: token {token!r} appears twice")
            seen[token] = i
