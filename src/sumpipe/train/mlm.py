"""Masked language modelling (BERT; Roy Choudhury 2020 §9.7) as a `TrainTask` for the engine.

Training sequences are the train sources cut into windows of `max_tokens - 2` pieces, each wrapped
in `<s>` … `</s>` (BERT's [CLS] … [SEP]). Each batch is masked afresh when it is collated
(`mlm_mask`, "dynamic masking"): of the non-special pieces, `mask_prob` are chosen as targets; of
those `mask_token_prob` become `<mask>`, `random_token_prob` a uniformly drawn non-special piece and
the rest stay as they are (80/10/10). Training masks draw from torch's global generator, whose state
the engine's checkpoints carry, so a resumed run masks exactly as the killed one would have;
validation masks come from a generator seeded by the batch's first example, the same every epoch.
The loss is the summed cross-entropy over the chosen positions only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F

from sumpipe.models.batching import bucket_batches
from sumpipe.names import BOS, EOS, PAD
from sumpipe.subword.pieces import MASK


@dataclass
class MLMBatch:
    """inputs (B, L) masked piece ids, keep (B, L) bool real positions, labels (B, L) the original
    ids, targets (B, L) bool the positions to predict."""

    inputs: torch.Tensor
    keep: torch.Tensor
    labels: torch.Tensor
    targets: torch.Tensor

    def _map(self, fn) -> MLMBatch:
        return MLMBatch(**{f.name: fn(getattr(self, f.name)) for f in fields(self)})

    def to(self, device: torch.device | str, non_blocking: bool = False) -> MLMBatch:
        return self._map(lambda t: t.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> MLMBatch:
        return self._map(lambda t: t.pin_memory())


def mlm_mask(
    ids: torch.Tensor,
    special: torch.Tensor,
    *,
    mask_prob: float = 0.15,
    mask_token_prob: float = 0.8,
    random_token_prob: float = 0.1,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking of ids (B, L); special (V,) bool marks pieces never chosen nor drawn (padding too).

    Returns (inputs, targets): the masked ids and the (B, L) bool positions to predict.
    """
    chosen = (torch.rand(ids.shape, generator=generator) < mask_prob) & ~special[ids]
    how = torch.rand(ids.shape, generator=generator)
    to_mask = chosen & (how < mask_token_prob)
    to_random = chosen & (how >= mask_token_prob) & (how < mask_token_prob + random_token_prob)
    pool = torch.nonzero(~special).view(-1)
    random_ids = pool[torch.randint(len(pool), ids.shape, generator=generator)]
    inputs = torch.where(to_mask, torch.full_like(ids, MASK), torch.where(to_random, random_ids, ids))
    return inputs, chosen


def source_windows(piece_lists: Sequence[Sequence[int]], max_tokens: int) -> list[np.ndarray]:
    """`<s>` + each window of `max_tokens - 2` pieces of each source + `</s>`, in order."""
    width = max_tokens - 2
    out = []
    for pieces in piece_lists:
        for start in range(0, len(pieces), width):
            out.append(np.array([BOS, *pieces[start : start + width], EOS], dtype=np.int64))
    return out


class MLMTask:
    """Sequences of piece ids + masking + the MLM loss (see the module docstring)."""

    def __init__(self, train: list[np.ndarray], valid: list[np.ndarray], special: np.ndarray, *,
                 batch_size: int, seed: int, mask_prob: float, mask_token_prob: float,
                 random_token_prob: float) -> None:
        self.sequences = {"train": train, "valid": valid}
        self.special = torch.from_numpy(np.asarray(special, dtype=bool))
        self.batch_size, self.seed = batch_size, seed
        self.probs = dict(mask_prob=mask_prob, mask_token_prob=mask_token_prob, random_token_prob=random_token_prob)
        self._train_lengths = np.array([len(s) for s in train], dtype=np.int64)
        self._valid_batches = bucket_batches([len(s) for s in valid], batch_size, seed, 0, shuffle=False)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return bucket_batches(self._train_lengths, self.batch_size, self.seed, epoch)

    def valid_batches(self) -> list[list[int]]:
        return self._valid_batches

    def collate(self, indices: Sequence[int], split: str) -> MLMBatch:
        rows = [self.sequences[split][i] for i in indices]
        ids = np.full((len(rows), max(len(r) for r in rows)), PAD, dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
        labels = torch.from_numpy(ids)
        generator = None if split == "train" else torch.Generator().manual_seed(self.seed * 1_000_003 + indices[0])
        inputs, targets = mlm_mask(labels, self.special, generator=generator, **self.probs)
        return MLMBatch(inputs, labels != PAD, labels, targets)

    def count_tokens(self, batch: MLMBatch) -> int:
        return int(batch.keep.sum())

    def loss(self, model: torch.nn.Module, batch: MLMBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """(∑ cross-entropy over the chosen positions, their number)."""
        logits = model(batch.inputs, batch.keep, batch.targets)  # (n_targets, V)
        loss = F.cross_entropy(logits.float(), batch.labels[batch.targets], reduction="sum")
        return loss, batch.targets.sum()
