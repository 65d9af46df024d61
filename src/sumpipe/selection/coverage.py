"""Input coverage: how much of the reference a selected input contains (Morozovskii 2022 Fig. 4.9, 4.10, 5.2).

The thesis plots, per input sentence, how many of its words occur in the reference, and sums them
(94 for the first 400 tokens, 102 for the 3-gram selection of 400, 51 for 200, on one CNN/DM story).
Per example and per selection we record:

- `words_present`: distinct reference content words that occur in the selected input;
- `share`: `words_present` / distinct reference content words (examples without any are skipped);
- `occurrences`: content tokens of the selected input that are reference words (the thesis's count:
  a reference word repeated in the input counts each time);
- `binds`: the share of documents longer than the selection's token budget, i.e. where the method
  had to choose at all (below it every method keeps the whole document and they all agree);
- `differs`: the share of documents whose selection is not the document's first tokens, i.e. whose
  chosen sentences are not the leading ones in order (a `first` selection never differs; the 3-gram
  selection differs where it skipped a sentence for a better-scoring later one). On the default corpus
  `ngram40` differs from `first40` for few documents; on CNN stories (~820 tokens) for most: the
  difference the thesis's hybrids are about.

Content words as for the 3-grams (stop words and punctuation left out), so "the", "," and "." do not
make every selection look complete. Distinct words for the share make it a recall in [0, 1],
comparable across budgets; the occurrence count is kept to compare with the thesis.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sumpipe.vocab.words import is_content_word


def reference_words(reference: str) -> frozenset[str]:
    """Distinct content words of a reference text."""
    return frozenset(t for t in reference.split() if is_content_word(t))


def reference_hits(tokens: Iterable[str], ref_words: frozenset[str]) -> list[str]:
    """The tokens (in order, repeats kept) that are reference words."""
    return [t for t in tokens if t in ref_words]


def coverage_of_hits(hits: Iterable[list[str]]) -> tuple[int, int]:
    """(words_present, occurrences) from the `reference_hits` of each selected sentence."""
    present: set[str] = set()
    occurrences = 0
    for h in hits:
        present.update(h)
        occurrences += len(h)
    return len(present), occurrences


@dataclass
class _Sums:
    examples: int = 0
    words_present: int = 0
    occurrences: int = 0
    share: float = 0.0
    share_examples: int = 0
    binds: int = 0
    differs: int = 0

    def merge(self, other: _Sums) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class CoverageStats:
    """Running sums for one split; `summary()` gives the means."""

    examples: int = 0
    reference_words: int = 0
    sums: dict[str, _Sums] = field(default_factory=dict)

    def add_reference(self, ref_words: frozenset[str]) -> None:
        self.examples += 1
        self.reference_words += len(ref_words)

    def add_counts(self, selection: str, present: int, occurrences: int, ref_words: frozenset[str]) -> None:
        s = self.sums.setdefault(selection, _Sums())
        s.examples += 1
        s.words_present += present
        s.occurrences += occurrences
        if ref_words:
            s.share += present / len(ref_words)
            s.share_examples += 1

    def add_binding(self, selection: str, binds: bool) -> None:
        """Count a document whose length exceeds `selection`'s budget."""
        self.sums.setdefault(selection, _Sums()).binds += int(binds)

    def add_choice(self, selection: str, chosen: list[int]) -> None:
        """Count a document whose chosen sentences (document order) are not its leading ones."""
        self.sums.setdefault(selection, _Sums()).differs += int(chosen != list(range(len(chosen))))

    def merge(self, other: CoverageStats) -> None:
        self.examples += other.examples
        self.reference_words += other.reference_words
        for name, sums in other.sums.items():
            self.sums.setdefault(name, _Sums()).merge(sums)

    def summary(self, digits: int = 4) -> dict[str, object]:
        out: dict[str, object] = {
            "examples": self.examples,
            "reference_words": round(self.reference_words / max(self.examples, 1), digits),
        }
        for name, s in sorted(self.sums.items()):
            out[name] = {
                "words_present": round(s.words_present / max(s.examples, 1), digits),
                "share": round(s.share / max(s.share_examples, 1), digits),
                "occurrences": round(s.occurrences / max(s.examples, 1), digits),
                "binds": round(s.binds / max(s.examples, 1), digits),
                "differs": round(s.differs / max(s.examples, 1), digits),
            }
        return out
