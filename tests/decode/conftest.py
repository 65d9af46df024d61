"""Fixtures of the decode tests: documents for the tiny models, and a folder of trained models that
`sumpipe decode` runs in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

ARTICLE = ("Police said the man was arrested on Monday after a long chase through the city. "
           "A bird flew over the house. The dog ate the bone, and the cat sat on the mat.")


@pytest.fixture(scope="session")
def decode_docs() -> list[str]:
    """Four preprocessed documents for `make_model_dir`'s tiny models (the last has two OOV words)."""
    return ["police said the man was arrested on monday .", "a bird flew over the house .\nthe dog ate the bone .",
            "the cat sat on the mat .", "zebra quixotic the man ate"]


@pytest.fixture(scope="session")
def article() -> str:
    """A raw three-sentence news text (what `workdir`'s article.txt holds)."""
    return ARTICLE


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    """A folder without params.yaml (built-in defaults) holding models/M1 (seed 1) and models/M2 (seeds 1
    and 2; seed 2 has the lower validation loss), as the train stage lays them out."""
    root = tmp_path_factory.mktemp("work")
    make_model_dir(root / "models" / "M1" / "seed-1", seed=0, training_seed=1, best_valid_loss=4.5)
    make_model_dir(root / "models" / "M2" / "seed-1", seed=1, training_seed=1, best_valid_loss=4.5)
    make_model_dir(root / "models" / "M2" / "seed-2", seed=2, training_seed=2, best_valid_loss=4.4)
    (root / "article.txt").write_text(ARTICLE, encoding="utf-8")
    return root


def _assert_one_line_error(result: tuple[int, str, str], fragment: str) -> None:
    code, out, err = result
    assert code == 1
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert fragment in err
    assert "Traceback" not in err and out == ""


@pytest.fixture(scope="session")
def assert_one_line_error() -> Callable[[tuple[int, str, str], str], None]:
    """`assert_one_line_error(cli(...), fragment)`: exit status 1, nothing on stdout, and stderr one `error:` line
    holding `fragment` (no traceback)."""
    return _assert_one_line_error
