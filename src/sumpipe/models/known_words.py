"""Known words only: a subword model's draft may write only words it has read.

A word model writes vocabulary words or copies source words, so every word it writes exists. A subword
model (`bert2stage`: BERT2S) joins pieces, and a join can be a word of no language: trained to fill DUC's
75-byte budget, BERT2S ended about 14 of 20 headlines with such joins ("afflosated -nown dges",
"censusal", "tyary salo , victimss"), which score nothing and no reader accepts.

`decode.known_words` (`--known-words`) restricts the search to *known* words: the words of the model's
training text (sources and summaries: the vocab stage's `words.parquet`, saved in the model folder) and
the words of the document being summarised (so a name it has never seen can still be copied). Words are
the text convention's space-separated tokens; the subword model splits each on its own
(sentencepiece never merges across a space), so a word is one sequence of piece ids, the first marked
as a word start ("\u2581"). `PieceTrie` holds those sequences. At every step, a hypothesis's last,
unfinished word is the pieces since its last word-start piece; the next piece may

  - continue it along the trie (a continuation piece that is a child of its node), or
  - start a new word (a word-start piece that begins a known word), or end the summary (`</s>`), but only
    when the word so far is itself a known word (its node is a word's end) or nothing is written yet.

Everything else is masked (-inf), in the search beside n-gram blocking (`sumpipe.decode.search`). The
constraint is stateless: it reads each row's history, so beam reordering needs nothing. A word model
needs no constraint (its codec offers none) and decodes unchanged.

Shapes: N decoding rows, W columns (the vocabulary V plus a row's OOV slots, none for pieces), t steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from sumpipe.names import EOS

NEG_INF = float("-inf")
ROOT = 0


class PieceTrie:
    """Words as sequences of piece ids. Node 0 is the root (no piece yet); `children[node]` maps a piece
    id to the next node and `ends[node]` is True where a whole word ends."""

    def __init__(self, words: Iterable[Sequence[int]] = ()) -> None:
        self.children: list[dict[int, int]] = [{}]
        self.ends: list[bool] = [False]
        for pieces in words:
            self.add(pieces)

    def add(self, pieces: Sequence[int]) -> None:
        node = ROOT
        for piece in pieces:
            nxt = self.children[node].get(piece)
            if nxt is None:
                nxt = len(self.children)
                self.children[node][piece] = nxt
                self.children.append({})
                self.ends.append(False)
            node = nxt
        if node != ROOT:
            self.ends[node] = True

    def walk(self, pieces: Sequence[int]) -> int:
        """The node `pieces` lead to from the root, -1 when they begin no word of the trie."""
        node = ROOT
        for piece in pieces:
            node = self.children[node].get(piece, -1)
            if node < 0:
                return -1
        return node

    def __len__(self) -> int:
        """The number of words."""
        return sum(self.ends)


def split_words(pieces: Sequence[int], starts_word: Sequence[bool]) -> list[list[int]]:
    """A piece sequence cut into words: a new word at each word-start piece (a leading continuation
    piece, which no text encodes to, begins a word of its own)."""
    words: list[list[int]] = []
    for piece in pieces:
        if starts_word[piece] or not words:
            words.append([piece])
        else:
            words[-1].append(piece)
    return words


def first_pieces(trie: PieceTrie, size: int) -> torch.Tensor:
    """(size,) bool: True at the pieces that begin a word of `trie` (its root's children)."""
    mask = torch.zeros(size, dtype=torch.bool)
    mask[list(trie.children[ROOT])] = True
    return mask


@dataclass
class KnownWords:
    """The constraint for one batch: the training words (`lexicon`, shared by every batch) and each
    document's own words (`documents[b]`, the trie of document b's source pieces).

    starts_word (V,) bool: the word-start pieces; `lexicon_starts` (V,) bool: those that begin a known
    training word (the root's children, kept as a mask: there are thousands)."""

    starts_word: list[bool]
    lexicon: PieceTrie
    lexicon_starts: torch.Tensor
    documents: list[PieceTrie]

    @classmethod
    def for_batch(cls, starts_word: Sequence[bool], lexicon: PieceTrie, sources: Sequence[Sequence[int]],
                  lexicon_starts: torch.Tensor | None = None) -> KnownWords:
        """sources: each document's pieces, without the specials (`<s>`, `</s>`, padding); lexicon_starts:
        `first_pieces(lexicon, V)`, made once for every batch by the caller (default: made here)."""
        flags = list(starts_word)
        if lexicon_starts is None:
            lexicon_starts = first_pieces(lexicon, len(flags))
        documents = [PieceTrie(split_words(src, flags)) for src in sources]
        return cls(flags, lexicon, lexicon_starts, documents)

    def mask(self, out: torch.Tensor, history: torch.Tensor, row_doc: torch.Tensor) -> None:
        """Sets to -inf, in place, every column of out (N, W) that would leave the known words, given each
        row's tokens so far, history (N, t), and its document, row_doc (N,) (module docstring)."""
        allowed = torch.zeros_like(out, dtype=torch.bool)
        rows, cols = [], []
        boundary = []
        for row, (tokens, doc) in enumerate(zip(history.tolist(), row_doc.tolist())):
            word = self._last_word(tokens)
            document = self.documents[doc]
            nodes = [(self.lexicon, self.lexicon.walk(word)), (document, document.walk(word))] if word else []
            at_end = not word or any(node >= 0 and trie.ends[node] for trie, node in nodes)
            for trie, node in nodes:
                if node >= 0:
                    children = trie.children[node]
                    rows.extend([row] * len(children))
                    cols.extend(children)
            if at_end:
                boundary.append(row)
                starts = document.children[ROOT]
                rows.extend([row] * (len(starts) + 1))
                cols.extend([*starts, EOS])
        if boundary:
            at = torch.tensor(boundary, dtype=torch.long, device=out.device)
            allowed[at, : self.lexicon_starts.numel()] |= self.lexicon_starts.to(out.device)
        if rows:
            allowed[torch.tensor(rows, device=out.device), torch.tensor(cols, device=out.device)] = True
        out.masked_fill_(~allowed, NEG_INF)

    def _last_word(self, tokens: Sequence[int]) -> list[int]:
        """The pieces since the last word-start piece of `tokens` ([] when nothing is written)."""
        for i in range(len(tokens) - 1, -1, -1):
            if self.starts_word[tokens[i]]:
                return list(tokens[i:])
        return list(tokens)
