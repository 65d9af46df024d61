"""Which seed folders make an ensemble (`sumpipe.decode.members`); the checks of `check_ensemble` are
exercised through `load_ensemble` in test_ensemble.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from sumpipe.decode.members import check_ensemble, ensemble_folders
from sumpipe.errors import SumpipeError


def test_every_trained_seed_or_the_ones_asked_for_in_seed_order(tmp_path: Path, make_model_dir) -> None:
    group = tmp_path / "models" / "M1"
    for seed in (3, 1, 10):
        make_model_dir(group / f"seed-{seed}", training_seed=seed)
    (group / "seed-7").mkdir()  # no card: not trained
    assert ensemble_folders(group) == [group / "seed-1", group / "seed-3", group / "seed-10"]
    assert ensemble_folders(group, [10, 1]) == [group / "seed-1", group / "seed-10"]
    with pytest.raises(SumpipeError, match=r"^--train-seed 7: .*M1 has no such seed \(trained: 1, 3, 10\)$"):
        ensemble_folders(group, [1, 7])
    with pytest.raises(SumpipeError, match=r"M2: no trained seeds"):
        ensemble_folders(tmp_path / "models" / "M2")


def test_the_checked_members_cards_come_back_in_order(tmp_path: Path, make_model_dir) -> None:
    folders = [make_model_dir(tmp_path / f"seed-{s}", seed=s, training_seed=s) for s in (1, 2)]
    assert [card.seed for card in check_ensemble(folders)] == [1, 2]
    with pytest.raises(SumpipeError, match="at least one model folder"):
        check_ensemble([])
