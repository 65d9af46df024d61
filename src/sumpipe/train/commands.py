"""`sumpipe train --model NAME`: the DVC `train` stage for one named model of params.yaml."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from sumpipe.options import ParamsOption, flag
from sumpipe.terminal import echo


def train(
    model: Annotated[str, typer.Option("--model", "-m", help="a model named under `models:` in params.yaml")],
    seed: Annotated[int | None, typer.Option(
        "--seed", help="the training seed, one of the model's seeds (default: each of them in turn)")] = None,
    params: ParamsOption = Path("params.yaml"),
    resume: Annotated[
        bool, flag("--resume/--no-resume", help="continue from the model's checkpoint when it matches")
    ] = True,
) -> None:
    """Train one model into models/<name>/seed-<seed>/ (resumes a killed run; multi-GPU under torchrun)."""
    from sumpipe.config import load_params
    from sumpipe.numerics import pin_numerics

    p = load_params(params)
    pin_numerics(p.train.numerics)  # before torch loads (the next import)
    from sumpipe.train.stage import exclusive_model_folder, resolve_inputs, train_model

    runs = [resolve_inputs(p, model, s) for s in ([seed] if seed is not None else p.seeds_of(model))]
    main_rank = os.environ.get("RANK", "0") == "0"  # under torchrun, rank 0 alone writes and speaks for the job
    for inputs in runs:
        if main_rank:
            with exclusive_model_folder(inputs):
                summary = train_model(inputs, resume=resume)
            echo(f"{inputs.run}: {summary['steps']} steps, best valid loss {summary['best_valid_loss']:.4f} "
                       f"at step {summary['best_step']} -> {inputs.out_dir}")
        else:
            train_model(inputs, resume=resume)


def pretrain(
    params: ParamsOption = Path("params.yaml"),
    resume: Annotated[bool, flag("--resume/--no-resume", help="continue from the checkpoint when it matches")] = True,
) -> None:
    """Pre-train the BERT-style encoder with masked-LM on the train sources (seed 003)."""
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
