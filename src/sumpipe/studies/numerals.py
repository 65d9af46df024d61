"""Hansen & Petersen 2019's numerals experiment, one run: a GRU seq2seq with or without Bahdanau attention on one
numerals data set of one maximum length; validation token accuracy of greedy decoding and training loss.

    experiments/numerals/params.yaml ─► run_numerals(cfg, "random-bahdanau", 10, out) ─► out/metrics.json,
                                                                                         out/train_log.csv

The data come from the numerals loader (`sumpipe.data.numerals`): `continuous` = its ordered sequences
(digits → the continuation in words), `random` = its random sequences (digits → the same numbers in
words); the loader alternates the two kinds, so `2·size` examples are drawn and one kind kept. The
first `train_fraction` of them train (the paper: 33,500 of 50,000), the rest validate. As in the paper
the vocabulary is every word of the data (no OOV), and the model has no pointer and no coverage.

Token accuracy (the paper does not define its "validation accuracy"; this is the usual reading): greedy
decoding of each validation source, up to the reference length + 5 words; the fraction of reference
positions (`</s>` included, so stopping at the right length counts) whose predicted token is the
reference token. Sequence accuracy (all positions right) is reported too. `train_loss` is the mean
cross-entropy per target token over the last epoch (the paper's Figs. 6 and 8).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import torch

from sumpipe.config import TrainConfig
from sumpipe.models.rnn import RNNArch
from sumpipe.names import TRAIN_LOG_FILE
from sumpipe.validation import require

RunName = Literal["continuous-none", "random-none", "random-bahdanau", "continuous-bahdanau"]
METRICS_FILE = "metrics.json"


@dataclass(frozen=True)
class NumeralsData:
    """Examples per data set (Hansen & Petersen 2019: 50,000), the training share (33,500 / 50,000 = 0.67),
    the largest number (the paper does not say; ordered sequences of length L need 2L − 1 numbers)."""

    size: int = 3000
    train_fraction: float = 0.67
    max_number: int = 100
    seed: int = 13

    def check(self, key: str) -> None:
        require(self.size >= 3, f"{key}.size", "must be >= 3")
        require(0.0 < self.train_fraction < 1.0, f"{key}.train_fraction", "must be in (0, 1)")


@dataclass(frozen=True)
class NumeralsExperiment:
    """experiments/numerals/params.yaml: the runs × max lengths grid, the model, the training recipe."""

    data: NumeralsData = field(default_factory=NumeralsData)
    max_lengths: list[int] = field(default_factory=lambda: [5, 10, 15, 20])
    runs: list[RunName] = field(default_factory=lambda: ["continuous-none", "random-none", "random-bahdanau"])
    model: RNNArch = field(default_factory=lambda: RNNArch(cell="gru", pointer=False, coverage=False))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(patience=None))  # every run its full epochs
    valid_examples: int | None = None  # cap on the validation examples decoded for accuracy
    out: str = "runs"  # <out>/<run>-<max length>/{metrics.json, train_log.csv}
    reports: str = "reports"  # the figures and the table

    def check(self, key: str) -> None:
        require(bool(self.max_lengths), "max_lengths", "must name at least one length")
        for i, length in enumerate(self.max_lengths):
            require(length >= 2, f"max_lengths[{i}]", "must be >= 2")
            require(self.data.max_number >= 2 * length - 1, "data.max_number",
                    f"must be >= 2 * max length - 1 = {2 * length - 1}")
        require(not self.model.pointer and not self.model.coverage, "model.pointer",
                "the numerals experiment has no copying: set pointer and coverage to false")
        require(self.valid_examples is None or self.valid_examples >= 1, "valid_examples", "must be >= 1 (or null)")

    def run_dir(self, run: str, max_length: int) -> Path:
        return Path(self.out) / f"{run}-{max_length}"


def numerals_frames(data: NumeralsData, kind: str, max_length: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, valid) frames of one kind ("continuous" or "random") with lengths 2..max_length."""
    from sumpipe.data.numerals import NumeralsOptions, build_numerals

    loader_kind = "ordered" if kind == "continuous" else "random"
    rows = build_numerals(NumeralsOptions(size=2 * data.size, max_length=max_length, max_number=data.max_number),
                          data.seed)
    frame = pd.DataFrame([r for r in rows if r["id"].startswith(f"numerals-{loader_kind}-")])
    n_train = round(len(frame) * data.train_fraction)
    return frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)


def run_numerals(cfg: NumeralsExperiment, run: str, max_length: int, *, progress: bool | None = None) -> dict[str, Any]:
    """Train and evaluate one (data, attention, max length) cell; write its metrics and log; return the metrics."""
    from sumpipe.config import ModelSpec
    from sumpipe.io.atomic import write_json
    from sumpipe.models.registry import TaskData, get_family
    from sumpipe.train.engine import fit, seed_everything, write_log
    from sumpipe.vocab.vocabulary import Vocabulary

    kind, attention = run.split("-")
    train_df, valid_df = numerals_frames(cfg.data, kind, max_length)
    counts = Counter(w for text in pd.concat([train_df.source, train_df.reference, valid_df.source,
                                              valid_df.reference]) for w in text.split())
    vocab = Vocabulary.from_counts(counts, len(counts) + 4)
    longest = 2 * max_length + 2  # "one hundred" is two words
    # the rnn family as training builds it; `check` has made sure there is no pointer and no coverage
    family = get_family("rnn")
    # RNNArch.attention's Literal; RunName makes the run's half "bahdanau" or "none", and the model
    # attends only with "bahdanau", as before
    arch = dataclasses.replace(cfg.model, attention="bahdanau" if attention == "bahdanau" else "none",
                               vocab_size=len(vocab), max_source_tokens=longest, max_summary_tokens=longest)
    task = family.make_task(TaskData(train_df, valid_df, vocab, arch, cfg.train))
    train, valid = task.examples["train"], task.examples["valid"]
    seed_everything(cfg.train.seed)
    model = family.build(arch, ModelSpec(family="rnn"))
    started = time.perf_counter()
    result = fit(model, task, cfg.train, None, progress=progress, description=f"{run} L{max_length}")
    seconds = time.perf_counter() - started
    scored = valid if cfg.valid_examples is None else valid[: cfg.valid_examples]
    accuracy = greedy_accuracy(model, scored, batch_size=64)
    epochs = [r for r in result.log_rows if r["valid_loss"] is not None]
    metrics = {
        "data": kind, "attention": attention, "max_length": max_length,
        "valid_token_accuracy": accuracy["token"], "valid_sequence_accuracy": accuracy["sequence"],
        "train_loss": last_epoch_train_loss(result.log_rows), "valid_loss": epochs[-1]["valid_loss"],
        "train_examples": len(train), "valid_examples": len(valid), "scored_examples": len(scored),
        "vocab_size": len(vocab), "steps": result.position.step, "epochs": cfg.train.epochs,
        "train_seconds": round(seconds, 1),
    }
    out = cfg.run_dir(run, max_length)
    write_json(metrics, out / METRICS_FILE)
    write_log(result.log_rows, out / TRAIN_LOG_FILE)
    return metrics


def last_epoch_train_loss(rows: list[dict[str, Any]]) -> float:
    """Mean training loss over the log rows of the last epoch, each weighted by the updates it covers."""
    last_epoch = math.ceil(rows[-1]["epoch"])
    total = updates = 0.0
    previous_step = 0
    for row in rows:
        n, previous_step = row["step"] - previous_step, row["step"]
        if row["epoch"] > last_epoch - 1:
            total, updates = total + n * row["loss"], updates + n
    return total / updates


@torch.inference_mode()
def greedy_accuracy(model: torch.nn.Module, examples: list, batch_size: int = 64) -> dict[str, float]:
    """Token and sequence accuracy of greedy decoding against each example's target (`</s>` included)."""
    from sumpipe.decode.search import sample_search
    from sumpipe.models.batching import collate
    from sumpipe.names import EOS

    model.eval()
    correct = total = exact = 0
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        longest = max(len(e.trg_ext) for e in chunk)
        hyps = sample_search(model, collate(chunk), greedy=True, max_length=longest + 5, min_length=0, alpha=0.0,
                             block_ngram=0)
        for example, hyp in zip(chunk, hyps):
            target, predicted = example.trg_ext.tolist(), hyp.tokens + [EOS]
            hits = sum(p == t for p, t in zip(predicted, target))
            correct, total = correct + hits, total + len(target)
            exact += predicted == target
    return {"token": correct / total, "sequence": exact / len(examples)}
