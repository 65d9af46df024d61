"""Which model folders decode as one ensemble (`sumpipe.decode.ensemble`), and whether they fit together.

Light: reads cards and vocabulary files, never weights, and imports no torch, so `sumpipe decode
--ensemble` and `sumpipe.load(..., ensemble=True)` refuse bad members before anything loads.

- `ensemble_folders(group, seeds)`: the seed folders of a model (`models/<name>/seed-<s>/`), all its
  trained seeds or the ones asked for;
- `check_ensemble(folders)`: the members read and write the same things, so one batch of ids and one
  extended vocabulary serve them all: the same family, input selection, source and summary cut lengths
  (`arch.max_source_tokens`, `arch.max_summary_tokens`), data set (its summary length cap) and
  vocabulary (the bytes of `vocab.parquet`). Otherwise a one-line error naming the first folder and the
  first that differs: `error: models/M1/seed-1 and models/M2/seed-1: different families (transformer,
  rnn); an ensemble's members must share them`. A model that rewrites its drafts in a second pass
  (bert2stage with `arch.refine` on) is refused: an ensemble averages the search's steps only
  (`sumpipe.decode.ensemble`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sumpipe.errors import SumpipeError
from sumpipe.models.card import VOCAB_FILE, ModelCard, read_card
from sumpipe.models.folders import seed_folders


def ensemble_folders(group: Path, seeds: Sequence[int] | None = None) -> list[Path]:
    """The seed folders of the model in `group` (`models/<name>`): every trained seed, or `seeds` (each
    must be trained), in seed order."""
    trained = seed_folders(group)
    if not trained:
        raise SumpipeError(f"{group}: no trained seeds (`models/<name>/seed-<s>/`) to ensemble")
    if seeds is None:
        return list(trained.values())
    missing = [seed for seed in seeds if seed not in trained]
    if missing:
        raise SumpipeError(f"--train-seed {missing[0]}: {group} has no such seed "
                           f"(trained: {', '.join(map(str, trained))})")
    return [trained[seed] for seed in sorted(set(seeds))]


def _arch_field(card: ModelCard, name: str) -> Any:
    """An arch field of a card as read (`arch` is still a mapping there), or None."""
    return card.arch.get(name) if isinstance(card.arch, dict) else getattr(card.arch, name, None)


# what the members of an ensemble must share, read from each card: (what the error calls it, the value)
SHARED_FACTS: tuple[tuple[str, Callable[[ModelCard], Any]], ...] = (
    ("families", lambda c: c.family),
    ("input selections", lambda c: c.input or "the whole text"),
    ("source cut lengths (arch.max_source_tokens)", lambda c: _arch_field(c, "max_source_tokens")),
    ("summary cut lengths (arch.max_summary_tokens)", lambda c: _arch_field(c, "max_summary_tokens")),
    ("data sets", lambda c: c.dataset or "none"),
    ("vocabulary sizes", lambda c: c.vocab_size),
)


def _vocab_digest(folder: Path) -> str:
    """SHA-256 of the folder's vocabulary file ("" without one: loading it fails later, naming it)."""
    path = folder / VOCAB_FILE
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def check_ensemble(folders: Sequence[Path]) -> list[ModelCard]:
    """The cards of `folders` when their models can decode as one ensemble (module docstring), else a
    one-line SumpipeError naming two folders and what differs."""
    if not folders:
        raise SumpipeError("an ensemble needs at least one model folder")
    cards = [read_card(folder) for folder in folders]
    for folder, card in zip(folders, cards):
        if _arch_field(card, "refine"):
            raise SumpipeError(f"{folder}: refines its drafts in a second pass (a {card.family} model with "
                               "arch.refine on), which an ensemble cannot average; decode it one seed at a time")
    first, first_card = folders[0], cards[0]
    for folder, card in zip(folders[1:], cards[1:]):
        for what, fact in SHARED_FACTS:
            if fact(card) != fact(first_card):
                raise SumpipeError(f"{first} and {folder}: different {what} ({fact(first_card)}, {fact(card)}); "
                                   "an ensemble's members must share them")
    digests = [_vocab_digest(folder) for folder in folders]
    for folder, digest in zip(folders[1:], digests[1:]):
        if digest != digests[0]:
            raise SumpipeError(f"{first} and {folder}: different vocabularies ({VOCAB_FILE} differs); "
                               "an ensemble's members must share one")
    return cards
