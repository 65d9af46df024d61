"""Step 6 of Alg. 2: expand contractions from a hand-written dictionary.

The thesis rejects the `contractions` package because it rewrites "u.s.a" as "you.s.a" (it knows
"u" as slang for "you"); a closed, hand-written list cannot do that. Entries are matched as whole
tokens on tokenized text, in the two shapes contractions take there:

- joined, as the tokenizer keeps them: "don't", "i'll", "y'all";
- split, as "'s" is split off before tokenizing ("it 's") and as Penn Treebank corpora (Gigaword,
  DUC) ship them: "do n't", "wo n't", "i 'll".

Only pronouns, "let", question words and "there/here/that" expand their "'s" (to "is"; "let's" to
"let us") — after any other word "'s" is the possessive and stays ("editor 's note"). "it's" is
always "it is", as in the thesis' Table A.2 ("it is been such a great ride"); "'d" is always
"would". Negations expand to two tokens ("can't" -> "can not") so "not" is always its own token.
"""

from __future__ import annotations

import re

CONTRACTIONS: dict[str, str] = {
    # n't
    "ain't": "is not", "aren't": "are not", "can't": "can not", "couldn't": "could not",
    "didn't": "did not", "doesn't": "does not", "don't": "do not", "hadn't": "had not",
    "hasn't": "has not", "haven't": "have not", "isn't": "is not", "mightn't": "might not",
    "mustn't": "must not", "needn't": "need not", "oughtn't": "ought not", "shan't": "shall not",
    "shouldn't": "should not", "wasn't": "was not", "weren't": "were not", "won't": "will not",
    "wouldn't": "would not",
    # 's
    "he's": "he is", "she's": "she is", "it's": "it is", "that's": "that is", "there's": "there is",
    "here's": "here is", "what's": "what is", "who's": "who is", "where's": "where is",
    "when's": "when is", "why's": "why is", "how's": "how is", "let's": "let us",
    # 'll
    "i'll": "i will", "you'll": "you will", "he'll": "he will", "she'll": "she will",
    "it'll": "it will", "we'll": "we will", "they'll": "they will", "that'll": "that will",
    "there'll": "there will", "who'll": "who will", "what'll": "what will",
    # 're
    "you're": "you are", "we're": "we are", "they're": "they are", "who're": "who are",
    "what're": "what are", "there're": "there are",
    # 've
    "i've": "i have", "you've": "you have", "we've": "we have", "they've": "they have",
    "who've": "who have", "could've": "could have", "should've": "should have",
    "would've": "would have", "might've": "might have", "must've": "must have",
    # 'm, 'd
    "i'm": "i am",
    "i'd": "i would", "you'd": "you would", "he'd": "he would", "she'd": "she would",
    "it'd": "it would", "we'd": "we would", "they'd": "they would", "that'd": "that would",
    "who'd": "who would",
    # others
    "y'all": "you all",
}


def _split_forms(key: str) -> list[str]:
    """The spellings of `key` in tokenized text: joined, and split before the clitic."""
    if key.endswith("n't"):
        return [key, key[:-3] + " n't"]  # PTB: "do n't", "wo n't", "ca n't"
    stem, _, clitic = key.rpartition("'")
    if clitic in {"s", "ll", "re", "ve", "m", "d"}:
        return [key, f"{stem} '{clitic}"]
    return [key]


_LOOKUP = {form: value for key, value in CONTRACTIONS.items() for form in _split_forms(key)}
# The clitic part of a contraction, at the end of a token: "n't" or an apostrophe and letters.
# Matches start at the clitic (quick to find); the word before it is looked up by hand.
_CLITIC = re.compile(r"(?:n't|'[a-z]+)(?!\S)")


def expand_contractions(text: str) -> str:
    """Expand every dictionary contraction in tokenized text; everything else is left untouched."""
    if "'" not in text:
        return text
    pieces: list[str] = []
    done = 0
    for match in _CLITIC.finditer(text):
        start = match.start()
        # The word the clitic belongs to: joined to it ("don't") or one space before ("do n't").
        stem_end = start - 1 if start and text[start - 1] == " " else start
        stem_start = max(text.rfind(" ", 0, stem_end), text.rfind("\n", 0, stem_end)) + 1
        expansion = _LOOKUP.get(text[stem_start:match.end()])
        if expansion is None or stem_start < done:
            continue
        pieces += (text[done:stem_start], expansion)
        done = match.end()
    pieces.append(text[done:])
    return "".join(pieces)
