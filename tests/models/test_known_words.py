"""sumpipe.models.known_words: the draft writes known words only, checked by hand on a toy
piece vocabulary."""

from __future__ import annotations

import torch

from sumpipe.models.known_words import KnownWords, PieceTrie, split_words
from sumpipe.names import EOS

# 0-4 the specials; word-start pieces (U+2581) and continuations
ITOS = ["<unk>", "<pad>", "<s>", "</s>", "<mask>", "\u2581the", "\u2581cat", "\u2581ca", "t", "s", "\u2581dog",
        "\u2581zzz"]
STARTS = [i >= 5 and piece.startswith("\u2581") for i, piece in enumerate(ITOS)]
THE, CAT, CA, T, S, DOG, ZZZ = 5, 6, 7, 8, 9, 10, 11


def test_the_trie_walks_words_and_knows_where_they_end() -> None:
    trie = PieceTrie([[THE], [CAT], [CAT, S]])
    assert len(trie) == 3
    cat = trie.walk([CAT])
    assert cat > 0 and trie.ends[cat] and trie.children[cat] == {S: trie.walk([CAT, S])}
    assert trie.walk([CA]) == -1 and trie.walk([CAT, T]) == -1
    assert trie.walk([]) == 0 and not trie.ends[0]  # the root: no word yet


def test_a_piece_sequence_splits_into_words_at_word_starts() -> None:
    assert split_words([THE, CA, T, S, DOG], STARTS) == [[THE], [CA, T, S], [DOG]]
    assert split_words([T, THE], STARTS) == [[T], [THE]]  # a leading continuation is a word of its own


def allowed(history: list[list[int]], docs: list[int], sources: list[list[int]]) -> list[set[int]]:
    """The columns left open for each row."""
    known = KnownWords.for_batch(STARTS, PieceTrie([[THE], [CAT], [CAT, S]]), sources)
    out = torch.zeros(len(history), len(ITOS))
    known.mask(out, torch.tensor(history, dtype=torch.long).reshape(len(history), -1), torch.tensor(docs))
    return [set(torch.isfinite(row).nonzero().view(-1).tolist()) for row in out]


def test_each_row_may_continue_its_word_or_at_a_word_end_start_another_or_stop() -> None:
    doc = [DOG, CA, T]  # the document writes "dog ca t" = "dog cat" split otherwise: its own words count too
    starts = {THE, CAT, DOG, CA}
    assert allowed([[]], [0], [doc]) == [starts | {EOS}]  # nothing written: any known word's first piece
    assert allowed([[THE]], [0], [doc]) == [starts | {EOS}]  # "the" ends a word; nothing continues it
    assert allowed([[CAT]], [0], [doc]) == [{S} | starts | {EOS}]  # "cat", or on to "cats"
    assert allowed([[THE, CA]], [0], [doc]) == [{T}]  # "ca" is no word yet: only its document's "t"
    assert allowed([[THE, CA, T]], [0], [doc]) == [starts | {EOS}]
    assert allowed([[CAT, S]], [0], [doc]) == [starts | {EOS}]


def test_the_document_words_are_each_rows_own() -> None:
    # two documents, two rows each: "dog" may start a word in document 0 only; "zzz" in none
    rows = allowed([[THE], [THE], [THE], [THE]], [0, 0, 1, 1], [[DOG], [CAT]])
    assert rows[0] == rows[1] == {THE, CAT, DOG, EOS}
    assert rows[2] == rows[3] == {THE, CAT, EOS}
