"""The document every extractive method reads: sentences of tokens plus their content-term counts.

Preprocessed text (data/processed, the extract selections) stores a document as tokens joined by
spaces and sentences joined by "\n". Every method scores the same view of it, built once per
document (`Analyzer.document`):

- `sentences`: the tokens of each non-empty sentence, `lengths` (S,) their token counts (budgets
  count every token, as the model inputs do);
- content terms: the tokens that are not stop words, not punctuation and not numbers (Text Summarizing (blog, 2023):
  "drop stop words, punctuation and numbers"), Porter-stemmed (NLTK), so "stay" and "stayed" are one
  term. `terms` (T,) lists the distinct stems in order of first occurrence and `counts` (S, T) holds
  how often each occurs in each sentence;
- `words`: per sentence, the term id of every word in order, -1 for a stop word (numbers, clitics
  such as "'s" and punctuation are not words and are left out, as in sumy), for the position-aware
  methods (Luhn's clusters: ROUGE-1 28.9 against 28.5 when numbers count as gaps, CNN test stories);
- `reference`: the reference's tokens when a method may look at it (the oracle only).

The stop words are the project's (`sumpipe.vocab.words`: NLTK's English list, as the 3-gram
selection and the blog post's NLTK example use). Stemming dominates the cost, so the analyzer keeps one
cache of token -> stem for its lifetime (pass the same analyzer to every document of a run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sumpipe.vocab.words import STOP_WORDS

_HAS_LETTER = re.compile(r"[^\W\d_]")
_HAS_LETTER_OR_DIGIT = re.compile(r"[^\W_]")

# Analyzer cache values for tokens that are not content terms.
_NOT_WORD = ""        # punctuation: not a word at all
_NOT_CONTENT = None   # a stop word or a number: a word, but no term


class Document:
    """One preprocessed document as the extractive methods see it (module docstring). Shapes: S sentences, T terms.

    The term view (`terms`, `counts`, `words`) is computed on first use, so methods that never look
    at words (lead, random) cost nothing beyond splitting the text."""

    def __init__(self, sentences: list[list[str]], analyzer: Analyzer, reference: list[str] | None = None,
                 key: str = "") -> None:
        self.sentences = sentences
        self.lengths = np.array([len(s) for s in sentences], dtype=np.int64)   # (S,) tokens per sentence
        self.reference = reference
        self.key = key                   # a stable identity (the example id) for seeded methods
        self._analyzer = analyzer
        self._terms: tuple[list[str], np.ndarray, list[list[int]]] | None = None

    def _term_view(self) -> tuple[list[str], np.ndarray, list[list[int]]]:
        if self._terms is None:
            self._terms = self._analyzer.term_view(self.sentences)
        return self._terms

    @property
    def terms(self) -> list[str]:
        """(T,) distinct content stems, first occurrence first."""
        return self._term_view()[0]

    @property
    def counts(self) -> np.ndarray:
        """(S, T) float64 occurrences of each term in each sentence."""
        return self._term_view()[1]

    @property
    def words(self) -> list[list[int]]:
        """Per sentence: the term id of each word in order, -1 for a stop word (numbers left out)."""
        return self._term_view()[2]

    @property
    def n_sentences(self) -> int:
        return len(self.sentences)

    @property
    def n_terms(self) -> int:
        return len(self.terms)

    def text(self, selected: Sequence[int]) -> str:
        """The selected sentences in the text convention (tokens by " ", sentences by "\\n")."""
        return "\n".join(" ".join(self.sentences[i]) for i in selected)


@dataclass
class Analyzer:
    """Turns sentences of tokens into `Document`s: stop words, Porter stems, term counts."""

    stop_words: frozenset[str] = STOP_WORDS
    _cache: dict[str, str | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._stem = PorterStemmer().stem

    def term(self, token: str) -> str | None:
        """The stem of a content token; None for a stop word or number; "" for punctuation."""
        try:
            return self._cache[token]
        except KeyError:
            pass
        if not _HAS_LETTER_OR_DIGIT.search(token):
            value: str | None = _NOT_WORD
        elif token in self.stop_words or not _HAS_LETTER.search(token):
            value = _NOT_CONTENT
        else:
            value = self._stem(token) or _NOT_CONTENT
        self._cache[token] = value
        return value

    def terms(self, tokens: Sequence[str]) -> list[str]:
        """The content stems of `tokens`, in order (repeats kept)."""
        out = []
        for token in tokens:
            t = self.term(token)
            if t:
                out.append(t)
        return out

    def document(self, sentences: Sequence[Sequence[str]], reference: Sequence[str] | None = None,
                 key: str = "") -> Document:
        """A `Document` of the non-empty `sentences` (each a sequence of tokens)."""
        return Document([list(s) for s in sentences if len(s)], self,
                        None if reference is None else list(reference), key)

    def term_view(self, sentences: list[list[str]]) -> tuple[list[str], np.ndarray, list[list[int]]]:
        """(terms (T,), counts (S, T), words per sentence) of `Document` (module docstring)."""
        index: dict[str, int] = {}
        words: list[list[int]] = []
        rows: list[int] = []
        cols: list[int] = []
        term = self.term
        for row, tokens in enumerate(sentences):
            ids = []
            for token in tokens:
                t = term(token)
                if t is _NOT_CONTENT:
                    if token[0].isalpha():  # a stop word; numbers and clitics ("'s") are not words
                        ids.append(-1)
                elif t:
                    j = index.setdefault(t, len(index))
                    ids.append(j)
                    rows.append(row)
                    cols.append(j)
            words.append(ids)
        n_terms = len(index)
        flat = np.asarray(rows, dtype=np.int64) * n_terms + np.asarray(cols, dtype=np.int64)
        counts = np.bincount(flat, minlength=len(sentences) * n_terms).astype(np.float64)
        return list(index), counts.reshape(len(sentences), n_terms), words

    def parse(self, text: str, reference: str | None = None, key: str = "") -> Document:
        """A document from the text convention ("\\n" between sentences, " " between tokens)."""
        return self.document([line.split() for line in text.split("\n")],
                             None if reference is None else reference.split(), key)
