"""Summaries as people read them: detokenized, sentence-cased, with the input's own spelling.

The pipeline's text convention (lowercased ASCII tokens joined by spaces, one sentence a line) is
what ROUGE scores and what the models read and write. `sumpipe decode` and `sumpipe summarize` print
this module's form instead (and the convention with `--tokens`):

- tokens are joined by the Penn Treebank rules of NLTK's `TreebankWordDetokenizer`
  (`sumpipe.decode.detokenize`: "value ." -> "value.", "( x )" -> "(x)", "amy 's" -> "amy's");
- a word keeps the spelling it has in the raw input ("dataframe" -> "DataFrame" when the input wrote
  "DataFrame"): the most frequent spelling among its occurrences that do not open a sentence (where
  any word is capitalised); words the input does not have stay lowercase;
- the first letter of every sentence is upper case.

`restore_case` is a truecaser by look-up, not a model: it never invents a capital the input lacks
(except at sentence starts), so a generated proper noun the input never spelled stays lowercase.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from sumpipe.decode.detokenize import detokenize

# A word of the raw input as the tokenizer would see it: letters/digits with inner . _ - ' characters.
_RAW_WORD = re.compile(r"[A-Za-z0-9](?:[\w.-]*\w)?")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n\s*)$")



def spellings(raw: str) -> dict[str, str]:
    """lowercase word -> its most frequent spelling in `raw`, ignoring sentence-initial occurrences.

    Ties keep the first spelling seen. A word seen only at sentence starts gets no entry (its case
    there says nothing about the word).
    """
    seen: dict[str, Counter[str]] = {}
    for match in _RAW_WORD.finditer(raw):
        if _SENTENCE_START.search(raw[max(0, match.start() - 3) : match.start()]) is not None:
            continue
        word = match.group()
        seen.setdefault(word.lower(), Counter())[word] += 1
    return {lower: counts.most_common(1)[0][0] for lower, counts in seen.items()}


def restore_case(tokens: Iterable[str], spelled: dict[str, str]) -> list[str]:
    """`tokens` with the input's spelling where it has one (see `spellings`)."""
    return [spelled.get(token, token) for token in tokens]


def capitalize_first(sentence: str) -> str:
    """Upper-case the first letter (not digit or symbol) of `sentence`; the rest is unchanged."""
    for i, char in enumerate(sentence):
        if char.isalpha():
            return sentence[:i] + char.upper() + sentence[i + 1 :]
        if char.isalnum():
            return sentence
    return sentence


def readable(text: str, raw: str = "") -> str:
    """A text-convention summary (tokens by spaces, sentences by lines) as readable prose: one line,
    sentences separated by a space (module docstring). `raw` is the input the summary is of."""
    spelled = spellings(raw) if raw else {}
    sentences = []
    for line in text.split("\n"):
        tokens = line.split()
        if tokens:
            sentences.append(capitalize_first(detokenize(restore_case(tokens, spelled))))
    return " ".join(sentences)
