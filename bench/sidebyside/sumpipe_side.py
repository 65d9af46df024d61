"""sumpipe side of the side-by-side benchmark (runs in sumpipe's venv).

    python sumpipe_side.py train  --work DIR --steps N --batch-size B --out result.json
    python sumpipe_side.py decode --work DIR --beam 4 --length L --batch-size B --out result.json

`train` trains M1 (the pointer-generator transformer) of the shape in ARCH / TRAIN on DIR's
{src,tgt}-train.txt with the vocabulary of DIR/vocab.txt, through `sumpipe.train.engine.fit` (the loop
of the train stage), and records after every update the clock, the source and target tokens
(padding excluded) and the loss; then saves the model to DIR/sumpipe_model.
`decode` loads that model (untimed) and times `sumpipe.decode.batches.summarize` (beam search, the decode
stage's function) on DIR/src-test.txt with min = max length. SIDEBYSIDE_PROFILE=1 prints a torch.profiler
table of the timed work.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import torch

from sumpipe.config import DecodeConfig, TrainConfig
from sumpipe.decode.batches import load_model, summarize
from sumpipe.models.batching import encode_examples
from sumpipe.models.card import ModelCard
from sumpipe.models.io import save_pretrained
from sumpipe.models.task import SummarizationTask
from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer
from sumpipe.train.engine import fit, seed_everything
from sumpipe.vocab.vocabulary import Vocabulary

ARCH = ArchConfig(d_model=256, d_ff=1024, n_layers=4, n_heads=8, dropout=0.1, attention_dropout=0.0,
                  vocab_size=20000, max_source_tokens=400, max_summary_tokens=100, tie_embeddings=True)


def train_config(steps: int, threads: int, batch_size: int) -> TrainConfig:
    return TrainConfig(optimizer="adam", lr=0.003, warmup_steps=10, label_smoothing=0.1, grad_clip=2.0,
                       batch_size=batch_size, epochs=1000, max_steps=steps, log_every=max(steps, 1),
                       checkpoint_every=10**9, device="cpu", threads=threads, seed=1234, patience=None)


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def vocabulary(work: Path) -> Vocabulary:
    counts = Counter({w: int(c) for w, c in (line.split() for line in read_lines(work / "vocab.txt"))})
    return Vocabulary.from_counts(counts, ARCH.vocab_size)


class RecordingTask(SummarizationTask):
    """The train stage's task, noting each training batch's tokens and loss."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.src = self.tgt = 0
        self.last_loss = 0.0

    def count_tokens(self, batch) -> int:
        self.src, self.tgt = int(batch.src_mask.sum()), int(batch.trg_mask.sum())
        return self.src + self.tgt

    def loss(self, model, batch):
        loss_sum, n_tokens = super().loss(model, batch)
        if model.training:
            self.last_loss = float(loss_sum.detach() / n_tokens)
        return loss_sum, n_tokens


@contextlib.contextmanager
def profiled():
    """With SIDEBYSIDE_PROFILE=1: torch.profiler over the block, the top operators by self CPU time printed."""
    if os.environ.get("SIDEBYSIDE_PROFILE") != "1":
        yield
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        yield
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25), flush=True)


def training_task(work: Path, cfg: TrainConfig, task_class=SummarizationTask) -> tuple[SummarizationTask, Vocabulary]:
    """DIR's training lines encoded with its vocabulary, batched as `cfg` says (16 of them stand in for validation)."""
    vocab = vocabulary(work)
    frame = pd.DataFrame({"source": read_lines(work / "src-train.txt"), "reference": read_lines(work / "tgt-train.txt")})
    frame["id"] = frame.index.astype(str)
    examples = encode_examples(frame, vocab, ARCH.max_source_tokens, ARCH.max_summary_tokens)
    task = task_class(examples, examples[:16], batch_size=cfg.batch_size, seed=cfg.seed,
                      label_smoothing=cfg.label_smoothing, vocab_size=len(vocab))
    return task, vocab


def train(work: Path, steps: int, threads: int, batch_size: int, out: Path) -> None:
    cfg = train_config(steps, threads, batch_size)
    task, vocab = training_task(work, cfg, RecordingTask)
    seed_everything(cfg.seed)
    model = PointerGeneratorTransformer(ARCH)
    records: list[dict] = []

    def record(position) -> bool:
        records.append({"t": time.perf_counter(), "src": task.src, "tgt": task.tgt, "loss": task.last_loss})
        return False

    start = time.perf_counter()
    with profiled():
        fit(model, task, cfg, None, should_stop=record, progress=False)
    card = ModelCard(family="transformer", arch=ARCH, vocab_size=len(vocab), name="M1", dataset="cnn_dailymail")
    save_pretrained(model, work / "sumpipe_model", vocab, card)
    out.write_text(json.dumps({"start": start, "steps": records, "threads": threads}))


def decode(work: Path, beam: int, length: int, batch_size: int, threads: int, out: Path) -> None:
    torch.set_num_threads(threads)
    model, vocab, card = load_model(work / "sumpipe_model")
    docs = read_lines(work / "src-test.txt")
    cfg = DecodeConfig(beam_size=beam, min_length=length, max_length=length, block_ngram_repeat=3,
                       length_penalty=1.0, batch_size=batch_size, device="cpu")
    start = time.perf_counter()
    with profiled():
        summaries = summarize(model, vocab, card, docs, cfg)
    seconds = time.perf_counter() - start
    (work / "sumpipe_pred.txt").write_text("\n".join(s.text for s in summaries) + "\n", encoding="utf-8")
    out.write_text(json.dumps({"seconds": seconds, "docs": len(summaries),
                               "mean_words": sum(len(s.tokens) for s in summaries) / max(len(summaries), 1),
                               "threads": torch.get_num_threads()}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["train", "decode"])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--length", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.what == "train":
        train(args.work, args.steps, args.threads, args.batch_size, args.out)
    else:
        decode(args.work, args.beam, args.length, args.batch_size, args.threads, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
