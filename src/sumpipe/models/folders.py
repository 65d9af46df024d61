"""A trained model's folders: one per training seed, and which of them answers.

The train stage writes model `<name>` trained with seed `s` into `<models>/<name>/seed-<s>/` (a complete
model folder: weights, card, vocabulary, log; `sumpipe.names.seed_folder`). Whoever wants "the model
M2" (`sumpipe decode`, the report's samples and heat maps) takes one seed of it with `pick_seed`: the
one with the lowest validation loss, so that the choice is made on validation, never on test. Light:
it reads cards, never weights, and imports no torch.
"""

from __future__ import annotations

from pathlib import Path

from sumpipe.errors import SumpipeError
from sumpipe.models.card import CARD_FILE, ModelCard, read_card
from sumpipe.names import folder_seed


def seed_folders(model_dir: Path) -> dict[int, Path]:
    """{seed: folder} of the trained seeds of a model (`models/<name>/seed-<s>/` holding a card)."""
    if not model_dir.is_dir():
        return {}
    found = {folder_seed(p.name): p for p in model_dir.iterdir() if (p / CARD_FILE).is_file()}
    return {seed: found[seed] for seed in sorted(s for s in found if s is not None)}


def is_trained(model_dir: Path) -> bool:
    """A model folder (holds a card) or a folder of trained seeds."""
    return (model_dir / CARD_FILE).is_file() or bool(seed_folders(model_dir))


def _best_valid_loss(folder: Path) -> float:
    loss = read_card(folder).training.get("best_valid_loss")
    return float(loss) if isinstance(loss, (int, float)) else float("inf")


def pick_seed(model_dir: Path, seed: int | None = None) -> Path:
    """One trained seed of the model in `model_dir`: `seed` when given, else the one with the lowest
    validation loss (chosen on validation, never on test; the lowest seed on a tie)."""
    seeds = seed_folders(model_dir)
    if seed is not None:
        if seed not in seeds:
            listing = ", ".join(map(str, seeds)) or "none"
            raise SumpipeError(f"--train-seed {seed}: {model_dir} has no such seed (trained: {listing})")
        return seeds[seed]
    return min(seeds.values(), key=lambda folder: (_best_valid_loss(folder), folder_seed(folder.name)))


def model_group(model_dir: Path, card: ModelCard) -> Path:
    """The folder that names the model: `models/M1` for its seed folder `models/M1/seed-2` (a card of
    seed 2), else the model folder itself."""
    seeded = card.seed is not None and folder_seed(model_dir.name) == card.seed
    return model_dir.parent if seeded else model_dir
