"""Which tokens count as content words (for 3-gram scoring and the coverage diagnostic).

Morozovskii 2022 removes stop words before scoring sentences with 3-grams (Alg. 1, line 4) using NLTK, so the
list is NLTK's English stop-word list (179 words, embedded here because NLTK's data cannot be
downloaded offline). Evidence that it is NLTK's list and not scikit-learn's: the stop-word-free text
of Table 4.7 keeps "become", "ever" and "least", which scikit-learn's list removes.

Two documented additions, both because our tokenizer emits tokens NLTK's list never sees:
- `'s` (the possessive clitic, split off by preprocessing; NLTK's list has the bare "s" instead);
- punctuation: a token with no letter or digit ("," "." "--" "#"). Table 2.8's 3-grams are words
  only (('wales', 'british', 'irish')), and a 3-gram such as (',', 'said', '.') says nothing about
  how rare a phrase is.
"""

from __future__ import annotations

import re

NLTK_ENGLISH_STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he
him his himself she she's her hers herself it it's its itself they them their theirs themselves what
which who whom this that that'll these those am is are was were be been being have has had having do
does did doing a an the and but if or because as until while of at by for with about against between
into through during before after above below to from up down in out on off over under again further
then once here there when where why how all any both each few more most other some such no nor not
only own same so than too very s t can will just don don't should should've now d ll m o re ve y ain
aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't
ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't
won won't wouldn wouldn't
""".split())

STOP_WORDS = NLTK_ENGLISH_STOP_WORDS | {"'s"}

_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def is_content_word(token: str) -> bool:
    """True for a token that takes part in 3-grams: not a stop word and not pure punctuation."""
    return token not in STOP_WORDS and _LETTER_OR_DIGIT.search(token) is not None


def content_words(tokens: list[str]) -> list[str]:
    """The content words of `tokens`, in order."""
    return [t for t in tokens if is_content_word(t)]
