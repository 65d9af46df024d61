"""Step 5 of Alg. 2: split lowercased ASCII text into tokens with one regular expression.

The thesis uses the tokenizer of the NLTK book, ch. 3.7 ("NLTK's regular expression tokenizer"):

    (?:[A-Z]\\.)+ | \\w+(?:-\\w+)* | \\$?\\d+(?:\\.\\d+)?%? | \\.\\.\\. | [][.,;"'?():-_`]

Taken literally it has known quirks, fixed here:

- `(?:[A-Z]\\.)+` only sees upper-case abbreviations, but the text is lowercased first, so "u.s.a."
  fell apart into "u . s . a .". Here: lower-case letters joined by dots, "u.s.a" with or without the
  final dot ("u.s.-led", "anti-u.s." too), and the abbreviations the sentence splitter knows ("mr.",
  "gov.", "calif.", initials as in "george w. bush") when the sentence goes on after them.
- `\\w+` comes before the number pattern, so "12.40" became "12 . 40" and "82%" lost its "%" (the
  character class has no "%"). Here numbers keep their decimal point, thousands separators and
  clock colons ("12.40", "1,000", "10:30") and "%" is a token of its own: "82 %".
- The class `[...:-_...]` is a *range* from ":" to "_", which takes in "<", "=", ">", "@", "[",
  "\\", "^" and every upper-case letter, but not "-", "!" or "%". Here the kept punctuation is listed
  explicitly: . , ; : ? ! $ % & and the ellipsis "...".

Decided from the thesis' golden examples: "$41.1" -> "$ 41.1" (currency sign split off, so "%" is
split off too), "£20" -> "# 20" ("#" is a word character here, so Gigaword's digit masks "####",
"##.#" and "##-year-old" stay whole), brackets, double quotes, lone single quotes and dashes are
dropped ("(Reuters) --" -> "reuters"), "poster-print" and "analyst/personality" stay whole, and a
word keeps an inner apostrophe ("don't", "o'neill") so contractions can be expanded afterwards.
The possessive "'s" is split off before tokenizing (`split_possessive`) and is a token of its own.
URLs and domain names ("ew.com", "cnn.com/video") stay whole, and so does ".45".

A token is at most MAX_TOKEN_CHARS characters: a longer one is cut to its first MAX_TOKEN_CHARS.
A 5 MB line without a space was one 200,000-character "word" (after `decode`'s cut), which a pointer
model copied four times into an 800 KB summary. The longest token of the default corpus is a 148-character
URL, so the cap changes none of its tokens (the preprocess output is the same bytes).
"""

from __future__ import annotations

import re

from sumpipe.text.sentences import known_abbreviations

# Abbreviations are kept whole when more of the sentence follows ("mr. smith", "corp., which"); a
# sentence-final "jr." still ends with its own "." token. The list is the sentence splitter's, so a
# period Punkt did not take as a sentence end stays on its word.
ABBREVIATIONS = tuple(sorted(known_abbreviations(), key=lambda a: (-len(a), a)))

_WORD_PIECE = r"[\w#]+"
_INITIALISM = r"[a-z](?:\.[a-z])+\.?(?!\w)"  # u.s.a. / u.s.a / e.g. / a.m.
# The first look-ahead checks cheaply that a short word and "." follow; only then are the
# abbreviations tried one by one (otherwise every word start would try them all). The last one
# wants more of the sentence after the period, past any quotes or brackets: `jr. "it's`.
_ABBREVIATION = (rf"(?=[a-z]{{1,{len(ABBREVIATIONS[0])}}}\.)(?:{'|'.join(ABBREVIATIONS)})"
                 r"\.(?=[ \"'()\[\]{}<>|*~^-]*[\w#.,;:?!$%&])")
# Top-level domains that keep "ew.com", "cnn.com/video" or "ru.wikipedia.org" one token. A dot
# joins a word to the next when one of at most MAX_DOMAIN_LABELS labels after it is such a domain.
# The bound keeps the pattern linear-time: the look-ahead is tried at every dot of a dotted chain,
# so an unbounded one (`(?:[\w#]+\.)*`) re-read the rest of the chain at each of its dots, and
# 1 MB of "ab.ab.ab..." took over an hour. With the bound, each dot reads at most
# MAX_DOMAIN_LABELS labels ahead: the same tokens as unbounded for any host name of up to 34 labels
# (DNS allows 127; real ones have a handful), about 1 s per MB of the worst text.
_DOMAIN = r"(?:com|org|net|gov|edu|mil|info|biz|tv|uk|us|ca|au|de|fr|ru|cn|jp|io|ly)"
MAX_DOMAIN_LABELS = 32
TOKEN_PATTERN = rf"""(?x)
    (?:https?://|www\.)[^\s()"<>]*[^\s()"<>.,;:!?']    # a URL, whole
  | \b{_INITIALISM}(?:-{_WORD_PIECE})*                  # initialisms: u.s.a., u.s.-led, e.g.
  | \b{_ABBREVIATION}                                   # an abbreviation or initial before a word: mr.
  | {_WORD_PIECE}(?:                                    # words, joined by
        -(?:{_INITIALISM}|{_ABBREVIATION})              #   a hyphen to an initialism: anti-u.s., then-sen.
      | [-/'&]{_WORD_PIECE}                             #   hyphens (poster-print), slashes, apostrophes
      | (?<=[\d#])[.,:][\d#]+                           #   decimal points: 12.40, 1,000, 10:30, #.#
      | \.(?=(?:{_WORD_PIECE}\.){{0,{MAX_DOMAIN_LABELS}}}{_DOMAIN}\b){_WORD_PIECE}  # dots of a domain name: ew.com
    )*
  | '(?:s|ll|re|ve|m|d)\b                               # clitics split off: 's, and PTB's 'll 're ...
  | \.\.\.                                              # ellipsis
  | \.[\d#]+(?![\w#])                                    # a number without its 0: .45 caliber
  | [.,;:?!$%&]                                         # punctuation kept as tokens
"""
TOKEN_RE = re.compile(TOKEN_PATTERN, re.ASCII)

# "amy's" -> "amy 's", also after the typographic apostrophes `to_ascii` maps to "'" later.
# (The apostrophe is matched first and the word character checked behind it: a pattern that
# starts with a literal set is searched for quickly, one that starts with a look-behind is not.)
_POSSESSIVE = re.compile(r"['\u2018\u2019\u02bc\u2032\u00b4](?<=\w.)s\b")


def split_possessive(text: str) -> str:
    """Separate the possessive (or contracted) "'s" from its word: "amy's" -> "amy 's"."""
    return _POSSESSIVE.sub(lambda m: " '" + m.group()[1:], text)


MAX_TOKEN_CHARS = 1000  # a longer token is cut here (module docstring); real ones: URLs, at most ~150 (pydoc)


def tokenize(text: str) -> list[str]:
    """Tokens of one lowercased ASCII sentence; whitespace and dropped symbols are not returned. A token
    longer than MAX_TOKEN_CHARS is cut to its first MAX_TOKEN_CHARS characters."""
    tokens = TOKEN_RE.findall(text)
    if len(text) <= MAX_TOKEN_CHARS:  # no token can be too long: the common case costs nothing
        return tokens
    return [token[:MAX_TOKEN_CHARS] if len(token) > MAX_TOKEN_CHARS else token for token in tokens]


def tokenize_lines(text: str) -> str:
    """Tokenize every line of `text` and join with the text convention: " " between tokens, "\\n"
    between lines; lines with no token left are dropped."""
    lines = (" ".join(tokenize(line)) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)
