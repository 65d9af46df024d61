"""What a reader gets from a system's summaries, beside ROUGE: fragments, sentences, repetition and
unsupported words and jammed word pairs.

Summaries are in the text convention (lowercased tokens joined by spaces; the decoders and the
extractive systems break the line after each sentence). The units, defined once here:
- a word is a token holding a letter or digit (punctuation is not a word), as abstractiveness counts; a
  content word is a word that is no stop word (scikit-learn's English list plus the possessive "'s" the
  tokenizer splits off: `stop_words`);
- `split_sentences`: a sentence ends after a sentence-final token (".", "!", "?": `SENTENCE_END`) and at
  each line break, except after the dot of a name the tokenizer split ("numpy.ndarray" becomes "numpy .
  ndarray"; "setup.py", "a .npy file": a dot that a word follows directly in the raw text or in the
  train split's, `NameDots`); a run of tokens without a word (". ." after a sentence) is no sentence of its
  own: it joins the sentence before it (or, at the start, the one after it). The rule is the same for
  every system and for the references.

The figures of `read_quality`, for one system's summaries over a split (fixed keys, x 100 for %):
- `fragment_rate` %: summaries holding a sentence of at most `FRAGMENT_WORDS` (2) words ("degrees .");
- `sentences_mean`: sentences per summary; `more_sentences_than_reference` %: summaries with more
  sentences than their reference;
- `adjacent_repeat` %: summaries with a word twice in a row; `repeated_trigrams` %: of the summaries'
  3-grams (within lines), those repeating an earlier 3-gram of the same summary (pooled);
- `repeated_words` %: repetition at any distance: of the summaries' content words (every occurrence),
  those beyond the first that the source does not repeat as often: a content word used c times in a
  summary and s times in its source counts max(0, c - max(1, s)) ("convert degrees to degrees ." of a
  source with one "degrees": 1 of 3; a name the source repeats may recur as often) (pooled). This is the
  table's fluency signal: on SummEval's expert judgments (docs/measures.md) it tracks fluency (per-article
  Kendall 0.26, system level 0.31) where a Kneser-Ney language model of references did not (-0.02 and
  -0.14: it rewards repetitive, highlight-like text);
- `unsupported_stems` %: the faithfulness figure: of the summaries' content words, those that the source does
  not support, compared as ROUGE compares words (`stems`): every run of characters outside [a-z0-9]
  separates ("44-year-old" is 44, year, old; "'s" is s), pieces longer than three characters take NLTK's
  Porter stem (rouge-score's tokenizer and stemmer), a content piece is one that is no stop word (nor the s
  of "'s"), and each is clipped as ROUGE clips its matches: the k-th occurrence of a stem is unsupported
  when the source holds it fewer than k times ("2017 ... 2017" of a source with one "2017": the second)
  (pooled). Pieces and stems, not tokens, because the tokens of a summary and of its source differ where
  nothing was made up ("two-year" and "two year", "show 's" and a source that lost the apostrophe, "scores"
  and "scored"): compared by tokens (this table's earlier `unsupported_words`), the figure tracked the
  experts' consistency on SummEval less well than the trivial baseline, ROUGE-1 precision against the
  source (docs/measures.md);
  `unsupported_numbers` %: of the summaries' numbers (tokens with a digit and no letter: "2017", "3.5"), those
  the source does not hold (tokens, clipped as above); `unsupported_names` %: the same over names only: content
  words capitalised in the input's spelling (`sumpipe.decode.readable.spellings` of the raw source, sentence
  starts aside; a word the source lacks takes its spelling from the split's other raw sources). A figure with
  nothing to count (no number, no raw sources given) is 0.0;
- `jammed_pairs` %: of the summaries' pairs of adjacent content words (two content words side by side in a
  line, no stop word nor punctuation between them), those that the source never writes side by side (as a
  pair of adjacent tokens within one of its lines) (pooled): content words jammed together without the
  grammar that would join them ("... princess permission dock argentinean port ushuia ships stanley ...":
  copied names in a row the story never wrote). A summary without such a pair adds nothing. A pair the
  source writes ("prime minister") is never counted; a pair it does not ("minister cameron" of a story
  that says "Cameron, the prime minister") is, so the references, which rephrase, have a value too (on
  SummEval's and the CNN highlights about 40 %): their own row is the anchor.

What each is validated for (docs/measures.md, SummEval): `unsupported_stems` for faithfulness (per-article
Kendall 0.44 with the experts' consistency: level with ROUGE-1 precision against the source, not above it),
`repeated_words` and `jammed_pairs` for fluency (0.26 and 0.28; `jammed_pairs` partly shares
`unsupported_stems`' signal: what a system writes that the source does not); none says anything about
coherence or relevance.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sumpipe.decode.readable import spellings
from sumpipe.names import SENTENCE_END

FRAGMENT_WORDS = 2
KEYS = ("fragment_rate", "sentences_mean", "more_sentences_than_reference", "adjacent_repeat",
        "repeated_trigrams", "repeated_words", "unsupported_stems", "unsupported_numbers", "unsupported_names",
        "jammed_pairs")
# the figures with a better direction (the meta-evaluation reads these; `sentences_mean` has none), and those
# for which lower is better
ORIENTED = ("fragment_rate", "more_sentences_than_reference", "adjacent_repeat", "repeated_trigrams",
            "repeated_words", "unsupported_stems", "unsupported_numbers", "unsupported_names", "jammed_pairs")
LOWER_IS_BETTER = frozenset(ORIENTED)


def is_word(token: str) -> bool:
    """A token holding a letter or digit ("temperature", "3.5", "'s"; not "." nor "--")."""
    return any(c.isalnum() for c in token)


@dataclass(frozen=True)
class NameDots:
    """The dots of names that the tokenizer split ("torch.nn.Module" becomes "torch . nn . module"):
    (word before, word after) pairs, lowercased, of every dot that a word follows directly in raw text
    (`name_dots`; a dot with no word before it, "a .npy file", pairs "" with "npy"). `own`: the pairs of
    one document's raw text; `corpus`: those of the train split's raw texts, for names a model learnt
    there ("torch.nn.Module" in a summary of a text that does not name it). A sentence-ending dot is
    followed by a space, so a pair never comes from one; and a pair, not a lone word, must match, so a
    padded "temperature. Degrees." stays two sentences unless some raw text wrote "temperature.degrees".
    """

    own: frozenset[tuple[str, str]] = frozenset()
    corpus: frozenset[tuple[str, str]] = frozenset()

    def joins(self, before: str, after: str) -> bool:
        """Whether a "." between tokens `before` and `after` is a name's dot."""
        return any(pair in self.own or pair in self.corpus for pair in ((before, after), ("", after)))


_NAME_DOT = re.compile(r"([\w-]*)\.(?=(\w[\w-]*))")


def name_dots(raw: str) -> frozenset[tuple[str, str]]:
    """The `NameDots` pairs of raw text: "numpy.ndarray, a .npy file" -> {("numpy", "ndarray"), ("", "npy")}.

    A dot with no word before it gives no pair where it ends a sentence: after another dot (an ellipsis,
    "energetic...He", "Flame". . .the") or after white space before a capital (a typo, "a medical leave .The
    city"). On the CNN stories such dots gave ("", "he"), ("", "the"), ("", "it"), and every "." of a
    summary that a sentence starting with "he" or "the" followed counted as no sentence end. A
    dot after other punctuation still joins ("`obj`.__init__", ").append").
    """
    return frozenset((m.group(1).lower(), m.group(2).lower()) for m in _NAME_DOT.finditer(raw)
                     if m.group(1) or not _ends_a_sentence(raw, m.start(), m.group(2)))


def _ends_a_sentence(raw: str, dot: int, after: str) -> bool:
    """Whether the dot at `raw[dot]`, no word before it, ends a sentence (`name_dots`)."""
    before = raw[max(0, dot - 16):dot]
    return before.rstrip().endswith(".") or ((not before or before[-1].isspace()) and after[0].isupper())


def split_sentences(summary: str, dots: NameDots = NameDots()) -> list[list[str]]:
    """A text-convention summary as its sentences of tokens (module docstring): "convert degrees .
    degrees ." -> [["convert", "degrees", "."], ["degrees", "."]]; an empty summary has none. A "."
    that `dots` knows as a name's dot ends no sentence, even where the decoder broke the line after it.
    """
    stream = [(token, j == len(line) - 1)
              for line in (text.split() for text in (summary or "").split("\n")) for j, token in enumerate(line)]
    sentences: list[list[str]] = []
    current: list[str] = []
    for k, (token, line_end) in enumerate(stream):
        current.append(token)
        in_a_name = (token == "." and 0 < k < len(stream) - 1
                     and dots.joins(stream[k - 1][0], stream[k + 1][0]))
        if (token in SENTENCE_END or line_end) and not in_a_name:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    out: list[list[str]] = []
    pending: list[str] = []  # leading wordless tokens wait for the first sentence with a word
    for sentence in sentences:
        if any(map(is_word, sentence)):
            out.append(pending + sentence)
            pending = []
        elif out:
            out[-1] = out[-1] + sentence
        else:
            pending += sentence
    return out


def fragment(summary: str, max_words: int = FRAGMENT_WORDS, dots: NameDots = NameDots()) -> bool:
    """Whether a sentence of `summary` has at most `max_words` words (`dots`: as `split_sentences`)."""
    return any(sum(map(is_word, sentence)) <= max_words for sentence in split_sentences(summary, dots))


def repeats_a_word(summary: str) -> bool:
    """Whether a word follows itself ("the the"; words only, so ". ." is not counted)."""
    tokens = (summary or "").split()
    return any(a == b and is_word(a) for a, b in zip(tokens, tokens[1:]))


def repeated_trigrams(summary: str) -> tuple[int, int]:
    """(3-grams repeating an earlier 3-gram of `summary`, all its 3-grams), 3-grams within lines."""
    grams = [tuple(line[i:i + 3]) for line in (t.split() for t in (summary or "").split("\n"))
             for i in range(len(line) - 2)]
    return len(grams) - len(set(grams)), len(grams)


def adjacent_pairs(text: str) -> list[tuple[str, str]]:
    """The pairs of adjacent tokens of each line of `text` (a line break separates: "a b\nc" -> [("a", "b")])."""
    return [pair for line in (text or "").split("\n") for pair in zip(line.split(), line.split()[1:])]


def jammed_pairs(summary: str, source_pairs: frozenset[tuple[str, str]] | set[tuple[str, str]]) -> tuple[int, int]:
    """(jammed pairs, content-word pairs) of `summary` (module docstring): its pairs of adjacent content
    words (`adjacent_pairs`, both words no stop word), and those not among `source_pairs` (the source's
    `adjacent_pairs`). "port ushuia ships" of a source writing "the port of ushuia" and "ships": (2, 2)."""
    stop = stop_words()
    pairs = [(a, b) for a, b in adjacent_pairs(summary)
             if is_word(a) and is_word(b) and a not in stop and b not in stop]
    return sum(pair not in source_pairs for pair in pairs), len(pairs)


@functools.lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words and the possessive "'s" (a token of its own here)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | {"'s"}


def is_number(token: str) -> bool:
    """A token with a digit and no letter ("2017", "3.5", "1,000"; not "utf-8")."""
    return any(c.isdigit() for c in token) and not any(c.isalpha() for c in token)


_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
STEM_LENGTH = 3  # rouge-score stems only the pieces longer than this


def pieces(text: str) -> list[str]:
    """`text` as rouge-score's tokenizer splits it, before stemming: lowercase, every run of characters outside
    [a-z0-9] a separator ("a 44-year-old 's" -> ["a", "44", "year", "old", "s"])."""
    return [piece for piece in _NOT_ALNUM.split((text or "").lower()) if piece]


@functools.lru_cache(maxsize=1)
def _porter() -> Callable[[str], str]:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer().stem


@functools.lru_cache(maxsize=1 << 16)
def stem(piece: str) -> str:
    """rouge-score's stem of a piece: NLTK's Porter stem when longer than `STEM_LENGTH` characters ("scored",
    "scores" -> "score"), else the piece ("was")."""
    return _porter()(piece) if len(piece) > STEM_LENGTH else piece


def stems(text: str) -> list[str]:
    """The stems of `text`'s pieces (`pieces`, `stem`): the words as ROUGE with stemming compares them."""
    return [stem(piece) for piece in pieces(text)]


@functools.lru_cache(maxsize=64)
def _stem_counts(source: str) -> Counter[str]:
    """The stems of a source, counted (cached: the meta-evaluation reads each source once per system)."""
    return Counter(stems(source))


def unsupported_stems(summary: str, source: str) -> tuple[int, int]:
    """(unsupported, content pieces) of `summary` against `source` (module docstring): its pieces that are no
    stop word (`stop_words` and the "s" of "'s"), compared by their stems, clipped by the source's counts.
    "he scored 2 goals ." of "he scores twice ." -> (2, 3): "scored" is supported by "scores" (both "score"),
    "2" and "goals" are not."""
    stop, have = stop_words() | {"s"}, _stem_counts(source or "")
    used: Counter[str] = Counter()
    unsupported = content = 0
    for piece in pieces(summary):
        if piece in stop:
            continue
        key = stem(piece)
        used[key] += 1
        content += 1
        unsupported += used[key] > have[key]
    return unsupported, content


@dataclass(frozen=True)
class Casing:
    """Which lowercase words a raw text spells (`spelled`: outside sentence starts) and which of those it
    capitalises (`names`): `sumpipe.decode.readable.spellings`, kept as two sets."""

    spelled: frozenset[str]
    names: frozenset[str]


@functools.lru_cache(maxsize=4096)
def casing(raw: str) -> Casing:
    """The `Casing` of `raw` (cached: every system of a split reads the same raw sources)."""
    spelled = spellings(raw)
    return Casing(frozenset(spelled), frozenset(w for w, s in spelled.items() if any(c.isupper() for c in s)))


def summary_counts(summary: str, source: str, reference: str, dots: NameDots = NameDots(),
                   own: Casing = Casing(frozenset(), frozenset()),
                   everywhere: Casing = Casing(frozenset(), frozenset())) -> Counter[str]:
    """What one summary contributes to its system's figures (`figures` turns counts into them): whether
    it holds a fragment, its sentences and its reference's, whether it repeats a word back to back, its
    3-grams and the repeated ones, its content pieces with the unsupported ones (`unsupported_stems`), its
    numbers and names with the unsupported ones (clipped by the source's counts), its content words (tokens)
    repeated beyond the source's count and its
    content-word pairs with the jammed ones (`jammed_pairs`) (`own`: the
    casing of its raw source, `everywhere`: of the split's; an empty `Casing`: no names)."""
    sentences = split_sentences(summary, dots)
    repeated, grams = repeated_trigrams(summary)
    counts: Counter[str] = Counter(
        fragment=any(sum(map(is_word, s)) <= FRAGMENT_WORDS for s in sentences), sentences=len(sentences),
        more_sentences=len(sentences) > len(split_sentences(reference, dots)),
        adjacent_repeat=repeats_a_word(summary), trigrams=grams, trigrams_repeated=repeated)
    counts["pairs_jammed"], counts["pairs"] = jammed_pairs(summary, set(adjacent_pairs(source)))
    counts["stems_unsupported"], counts["stems"] = unsupported_stems(summary, source)
    have, stop = Counter(source.split()), stop_words()
    used: Counter[str] = Counter()  # each content word's occurrences so far
    for token in (summary or "").split():
        if not is_word(token) or token in stop:
            continue
        used[token] += 1
        counts["word"] += 1
        kind = ("number" if is_number(token) else
                "name" if token in own.names or (token not in own.spelled and token in everywhere.names) else None)
        if kind is not None:
            counts[kind] += 1
            counts[f"{kind}_unsupported"] += used[token] > have[token]
        counts["repeated"] += used[token] > max(1, have[token])
    return counts


def figures(counts: Counter[str], n: int) -> dict[str, float]:
    """The figures of the module docstring (`KEYS`), unrounded, from the `summary_counts`
    of `n` summaries added up (n = 1: one summary's own figures, as the meta-evaluation reads them)."""
    def share(part: str, whole: str) -> float:
        return 100 * counts[part] / counts[whole] if counts[whole] else 0.0

    per = max(n, 1)
    return {"fragment_rate": 100 * counts["fragment"] / per, "sentences_mean": counts["sentences"] / per,
            "more_sentences_than_reference": 100 * counts["more_sentences"] / per,
            "adjacent_repeat": 100 * counts["adjacent_repeat"] / per,
            "repeated_trigrams": share("trigrams_repeated", "trigrams"),
            "repeated_words": share("repeated", "word"),
            "unsupported_stems": share("stems_unsupported", "stems"),
            "unsupported_numbers": share("number_unsupported", "number"),
            "unsupported_names": share("name_unsupported", "name"),
            "jammed_pairs": share("pairs_jammed", "pairs")}


def read_quality(summaries: Sequence[str], sources: Sequence[str], references: Sequence[str],
                 raw_sources: Sequence[str] | None = None,
                 raw_references: Sequence[str] | None = None,
                 corpus_dots: frozenset[tuple[str, str]] = frozenset()) -> dict[str, float]:
    """The figures of the module docstring (`KEYS`) for one system: summaries, their processed sources
    and references (one each, in the text convention) and the raw sources (their
    casing says which words are names, and their names' dots are no sentence ends: `NameDots`; without
    them `unsupported_names` is 0.0). The raw references, when given, add their own names' dots (to
    measure the references as a system); `corpus_dots`: the train split's (`name_dots` of its raw texts)."""
    n = len(summaries)
    if not n == len(sources) == len(references) or any(
            raw is not None and len(raw) != n for raw in (raw_sources, raw_references)):
        raise ValueError("read_quality: summaries, sources, references and raw texts differ in number")
    raws = [raw for raw in (raw_sources, raw_references) if raw is not None]
    own = [name_dots("\n".join(texts)) for texts in zip(*raws)] if raws else [frozenset()] * n
    nothing = Casing(frozenset(), frozenset())
    everywhere = casing("\n".join(raw_sources)) if raw_sources is not None else nothing
    casings = [casing(raw) for raw in raw_sources] if raw_sources is not None else [nothing] * n
    total: Counter[str] = Counter()
    for summary, source, reference, pairs, own_casing in zip(summaries, sources, references, own, casings):
        total.update(summary_counts(summary, source, reference, NameDots(pairs, corpus_dots), own_casing, everywhere))
    return {key: round(value, 2) for key, value in figures(total, n).items()}
