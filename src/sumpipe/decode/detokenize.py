"""Tokens back to text by the Penn Treebank rules: NLTK's `TreebankWordDetokenizer`, in `re`.

    ["the", "value", "(", "x", ")", "is", "amy", "'s", "."]  ->  "the value (x) is amy's."

The rules, their order and their patterns are those of `nltk.tokenize.treebank.TreebankWordDetokenizer`
(NLTK 3.9), without `convert_parentheses` (the pipeline's text never holds `-LRB-`). They are
written out here because importing `nltk.tokenize` runs the `nltk` package's `__init__`, which
imports its whole corpus, metrics and SciPy stack: 1.5 s of a 2-second `sumpipe decode`. The
test compares this function with NLTK's on every kind of token the rules touch, so a change in
NLTK's rules shows up as a failing test, not as drift.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_Rule = tuple[re.Pattern[str], str]


def _joined(patterns: list[str]) -> list[re.Pattern[str]]:
    """MacIntyre's contractions ("can not" -> "cannot"), the `(?#X)` gap read as one space."""
    return [re.compile(p.replace("(?#X)", r"\s")) for p in patterns]


_CONTRACTIONS3 = _joined([r"(?i) ('t)(?#X)(is)\b", r"(?i) ('t)(?#X)(was)\b"])
_CONTRACTIONS2 = _joined([
    r"(?i)\b(can)(?#X)(not)\b", r"(?i)\b(d)(?#X)('ye)\b", r"(?i)\b(gim)(?#X)(me)\b",
    r"(?i)\b(gon)(?#X)(na)\b", r"(?i)\b(got)(?#X)(ta)\b", r"(?i)\b(lem)(?#X)(me)\b",
    r"(?i)\b(more)(?#X)('n)\b", r"(?i)\b(wan)(?#X)(na)(?=\s)",
])
_ENDING_QUOTES: list[_Rule] = [
    (re.compile(r"([^' ])\s('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1\2 "),
    (re.compile(r"([^' ])\s('[sS]|'[mM]|'[dD]|') "), r"\1\2 "),
    (re.compile(r"([^'\s])\s(\'\')"), r"\1\2"),
    (re.compile(r"([,.;:!?'])\s+(\"|\'\')"), r"\1\2"),
    (re.compile(r"(\'\')\s([.,:)\]>};%])"), r"\1\2"),
    (re.compile(r"''"), '"'),
    (re.compile(r'([,.;:!?])"(\')'), r"\1\2" '"'),
]
_DOUBLE_DASHES: _Rule = (re.compile(r" -- "), r"--")
_PARENS_BRACKETS: list[_Rule] = [
    (re.compile(r"([\[\(\{\<])\s"), r"\g<1>"),
    (re.compile(r"\s([\]\)\}\>])"), r"\g<1>"),
    (re.compile(r"([\]\)\}\>])\s([:;,.])"), r"\1\2"),
]
_PUNCTUATION: list[_Rule] = [
    (re.compile(r"([^'])\s'\s"), r"\1' "),
    (re.compile(r"\s([?!])"), r"\g<1>"),
    (re.compile(r'([^\.])\s(\.)(?!\.)([\]\)}>"\']*)'), r"\1\2\3"),
    (re.compile(r"([#$])\s"), r"\g<1>"),
    (re.compile(r"\s([;%])"), r"\g<1>"),
    (re.compile(r"\s\.\.\.\s"), r"..."),
    (re.compile(r"\s([:,])"), r"\1"),
]
_STARTING_QUOTES: list[_Rule] = [
    (re.compile(r"([ (\[{<])\s``"), r"\1``"),
    (re.compile(r"(``)\s"), r"\1"),
    (re.compile(r"``"), r'"'),
]


def detokenize(tokens: Iterable[str]) -> str:
    """`tokens` joined into text, the padding the Treebank tokenizer adds taken away (module docstring)."""
    text = " " + " ".join(tokens) + " "
    for pattern in (*_CONTRACTIONS3, *_CONTRACTIONS2):
        text = pattern.sub(r"\1\2", text)
    for pattern, replacement in _ENDING_QUOTES:
        text = pattern.sub(replacement, text)
    text = text.strip()
    text = _DOUBLE_DASHES[0].sub(_DOUBLE_DASHES[1], text)
    for pattern, replacement in (*_PARENS_BRACKETS, *_PUNCTUATION, *_STARTING_QUOTES):
        text = pattern.sub(replacement, text)
    return text.strip()
