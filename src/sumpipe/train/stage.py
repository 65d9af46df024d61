"""The `train` stage: one named model of params.yaml from an extract selection to `models/<name>/`.

Everything family-specific goes through the model's family (`sumpipe.models.registry`): it reads
`<extracted>/<spec.input>/{train,valid}.parquet` and the family's vocabulary (`<vocab>/vocab.parquet`
for word families), builds the model and the training task, trains it with
`sumpipe.train.engine.fit` (through the family's training phases, `fit_phases`), and writes into
`<models>/<name>/`:

- `model.safetensors`, `config.json` (the typed `ModelCard`: family, arch, spec, input selection and
  its budget, data set, training summary), the vocabulary (`sumpipe.models.io.save_pretrained`): the
  best-validation weights;
- `train_log.csv`: step, epoch, loss, valid_loss, lr (valid_loss only at epoch ends);

and, as it trains, its live curves into `<dvclive>/train/<name>/seed-<seed>/` (`sumpipe.train.live`:
DVCLive's loss, valid_loss, lr and tokens/s per log row, best step and validation loss in metrics.json),

and keeps the resume state (`sumpipe.train.checkpoint`) in `<checkpoints>/<name>/`. dvc.yaml declares
that folder `persist: true` so a killed `dvc repro` finds it again; it lives outside `models/` so that
stages reading the finished models do not depend on it. It is reused only when the configuration, the
input files and the model/training code are those of the killed run (a fingerprint), else training
starts afresh.

The run's timings (seconds, tokens/s, the step it resumed from) go to `<timings>/train/<name>.{json,csv}`
(`sumpipe.timings`), outside every DVC output, so a rerun leaves dvc.lock unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from sumpipe.config import Budget, ModelSpec, Params, TrainConfig
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.io.atomic import read_parquet, require_writable_folder
from sumpipe.models.registry import Family, TrainPhase, resolve_model
from sumpipe.names import TRAIN_LOG_FILE, seed_folder
from sumpipe.schemas import EXTRACTED
from sumpipe.selection.methods import find_selection
from sumpipe.train.checkpoint import check_checkpoint_dir
from sumpipe.train.ddp import context_from_env, init_process_group
from sumpipe.train.engine import (
    FitResult,
    fingerprint_of,
    fit,
    run_figures,
    seed_everything,
    training_device,
    training_summary,
    write_log,
)
from sumpipe.train.live import RunCurves, train_curves_dir
from sumpipe.validation import from_dict


@dataclasses.dataclass(frozen=True)
class TrainInputs:
    """Everything one model's training reads, resolved from params.yaml."""

    name: str
    family: Family
    spec: ModelSpec
    arch: Any  # the family's arch type: shared section <- the spec's overrides (vocab size set at training)
    train: TrainConfig
    selection: Budget  # the extract budget of `spec.input`
    extracted_dir: Path  # <paths.extracted>/<spec.input>
    vocab_dir: Path
    out_dir: Path
    checkpoint_dir: Path
    dataset: str
    timings_dir: Path = Path("timings")  # wall-clock figures, outside DVC's outputs (sumpipe.timings)
    curves_dir: Path | None = None  # the run's DVCLive folder (sumpipe.train.live); None: no live curves

    @property
    def run(self) -> str:
        """This training run's label: the model's name and seed folder ("M1/seed-2")."""
        return f"{self.name}/{seed_folder(self.train.seed)}"


def resolve_inputs(params: Params, name: str, seed: int) -> TrainInputs:
    """The inputs of model `name` trained with `seed` (one of its seeds, `Params.seeds_of`); an unknown
    name, family, override, input or seed is a one-line error."""
    family, spec, arch = resolve_model(params, name)
    selection = find_selection(spec.input, params.extract.budgets, f"models.{name}.input")
    seeds = params.seeds_of(name)
    if seed not in seeds:
        where = f"models.{name}.seeds" if spec.seeds is not None else "train.seeds"
        raise ConfigError(f"--seed {seed}: not among {name}'s seeds ({', '.join(map(str, seeds))}); "
                          f"add it to {where} (and runs:), so that evaluate and the report count it")
    train = (from_dict(TrainConfig, {**dataclasses.asdict(params.train), **spec.train}, f"models.{name}.train")
             if spec.train else params.train)
    return TrainInputs(
        name=name,
        family=family,
        spec=spec,
        arch=arch,
        train=train.for_seed(seed),
        selection=selection,
        extracted_dir=Path(params.paths.extracted) / spec.input,
        vocab_dir=Path(params.paths.vocab),
        out_dir=Path(params.paths.models) / name / seed_folder(seed),
        checkpoint_dir=Path(params.paths.checkpoints) / name / seed_folder(seed),
        dataset=params.data.dataset,
        timings_dir=Path(params.paths.timings),
        curves_dir=train_curves_dir(Path(params.paths.dvclive), name, seed),
    )


# --------------------------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def exclusive_model_folder(inputs: TrainInputs) -> Iterator[None]:
    """Before any training time is spent: the output and checkpoint folders exist and take a file,
    and no other `sumpipe train` works on this model (a lock beside its folder; a second trainer
    would share the resume checkpoints and race for the folder). One-line errors."""
    from sumpipe.io.atomic import folder_lock_path
    from sumpipe.io.bookkeeping import check_lock, check_replaceable_folder, held_lock
    from sumpipe.timings import check_writable

    require_writable_folder(inputs.out_dir.parent)
    lock = inputs.out_dir.parent / f".{inputs.out_dir.name}.train.lock"
    with held_lock(lock, f"{inputs.out_dir}: another `sumpipe train` is training this model (lock {lock})",
                   what="the lock on training this model"):
        # every file the run will replace or lock later (sumpipe.io.bookkeeping), checked now
        check_checkpoint_dir(inputs.checkpoint_dir)
        check_lock(folder_lock_path(inputs.out_dir), "the lock on writing the model folder")
        check_replaceable_folder(inputs.out_dir, "the model folder")
        check_writable(inputs.timings_dir, "train", inputs.run, throughput=True)
        yield


def train_model(inputs: TrainInputs, *, resume: bool = True, progress: bool | None = None,
                on_step: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Train one model and write its directory (see the module docstring); returns the training summary
    with this run's figures (`run_figures`: seconds, tokens/s, `resumed_from_step`).

    `on_step(step, total)` is called after every update with the step counted across the family's
    phases and the most the phases can take (early stopping ends sooner): the pool's progress report
    (`sumpipe.train.pool`). Under torchrun (WORLD_SIZE > 1) every rank calls this; rank 0 alone writes files.
    """
    from sumpipe.models.card import ModelCard
    from sumpipe.models.io import save_pretrained
    from sumpipe.models.registry import TaskData

    cfg, family = inputs.train, inputs.family
    train_path, valid_path = inputs.extracted_dir / "train.parquet", inputs.extracted_dir / "valid.parquet"
    train_df, valid_df = read_parquet(train_path, contract=EXTRACTED), read_parquet(valid_path, contract=EXTRACTED)
    for path, df in ((train_path, train_df), (valid_path, valid_df)):
        if len(df) == 0:
            raise SumpipeError(f"{path}: no examples to train on")
    vocab, arch = family.vocabulary.for_training(inputs.vocab_dir, inputs.arch)
    if cfg.sentence_ends:  # a "." ends every reference line, a boundary the model can learn
        from sumpipe.train.targets import with_sentence_ends

        train_df, valid_df = with_sentence_ends(train_df), with_sentence_ends(valid_df)
    task = family.make_task(TaskData(train_df, valid_df, vocab, arch, cfg))

    ctx = context_from_env()
    device = training_device(cfg.device, ctx)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    init_process_group(ctx, device)
    seed_everything(cfg.seed)
    model = family.build(arch, inputs.spec)
    started_from = family.warm_start(model, arch) if family.warm_start is not None else []
    if ctx.rank:
        seed_everything(cfg.seed + ctx.rank)  # own dropout masks per rank; DDP copies rank 0's weights
    vocab_files = sorted(p for p in inputs.vocab_dir.iterdir() if p.is_file())
    fingerprint = run_fingerprint(inputs, [train_path, valid_path, *vocab_files, *started_from])
    n_batches = len(task.epoch_batches(0))
    phases = family.training_phases(arch, cfg, n_batches)
    curves = RunCurves(inputs.curves_dir) if ctx.is_main and inputs.curves_dir is not None else None
    result = fit_phases(model, task, phases, inputs.checkpoint_dir, fingerprint=fingerprint, resume=resume,
                        ctx=ctx, progress=progress, description=inputs.run,
                        on_step=None if on_step is None else (on_step, n_batches), curves=curves)
    summary = training_summary(result, model, cfg, len(train_df), len(valid_df), device)
    if ctx.is_main:
        vocab_size = model.vocab_size  # Decodable's V; nn.Module types an attribute as Tensor | Module
        assert isinstance(vocab_size, int), "a family's model keeps its vocabulary size V as an int"
        card = ModelCard(family=family.name, arch=arch, vocab_size=vocab_size, name=inputs.name, seed=cfg.seed,
                         input=inputs.spec.input, spec=inputs.spec, selection=inputs.selection,
                         dataset=inputs.dataset, training=summary, family_info=family.card_section(model))
        save_pretrained(model.cpu(), inputs.out_dir, vocab, card,
                        extras={TRAIN_LOG_FILE: lambda path: write_log(result.log_rows, path)})
        _record_timings(inputs, result)
    if ctx.is_distributed:
        torch.distributed.destroy_process_group()
    return {**summary, **run_figures(result)}


def _record_timings(inputs: TrainInputs, result: FitResult) -> None:
    from sumpipe.timings import record_run, write_throughput

    record_run(inputs.timings_dir, "train", inputs.run, run_figures(result))
    if result.throughput:  # a run that only found a finished checkpoint keeps the last training's curve
        write_throughput(result.throughput, inputs.timings_dir, "train", inputs.run)


def fit_phases(model: torch.nn.Module, task: Any, phases: list[TrainPhase], checkpoint_dir: Path | None, *,
               fingerprint: str, description: str,
               on_step: tuple[Callable[[int, int], None], int] | None = None, curves: RunCurves | None = None,
               **fit_kwargs: Any) -> FitResult:
    """Train through a family's phases in order (`sumpipe.models.registry.TrainPhase`).

    One phase keeps its checkpoint in `checkpoint_dir` itself; several each get `<checkpoint_dir>/<phase>`
    and their own fingerprint, so a kill in any phase resumes exactly: a finished phase is recognised from
    its checkpoint and only hands its best weights on. The result spans all phases (log rows numbered on
    from the phases before, steps and epochs added up). `on_step`: (callback(step, total), batches per
    epoch), the callback called after every update with the step counted across the phases (`train_model`).
    `curves`: the run's live curves, each phase's steps numbered on from the phases before.
    """
    reports = _step_reports(phases, on_step)
    if len(phases) == 1:
        phases[0].prepare(model)
        return fit(model, task, phases[0].cfg, checkpoint_dir, fingerprint=fingerprint, description=description,
                   curves=None if curves is None else curves.phase(0), **reports[0], **fit_kwargs)
    if checkpoint_dir is not None:  # each phase's folder, before the first phase trains
        for phase in phases:
            check_checkpoint_dir(Path(checkpoint_dir) / phase.name)
    results: list[FitResult] = []
    for phase, report in zip(phases, reports, strict=True):
        phase.prepare(model)
        sub = None if checkpoint_dir is None else Path(checkpoint_dir) / phase.name
        offset = sum(r.position.step for r in results)  # as `_combined` numbers the phases' steps
        results.append(fit(model, task, phase.cfg, sub, fingerprint=f"{fingerprint}/{phase.name}",
                           description=f"{description} ({phase.name})",
                           curves=None if curves is None else curves.phase(offset), **report, **fit_kwargs))
        if results[-1].stopped_early:
            break
    return _combined(results)


def planned_updates(cfg: TrainConfig, n_batches: int) -> int:
    """The updates a phase makes when nothing stops it early: `epochs` of ceil(batches / accumulate),
    capped by `max_steps` (as the engine counts them)."""
    total = -(-n_batches // cfg.accumulate) * cfg.epochs
    return total if cfg.max_steps is None else min(total, cfg.max_steps)


def _step_reports(phases: list[TrainPhase], on_step: tuple[Callable[[int, int], None], int] | None,
                  ) -> list[dict[str, Any]]:
    """Per phase, the `fit` keyword that reports its updates to `on_step` as steps of the whole run:
    `should_stop`, which the engine calls after every update (and which never stops here)."""
    if on_step is None:
        return [{} for _ in phases]
    callback, n_batches = on_step
    planned = [planned_updates(phase.cfg, n_batches) for phase in phases]
    total = sum(planned)

    def report(offset: int) -> Callable[[Any], bool]:
        def should_stop(position: Any) -> bool:
            callback(offset + position.step, total)
            return False
        return should_stop

    return [{"should_stop": report(sum(planned[:i]))} for i in range(len(phases))]


def _combined(results: list[FitResult]) -> FitResult:
    """One FitResult for consecutive phases: later phases' steps and epochs continue the earlier ones'."""
    rows: list[dict[str, Any]] = []
    throughput: list[dict[str, float]] = []
    step_offset, epoch_offset = 0, 0.0
    for result in results:
        rows += [{**r, "step": r["step"] + step_offset, "epoch": round(r["epoch"] + epoch_offset, 4)}
                 for r in result.log_rows]
        throughput += [{**r, "step": r["step"] + step_offset} for r in result.throughput]
        last = result.position
        step_offset, epoch_offset = step_offset + last.step, rows[-1]["epoch"] if rows else epoch_offset
    final, before = results[-1], step_offset - results[-1].position.step
    position = dataclasses.replace(
        final.position, step=step_offset, log_rows=rows,
        best_step=None if final.position.best_step is None else final.position.best_step + before)
    resumed_from = 0  # the step, counted across phases, this run started from
    for result in results:
        resumed_from += result.resumed_from_step
        if result.resumed_from_step < result.position.step:
            break
    return FitResult(position, resumed_from, sum(r.train_seconds for r in results),
                     sum(r.tokens_seen for r in results), final.stopped_early, throughput)


def run_fingerprint(inputs: TrainInputs, files: list[Path]) -> str:
    """SHA-256 over what shapes training: settings, input files, the model/training code, torch's version.

    The code is part of it because DVC re-runs the stage when src/sumpipe/{models,train} change, and a
    finished checkpoint of the old code must then not be taken for the new run's result.
    """
    import sumpipe.models
    import sumpipe.train

    return fingerprint_of({"spec": dataclasses.asdict(inputs.spec), "arch": dataclasses.asdict(inputs.arch)},
                          inputs.train, files, [sumpipe.models, sumpipe.train])
