"""From text to padded id tensors: Morozovskii 2022 §4.2.2, Table 4.4 (and the trace of Appendix A.1).

Per example (`encode_example`), with V = the vocabulary size:
- `src`      input ids, `<unk>` (0) for words outside the vocabulary;
- `src_ext`  the same, but each OOV word gets an extended id V, V+1, ... in order of first
             occurrence in *this* example's source, so the pointer can copy it;
- `src_freq` the rarity score of each input token (`vocab.rarity[id]`; a word outside the
             vocabulary gets `vocab.oov_rarity(word)`: by its own train count where the
             vocabulary keeps those, else the unknown score, the maximum); 0 at padding;
- `trg_inp`  `<s>` + summary, `<unk>` for OOV: the decoder input;
- `trg_ext`  summary + `</s>`: the loss target. An OOV summary word that occurs in the source
             gets that source word's extended id (the model can copy it); other OOVs are `<unk>`;
- `oov_words` the example's OOV source words, extended id V + j -> oov_words[j];
- `trg_fed_bytes` the UTF-8 length of the word fed at each `trg_inp` position (0 for `<s>`): what a
             model with length control (`sumpipe.models.length`) counts the summary's bytes from.
`collate` adds `oov_spelling`: each OOV word's character 3-grams as CRC-32 values (`spelling_hashes`), which
a model with `oov_spelling` buckets turns into a vector that says what the word looks like.
Sources and summaries follow the text convention (tokens separated by spaces, sentences by
"\\n"); the models see tokens only, so the sentence breaks are dropped. The source is cut to
`max_source_tokens` tokens and the summary to `max_summary_tokens` words, after which `</s>` is
always appended (so targets have at most max_summary_tokens + 1 positions).

`collate` pads a list of examples into a `Batch` (`<pad>` = 1, masks True at real tokens) with one
numpy -> torch conversion per field, and `bucket_batches` gives a deterministic, length-bucketed
batch order per (seed, epoch).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
import torch

from sumpipe.errors import SumpipeError
from sumpipe.names import BOS, EOS, N_SPECIALS, PAD, SENTENCE_END, UNK


class VocabularyLike(Protocol):
    """What batching needs from `sumpipe.vocab.vocabulary.Vocabulary`."""

    itos: list[str]
    stoi: dict[str, int]
    rarity: np.ndarray

    def oov_rarity(self, word: str) -> float: ...

    def __len__(self) -> int: ...


@dataclass
class Example:
    """One encoded example; arrays are 1-D numpy (int64 ids, float32 scores)."""

    id: str
    src: np.ndarray
    src_ext: np.ndarray
    src_freq: np.ndarray
    trg_inp: np.ndarray
    trg_ext: np.ndarray
    oov_words: list[str]
    trg_fed_bytes: np.ndarray | None = None  # (len(trg_inp),); None: every word 0 bytes (bert2stage's pieces)


def word_bytes(words: Sequence[str]) -> np.ndarray:
    """(n,) int64: each word's UTF-8 length (what length control counts bytes with, `sumpipe.models.length`)."""
    return np.fromiter((len(w.encode("utf-8")) for w in words), dtype=np.int64, count=len(words))


def _word_ids(stoi: dict[str, int], tokens: list[str]) -> np.ndarray:
    """Vocabulary ids, `<unk>` for OOV. A token that merely spells a special ("<s>" in the text)
    is a word, not a control symbol, so it is OOV too."""
    ids = np.fromiter(map(stoi.get, tokens, [UNK] * len(tokens)), dtype=np.int64, count=len(tokens))
    ids[ids < N_SPECIALS] = UNK
    return ids


def encode_example(
    example_id: str,
    source: str,
    summary: str,
    vocab: VocabularyLike,
    max_source_tokens: int,
    max_summary_tokens: int,
) -> Example:
    """Encode one (source, summary) pair as in Table 4.4 (see the module docstring)."""
    size = len(vocab)
    tokens = source.split()[:max_source_tokens]
    if not tokens:
        raise SumpipeError(f"example {example_id!r}: the source text is empty")
    src = _word_ids(vocab.stoi, tokens)
    oov_positions = np.flatnonzero(src == UNK)
    oov_index: dict[str, int] = {}
    for i in oov_positions.tolist():
        oov_index.setdefault(tokens[i], len(oov_index))
    src_ext = src.copy()
    src_ext[oov_positions] = [size + oov_index[tokens[i]] for i in oov_positions.tolist()]
    src_freq = np.asarray(vocab.rarity, dtype=np.float32)[src]
    src_freq[oov_positions] = [vocab.oov_rarity(tokens[i]) for i in oov_positions.tolist()]

    words = summary.split()[:max_summary_tokens]
    trg = _word_ids(vocab.stoi, words)
    trg_ext = trg.copy()
    for i in np.flatnonzero(trg == UNK).tolist():  # an OOV the source has is copyable
        trg_ext[i] = size + oov_index[words[i]] if words[i] in oov_index else UNK
    return Example(
        id=example_id,
        src=src,
        src_ext=src_ext,
        src_freq=src_freq,
        trg_inp=np.concatenate([[BOS], trg]).astype(np.int64),
        trg_ext=np.concatenate([trg_ext, [EOS]]).astype(np.int64),
        oov_words=list(oov_index),
        trg_fed_bytes=np.concatenate([[0], word_bytes(words)]).astype(np.int64),
    )


def encode_examples(
    df: Any,
    vocab: VocabularyLike,
    max_source_tokens: int,
    max_summary_tokens: int,
) -> list[Example]:
    """Encode a DataFrame with columns `id`, `source` and (optionally, not when decoding user
    input) `reference`; without `reference` the targets are just `<s>` / `</s>`."""
    ids = df["id"].astype(str).tolist()
    sources = df["source"].tolist()
    summaries = df["reference"].tolist() if "reference" in df.columns else [""] * len(ids)
    return [encode_example(i, s, r or "", vocab, max_source_tokens, max_summary_tokens)
            for i, s, r in zip(ids, sources, summaries)]


# --------------------------------------------------------------------------------------------
# Batches
# --------------------------------------------------------------------------------------------
@dataclass
class Batch:
    """A padded batch. B examples, S source and T target positions.

    src, src_ext (B, S) long; src_freq (B, S) float32; src_mask (B, S) bool (True = real token);
    trg_inp, trg_ext (B, T) long; trg_mask (B, T) bool; n_oov = the largest number of OOV source
    words of any example (the extended vocabulary is V + n_oov wide); oov_words[b][j] is the word
    of extended id V + j in example b; oov_spelling (B, n_oov, G) long the CRC-32 values of its
    character 3-grams (`spelling_hashes`), -1 after its last; ids the example ids; trg_positions (N,) long, the flat
    indices b·T + t of the N real target tokens (True in trg_mask), in row-major order: training
    computes the output layer at these positions only (made on the CPU, so a GPU never syncs for it).
    src_unpadded: no source is padded and the caller lets the model drop the source's padding mask
    (`collate(mark_unpadded=True)`, `train.flash_unpadded`): the transformer then attends without a mask,
    which lets PyTorch pick the flash kernel (decided on the CPU, so a GPU never syncs for it).
    trg_fed_bytes (B, T) long: `Example.trg_fed_bytes`, 0 at padding (length control's teacher forcing);
    length_budget: a `sumpipe.models.length.LengthBudget` when decoding to a target length, else None.
    """

    src: torch.Tensor
    src_ext: torch.Tensor
    src_freq: torch.Tensor
    src_mask: torch.Tensor
    trg_inp: torch.Tensor
    trg_ext: torch.Tensor
    trg_mask: torch.Tensor
    n_oov: int
    oov_words: list[list[str]]
    ids: list[str]
    trg_positions: torch.Tensor
    oov_spelling: torch.Tensor
    src_unpadded: bool = False
    trg_fed_bytes: torch.Tensor | None = None
    length_budget: Any = None

    def __len__(self) -> int:
        return self.src.shape[0]

    def _map_tensors(self, fn: Any) -> Batch:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return Batch(**{k: fn(v) if isinstance(v, torch.Tensor) else v for k, v in values.items()})

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Batch:
        """Move every tensor. `non_blocking=True` only for host-to-GPU copies from pinned memory
        (`pin_memory`): a non-blocking GPU-to-host copy may be read before it has landed."""
        return self._map_tensors(lambda t: t.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> Batch:
        """Page-locked copies, so `.to("cuda", non_blocking=True)` overlaps with compute."""
        return self._map_tensors(lambda t: t.pin_memory())

    def index_select(self, rows: Sequence[int]) -> Batch:
        """The sub-batch of the given rows (padding widths unchanged)."""
        idx = torch.as_tensor(list(rows), dtype=torch.long)
        sub = self._map_tensors(lambda t: t.index_select(0, idx.to(t.device)))
        sub.oov_words = [self.oov_words[i] for i in rows]
        sub.ids = [self.ids[i] for i in rows]
        sub.trg_positions = target_positions(sub.trg_mask)
        return sub

    @property
    def n_target_tokens(self) -> int:
        return int(self.trg_mask.sum())


def target_positions(trg_mask: torch.Tensor) -> torch.Tensor:
    """(B, T) bool -> (N,) long flat indices of the True entries, row-major."""
    return trg_mask.reshape(-1).nonzero().squeeze(1)


def _pad(arrays: list[np.ndarray], value: float, dtype: Any) -> np.ndarray:
    out = np.full((len(arrays), max(len(a) for a in arrays)), value, dtype=dtype)
    for row, a in enumerate(arrays):
        out[row, : len(a)] = a
    return out


# A word's character 3-grams, after fastText's subword scheme (Bojanowski et al. 2017): the word between
# boundary marks, "<fahrenheit>" -> "<fa", "fah", ..., "it>"; case kept (a capital says "a name").
SPELLING_NGRAM = 3
MAX_SPELLING_NGRAMS = 16  # a longer word keeps its first 16 (its start, where the stem is)


@lru_cache(maxsize=65536)
def spelling_hashes(word: str) -> tuple[int, ...]:
    """CRC-32 of each character 3-gram of `<word>` (at most MAX_SPELLING_NGRAMS): the same values on
    every machine and Python (unlike `hash`); a model reduces them modulo its bucket count."""
    marked = f"<{word}>"
    grams = [marked[i : i + SPELLING_NGRAM] for i in range(max(1, len(marked) - SPELLING_NGRAM + 1))]
    return tuple(zlib.crc32(gram.encode("utf-8")) for gram in grams[:MAX_SPELLING_NGRAMS])


def spelling_table(oov_words: Sequence[Sequence[str]]) -> np.ndarray:
    """(B, J, G) int64 `spelling_hashes` of each example's OOV words, -1 as padding; J the most OOV
    words of an example, G the most 3-grams of a word (at least 1)."""
    hashes = [[spelling_hashes(word) for word in words] for words in oov_words]
    n_words = max((len(h) for h in hashes), default=0)
    n_grams = max((len(g) for h in hashes for g in h), default=1)
    out = np.full((len(hashes), n_words, n_grams), -1, dtype=np.int64)
    for b, row in enumerate(hashes):
        for j, grams in enumerate(row):
            out[b, j, : len(grams)] = grams
    return out


def collate(examples: Sequence[Example], mark_unpadded: bool = False) -> Batch:
    """Pad `examples` into a Batch (numpy first, one torch conversion per field); `mark_unpadded`: set
    `Batch.src_unpadded` when every source has the same length."""
    if not examples:
        raise ValueError("collate needs at least one example")
    src = _pad([e.src for e in examples], PAD, np.int64)
    trg_inp = _pad([e.trg_inp for e in examples], PAD, np.int64)
    trg_mask = torch.from_numpy(_pad([np.ones(len(e.trg_inp), bool) for e in examples], False, bool))
    return Batch(
        src=torch.from_numpy(src),
        src_ext=torch.from_numpy(_pad([e.src_ext for e in examples], PAD, np.int64)),
        src_freq=torch.from_numpy(_pad([e.src_freq for e in examples], 0.0, np.float32)),
        src_mask=torch.from_numpy(_pad([np.ones(len(e.src), bool) for e in examples], False, bool)),
        trg_inp=torch.from_numpy(trg_inp),
        trg_ext=torch.from_numpy(_pad([e.trg_ext for e in examples], PAD, np.int64)),
        trg_mask=trg_mask,
        n_oov=max(len(e.oov_words) for e in examples),
        oov_words=[list(e.oov_words) for e in examples],
        ids=[e.id for e in examples],
        trg_positions=target_positions(trg_mask),
        oov_spelling=torch.from_numpy(spelling_table([e.oov_words for e in examples])),
        src_unpadded=mark_unpadded and len({len(e.src) for e in examples}) == 1,
        trg_fed_bytes=torch.from_numpy(_pad([_fed_bytes(e) for e in examples], 0, np.int64)),
    )


def _fed_bytes(example: Example) -> np.ndarray:
    if example.trg_fed_bytes is not None:
        return example.trg_fed_bytes
    return np.zeros(len(example.trg_inp), dtype=np.int64)


def decoder_input(trg_inp: torch.Tensor, trg_ext: torch.Tensor) -> torch.Tensor:
    """The decoder input in extended ids, (B, T) -> (B, T): `trg_inp` (Table 4.4: `<unk>` for an OOV
    word) with each OOV word the source holds fed back as its extended id, the target one position
    earlier, as decoding feeds back the id it chose. A model reads it as `<unk>`, or with `oov_slots`
    as that word's placeholder (`layers.embed_words`); padding positions may differ (masked anyway)."""
    previous = torch.cat([trg_inp[:, :1], trg_ext[:, :-1]], dim=1)
    return torch.where(trg_inp == UNK, previous, trg_inp)


def example_lengths(examples: Iterable[Example]) -> np.ndarray:
    """The sort key for bucketing: source length (the encoder dominates the cost)."""
    return np.array([len(e.src) for e in examples], dtype=np.int64)


def bucket_batches(
    lengths: Sequence[int] | np.ndarray,
    batch_size: int,
    seed: int,
    epoch: int,
    pool_batches: int = 50,
    shuffle: bool = True,
) -> list[list[int]]:
    """Deterministic length-bucketed batches of example indices.

    Shuffle all indices with a generator seeded by (seed, epoch), cut them into pools of
    `pool_batches * batch_size`, sort each pool by length (so a batch holds similar lengths and
    little padding), cut pools into batches and shuffle the batch order. Same (seed, epoch) ->
    same batches on every machine. `shuffle=False` (validation, decoding): sort all by length
    (longest first, so memory peaks early), no randomness.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    lengths = np.asarray(lengths, dtype=np.int64)
    if not shuffle:
        order = np.argsort(-lengths, kind="stable")
        return [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    pool = pool_batches * batch_size
    batches: list[list[int]] = []
    for start in range(0, len(order), pool):
        chunk = order[start : start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size].tolist() for i in range(0, len(chunk), batch_size))
    permutation = rng.permutation(len(batches))
    return [batches[i] for i in permutation]


# --------------------------------------------------------------------------------------------
# Decoding-time text <-> ids for word-vocabulary families
# --------------------------------------------------------------------------------------------
class WordCodec:
    """The `sumpipe.models.registry.Codec` of a word-vocabulary family: Table 4.4 encoding of a
    document (source only), `collate`, and extended ids back to words (a copied OOV id becomes the
    source word it points to)."""

    def __init__(self, vocab: VocabularyLike, max_source_tokens: int) -> None:
        self.vocab, self.max_source_tokens = vocab, max_source_tokens
        self.itos = list(vocab.itos)
        self.sentence_end_ids = tuple(i for i, word in enumerate(self.itos) if word in SENTENCE_END)

    def encode(self, example_id: str, source: str) -> Example:
        return encode_example(example_id, source, "", self.vocab, self.max_source_tokens, 1)

    def collate(self, examples: Sequence[Example]) -> Batch:
        return collate(examples)

    def words(self, ids: Sequence[int], example: Example) -> list[str]:
        """Extended ids -> words: id < V is a vocabulary word, id V + j the j-th OOV source word."""
        size = len(self.itos)
        return [self.itos[i] if i < size else example.oov_words[i - size] for i in ids]

    def source_tokens(self, source: str) -> list[str]:
        """The tokens of `source` the model reads (the attention's columns)."""
        return source.split()[: self.max_source_tokens]
