"""The fastest a training update of the side-by-side shape can be on this CPU, and so the best ratio possible.

    python bench/sidebyside/floor.py --work DIR [--batches 8] [--reference-seconds S]

DIR is `run.py`'s work folder (its prepared data). The script takes the first `--batches` training batches
that sumpipe's benchmark run times (same data, batch size and bucketing), and for each counts the floating
point operations of one update, forward + loss + backward, with `torch.utils.flop_counter.FlopCounterMode`
(matrix multiplies and attention, torch's CPU flash-attention kernels taught to it; the element-wise work,
Adam and dropout are left out, so the count is a lower bound), and times the same forward + backward.
In the same run it measures this machine's fp32 matrix-multiply rate on the model's own GEMM shapes,
2 threads, and keeps the best shape's rate: a generous ceiling, since no update runs every multiply at the
best shape's speed.

floor = counted FLOPs / ceiling is then a lower bound on the seconds of an update. With
`--reference-seconds` (OpenNMT-py's median seconds per update from `run.py`) it prints the seconds an update
would need for ×1.5 and the largest ratio the floor allows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch.utils import flop_counter
from torch.utils.flop_counter import FlopCounterMode

from sumpipe.models.task import SummarizationTask
from sumpipe.models.transformer import PointerGeneratorTransformer
from sumpipe.train.engine import seed_everything

from sumpipe_side import ARCH, train_config, training_task


def first_batches(work: Path, batch_size: int, n: int) -> tuple[SummarizationTask, list]:
    """The task of `sumpipe_side.train` and its first n training batches (epoch 0, as the benchmark sees them)."""
    task, _ = training_task(work, train_config(n, 2, batch_size))
    return task, [task.collate(indices, "train") for indices in task.epoch_batches(0)[:n]]


def count_cpu_flash_attention() -> None:
    """Teach FlopCounterMode torch's CPU flash-attention kernels (it counts only the CUDA ones in 2.13)."""
    aten = torch.ops.aten
    forward = aten._scaled_dot_product_flash_attention_for_cpu
    backward = aten._scaled_dot_product_flash_attention_for_cpu_backward

    def forward_flops(q, k, v, *args, out_shape=None, **kwargs) -> int:
        return flop_counter.sdpa_flop_count(q, k, v)

    def backward_flops(grad_out, q, k, v, *args, out_shape=None, **kwargs) -> int:
        return flop_counter.sdpa_backward_flop_count(grad_out, q, k, v)

    if forward.default not in flop_counter.flop_registry:
        flop_counter.register_flop_formula(forward)(forward_flops)
    if backward.default not in flop_counter.flop_registry:
        flop_counter.register_flop_formula(backward)(backward_flops)


def one_update(model: torch.nn.Module, task: SummarizationTask, batch) -> None:
    """Forward + loss + backward of one batch, gradients dropped after."""
    loss_sum, n_tokens = task.loss(model, batch)
    (loss_sum / n_tokens).backward()
    model.zero_grad(set_to_none=True)


def update_seconds(model: torch.nn.Module, task: SummarizationTask, batches: list) -> float:
    """Mean wall seconds of `one_update` over `batches`, after one untimed warm-up update."""
    one_update(model, task, batches[0])
    start = time.perf_counter()
    for batch in batches:
        one_update(model, task, batch)
    return (time.perf_counter() - start) / len(batches)


def update_flops(model: torch.nn.Module, task: SummarizationTask, batch) -> dict[str, int]:
    """FLOPs of `one_update`, by operator (FlopCounterMode's count)."""
    counter = FlopCounterMode(display=False)
    with counter:
        one_update(model, task, batch)
    return {str(op): int(n) for op, n in counter.get_flop_counts()["Global"].items()}


def gemm_rate(m: int, k: int, n: int, repeats: int = 7) -> float:
    """Best-of-`repeats` fp32 GFLOP/s of an (m, k) @ (k, n) multiply."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * m * k * n / best / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--reference-seconds", type=float, help="OpenNMT-py's median seconds per update")
    args = ap.parse_args()
    torch.set_num_threads(2)
    seed_everything(1234)
    task, batches = first_batches(args.work, args.batch_size, args.batches)
    model = PointerGeneratorTransformer(ARCH).train()

    count_cpu_flash_attention()
    per_op: dict[str, int] = {}
    for batch in batches:
        for op, n in update_flops(model, task, batch).items():
            per_op[op] = per_op.get(op, 0) + n
    gflop = {op: n / len(batches) / 1e9 for op, n in per_op.items()}
    total = sum(gflop.values())
    rows = int(sum(b.src.numel() for b in batches) / len(batches))  # padded: the encoder's GEMMs run on them
    targets = int(sum(len(b.trg_positions) for b in batches) / len(batches))  # the output layer's rows
    print(f"one update, mean of {len(batches)} batches of {args.batch_size}: "
          f"{rows:,} source positions, {targets:,} target tokens")
    for op, g in sorted(gflop.items(), key=lambda item: -item[1]):
        print(f"  {op:<55} {g:7.1f} GFLOP")
    print(f"  {'total (matrix multiplies and attention only)':<55} {total:7.1f} GFLOP")
    gemm = sum(g for op, g in gflop.items() if "mm" in op)

    seconds = update_seconds(model, task, batches)
    print(f"measured here: {seconds:.2f} s per forward + backward, {total / seconds:.1f} GFLOP/s of counted work")

    d, ff, v = ARCH.d_model, ARCH.d_ff, ARCH.vocab_size
    shapes = [(rows, d, d), (rows, d, ff), (rows, ff, d), (targets, d, v), (targets, v, d), (v, targets, d)]
    rates = {shape: gemm_rate(*shape) for shape in shapes}
    print("fp32 matrix multiply on this machine, 2 threads (best of 7):")
    for (m, k, n), rate in rates.items():
        print(f"  ({m}, {k}) @ ({k}, {n}): {rate:5.1f} GFLOP/s")
    ceiling = max(rates.values())
    floor = total / ceiling
    print(f"ceiling {ceiling:.1f} GFLOP/s -> floor {floor:.2f} s per update "
          "(every counted FLOP at the best rate, everything else free)")
    print(f"of which the matrix multiplies alone {gemm / ceiling:.2f} s; measured minus that floor: "
          f"{seconds - gemm / ceiling:.2f} s of attention, dropout, element-wise and framework work")
    if args.reference_seconds:
        needed = args.reference_seconds / 1.5
        print(f"OpenNMT-py {args.reference_seconds:.2f} s per update: x1.5 needs {needed:.2f} s; "
              f"the floor allows at most x{args.reference_seconds / floor:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
