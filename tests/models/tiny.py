"""What the model tests share: a tiny word vocabulary and a loop that overfits a model to one batch (a helper
module: test files import no other test file)."""

from __future__ import annotations

import numpy as np
import torch

from sumpipe.models.loss import label_smoothed_nll

WORDS = "the a cat dog sat ran on in mat park big small red quick and ." .split()


class TinyVocab:
    def __init__(self) -> None:
        self.itos = ["<unk>", "<pad>", "<s>", "</s>", *WORDS]
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.rarity = np.linspace(0.5, 2.0, len(self.itos)).astype(np.float32)
        self.unknown_rarity = 2.2

    def oov_rarity(self, word: str) -> float:
        return self.unknown_rarity

    def __len__(self) -> int:
        return len(self.itos)


VOCAB = TinyVocab()


def overfit(model: torch.nn.Module, batch, lr: float, max_steps: int, target_loss: float = 0.02) -> list[float]:
    """Adam on one batch until the loss (no smoothing) is under `target_loss` or `max_steps` have run (the cap
    bounds a slow failure); the loss of every step."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses: list[float] = []
    for _ in range(max_steps):
        optimizer.zero_grad()
        loss, _ = label_smoothed_nll(model(batch), batch.trg_ext, batch.trg_mask, smoothing=0.0)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if losses[-1] < target_loss:
            break
    return losses
