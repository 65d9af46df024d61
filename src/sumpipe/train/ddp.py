"""Multi-process data-parallel training with torch.distributed and DistributedDataParallel.

Launch with torchrun, which sets RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT:

    torchrun --standalone --nproc_per_node 4 -m sumpipe.cli train --model M1

Every rank builds the same global batches (a pure function of seed and epoch) and takes a
contiguous share of each (`shard`), so the global batch, and therefore the update, is the same
as one process would make: each rank backpropagates ``loss_sum_rank · world / tokens_global`` and
DDP averages the gradients (÷ world), which gives ``∇ loss_sum_global / tokens_global``. Rank 0
alone writes checkpoints and artifacts. The backend is NCCL on GPUs and gloo on CPU.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")


@dataclass(frozen=True)
class DistContext:
    """This process's place in the job; the single-process default is rank 0 of 1."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def context_from_env() -> DistContext:
    """Read the torchrun environment; single process when it is absent."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistContext()
    return DistContext(int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0")))


def init_process_group(ctx: DistContext, device: torch.device, init_method: str | None = None) -> None:
    """Join the process group (NCCL for CUDA, gloo otherwise); a no-op for a single process."""
    if not ctx.is_distributed or dist.is_initialized():
        return
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend, init_method=init_method, rank=ctx.rank, world_size=ctx.world_size)


def shard(items: Sequence[T], ctx: DistContext) -> list[T]:
    """This rank's contiguous share of a global batch (the first ranks take one more when uneven)."""
    n, world = len(items), ctx.world_size
    base, extra = divmod(n, world)
    start = ctx.rank * base + min(ctx.rank, extra)
    return list(items[start:start + base + (1 if ctx.rank < extra else 0)])


def wrap_model(model: torch.nn.Module, ctx: DistContext, device: torch.device) -> torch.nn.Module:
    """DDP-wrap `model` when distributed (it broadcasts rank 0's weights); else return it unchanged."""
    if not ctx.is_distributed:
        return model
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)


def all_reduce_sum(tensor: torch.Tensor, ctx: DistContext) -> torch.Tensor:
    """Sum `tensor` over ranks in place (identity for one process) and return it."""
    if ctx.is_distributed:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor


def all_gather_objects(obj: T, ctx: DistContext) -> list[T]:
    """`obj` from every rank, rank order (used for per-rank RNG states in checkpoints)."""
    if not ctx.is_distributed:
        return [obj]
    gathered: list = [None] * ctx.world_size
    dist.all_gather_object(gathered, obj)
    return gathered


def barrier(ctx: DistContext) -> None:
    if ctx.is_distributed:
        dist.barrier()
