"""DDP on 2 CPU processes (gloo) makes the same updates as one process with the same global batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from sumpipe.train.ddp import DistContext, init_process_group, shard
from sumpipe.train.engine import fit, seed_everything
from tests.train.tiny_task import TinyTask, config


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


# ---- the real command under torchrun: 2 CPU processes (gloo), a tiny transformer, a kill and a resume ----
def _torchrun(params: Path, **popen: Any) -> subprocess.Popen:
    """`torchrun --standalone --nproc_per_node 2 -m sumpipe.cli train --model T1 -p PARAMS`."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                             "-m", "sumpipe.cli", "train", "--model", "T1", "-p", str(params)],
                            cwd=params.parent, env=env, **popen)


@pytest.mark.slow
def test_torchrun_trains_the_real_command_and_resumes_after_a_kill(tmp_path: Path, write_fixture,
                                                                   kill_at_checkpoint) -> None:
    import json
    import signal

    settings = dict(epochs=4, checkpoint_every=2, log_every=2, patience=2)  # 6 batches an epoch: 24 updates
    straight = write_fixture(tmp_path / "straight", **settings)
    proc = _torchrun(straight, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    card = json.loads((tmp_path / "straight/models/T1/seed-1/config.json").read_text())
    assert card["family"] == "transformer" and card["name"] == "T1"
    training = card["training"]
    assert [line for line in out.splitlines() if line.startswith("T1/seed-1: ")] == [  # rank 0 alone speaks
        f"T1/seed-1: 24 steps, best valid loss {training['best_valid_loss']:.4f} at step {training['best_step']} "
        f"-> {tmp_path / 'straight/models/T1/seed-1'}"]
    assert (training["steps"], training["train_examples"]) == (24, 24)
    assert json.loads((tmp_path / "straight/timings/train/T1/seed-1.json").read_text())["resumed_from_step"] == 0
    assert training["early_stopping"] == {"metric": "loss", "patience": 2, "best_valid_accuracy": None}

    killed = write_fixture(tmp_path / "killed", **settings)
    state = tmp_path / "killed/checkpoints/T1/seed-1/state.pt"
    # SIGTERM, as a scheduler stops a job: torchrun passes it to both workers, which die mid-run. (A SIGKILL
    # of the launcher alone would leave the workers running on: they are in sessions of their own.)
    saved = kill_at_checkpoint(_torchrun(killed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), state,
                               signal.SIGTERM)
    assert not saved["done"] and saved["step"] > 0, "the kill should land mid-run"
    assert not (tmp_path / "killed/models/T1/seed-1/model.safetensors").exists()

    proc = _torchrun(killed, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    resumed = json.loads((tmp_path / "killed/models/T1/seed-1/config.json").read_text())["training"]
    assert resumed["steps"] == 24
    # resume provenance lives in timings/ (the card must keep its bytes: DVC hashes it)
    timings = json.loads((tmp_path / "killed/timings/train/T1/seed-1.json").read_text())
    assert timings["resumed_from_step"] == saved["step"]
    # exact resume under DDP: both ranks' RNG states are in the checkpoint
    assert (tmp_path / "killed/models/T1/seed-1/model.safetensors").read_bytes() == \
           (tmp_path / "straight/models/T1/seed-1/model.safetensors").read_bytes()
