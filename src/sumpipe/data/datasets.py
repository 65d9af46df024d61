"""The data sets `data.dataset` names: one registry, one loader module per corpus.

An entry says how to load its examples from a `DataConfig` and its own options (rows {id, source,
reference, references, split}: `references` may be empty, `split` None where the corpus has none and
the stable id hash decides), what it needs in that config (`check`, run at the stage boundary before
any work is spent: `sumpipe.config` sits below data/ and cannot ask the registry), its options
dataclass (`data.options.<name>`, defined beside the loader and validated here, like a model family's
arch section) and its length defaults for decoding. Adding a data set is one module that calls
`DATASETS.register(name, Dataset(...))` and its line in `DATASETS.builtin`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sumpipe.config import DataConfig
from sumpipe.errors import ConfigError
from sumpipe.registry import Registry
from sumpipe.validation import child_key, from_dict

Rows = tuple[list[dict], dict]  # the examples and the loader's stats (written under its name in stats.json)


@dataclass(frozen=True)
class Lengths:
    """A corpus's summary lengths, for decoding when `decode.max_length` is unset.

    `max_summary`: the longest summary generated (Morozovskii 2022 Table 4.3: CNN/DM 120, XSum 30, Gigaword/DUC
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
class NoOptions:
    """A data set without options of its own: any key under `data.options.<name>` is unknown."""


@dataclass(frozen=True)
class Dataset:
    """One corpus: `load` (config, its options) its examples, `check` (cfg, key prefix) what it needs
    in the config, `options` the frozen dataclass of `data.options.<name>` (validated like params.yaml:
    a wrong key or type is one line naming it; its `check(key)` holds the range checks), its `lengths`,
    and `aliases`: other names a model card may give it (decoding only, e.g. "cnndm")."""

    load: Callable[[DataConfig, Any], Rows]
    check: Callable[[DataConfig, str], None] = _no_check
    options: type = NoOptions
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
    ("data", "crosseval.data"): an unknown name, a missing setting or a bad option of any data set
    under `<key>.options` is a one-line ConfigError naming it."""
    dataset = DATASETS.get(cfg.dataset, f"{key}.dataset")
    for name in cfg.options:
        options_of(cfg, name, key)  # every section given, so a typo in another data set's is caught too
    dataset.check(cfg, key)
    return dataset


def options_of(cfg: DataConfig, name: str, key: str = "data") -> Any:
    """Data set `name`'s options: `<key>.options.<name>` validated into its dataclass (its defaults
    for the keys not given)."""
    where = child_key(child_key(key, "options"), name)
    if name not in DATASETS.names():
        raise ConfigError(f"{where}: unknown dataset {name!r} (known: {', '.join(DATASETS.names())})")
    options = DATASETS.get(name, where).options
    if options is NoOptions and cfg.options.get(name):
        raise ConfigError(f"{where}: the {name!r} data set takes no options")
    return from_dict(options, cfg.options.get(name), where)


def load_dataset(cfg: DataConfig, key: str = "data") -> Rows:
    """The examples of `cfg.dataset` and its loader's stats, config and options checked first."""
    return dataset_of(cfg, key).load(cfg, options_of(cfg, cfg.dataset, key))


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
