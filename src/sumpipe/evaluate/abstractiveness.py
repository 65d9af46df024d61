"""How abstractive and how redundant a system's summaries are (See et al. 2017, Fig. 6 and §7.2).

Per system, over the evaluated split, on the preprocessed tokens (lowercased, punctuation split):
- `novel_<n>gram` (n = 1..4): % of the summaries' n-grams that do not occur in their source, pooled
  (novel n-grams of all summaries / all their n-grams), as See et al. count them; an extractive system
  scores 0 (a sentence boundary can make a new n-gram across two copied sentences: counted within
  sentences, so it stays 0);
- `repeated_3gram`: % of the summaries' 3-grams that repeat an earlier 3-gram of the same summary
  (`sumpipe.evaluate.read_quality.repeated_trigrams`, where the reader's measures live);
- `mean_length`: mean summary tokens; `mean_words`: the same with punctuation not counted (tokens with a
  letter or digit); `compression`: mean source tokens / mean summary tokens;
- degeneracy: `distinct` % of the summaries that no other summary equals (a model that writes one
  template for every document scores near 0), `adjacent_repeat` % of the summaries with a word
  repeated back to back ("the the"; words only, so ". ." is not counted: `read_quality.repeats_a_word`);
- `mean_p_gen`: the mean generation probability of pointer-generator models, when their predictions
  carry a `p_gen` column (per-token lists or a per-summary mean); absent otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from sumpipe.evaluate.read_quality import is_word, repeated_trigrams, repeats_a_word

ORDERS = (1, 2, 3, 4)


def _ngrams(sentences: list[list[str]], n: int) -> list[tuple[str, ...]]:
    return [tuple(s[i:i + n]) for s in sentences for i in range(len(s) - n + 1)]


def _sentences(text: str) -> list[list[str]]:
    return [line.split() for line in (text or "").split("\n") if line.strip()]


def novel_ngrams(summary: str, source: str, n: int) -> tuple[int, int]:
    """(n-grams of `summary` that `source` does not hold, all its n-grams), both counted within lines (the
    module docstring's `novel_<n>gram` for one summary): "a b c" of "a b ." -> (1, 2) for n = 2."""
    grams = _ngrams(_sentences(summary), n)
    seen = set(_ngrams(_sentences(source), n))
    return sum(g not in seen for g in grams), len(grams)


def _distinct_share(summaries: Sequence[str]) -> float:
    """Share of summaries whose text (whitespace-normalised) no other summary has."""
    texts = [" ".join(s.split()) for s in summaries]
    counts: dict[str, int] = {}
    for text in texts:
        counts[text] = counts.get(text, 0) + 1
    return sum(counts[t] == 1 for t in texts) / max(len(texts), 1)


def _words(summary: str) -> int:
    """Words (`read_quality.is_word`): the summary's length with punctuation not counted."""
    return sum(map(is_word, (summary or "").split()))


def abstractiveness(summaries: Sequence[str], sources: Sequence[str],
                    p_gen: Iterable[Sequence[float] | np.ndarray | float | None] | None = None) -> dict[str, float]:
    """The figures of the module docstring (percentages x 100, lengths in tokens) for one system."""
    novel = dict.fromkeys(ORDERS, 0)
    total = dict.fromkeys(ORDERS, 0)
    repeated = trigrams = 0
    summary_tokens = source_tokens = 0
    for summary, source in zip(summaries, sources):
        summ, src = _sentences(summary), _sentences(source)
        summary_tokens += sum(map(len, summ))
        source_tokens += sum(map(len, src))
        for n in ORDERS:
            new, grams = novel_ngrams(summary, source, n)
            total[n] += grams
            novel[n] += new
        again, grams_3 = repeated_trigrams(summary)
        trigrams += grams_3
        repeated += again
    count = max(len(summaries), 1)
    out = {f"novel_{n}gram": round(100 * novel[n] / total[n], 2) if total[n] else 0.0 for n in ORDERS}
    out["repeated_3gram"] = round(100 * repeated / trigrams, 2) if trigrams else 0.0
    out["mean_length"] = round(summary_tokens / count, 2)
    out["mean_words"] = round(sum(map(_words, summaries)) / count, 2)
    out["distinct"] = round(100 * _distinct_share(summaries), 2)
    out["adjacent_repeat"] = round(100 * sum(map(repeats_a_word, summaries)) / count, 2)
    out["compression"] = round(source_tokens / summary_tokens, 2) if summary_tokens else 0.0
    if p_gen is not None:
        values = [float(np.mean(v)) for v in p_gen if v is not None and np.size(v)]
        if values:
            out["mean_p_gen"] = round(float(np.mean(values)), 4)
    return out
