"""`sumpipe train`: the DVC `train` stage (every run of params.yaml side by side), or one model or run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from sumpipe.errors import SumpipeError
from sumpipe.options import ParamsOption, flag
from sumpipe.terminal import echo


def train(
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="a model named under `models:` in params.yaml (default: every model)")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", help="the training seed, one of the model's seeds (default: each of them)")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, help="runs trained side by side (default: train.workers; null there: one per "
                                 "core the runs' threads leave)")] = None,
    params: ParamsOption = Path("params.yaml"),
    resume: Annotated[
        bool, flag("--resume/--no-resume", help="continue from the model's checkpoint when it matches")
    ] = True,
) -> None:
    """Train models into models/<name>/seed-<seed>/: one run in this process, several side by side in worker
    processes (resumes a killed run; multi-GPU under torchrun, one run after another)."""
    from sumpipe.config import load_params
    from sumpipe.numerics import pin_numerics

    p = load_params(params)
    pin_numerics(p.train.numerics)  # before torch loads (the next import)
    from sumpipe.train.stage import exclusive_model_folder, resolve_inputs, train_model

    if model is None and seed is not None:
        raise SumpipeError("--seed needs --model (without --model every model trains with each of its seeds)")
    pairs = ([(model, s) for s in ([seed] if seed is not None else p.seeds_of(model))] if model is not None
             else [(name, s) for name, seeds in p.seeds_by_model().items() for s in seeds])
    runs = [resolve_inputs(p, name, s) for name, s in pairs]  # every run's configuration checked first
    main_rank = os.environ.get("RANK", "0") == "0"  # under torchrun, rank 0 alone writes and speaks for the job
    if len(runs) > 1 and int(os.environ.get("WORLD_SIZE", "1")) == 1:  # several runs: side by side
        summaries = _train_side_by_side(params, runs, workers if workers is not None else p.train.workers, resume)
        for inputs in runs:
            _report(inputs, summaries[inputs.run])
        return
    for inputs in runs:
        if main_rank:
            with exclusive_model_folder(inputs):
                _report(inputs, train_model(inputs, resume=resume))
        else:
            train_model(inputs, resume=resume)


def _report(inputs, summary: dict) -> None:
    echo(f"{inputs.run}: {summary['steps']} steps, best valid loss {summary['best_valid_loss']:.4f} "
         f"at step {summary['best_step']} -> {inputs.out_dir}")


def _train_side_by_side(params: Path, runs: list, workers: int | None, resume: bool) -> dict:
    """`runs` (TrainInputs) in a pool of worker processes (`sumpipe.train.pool`), holding every run's lock;
    their summaries by run."""
    import contextlib

    from sumpipe.train.pool import PoolRun, expected_seconds, run_pool, worker_count
    from sumpipe.train.stage import exclusive_model_folder

    for inputs in runs:  # before any worker starts: a missing input is one line, not one failed run of many
        for path in (inputs.extracted_dir / "train.parquet", inputs.extracted_dir / "valid.parquet"):
            if not path.is_file():
                raise SumpipeError(f"{path}: no such file (run the stage that writes it first, e.g. `dvc repro`)")
    from sumpipe.timings import check_writable

    check_writable(runs[0].timings_dir, "pool", "train")  # the pool's schedule, checked before any run starts
    pool = [PoolRun(r.name, r.train.seed, r.train.threads,
                    expected_seconds(r.timings_dir, r.name, r.train.seed, r.family.name)) for r in runs]
    with contextlib.ExitStack() as locks:
        for inputs in runs:
            locks.enter_context(exclusive_model_folder(inputs))
        return run_pool(params.resolve(), pool, worker_count(workers, [r.threads for r in pool]), resume=resume,
                        timings_dir=runs[0].timings_dir)


def pretrain(
    params: ParamsOption = Path("params.yaml"),
    resume: Annotated[bool, flag("--resume/--no-resume", help="continue from the checkpoint when it matches")] = True,
) -> None:
    """Pre-train the BERT-style encoder with masked-LM on the train sources (Roy Choudhury 2020)."""
    from sumpipe.config import load_params
    from sumpipe.numerics import pin_numerics

    p = load_params(params)
    pin_numerics(p.train.numerics)  # before torch loads (the next imports)
    from sumpipe.train.pretrain import check_pretrain_paths, pretrain_encoder, resolve_pretrain_inputs

    inputs = resolve_pretrain_inputs(p)
    check_pretrain_paths(inputs)  # where the folder is built and what the run keeps, before training time is spent
    summary = pretrain_encoder(inputs, resume=resume)
    echo(f"pretrain: {summary['steps']} steps, best valid MLM loss {summary['best_valid_loss']:.4f} "
               f"at step {summary['best_step']} -> {inputs.out_dir}")
