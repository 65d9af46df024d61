"""Training the recurrent family: the NLL + λ·coverage loss, overfitting 8 examples, and See et al.'s
coverage phase resumed bit for bit after a kill."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from sumpipe.config import TrainConfig
from sumpipe.decode.search import sample_search
from sumpipe.models.batching import Example, collate
from sumpipe.models.protocol import BOS, EOS, UNK
from sumpipe.models.rnn import RNNArch, StepsOutput, build_rnn
from sumpipe.train import checkpoint as ckpt
from sumpipe.train.engine import seed_everything
from sumpipe.train.rnn_task import RNNSummarizationTask, fit_rnn

V = 30


def example(i: int, src: list[int], trg: list[int]) -> Example:
    s = np.asarray(src, dtype=np.int64)
    y = np.asarray(trg, dtype=np.int64)
    src_ids = np.where(s >= V, UNK, s)
    return Example(f"ex{i}", src_ids, s, np.zeros(len(s), np.float32), np.concatenate([[BOS], np.where(y >= V, UNK, y)]),
                   np.concatenate([y, [EOS]]), [f"oov{j}" for j in range(int((s >= V).sum()))])


def reversal_examples(n: int, seed: int = 0) -> list[Example]:
    """Target = the source reversed; one source word is OOV (id V) and must be copied."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        src = rng.integers(4, V, int(rng.integers(3, 6))).tolist()
        src[int(rng.integers(len(src)))] = V
        out.append(example(i, src, src[::-1]))
    return out


def task_for(train, valid, arch: RNNArch, batch_size: int = 4, smoothing: float = 0.0) -> RNNSummarizationTask:
    return RNNSummarizationTask(train, valid, batch_size=batch_size, seed=3, label_smoothing=smoothing, vocab_size=V,
                                pointer=arch.pointer, coverage_weight=arch.coverage_weight)


class FixedOutput(torch.nn.Module):
    """Returns planted log-probabilities and coverage losses, whatever the batch."""

    def __init__(self, out: StepsOutput) -> None:
        super().__init__()
        self.out = out

    def forward(self, batch, steps: bool = False):
        return self.out


def test_loss_adds_lambda_times_coverage_over_real_target_tokens():
    batch = collate([example(0, [5, 6, 7], [5, 6]), example(1, [8, 9, 10], [8])])  # targets: 3 and 2 positions
    log_probs = torch.full((2, 3, V), math.log(1.0 / V))
    coverage = torch.tensor([[0.0, 0.7, 0.25], [0.0, 0.5, 9.0]])  # 9.0 sits on padding: ignored
    task = task_for([], [], RNNArch(coverage=True, coverage_weight=0.5, vocab_size=V))
    total, n = task.loss(FixedOutput(StepsOutput(log_probs, None, None, coverage)), batch)
    assert n.item() == 5
    # 5 tokens × −log(1/V) + λ·(0 + 0.7 + 0.25 + 0 + 0.5)
    assert total.item() == pytest.approx(5 * math.log(V) + 0.5 * 1.45, rel=1e-6)
    without = task_for([], [], RNNArch(coverage=True, coverage_weight=0.0, vocab_size=V))
    assert without.loss(FixedOutput(StepsOutput(log_probs, None, None, coverage)), batch)[0].item() == \
        pytest.approx(5 * math.log(V), rel=1e-6)


def test_a_model_without_pointer_learns_unk_for_copied_words():
    batch = collate([example(0, [5, V, 7], [V, 6])])  # the target's first word is the copyable OOV
    log_probs = torch.full((1, 3, V + 1), -math.inf)
    log_probs[..., :V] = math.log(1.0 / V)
    log_probs[0, 0, UNK] = math.log(0.5)
    task = task_for([], [], RNNArch(attention="bahdanau", pointer=False, vocab_size=V))
    total, _ = task.loss(FixedOutput(StepsOutput(log_probs, None, None, None)), batch)
    assert total.item() == pytest.approx(math.log(2) + 2 * math.log(V), rel=1e-6)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_tiny_pointer_generator_with_coverage_overfits_8_examples(cell):
    arch = RNNArch(cell=cell, embedding_dim=16, hidden_dim=32, pointer=True, coverage=True, vocab_size=V)
    data = reversal_examples(8)
    seed_everything(0)
    model = build_rnn(arch)
    cfg = TrainConfig(optimizer="adam", lr=0.02, warmup_steps=20, batch_size=8, epochs=60, device="cpu",
                      label_smoothing=0.0, grad_clip=5.0, threads=1, log_every=50, checkpoint_every=1000)
    result = fit_rnn(model, task_for(data, data[:2], arch, batch_size=8), cfg, None, progress=False)[0]
    # from ln 30 = 3.4 per token; what remains is mostly the coverage term of the </s> step, where every
    # source word has been attended once already (≈ 1 per summary of 4-6 tokens)
    assert result.log_rows[0]["loss"] > 3.0 and result.log_rows[-1]["loss"] < 0.3
    model.eval()
    hyps = sample_search(model, collate(data), greedy=True, max_length=8, min_length=0, alpha=0.0, block_ngram=0)
    assert [h.tokens for h in hyps] == [e.trg_ext[:-1].tolist() for e in data]  # copied OOVs included


def coverage_phase_run(tmp: Path, kill_at: tuple[str, int] | None = None):
    arch = RNNArch(cell="gru", embedding_dim=8, hidden_dim=12, coverage=True, coverage_phase_steps=5, dropout=0.1,
                   vocab_size=V)
    data = reversal_examples(12, seed=1)
    seed_everything(1)
    model = build_rnn(arch)
    cfg = TrainConfig(optimizer="adagrad", lr=0.15, batch_size=4, epochs=2, device="cpu", label_smoothing=0.0,
                      threads=1, log_every=2, checkpoint_every=2, seed=4)

    def stop(position: ckpt.Position) -> bool:
        if kill_at is not None and model.coverage_active == (kill_at[0] == "coverage") and position.step == kill_at[1]:
            raise KeyboardInterrupt  # stands for a kill
        return False

    results = fit_rnn(model, task_for(data[:8], data[8:], arch), cfg, tmp, fingerprint="cov", should_stop=stop,
                      progress=False)
    return model, results


@pytest.mark.parametrize("kill_at", [("main", 3), ("coverage", 3)])
def test_coverage_phase_follows_the_main_phase_and_resumes_bit_identical(tmp_path, kill_at):
    straight, results = coverage_phase_run(tmp_path / "straight")
    main, coverage = results
    assert main.position.step == 4 and coverage.position.step == 5  # 2 epochs of 2 batches, then 5 updates
    assert straight.coverage_active
    assert (tmp_path / "straight" / "main" / ckpt.STATE_FILE).is_file()
    assert (tmp_path / "straight" / "coverage" / ckpt.STATE_FILE).is_file()

    with pytest.raises(KeyboardInterrupt):
        coverage_phase_run(tmp_path / "resumed", kill_at)
    resumed, again = coverage_phase_run(tmp_path / "resumed")
    assert again[-1].resumed_from_step == (0 if kill_at[0] == "main" else 2)
    for key, value in straight.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[key]), key
