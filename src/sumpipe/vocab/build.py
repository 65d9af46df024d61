"""The vocab stage: one streaming pass over the processed train split writes

    <out_dir>/vocab.parquet    the model vocabulary (contract in COMMON.md), rarity scores included
    <out_dir>/words.parquet    every train word: id (first-seen order), token, count
    <out_dir>/ngrams.parquet   packed n-gram keys seen >= vocab.ngram_min_count times, with counts

Word counts take source and reference tokens; n-grams only the sources (see `sumpipe.vocab.ngrams`).
Documents are read in record batches, so memory grows with the number of distinct words and n-grams,
never with the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from sumpipe.config import VocabConfig
from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import open_parquet, plain_batches
from sumpipe.schemas import PROCESSED
from sumpipe.vocab.ngrams import DROPPED, NGRAMS_FILE, NgramCounter, NgramTable, ngram_windows, pack_ngrams
from sumpipe.vocab.vocabulary import VOCAB_FILE, Vocabulary
from sumpipe.vocab.words import is_content_word

BATCH_ROWS = 1024


class WordIds(dict):
    """token -> id, handing out the next id to a token seen for the first time; `tokens` is the
    inverse list (id -> token)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: list[str] = []

    def __missing__(self, token: str) -> int:
        value = self[token] = len(self.tokens)
        self.tokens.append(token)
        return value


def tokenized_sentences(text: str) -> list[list[str]]:
    """Text convention -> its sentences as token lists (one per non-empty line). Sentences are found
    by the preprocess stage (`sumpipe.text.sentences.split_sentences`); this only reads them back."""
    return [toks for line in text.split("\n") if (toks := line.split())]


def train_file(processed_dir: str | Path) -> Path:
    processed_dir = Path(processed_dir)
    if not processed_dir.is_dir():
        raise SumpipeError(f"{processed_dir}: no such folder (run `sumpipe preprocess` first)")
    path = processed_dir / "train.parquet"
    if not path.is_file():
        raise SumpipeError(f"{path}: no such file (run `sumpipe preprocess` first)")
    return path


class CorpusCounter:
    """Word counts and n-gram counts, fed batch by batch."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.word_ids = WordIds()
        self.word_counts = np.zeros(0, dtype=np.int64)
        self.content = np.zeros(0, dtype=bool)  # per word id: takes part in n-grams
        self.ngrams = NgramCounter()
        self.n_docs = 0
        self.n_source_tokens = 0
        self.n_reference_tokens = 0

    def _ids(self, tokens: list[str]) -> np.ndarray:
        ids = np.fromiter(map(self.word_ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        grown = len(self.word_ids) - len(self.word_counts)
        if grown:
            new_words = self.word_ids.tokens[len(self.word_counts):]
            self.word_counts = np.concatenate([self.word_counts, np.zeros(grown, dtype=np.int64)])
            self.content = np.concatenate([self.content, np.fromiter(map(is_content_word, new_words), bool, grown)])
        self.word_counts += np.bincount(ids, minlength=len(self.word_counts))
        return ids

    def add(self, sources: list[str], references: list[str]) -> None:
        tokens: list[str] = []
        lengths: list[int] = []
        for text in sources:
            for sentence in tokenized_sentences(text):
                tokens.extend(sentence)
                lengths.append(len(sentence))
        ref_tokens = " ".join(references).split()
        ids = self._ids(tokens)
        self._ids(ref_tokens)
        self.n_docs += len(sources)
        self.n_source_tokens += len(tokens)
        self.n_reference_tokens += len(ref_tokens)

        codes = np.where(self.content[ids], ids, DROPPED)
        windows, _ = ngram_windows(codes, np.array(lengths, dtype=np.int64), self.n)
        self.ngrams.add(pack_ngrams(windows))

    @property
    def words(self) -> list[str]:
        return self.word_ids.tokens


def count_corpus(train_path: Path, n: int, progress: bool = True) -> CorpusCounter:
    """Stream the train split through a `CorpusCounter`."""
    parquet = open_parquet(train_path, PROCESSED)
    counter = CorpusCounter(n)
    with tqdm(total=parquet.metadata.num_rows, desc="vocab: counting", unit="doc",
              disable=None if progress else True) as bar:
        for batch in plain_batches(parquet, train_path, batch_size=BATCH_ROWS, columns=["source", "reference"]):
            sources = [s or "" for s in batch.column("source").to_pylist()]
            references = [r or "" for r in batch.column("reference").to_pylist()]
            counter.add(sources, references)
            bar.update(batch.num_rows)
    if counter.n_docs == 0:
        raise SumpipeError(f"{train_path}: the train split is empty (nothing to count)")
    return counter


def build_vocab(processed_dir: str | Path, out_dir: str | Path, cfg: VocabConfig,
                progress: bool = True) -> dict[str, Any]:
    """Count the train split of `processed_dir` and write the vocabulary, word and n-gram tables to
    `out_dir`. Returns statistics (sizes, OOV rate, rarity shift, n-gram counter memory)."""
    out_dir = Path(out_dir)
    counter = count_corpus(train_file(processed_dir), cfg.ngram_n, progress)
    words = counter.words
    if not words:
        raise SumpipeError(f"{processed_dir}: the train split has no tokens")

    vocab = Vocabulary.from_counts(dict(zip(words, counter.word_counts.tolist())), cfg.size)
    vocab.save(out_dir / VOCAB_FILE)

    keys, counts = counter.ngrams.result()
    counter_bytes = keys.nbytes + counts.nbytes
    keep = counts >= cfg.ngram_min_count
    table = NgramTable(n=cfg.ngram_n, keys=keys[keep], counts=counts[keep], words=words,
                       min_count=cfg.ngram_min_count)
    table.save(out_dir / NGRAMS_FILE, word_counts=counter.word_counts)

    n_tokens = counter.n_source_tokens + counter.n_reference_tokens
    in_vocab = int(vocab.counts.sum())
    return {
        "train_documents": counter.n_docs,
        "train_tokens": n_tokens,
        "distinct_words": len(words),
        "vocab_size": len(vocab),
        "oov_token_rate": round(1.0 - in_vocab / n_tokens, 6) if n_tokens else 0.0,
        "rarity_shift": round(vocab.shift, 6),
        "unknown_rarity": round(vocab.unknown_rarity, 6),
        "ngram_n": cfg.ngram_n,
        "ngrams_total": counter.ngrams.total,
        "ngrams_distinct": int(len(keys)),
        "ngrams_kept": int(keep.sum()),
        "ngram_counter_bytes_per_distinct": round(counter_bytes / max(len(keys), 1), 2),
        "ngram_hashed_keys": int((keys >> np.uint64(63)).sum()),
    }
