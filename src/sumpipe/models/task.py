"""The summarization objective as a `TrainTask` for the engine: batches, tokens, loss.

Training batches come from `sumpipe.models.batching.bucket_batches` (length-bucketed, a pure
function of (seed, epoch), which exact resume relies on); validation batches are sorted by length
without randomness. The loss is the label-smoothed cross-entropy of `sumpipe.models.loss` over the
extended vocabulary, padding ignored, with the smoothing mass spread over the V fixed words, and
`<unk>` targets weighted by `train.unk_target_weight` and copied ones by `train.copy_target_weight`
(`sumpipe.models.loss.target_weights`). The
model computes its output layer at the real target positions only (`forward(batch, targets_only=True)`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from sumpipe.models.batching import Batch, Example, bucket_batches, collate, example_lengths
from sumpipe.models.loss import copy_attention_nll, label_smoothed_nll, target_weights


class SummarizationTask:
    """Encoded train/valid examples + batching + the label-smoothed loss."""

    def __init__(
        self,
        train: list[Example],
        valid: list[Example],
        *,
        batch_size: int,
        seed: int,
        label_smoothing: float,
        vocab_size: int,
        unk_target_weight: float = 1.0,
        copy_attention_weight: float = 0.0,
        copy_target_weight: float = 1.0,
        flash_unpadded: bool = False,
    ) -> None:
        self.examples = {"train": train, "valid": valid}
        self.batch_size, self.seed = batch_size, seed
        self.label_smoothing, self.vocab_size = label_smoothing, vocab_size
        self.unk_target_weight = unk_target_weight  # `<unk>` targets' weight in the loss (loss.target_weights)
        self.copy_attention_weight = copy_attention_weight  # λ of the copy-attention term (loss.copy_attention_nll)
        self.copy_target_weight = copy_target_weight  # copied (extended-id) targets' weight (loss.target_weights)
        self.flash_unpadded = flash_unpadded  # batches without source padding drop its mask (Batch.src_unpadded)
        self._train_lengths = example_lengths(train)
        self._valid_batches = bucket_batches(example_lengths(valid), batch_size, seed, 0, shuffle=False)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return bucket_batches(self._train_lengths, self.batch_size, self.seed, epoch)

    def valid_batches(self) -> list[list[int]]:
        return self._valid_batches

    def collate(self, indices: Sequence[int], split: str) -> Batch:
        examples = self.examples[split]
        return collate([examples[i] for i in indices], mark_unpadded=self.flash_unpadded)

    def count_tokens(self, batch: Batch) -> int:
        """Source + target tokens, padding excluded (counted on the CPU batch: no device sync)."""
        return int(batch.src_mask.sum()) + int(batch.trg_mask.sum())

    def loss(self, model: torch.nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(∑ label-smoothed loss over target tokens [+ λ·copy-attention term], target-token count), on the device."""
        target = batch.trg_ext.flatten().index_select(0, batch.trg_positions)
        every = torch.ones_like(target, dtype=torch.bool)
        if self.copy_attention_weight > 0:
            log_probs, info = model(batch, targets_only=True, with_info=True)
        else:
            log_probs, info = model(batch, targets_only=True), None  # (N, V + n_oov): the N real target tokens
        mean, n_tokens = label_smoothed_nll(log_probs, target, every,
                                            smoothing=self.label_smoothing, n_smooth=self.vocab_size,
                                            weight=self.target_weights(target))
        total = mean * n_tokens
        if info is not None:
            rows = batch.trg_positions // batch.trg_ext.shape[1]  # each target position's own source
            aux, _ = copy_attention_nll(info["attn"], batch.src_ext.index_select(0, rows),
                                        batch.src_mask.index_select(0, rows), target, every)
            total = total + self.copy_attention_weight * aux
        return total, n_tokens

    def target_weights(self, target: torch.Tensor) -> torch.Tensor | None:
        """Each target token's weight in the loss: `<unk>` and copied targets (`loss.target_weights`)."""
        return target_weights(target, self.unk_target_weight, self.copy_target_weight, self.vocab_size)

    def token_accuracy(self, model: torch.nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(target tokens whose argmax prediction under teacher forcing is right, target tokens): the
        validation accuracy of `train.early_stopping_metric: accuracy` (Sokol 2022)."""
        log_probs = model(batch, targets_only=True)
        target = batch.trg_ext.flatten().index_select(0, batch.trg_positions)
        return (log_probs.argmax(-1) == target).sum(), torch.tensor(target.numel(), device=target.device)
