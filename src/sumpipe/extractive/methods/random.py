"""Random: a seeded shuffle, the floor any method must beat.

The order depends only on `seed` and the document (its `key`, the example id, or else its text), never
on which other documents are in the run or in what order they come.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import RankingMethod
from sumpipe.extractive.methods.document import Document
from sumpipe.validation import require


@dataclass(frozen=True)
class RandomOptions:
    seed: int = 1234

    def check(self, key: str) -> None:
        require(0 <= self.seed < 2**63, "seed", "must be in [0, 2**63)")


@register
class RandomOrder(RankingMethod):
    name = "random"
    Options = RandomOptions
    uses_terms = False

    def __init__(self, seed: int = 1234) -> None:
        self.seed = seed

    def rank(self, doc: Document) -> Iterable[int]:
        identity = doc.key or "\n".join(" ".join(s) for s in doc.sentences)
        rng = np.random.default_rng([self.seed, zlib.crc32(identity.encode("utf-8"))])
        return rng.permutation(doc.n_sentences).tolist()
