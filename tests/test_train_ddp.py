"""DDP on 2 CPU processes (gloo) makes the same updates as one process with the same global batch."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from sumpipe.train.ddp import DistContext, init_process_group, shard
from sumpipe.train.engine import fit
from test_train_engine import TinyTask, config, seed_everything


def deterministic_model() -> torch.nn.Module:
    # no dropout: each rank draws its own masks, so only a dropout-free model can match exactly
    seed_everything(3)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


CFG = dict(max_steps=4, epochs=1, log_every=1, batch_size=8, lr=0.05, warmup_steps=2)


def _worker(rank: int, world: int, init_file: str, out: str) -> None:
    ctx = DistContext(rank=rank, world_size=world)
    init_process_group(ctx, torch.device("cpu"), init_method=f"file://{init_file}")
    try:
        model = deterministic_model()
        if rank == 1:  # DDP broadcasts rank 0's weights at wrap time, so this must not matter
            with torch.no_grad():
                model[0].weight.add_(1.0)
        result = fit(model, TinyTask(), config(**CFG), None, ctx=ctx, progress=False)
        if rank == 0:
            torch.save({"weights": model.state_dict(), "losses": [r["loss"] for r in result.log_rows]}, out)
    finally:
        dist.destroy_process_group()


def test_two_gloo_processes_match_one_process(tmp_path: Path) -> None:
    out = tmp_path / "ddp.pt"
    # spawn, not fork: a forked child can inherit locks held by the parent's threads (OpenMP, tqdm)
    mp.spawn(_worker, args=(2, str(tmp_path / "init"), str(out)), nprocs=2, join=True)
    ddp = torch.load(out, weights_only=True)

    single = deterministic_model()
    result = fit(single, TinyTask(), config(**CFG), None, progress=False)
    losses = [r["loss"] for r in result.log_rows]

    assert len(losses) == len(ddp["losses"]) == 4  # one row a step; validation annotates the last
    assert abs(losses[0] - ddp["losses"][0]) < 1e-6  # step 1: same weights, same global batch
    for a, b in zip(losses, ddp["losses"]):
        assert abs(a - b) < 1e-5
    for key, value in single.state_dict().items():
        torch.testing.assert_close(ddp["weights"][key], value, rtol=0, atol=1e-6)
    # and the updates are real: the weights moved away from their initial values
    assert not torch.allclose(single.state_dict()["0.weight"], deterministic_model().state_dict()["0.weight"])


def test_shard_splits_a_global_batch_contiguously() -> None:
    items = list(range(7))
    parts = [shard(items, DistContext(rank=r, world_size=3)) for r in range(3)]
    assert parts == [[0, 1, 2], [3, 4], [5, 6]]
    assert shard(items, DistContext()) == items
