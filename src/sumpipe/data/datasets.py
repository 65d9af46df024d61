"""The data sets `data.dataset` names: one registry, one loader module per corpus.

An entry says how to load its examples from a `DataConfig` (rows {id, source, reference, references,
split}: `references` may be empty, `split` None where the corpus has none and the stable id hash
decides), what it needs in that config (`check`, run at the stage boundary before any work is spent:
`sumpipe.config` sits below data/ and cannot ask the registry) and its length defaults for decoding.
Adding a data set is one module that calls `DATASETS.register(name, Dataset(...))` and its line in
`DATASETS.builtin`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sumpipe.config import DataConfig
from sumpipe.registry import Registry

Rows = tuple[list[dict], dict]  # the examples and the loader's stats (written under its name in stats.json)


@dataclass(frozen=True)
class Lengths:
    """A corpus's summary lengths, for decoding when `decode.max_length` is unset.

    `max_summary`: the longest summary generated (seed 001 Table 4.3: CNN/DM 120, XSum 30, Gigaword/DUC
    25). Without it the cap is 1.2 × the model's max_summary_tokens (Table 4.3's ratio for CNN/DM:
    100 -> 120), or × `longest_reference` (the corpus's longest reference, in words) when that is shorter.
    """

    max_summary: int | None = None
    longest_reference: int | None = None

    def decode_cap(self, max_summary_tokens: int) -> int:
        """The longest summary to generate for a model trained with `max_summary_tokens`."""
        if self.max_summary:
            return self.max_summary
        longest = min(max_summary_tokens, self.longest_reference or math.inf)
        return max(1, math.ceil(1.2 * longest))


def _no_check(cfg: DataConfig, key: str) -> None:
    """A data set that needs nothing beyond DataConfig's own checks."""


@dataclass(frozen=True)
class Dataset:
    """One corpus: `load` its examples, `check` (cfg, key prefix) what it needs in the config, its
    `lengths`, and `aliases`: other names a model card may give it (decoding only, e.g. "cnndm")."""

    load: Callable[[DataConfig], Rows]
    check: Callable[[DataConfig, str], None] = _no_check
    lengths: Lengths = Lengths()
    aliases: tuple[str, ...] = ()


DATASETS: Registry[Dataset] = Registry("dataset", {
    "pydoc": "sumpipe.data.pydoc_corpus",
    "numerals": "sumpipe.data.numerals",
    "local": "sumpipe.data.local",
    "cnn_dailymail": "sumpipe.data.hub",
    "xsum": "sumpipe.data.hub",
    "gigaword": "sumpipe.data.hub",
})


def dataset_of(cfg: DataConfig, key: str = "data") -> Dataset:
    """The entry `cfg.dataset` names, with its config checked; `key` is the section's params key
    ("data", "crosseval.data"): an unknown name or a missing setting is a one-line ConfigError naming it."""
    dataset = DATASETS.get(cfg.dataset, f"{key}.dataset")
    dataset.check(cfg, key)
    return dataset


def lengths_of(name: str) -> Lengths:
    """The length defaults of the data set a model card names (any case, or one of its aliases);
    no defaults for a name no data set has (a card written elsewhere, or without a data set)."""
    name = name.lower()
    if name in DATASETS.names():
        return DATASETS.get(name, "dataset").lengths
    for known in DATASETS.names():
        if name in DATASETS.get(known, "dataset").aliases:
            return DATASETS.get(known, "dataset").lengths
    return Lengths()
