"""Extract-then-rewrite at decode time: the selected story sentences as the rewriter's inputs, and the
rewrites joined back into one summary per story.

    stories (id, source: sentences one a line, reference)  + a selection {story id: sentence indices}
        -> `sentence_rows`: one row per selected sentence, in the extract stage's format (id `<story id>#<i>`,
           i its 0-based line index in the story; source the sentence; reference the story's reference), so
           that the decode stage rewrites them as any model's input split
        -> the rewriter's predictions (id, prediction) -> `compose`: per story, its rewrites in story
           order, one a line (the references' format, and the line break ends a sentence for read quality)

Choices: a selected index outside the story or on an empty line is dropped (nothing to rewrite); a rewrite
with no word (the decoder's empty summary) is left out of the story's summary; a story with no rewrite gets
an empty summary. The rewrites are not deduplicated or reordered: what the rewriter writes is measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from sumpipe.errors import SumpipeError
from sumpipe.rewrite.align import lines

SEPARATOR = "#"  # between a story's id and a sentence's index in a row id


def words(sentence: str) -> int:
    """The words of a tokenized sentence: tokens holding a letter or digit (punctuation is no word)."""
    return sum(any(ch.isalnum() for ch in token) for token in sentence.split())


def lead(source: str, k: int, min_words: int = 1) -> list[int]:
    """The indices of the first `k` sentences of a processed source with at least `min_words` words (1:
    Lead-k's selection, empty lines skipped; 3 also skips the one- and two-word lines, "how ?", that read
    quality counts as fragments)."""
    return [i for i, line in enumerate(lines(source)) if line and words(line) >= min_words][:k]


def row_id(story: str, index: int) -> str:
    return f"{story}{SEPARATOR}{index}"


def parse_row_id(row: str) -> tuple[str, int]:
    """`<story id>#<i>` -> (story id, i); a one-line error for an id without a sentence index."""
    story, sep, index = row.rpartition(SEPARATOR)
    if not sep or not index.isdigit():
        raise SumpipeError(f"rewrite: row id {row!r} is not <story id>{SEPARATOR}<sentence index>")
    return story, int(index)


def sentence_rows(stories: pd.DataFrame, selections: Mapping[str, Sequence[int]]) -> pd.DataFrame:
    """One row (id, source, reference) per selected sentence, stories in frame order, sentences in story
    order (module docstring); a story absent from `selections` contributes no row."""
    rows: list[tuple[str, str, str]] = []
    for story, source, reference in zip(stories["id"].astype(str), stories["source"], stories["reference"]):
        sentences = lines(source)
        for i in sorted(set(selections.get(story, ()))):
            if 0 <= i < len(sentences) and sentences[i]:
                rows.append((row_id(story, i), sentences[i], reference))
    return pd.DataFrame(rows, columns=["id", "source", "reference"]).astype("string")


def compose(stories: Sequence[str], rewrites: pd.DataFrame) -> list[str]:
    """Per story of `stories` (ids), its rewrites (`rewrites`: id `<story>#<i>`, prediction) in sentence
    order, one a line; "" for a story with none."""
    by_story: dict[str, list[tuple[int, str]]] = {}
    for row, text in zip(rewrites["id"].astype(str), rewrites["prediction"].fillna("").astype(str)):
        story, index = parse_row_id(row)
        if any(ch.isalnum() for ch in text):
            by_story.setdefault(story, []).append((index, " ".join(text.split())))
    return ["\n".join(text for _, text in sorted(by_story.get(story, []))) for story in stories]
