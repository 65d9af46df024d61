"""Stable, content-addressed train/valid/test assignment.

An example's split depends only on its id (and the ratios), never on file order, the process or
Python's salted `hash()`: blake2b of the id gives a number in [0, 1), and the ratios cut [0, 1)
into train | valid | test. Adding or removing other examples never moves an example to another
split, so a corpus can grow without leaking test examples into training.
"""

from __future__ import annotations

import hashlib

from sumpipe.config import SplitRatios
from sumpipe.errors import SumpipeError
from sumpipe.names import Split

# Spellings of the three splits found in real corpora (Hugging Face uses "validation").
SPLIT_ALIASES: dict[str, Split] = {
    "train": "train",
    "training": "train",
    "valid": "valid",
    "validation": "valid",
    "val": "valid",
    "dev": "valid",
    "test": "test",
    "testing": "test",
}


def unit_hash(key: str, salt: str = "") -> float:
    """Map a string to a float in [0, 1), the same on every machine and Python version."""
    digest = hashlib.blake2b(f"{salt}{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def stable_split(example_id: str, ratios: SplitRatios) -> Split:
    """The split ("train", "valid" or "test") that `example_id` falls into under `ratios`."""
    u = unit_hash(example_id, salt="split:")
    if u < ratios.train:
        return "train"
    if u < ratios.train + ratios.valid:
        return "valid"
    return "test"


def normalize_split(value: object, where: str) -> Split:
    """Map a split name as spelled in a corpus (e.g. "validation") to train/valid/test."""
    name = SPLIT_ALIASES.get(str(value).strip().lower())
    if name is None:
        known = ", ".join(sorted(SPLIT_ALIASES))
        raise SumpipeError(f"{where}: unknown split {value!r} (expected one of {known})")
    return name


def content_id(source: str, reference: str, prefix: str = "") -> str:
    """A stable id for an example that has none: a short blake2b digest of its text."""
    digest = hashlib.blake2b(f"{source}\x00{reference}".encode(), digest_size=8).hexdigest()
    return f"{prefix}{digest}"
