"""Does a user's text look like what the model was trained on? The share of its words outside the model's
vocabulary, against the training texts' own share (`sumpipe decode`'s note, `Summarizer.domain_check`).

A model trained on Python docstrings meets a news story as a stream of words it never learnt (names,
places, verbs of news): it still writes a summary, a poor one, with no sign of why. The signal chosen is
the cheapest one the model folder already holds: its vocabulary.

Choices:
- **Words** are the tokens the model read (after preprocessing and its input selection: a `Summary`'s
  `source_tokens`), punctuation included, on both sides of the comparison.
- **The training texts' share** is 1 - (train count of the model's vocabulary words) / (train tokens):
  the counts are the model folder's vocabulary (`vocab.parquet` keeps each word's train count), the
  token total the vocab stage's `<paths.metrics>/vocab.json` (`train_tokens`, source and reference
  tokens of the train split, as the counts are). Derived at decode time, so no model folder changes;
  read only for a model of the project's own `paths.models` (a folder from elsewhere did not come from
  that corpus). Without it the share is unknown and an absolute threshold decides.
- **The threshold**: the text's share at least `MARGIN` (20 points) above the training texts'. Measured
  with the default M2's 2,000-word vocabulary (training texts 12.3 % outside): of the pydoc test and
  validation docstrings 1.5 % and 1.9 % cross it, of 1,000 CNN stories 98.3 %, of 200 Amazon reviews
  50.5 % (margins 15 / 25 points: docstrings 4.6 / 0.7 %, stories 99.8 / 84.3 %). `UNKNOWN_THRESHOLD`
  (35 %) stands in when the training share is unknown. Fewer than `MIN_TOKENS` words say nothing.
  The other way round it is weaker: experiments/cnn's 2,000-word vocabulary leaves 20.6 % of its news
  outside, and docstrings, short and full of identifiers, spread widely (median 35.5 %): the note fires
  for 28 % of the pydoc test docstrings given to a news model, and for none of its 323 test stories.
- A subword model (BERT2S: sentencepiece) has no words outside its vocabulary: no check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sumpipe.errors import SumpipeError
from sumpipe.inputs import loads_json, read_capped

MARGIN = 0.20
UNKNOWN_THRESHOLD = 0.35
MIN_TOKENS = 10
VOCAB_STATS = "vocab.json"  # the vocab stage's statistics, in paths.metrics
MAX_STATS_BYTES = 1 << 20

# what each `data.dataset` is, for the note (a card's dataset is params.yaml's `data.dataset`)
DATASETS = {
    "pydoc": "Python docstrings", "numerals": "generated number sentences", "cnn_dailymail": "news stories",
    "xsum": "BBC news", "gigaword": "news headlines", "local": "the local data set of its data.path",
}
# where the repository trains on other text: (kind, data sets of that kind, what to do)
ALTERNATIVES: tuple[tuple[str, frozenset[str], str], ...] = (
    ("news", frozenset({"cnn_dailymail", "xsum", "gigaword"}),
     "train experiments/cnn (docs/realtext.md) and add --project experiments/cnn"),
    ("Python docstrings", frozenset({"pydoc"}), "use the main project's models (dvc repro at the repository root)"),
    ("other text", frozenset(), "train on it with data.dataset: local (docs/datasets.md)"),
)


def what_instead(dataset: str) -> str:
    """"for news, train experiments/cnn ...; for other text, ...": the kinds of text the repository
    trains on, but the one `dataset` already is."""
    return "; ".join(f"for {kind}, {how}" for kind, sets, how in ALTERNATIVES if dataset not in sets)


@dataclass(frozen=True)
class DomainCheck:
    """The words a model read from some texts, against its vocabulary: `outside` of `tokens` were not in
    it; `corpus_share` is the share of its training texts' tokens outside it (None: unknown)."""

    model: str
    dataset: str
    outside: int
    tokens: int
    corpus_share: float | None

    @property
    def share(self) -> float:
        return self.outside / self.tokens if self.tokens else 0.0

    @property
    def unlike_training(self) -> bool:
        """Whether the texts look unlike the training corpus (the module docstring's threshold)."""
        if self.tokens < MIN_TOKENS:
            return False
        limit = UNKNOWN_THRESHOLD if self.corpus_share is None else self.corpus_share + MARGIN
        return self.share >= limit

    def note(self) -> str | None:
        """One line for stderr when `unlike_training`, else None: "note: the input has 42 % of its words
        outside M2's vocabulary (its training texts: 12 %): M2 was trained on Python docstrings (pydoc),
        expect a poor summary; for news, train experiments/cnn ..." (`what_instead`)."""
        if not self.unlike_training:
            return None
        theirs = "unknown" if self.corpus_share is None else f"{self.corpus_share:.0%}".replace("%", " %")
        what = DATASETS.get(self.dataset, "")
        trained = f"{what} ({self.dataset})" if what else self.dataset or "an unnamed data set"
        share = f"{self.share:.0%}".replace("%", " %")
        return (f"note: the input has {share} of its words outside {self.model}'s vocabulary (its training "
                f"texts: {theirs}): {self.model} was trained on {trained}, expect a poor summary; "
                f"{what_instead(self.dataset)}")


def count_outside(token_lists: Iterable[Sequence[str]], vocab: Any) -> tuple[int, int]:
    """(tokens outside `vocab`, tokens) over `token_lists`; `vocab.stoi` maps the vocabulary's words."""
    outside = total = 0
    for tokens in token_lists:
        total += len(tokens)
        outside += sum(1 for token in tokens if token not in vocab.stoi)
    return outside, total


def train_tokens(metrics_dir: Path) -> int | None:
    """The train split's token count from the vocab stage's statistics; None when absent or unreadable
    (the figure is optional: a broken file is no reason to refuse to summarise)."""
    try:
        stats = loads_json(read_capped(metrics_dir / VOCAB_STATS, MAX_STATS_BYTES, "the vocab statistics"),
                           str(metrics_dir / VOCAB_STATS))
    except SumpipeError:
        return None
    value = stats.get("train_tokens") if isinstance(stats, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def corpus_share(vocab: Any, n_train_tokens: int | None) -> float | None:
    """The share of the training texts' tokens outside `vocab` (its words' train counts against the train
    token count); None when unknown or inconsistent (counts above the total: another corpus's figure)."""
    counts = getattr(vocab, "counts", None)
    if n_train_tokens is None or counts is None:
        return None
    in_vocab = int(counts.sum())
    if in_vocab <= 0 or in_vocab > n_train_tokens:
        return None
    return 1.0 - in_vocab / n_train_tokens
