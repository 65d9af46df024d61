"""Fixtures of the decode tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def decode_docs() -> list[str]:
    """Four preprocessed documents for `make_model_dir`'s tiny models (the last has two OOV words)."""
    return ["police said the man was arrested on monday .", "a bird flew over the house .\nthe dog ate the bone .",
            "the cat sat on the mat .", "zebra quixotic the man ate"]
