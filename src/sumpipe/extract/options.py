"""The options each extractive method accepts (params: `extractive.options.<method>`,
`extract.budgets[i].options`), as typed dataclasses checked like params.yaml.

A value of the wrong type or out of range is a one-line `ConfigError` naming the option before the
method is built, so a LexRank `threshold: abc` or an NMF `topics: -1` never reaches numpy. Upper
bounds keep a typo (`topics: 100000`) from turning into a matrix that does not fit in memory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from sumpipe.config import from_dict, require

MAX_TOPICS = 1000       # topics/concepts per document: far above any sentence count that matters
MAX_ITERATIONS = 100_000
MAX_WEIGHT = 1e6


def _damping(value: float, key: str) -> None:
    require(0.0 < value < 1.0, key, "must be in (0, 1) (PageRank's damping)")


def _weight(value: float, key: str) -> None:
    require(-MAX_WEIGHT <= value <= MAX_WEIGHT, key, f"must be a finite number in [-{MAX_WEIGHT:g}, {MAX_WEIGHT:g}]")


@dataclass(frozen=True)
class NoOptions:
    """A method without options: any key is unknown."""


@dataclass(frozen=True)
class LexRankOptions:
    threshold: float | None = 0.1
    damping: float = 0.85

    def check(self, key: str) -> None:
        require(self.threshold is None or 0.0 <= self.threshold <= 1.0, "threshold",
                "must be in [0, 1] (a cosine similarity) or null")
        _damping(self.damping, "damping")


@dataclass(frozen=True)
class DampingOptions:
    damping: float = 0.85

    def check(self, key: str) -> None:
        _damping(self.damping, "damping")


@dataclass(frozen=True)
class LsaOptions:
    dimensions: int = 1

    def check(self, key: str) -> None:
        require(0 <= self.dimensions <= MAX_TOPICS, "dimensions", f"must be in [0, {MAX_TOPICS}] (0: sigma >= sigma_1 / 2)")


@dataclass(frozen=True)
class NmfOptions:
    topics: int = 3
    iterations: int = 30

    def check(self, key: str) -> None:
        require(1 <= self.topics <= MAX_TOPICS, "topics", f"must be in [1, {MAX_TOPICS}]")
        require(1 <= self.iterations <= MAX_ITERATIONS, "iterations", f"must be in [1, {MAX_ITERATIONS}]")


@dataclass(frozen=True)
class EdmundsonOptions:
    bonus_words: list[str] = field(default_factory=list)
    stigma_words: list[str] = field(default_factory=list)
    cue_weight: float = 1.0
    key_weight: float = 1.0
    title_weight: float = 1.0
    location_weight: float = 1.0
    key_ratio: float = 0.5

    def check(self, key: str) -> None:
        for name in ("cue_weight", "key_weight", "title_weight", "location_weight"):
            _weight(getattr(self, name), name)
        require(0.0 < self.key_ratio <= 1.0, "key_ratio", "must be in (0, 1]")


@dataclass(frozen=True)
class KlSumOptions:
    alpha: float = 1.0

    def check(self, key: str) -> None:
        require(0.0 < self.alpha <= MAX_WEIGHT, "alpha", f"must be in (0, {MAX_WEIGHT:g}] (additive smoothing)")


@dataclass(frozen=True)
class LuhnOptions:
    max_gap: int = 4

    def check(self, key: str) -> None:
        require(1 <= self.max_gap <= 1000, "max_gap", "must be in [1, 1000]")


@dataclass(frozen=True)
class RandomOptions:
    seed: int = 1234

    def check(self, key: str) -> None:
        require(0 <= self.seed < 2**63, "seed", "must be in [0, 2**63)")


@dataclass(frozen=True)
class NgramOptions:
    first_k: int = 1

    def check(self, key: str) -> None:
        require(0 <= self.first_k <= MAX_TOPICS, "first_k", f"must be in [0, {MAX_TOPICS}] (lead sentences kept first)")


OPTION_TYPES: dict[str, type] = {
    "lexrank": LexRankOptions,
    "lexrank_continuous": DampingOptions,
    "textrank": DampingOptions,
    "lsa": LsaOptions,
    "lsa_gongliu": LsaOptions,
    "nmf": NmfOptions,
    "edmundson": EdmundsonOptions,
    "klsum": KlSumOptions,
    "luhn": LuhnOptions,
    "random": RandomOptions,
    "ngram": NgramOptions,
}


def checked_options(method: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """`options` of `method`, type- and range-checked (ConfigError naming the option), with ints
    turned into floats where a float is expected. Only the keys given are returned: the method's
    own defaults stay the single source of the others."""
    given = dict(options or {})
    parsed = from_dict(OPTION_TYPES.get(method, NoOptions), given)
    return {f.name: getattr(parsed, f.name) for f in dataclasses.fields(parsed) if f.name in given}
