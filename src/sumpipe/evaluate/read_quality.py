"""What a reader gets from a system's summaries, beside ROUGE: fragments, sentences, repetition,
unsupported words and fluency (issue 37).

Summaries are in the text convention (lowercased tokens joined by spaces; the decoders and the
extractive systems break the line after each sentence). The units, defined once here:
- a word is a token holding a letter or digit (punctuation is not a word), as abstractiveness counts;
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
- `unsupported_words` %: of the summaries' content words (every occurrence; stop words aside:
  scikit-learn's English list plus the possessive "'s" the tokenizer splits off), those that the source
  does not contain (pooled); `unsupported_numbers` %: the same over numbers only (tokens with a digit and
  no letter: "2017", "3.5"); `unsupported_names` %: over names only: content words capitalised in the
  input's spelling (`sumpipe.decode.readable.spellings` of the raw source, sentence starts aside; a word
  the source lacks takes its spelling from the split's other raw sources). A figure with nothing to count
  (no number, no raw sources given) is 0.0;
- `fluency`: mean log2 probability per token (bits, <= 0; nearer 0 is more fluent) under `FluencyModel`,
  NaN when no model is given.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sumpipe.decode.readable import spellings
from sumpipe.names import SENTENCE_END

if TYPE_CHECKING:
    from nltk.lm import KneserNeyInterpolated

FRAGMENT_WORDS = 2
KEYS = ("fragment_rate", "sentences_mean", "more_sentences_than_reference", "adjacent_repeat",
        "repeated_trigrams", "unsupported_words", "unsupported_numbers", "unsupported_names", "fluency")
# the figures with a better direction (the meta-evaluation reads these; `sentences_mean` has none), and those
# for which lower is better
ORIENTED = ("fragment_rate", "more_sentences_than_reference", "adjacent_repeat", "repeated_trigrams",
            "unsupported_words", "unsupported_numbers", "unsupported_names")
LOWER_IS_BETTER = frozenset(ORIENTED)
ORDER = 3           # the language model's n-gram order
DISCOUNT = 0.75     # Kneser-Ney's absolute discount (Chen & Goodman's usual D; nltk's default is 0.1)
UNK_CUTOFF = 2      # training words seen fewer times become <UNK>
BOS, EOS = "<s>", "</s>"  # nltk's padding symbols


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
    """The `NameDots` pairs of raw text: "numpy.ndarray, a .npy file" -> {("numpy", "ndarray"), ("", "npy")}."""
    return frozenset((m.group(1).lower(), m.group(2).lower()) for m in _NAME_DOT.finditer(raw))


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


@functools.lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words and the possessive "'s" (a token of its own here)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | {"'s"}


def is_number(token: str) -> bool:
    """A token with a digit and no letter ("2017", "3.5", "1,000"; not "utf-8")."""
    return any(c.isdigit() for c in token) and not any(c.isalpha() for c in token)


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
    3-grams and the repeated ones, and its content words, numbers and names with the unsupported ones
    (`own`: the casing of its raw source, `everywhere`: of the split's; an empty `Casing`: no names)."""
    sentences = split_sentences(summary, dots)
    repeated, grams = repeated_trigrams(summary)
    counts: Counter[str] = Counter(
        fragment=any(sum(map(is_word, s)) <= FRAGMENT_WORDS for s in sentences), sentences=len(sentences),
        more_sentences=len(sentences) > len(split_sentences(reference, dots)),
        adjacent_repeat=repeats_a_word(summary), trigrams=grams, trigrams_repeated=repeated)
    have, stop = set(source.split()), stop_words()
    for token in (summary or "").split():
        if not is_word(token) or token in stop:
            continue
        kinds = ["word"]
        if is_number(token):
            kinds.append("number")
        elif token in own.names or (token not in own.spelled and token in everywhere.names):
            kinds.append("name")
        for kind in kinds:
            counts[kind] += 1
            counts[f"{kind}_unsupported"] += token not in have
    return counts


def figures(counts: Counter[str], n: int) -> dict[str, float]:
    """The figures of the module docstring but fluency (`KEYS[:-1]`), unrounded, from the `summary_counts`
    of `n` summaries added up (n = 1: one summary's own figures, as the meta-evaluation reads them)."""
    def share(part: str, whole: str) -> float:
        return 100 * counts[part] / counts[whole] if counts[whole] else 0.0

    per = max(n, 1)
    return {"fragment_rate": 100 * counts["fragment"] / per, "sentences_mean": counts["sentences"] / per,
            "more_sentences_than_reference": 100 * counts["more_sentences"] / per,
            "adjacent_repeat": 100 * counts["adjacent_repeat"] / per,
            "repeated_trigrams": share("trigrams_repeated", "trigrams"),
            "unsupported_words": share("word_unsupported", "word"),
            "unsupported_numbers": share("number_unsupported", "number"),
            "unsupported_names": share("name_unsupported", "name")}


def read_quality(summaries: Sequence[str], sources: Sequence[str], references: Sequence[str],
                 lm: FluencyModel | None = None, raw_sources: Sequence[str] | None = None,
                 raw_references: Sequence[str] | None = None,
                 corpus_dots: frozenset[tuple[str, str]] = frozenset()) -> dict[str, float]:
    """The figures of the module docstring (`KEYS`) for one system: summaries, their processed sources
    and references (one each, in the text convention), the fluency model, and the raw sources (their
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
    out = {key: round(value, 2) for key, value in figures(total, n).items()}
    return out | {"fluency": round(lm.score(summaries), 3) if lm is not None else math.nan}


@dataclass(frozen=True)
class FluencyModel:
    """An interpolated Kneser-Ney word n-gram language model of the references' genre (nltk.lm's
    `KneserNeyInterpolated`), scored fast.

    Choices: trained on the sentences (`split_sentences`) of the train split's references, each padded
    with `order - 1` <s> and </s> (nltk's `padded_everygram_pipeline`); order 3 and discount 0.75 by
    default; words seen fewer than `UNK_CUTOFF` (2) times in training map to <UNK> (nltk's `Vocabulary`
    unk_cutoff), so a word the model never saw gets the probability of a rare word, not 0. A sentence is
    scored token by token, words and punctuation and one closing </s>, each given the `order - 1` tokens
    before it (<s> padding at the start). A probability of 0 (possible only for <UNK> when no training
    word was seen once) counts as 1 / |vocabulary|.

    nltk's own `logscore` recomputes the continuation counts by scanning every (n+1)-gram context at each
    call (seconds per summary); `fit` reads nltk's counts once into per-context tables and `logscore`
    computes the same interpolated probability from them (tests/evaluate/test_read_quality.py checks
    it against nltk's). `lm` is the fitted nltk model.
    """

    lm: KneserNeyInterpolated
    order: int
    discount: float
    known: frozenset[str]
    # per context length k: {context: (denominator, gamma numerator N1+(context .), {word: count})};
    # k = order - 1 holds raw counts, lower k continuation counts (distinct left extensions)
    tables: tuple[dict[tuple[str, ...], tuple[int, int, dict[str, int]]], ...]

    @classmethod
    def fit(cls, references: Iterable[str], order: int = ORDER, discount: float = DISCOUNT) -> FluencyModel:
        """Train on `references` (text convention); see the class docstring."""
        from nltk.lm import KneserNeyInterpolated, Vocabulary
        from nltk.lm.preprocessing import padded_everygram_pipeline

        if order < 2:  # nltk's Kneser-Ney needs a context: its unigram continuation counts are bigrams
            raise ValueError(f"FluencyModel: order must be >= 2, got {order}")
        sentences = [sentence for text in references for sentence in split_sentences(text)]
        ngrams, words = padded_everygram_pipeline(order, sentences)
        lm = KneserNeyInterpolated(order, discount=discount, vocabulary=Vocabulary(unk_cutoff=UNK_CUTOFF))
        lm.fit(ngrams, words)
        return cls(lm, order, discount, frozenset(lm.vocab), _tables(lm, order))

    def logscore(self, word: str, context: Sequence[str] = ()) -> float:
        """log2 P(word | context), as nltk's `lm.logscore(word, context)` (unknown words as <UNK>)."""
        unk = self.lm.vocab.unk_label
        word = word if word in self.known else unk
        ctx = tuple(t if t in self.known else unk for t in context)[max(len(context) - self.order + 1, 0):]
        p = self._probability(word, ctx)
        return math.log2(p if p > 0 else 1 / len(self.known))

    def _probability(self, word: str, context: tuple[str, ...]) -> float:
        # nltk's InterpolatedLanguageModel.unmasked_score with KneserNey's alpha_gamma, from the tables
        if not context:
            total, _, counts = self.tables[0][()]
            return counts.get(word, 0) / total if total else 0.0
        lower = self._probability(word, context[1:])
        entry = self.tables[len(context)].get(context)
        if entry is None or not entry[0]:  # unseen context: nltk's alpha 0, gamma 1
            return lower
        total, followers, counts = entry
        alpha = max(counts.get(word, 0) - self.discount, 0.0) / total
        return alpha + self.discount * followers / total * lower

    def sentence_logscores(self, sentence: Sequence[str]) -> list[float]:
        """log2 probability of each token of `sentence` and of its closing </s>."""
        padded = [BOS] * (self.order - 1) + list(sentence) + [EOS]
        start = self.order - 1
        return [self.logscore(padded[i], padded[i - start:i]) for i in range(start, len(padded))]

    def score(self, summaries: Iterable[str]) -> float:
        """Mean log2 probability per token (bits) over every token of every summary, each sentence's
        </s> included (pooled over the summaries); NaN when there is no token."""
        total = tokens = 0.0
        for summary in summaries:
            for sentence in split_sentences(summary):
                scores = self.sentence_logscores(sentence)
                total += sum(scores)
                tokens += len(scores)
        return total / tokens if tokens else math.nan


def _tables(lm: Any, order: int) -> tuple[dict[tuple[str, ...], tuple[int, int, dict[str, int]]], ...]:
    """nltk's counts as per-context tables (see `FluencyModel.tables`): for the highest order the raw
    counts c(context, w), their sum and the number of distinct w; for a lower context length k the
    continuation counts N1+(. context w) (distinct words before), their sum N1+(. context .) and the
    number of distinct w after the context in the raw (k+1)-gram counts, as nltk's KneserNey computes."""
    tables: list[dict[tuple[str, ...], tuple[int, int, dict[str, int]]]] = []
    for k in range(order):
        if k == order - 1:
            table = {ctx: (dist.N(), sum(1 for c in dist.values() if c > 0), dict(dist))
                     for ctx, dist in lm.counts[k + 1].items() if dist.N()}
        else:
            continuation: dict[tuple[str, ...], Counter[str]] = {}
            for longer, dist in lm.counts[k + 2].items():
                ctx = tuple(longer[1:])
                seen = continuation.setdefault(ctx, Counter())
                for word, count in dist.items():
                    if count > 0:
                        seen[word] += 1
            raw = lm.counts[k + 1] if k else None
            table = {}
            for ctx, seen in continuation.items():
                followers = sum(1 for c in raw[ctx].values() if c > 0) if raw is not None and ctx in raw else 0
                table[ctx] = (sum(seen.values()), followers, dict(seen))
        tables.append(table)
    return tuple(tables)
