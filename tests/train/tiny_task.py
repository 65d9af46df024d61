"""The tiny classification task the engine tests train (tests/train/test_engine.py, test_ddp.py), and their
TrainConfig. A plain module, not fixtures: test_ddp's worker processes (spawned) import it by its package path,
and test_engine subclasses TinyTask at module level."""

from __future__ import annotations

import dataclasses

import torch

from sumpipe.config import TrainConfig


@dataclasses.dataclass
class TinyBatch:
    x: torch.Tensor  # (B, 8)
    y: torch.Tensor  # (B,)

    def to(self, device: torch.device) -> TinyBatch:
        return TinyBatch(self.x.to(device), self.y.to(device))


class TinyTask:
    """40 train / 12 valid random points in 4 classes; batch order = permutation seeded by (seed, epoch)."""

    def __init__(self, batch_size: int = 8, seed: int = 7) -> None:
        g = torch.Generator().manual_seed(0)
        self.data = {split: (torch.randn(n, 8, generator=g), torch.randint(0, 4, (n,), generator=g))
                     for split, n in (("train", 40), ("valid", 12))}
        self.batch_size, self.seed = batch_size, seed

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        order = torch.randperm(40, generator=torch.Generator().manual_seed(self.seed * 1000 + epoch)).tolist()
        return [order[i:i + self.batch_size] for i in range(0, 40, self.batch_size)]

    def valid_batches(self) -> list[list[int]]:
        return [list(range(0, 6)), list(range(6, 12))]

    def collate(self, indices, split: str) -> TinyBatch:
        x, y = self.data[split]
        idx = torch.tensor(list(indices), dtype=torch.long)
        return TinyBatch(x[idx], y[idx])

    def count_tokens(self, batch: TinyBatch) -> int:
        return int(batch.y.numel())

    def loss(self, model: torch.nn.Module, batch: TinyBatch) -> tuple[torch.Tensor, torch.Tensor]:
        logits = model(batch.x)
        return torch.nn.functional.cross_entropy(logits, batch.y, reduction="sum"), torch.tensor(batch.y.numel())


def config(**overrides) -> TrainConfig:
    base = dict(optimizer="adam", lr=0.01, warmup_steps=4, batch_size=8, epochs=3, log_every=2,
                checkpoint_every=3, device="cpu", seed=5, label_smoothing=0.0, grad_clip=1.0, threads=1, patience=None)
    base.update(overrides)
    return TrainConfig(**base)
