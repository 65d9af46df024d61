"""The thesis's own measure: how many of the reference's rare words a summary contains.

M2 exists to help with rare words (Morozovskii 2022 §2.3.2: the rarity score 1/ln(1 + count) + shift of
Eqn 2.20 scales the encoder's attention), so ROUGE alone, dominated by frequent words, cannot show
whether it earns its place. Per document:

    rare(reference) = { content words w of the reference : count_train(w) <= max_count }
    recall          = |rare(reference) ∩ words(summary)| / |rare(reference)|

- `count_train` is the word's count in the training split (the vocab stage's `words.parquet`,
  sources and references); a word never seen in training counts 0, so it is always rare. Since the
  rarity score falls with the count, `count <= max_count` is the top band of rarity scores: every
  score >= 1/ln(1 + max_count) + shift.
- Content words only (`sumpipe.vocab.words.is_content_word`: no stop words, no punctuation), as the
  3-gram table counts them; tokens are the preprocessed ones (lowercased), matched exactly (no
  stemming: a rare word is copied or it is not).
- Documents whose reference has no rare word say nothing about it and are left out; the mean over
  the rest comes with a bootstrap interval (`sumpipe.evaluate.bootstrap`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sumpipe.vocab.words import is_content_word


def rare_words(text: str, counts: Mapping[str, int], max_count: int) -> set[str]:
    """The content words of `text` seen at most `max_count` times in training (unseen ones included)."""
    return {w for w in text.split() if is_content_word(w) and counts.get(w, 0) <= max_count}


def rare_word_recall(summaries: Sequence[str], references: Sequence[str], counts: Mapping[str, int],
                     max_count: int) -> np.ndarray:
    """(n,) per document: the share of the reference's rare words the summary contains; NaN where
    the reference has none."""
    out = np.full(len(summaries), np.nan)
    for i, (summary, reference) in enumerate(zip(summaries, references)):
        wanted = rare_words(reference, counts, max_count)
        if wanted:
            out[i] = len(wanted & set(summary.split())) / len(wanted)
    return out
