"""Shared test fixtures.

Tests that read the real corpora in ../shared/data use the `shared_data` fixture, which skips
cleanly when the folder is absent (a fresh clone elsewhere, a user's machine).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SUMPIPE_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data, or skip the test when it is not there."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (real data is optional)")
    return SHARED_DATA


@pytest.fixture
def repo_root() -> Path:
    return REPO
