"""The training loop: model-agnostic, deterministic on CPU, resumable bit for bit.

`fit(model, task, cfg, checkpoint_dir)` trains any `nn.Module` on a `TrainTask` (which knows how to
batch its data and compute a summed loss) and:

- uses `cfg.device` (``auto``: CUDA when present) with bf16 autocast on CUDA and pinned,
  non-blocking host-to-device copies; on CPU it runs in float32 with
  `torch.use_deterministic_algorithms` on, so a fixed seed gives the same weights every time;
- with `compile_model=True`, runs the training forward pass and loss through `torch.compile`
  as one graph (on a GPU this fuses the many element-wise passes over the (B, T, V + n_oov)
  extended-vocabulary distribution and cuts kernel launches; see bench/bench_train.py for the
  figures); validation stays eager. Batch shapes vary (source/target lengths, OOV count), so it
  compiles once with dynamic sizes rather than once per shape;
- builds the optimizer and schedule of `sumpipe.train.optim`, clips gradients, counts steps;
- accumulates gradients over `cfg.accumulate` consecutive batches per update (Roy Choudhury 2020: batch 2 ×
  36), weighting every target token equally, exactly as one batch of all of them would;
- logs a row every `cfg.log_every` updates (step, epoch, loss, valid_loss, lr) and
  validates at each epoch end (and when `cfg.max_steps` cuts an epoch short); with `curves` (a
  `Curves`, `sumpipe.train.live`: DVCLive) it also hands each row, its tokens/s and each validation
  to the live curves as they happen;
- saves a checkpoint every `cfg.checkpoint_every` updates and at each epoch end, and keeps the
  weights with the lowest validation loss, which it loads back into `model` before returning;
- with `cfg.ema_decay`, keeps an exponential moving average of the weights after every update
  (Polyak averaging, `torch.optim.swa_utils.AveragedModel`) and validates, keeps and returns the
  average instead of the last weights; the average is part of the checkpoint;
- stops early when the validation loss, or with `cfg.early_stopping_metric: accuracy` the validation
  token accuracy (Sokol 2022's BiLSTM; the task's `token_accuracy`, an `AccuracyTask`), has not improved
  for `cfg.patience` epochs, and keeps the best weights by that metric (the count is part of the
  checkpoint, so a resumed run stops at the same epoch);
- resumes from the checkpoint in `checkpoint_dir` when one exists for the same `fingerprint`.

Exactness of resume rests on three things: the batch order is a pure function of (seed, epoch)
(`TrainTask.epoch_batches`), every RNG state is in the checkpoint (dropout draws from torch's
global generator), and a checkpoint is taken right after an update, so the resumed run replays
exactly the updates the killed one would have made next.

Wall-clock figures (tokens/s per logging interval, seconds) stay out of the log and the checkpoint,
which DVC hashes: they come back in `FitResult` for `sumpipe.timings`, so a rerun that reproduces the
weights also reproduces every file DVC records.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from sumpipe.config import TrainConfig
from sumpipe.device import resolve_device, torch_threads
from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import atomic_path
from sumpipe.train import checkpoint as ckpt
from sumpipe.train.ddp import DistContext, all_gather_objects, all_reduce_sum, barrier, shard, wrap_model
from sumpipe.train.optim import build_optimizer, clip_gradients

LOG_COLUMNS = ("step", "epoch", "loss", "valid_loss", "lr")


class TrainTask(Protocol):
    """What the engine needs to know about the data and the objective."""

    def epoch_batches(self, epoch: int) -> Sequence[Sequence[int]]:
        """Global batches of training-example indices for `epoch`; a pure function of (seed, epoch)."""

    def valid_batches(self) -> Sequence[Sequence[int]]:
        """Batches of validation-example indices (fixed order)."""

    def collate(self, indices: Sequence[int], split: str) -> Any:
        """A CPU batch of examples `indices` of `split` ("train" or "valid")."""

    def count_tokens(self, batch: Any) -> int:
        """Non-padding tokens the model reads and writes in `batch` (for tokens/s)."""

    def loss(self, model: torch.nn.Module, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(summed loss over target tokens, number of target tokens) for `batch`."""


class Curves(Protocol):
    """Live training curves (`sumpipe.train.live.PhaseCurves`); only the main rank gets one."""

    def start(self, position: ckpt.Position) -> None:
        """Training (re)starts at `position`: write again what it already logged."""

    def row(self, row: dict[str, Any], tokens_per_s: float | None) -> None:
        """A new log row with its interval's tokens/s, or (tokens_per_s None) a validation of the last row."""

    def validated(self, position: ckpt.Position) -> None:
        """A validation ended: `position` holds the best step and validation loss so far."""


class AccuracyTask(TrainTask, Protocol):
    """A task that can also score token accuracy (needed for `train.early_stopping_metric: accuracy`)."""

    def token_accuracy(self, model: torch.nn.Module, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(target tokens whose most probable prediction under teacher forcing is the target, target tokens)."""


@dataclass
class FitResult:
    position: ckpt.Position
    resumed_from_step: int
    train_seconds: float
    tokens_seen: int
    stopped_early: bool
    throughput: list[dict[str, float]] = dataclasses.field(default_factory=list)  # this run's {step, tokens_per_s}

    @property
    def log_rows(self) -> list[dict[str, Any]]:
        return self.position.log_rows


# --------------------------------------------------------------------------------------------
# Devices, seeds, batches
# --------------------------------------------------------------------------------------------
def training_device(name: str, ctx: DistContext | None = None) -> torch.device:
    """`train.device` for this rank (`sumpipe.device.resolve_device`)."""
    return resolve_device(name, "train.device", (ctx or DistContext()).local_rank)


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and every CUDA device)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def move_to_device(batch: Any, device: torch.device) -> Any:
    """`batch.to(device)`; for CUDA from page-locked memory and non-blocking, so the copy overlaps compute."""
    if device.type == "cuda" and hasattr(batch, "pin_memory"):
        return batch.pin_memory().to(device, non_blocking=True)
    return batch.to(device)


@contextlib.contextmanager
def _cpu_settings(deterministic: bool, threads: int | None) -> Iterator[None]:
    """Deterministic algorithms and a thread cap for the duration of training, then restore both.

    Deterministic mode would also fill every new uninitialised tensor with NaN (a debugging aid that
    changes no result, since nothing reads memory before writing it): that fill was 1-2 % of a CPU
    update, so it is off.
    """
    before = torch.are_deterministic_algorithms_enabled()
    warn_before = torch.is_deterministic_algorithms_warn_only_enabled()
    # fill_uninitialized_memory is a property that torch/utils/deterministic.py adds by swapping the module's
    # class at import: torch's stubs do not declare it, hence the ignores
    fill_before = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
    try:
        with torch_threads(threads):
            yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn_before)
        torch.utils.deterministic.fill_uninitialized_memory = fill_before  # type: ignore[attr-defined]


def _autocast(device: torch.device, bf16: bool) -> contextlib.AbstractContextManager:
    if device.type == "cuda" and bf16:
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _training_loss(task: TrainTask, model: torch.nn.Module, compile_model: bool) -> Callable[[Any], Any]:
    """`batch -> task.loss(model, batch)`, through `torch.compile` when asked (model and loss in one
    graph, so the loss's passes over the model's output fuse with the output itself)."""

    def loss(batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return task.loss(model, batch)

    return torch.compile(loss, dynamic=True) if compile_model else loss


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------
def fit(
    model: torch.nn.Module,
    task: TrainTask,
    cfg: TrainConfig,
    checkpoint_dir: Path | None,
    *,
    fingerprint: str = "",
    resume: bool = True,
    ctx: DistContext | None = None,
    should_stop: Callable[[ckpt.Position], bool] | None = None,
    progress: bool | None = None,
    description: str = "train",
    compile_model: bool = False,
    curves: Curves | None = None,
) -> FitResult:
    """Train `model` in place per `cfg`; on return it holds the best-validation weights.

    `should_stop(position)` is called after every update (after any checkpoint); returning True ends
    training at once, without validation (used by benchmarks; tests raise from it to simulate a kill).
    `progress=None` shows a bar only on a terminal. `curves`: the run's live curves (main rank only).
    """
    ctx = ctx or DistContext()
    if cfg.early_stopping_metric == "accuracy" and not hasattr(task, "token_accuracy"):
        raise SumpipeError(f"train.early_stopping_metric: accuracy needs a task with token accuracy; "
                           f"{type(task).__name__} has none (use loss)")
    device = training_device(cfg.device, ctx)
    model.to(device)
    optimizer, scheduler = build_optimizer(model.parameters(), cfg)
    average = weight_average(model, cfg.ema_decay)
    position = ckpt.Position()
    if checkpoint_dir is not None:
        checkpoint_dir = Path(checkpoint_dir)
        saved = ckpt.load_checkpoint(checkpoint_dir, fingerprint) if resume else None
        if saved is not None:
            position = ckpt.restore_checkpoint(saved, model=model, optimizer=optimizer, scheduler=scheduler,
                                               average=average, rank=ctx.rank)
            del saved
        elif ctx.is_main:
            ckpt.clear_checkpoint(checkpoint_dir)
    curves = curves if ctx.is_main else None
    if curves is not None:
        curves.start(position)
    loop = _Loop(model, wrap_model(model, ctx, device), task, cfg, optimizer, scheduler, device, ctx,
                 checkpoint_dir, fingerprint, position, compile_model, average, curves)
    resumed_from = position.step
    with _cpu_settings(device.type == "cpu", cfg.threads):
        stopped = loop.run(should_stop, progress, description)
    if checkpoint_dir is not None and not stopped:
        barrier(ctx)
        ckpt.load_best(checkpoint_dir, model)
    elif average is not None and not stopped:
        model.load_state_dict(average.module.state_dict())
    return FitResult(position, resumed_from, loop.train_seconds, loop.tokens_seen, stopped, loop.throughput)


def weight_average(model: torch.nn.Module, decay: float | None) -> AveragedModel | None:
    """A copy of `model` whose parameters will follow the exponential moving average of `model`'s
    (`train.ema_decay`): avg <- decay · avg + (1 - decay) · weights at each `update_parameters`, the
    first update copying the weights. None when `decay` is None. Parameters only: the models'
    buffers are constant tables (positions, masks), which the copy already holds."""
    if decay is None:
        return None
    return AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay))


class _Loop:
    """The mutable state of one `fit` call; split out so each phase is a short method."""

    def __init__(self, model, wrapped, task, cfg, optimizer, scheduler, device, ctx, checkpoint_dir,
                 fingerprint, position, compile_model=False, average=None, curves=None) -> None:
        self.model, self.wrapped, self.task, self.cfg = model, wrapped, task, cfg
        self.curves: Curves | None = curves
        # the weights that are validated and kept: the running average when there is one
        self.average = average
        self.evaluated = model if average is None else average.module
        self.train_loss = _training_loss(task, wrapped, compile_model)
        self.optimizer, self.scheduler = optimizer, scheduler
        self.device, self.ctx = device, ctx
        self.checkpoint_dir, self.fingerprint, self.position = checkpoint_dir, fingerprint, position
        self.train_seconds = 0.0
        self.tokens_seen = 0
        self.throughput: list[dict[str, float]] = []  # timing: kept apart from the log rows (module docstring)
        self.epoch_len = 0
        self.last_lr = optimizer.param_groups[0]["lr"]
        # the first step whose training loss was NaN or infinite (-1: none), kept on the device: checked
        # (one synchronisation) at each log row and checkpoint, never per step
        self.first_nonfinite = torch.full((), -1, dtype=torch.int64, device=device)
        self._reset_interval()
        self._restore_interval(position.interval)

    def _reset_interval(self) -> None:
        self.interval_loss = torch.zeros((), dtype=torch.float64, device=self.device)
        self.interval_targets = torch.zeros((), dtype=torch.float64, device=self.device)
        self.interval_tokens = 0
        self.interval_seconds = 0.0
        self.interval_steps = 0

    def _restore_interval(self, saved: list[float]) -> None:
        """Continue a logging interval a checkpoint cut in two, so resumed logs match straight ones."""
        if saved:
            loss, targets, tokens, steps, lr = saved
            self.interval_loss += loss
            self.interval_targets += targets
            self.interval_tokens, self.interval_steps, self.last_lr = int(tokens), int(steps), lr

    def _pending_interval(self) -> list[float]:
        return [float(self.interval_loss), float(self.interval_targets), float(self.interval_tokens),
                float(self.interval_steps), float(self.last_lr)]

    # ---------------------------------------------------------------- main loop
    def run(self, should_stop, progress, description) -> bool:
        """Train until done; return True when `should_stop` ended it early."""
        pos, cfg = self.position, self.cfg
        if pos.done:
            return False
        first = self._epoch_batches(0)
        if not first:
            raise SumpipeError("no training batches: the training split is empty")
        total = math.ceil(len(first) / cfg.accumulate) * cfg.epochs
        if cfg.max_steps is not None:
            total = min(total, cfg.max_steps)
        show = None if progress is None else progress
        bar = tqdm(total=total, initial=min(pos.step, total), desc=description, unit="step", file=sys.stderr,
                   disable=True if not self.ctx.is_main else (None if show is None else not show),
                   dynamic_ncols=True)
        try:
            while not pos.done:
                batches = first if pos.epoch == 0 else self._epoch_batches(pos.epoch)
                self.epoch_len = len(batches)
                while pos.batch < len(batches) and not self._capped():
                    self._train_step(batches[pos.batch : pos.batch + cfg.accumulate])
                    bar.update(1)
                    if pos.step % cfg.log_every == 0:
                        row = self._log_row()
                        bar.set_postfix(loss=f"{row['loss']:.3f}", lr=f"{row['lr']:.2e}")
                    if pos.step % cfg.checkpoint_every == 0:
                        self._save()
                    if should_stop is not None and should_stop(pos):
                        return True
                self._end_epoch(complete=pos.batch >= len(batches))
        finally:
            bar.close()
        return False

    def _capped(self) -> bool:
        return self.cfg.max_steps is not None and self.position.step >= self.cfg.max_steps

    def _epoch_batches(self, epoch: int) -> list[Sequence[int]]:
        batches = list(self.task.epoch_batches(epoch))
        if self.ctx.is_distributed:
            # every rank needs at least one example, or DDP's gradient all-reduce would hang
            batches = [b for b in batches if len(b) >= self.ctx.world_size]
        return batches

    def _train_step(self, group: Sequence[Sequence[int]]) -> None:
        """One update from a group of `cfg.accumulate` global batches (fewer at an epoch's end).

        The gradient is that of ∑loss / (target tokens of the whole group): after each batch the
        running gradient is rescaled by seen / (seen + new) and the new batch enters with weight
        1 / (seen + new), so with one batch this is exactly the plain update, and the tokens of
        every batch count alike whatever the batch lengths.
        """
        pos, cfg, ctx = self.position, self.cfg, self.ctx
        started = time.perf_counter()
        self.wrapped.train()
        seen = None
        for i, global_batch in enumerate(group):
            batch = self.task.collate(shard(global_batch, ctx), "train")
            tokens = self.task.count_tokens(batch)
            batch = move_to_device(batch, self.device)
            # DDP all-reduces gradients in backward; only the group's last batch needs to
            sync = contextlib.nullcontext() if i == len(group) - 1 or not ctx.is_distributed else self.wrapped.no_sync()
            with sync:
                with _autocast(self.device, cfg.bf16):
                    loss_sum, local_targets = self.train_loss(batch)
                loss_sum, local_targets = loss_sum.float(), local_targets.detach().to(torch.float32)
                global_targets = all_reduce_sum(local_targets.clone(), ctx).clamp(min=1)
                total = global_targets if seen is None else seen + global_targets
                if seen is not None:
                    for p in self.model.parameters():
                        if p.grad is not None:
                            p.grad.mul_(seen / total)
                # rank share of ∑loss / global target count, × world because DDP averages gradients (ddp.py)
                (loss_sum * ctx.world_size / total).backward()
            seen = total
            bad = ~torch.isfinite(loss_sum.detach())
            self.first_nonfinite = torch.where(bad & (self.first_nonfinite < 0), pos.step + 1, self.first_nonfinite)
            self.interval_loss += loss_sum.detach().double()
            self.interval_targets += local_targets.double()
            self.interval_tokens += tokens
            self.tokens_seen += tokens
        clip_gradients(self.model.parameters(), cfg.grad_clip)
        self.last_lr = self.optimizer.param_groups[0]["lr"]
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        if self.average is not None:
            self.average.update_parameters(self.model)
        pos.step += 1
        pos.batch += len(group)
        self.interval_steps += 1
        if self.device.type == "cuda" and pos.step % cfg.log_every == 0:
            torch.cuda.synchronize(self.device)  # so the interval's time covers its GPU work
        elapsed = time.perf_counter() - started
        self.interval_seconds += elapsed
        self.train_seconds += elapsed

    # ---------------------------------------------------------------- logging
    def _log_row(self, valid_loss: float | None = None) -> dict[str, Any]:
        """Close the logging interval into a row (or annotate the last row when the interval is empty)."""
        pos = self.position
        rows = pos.log_rows
        if self.interval_steps == 0 and rows and rows[-1]["step"] == pos.step:
            if valid_loss is not None:
                rows[-1]["valid_loss"] = valid_loss
                if self.curves is not None:
                    self.curves.row(rows[-1], None)
            return rows[-1]
        totals = torch.stack([self.interval_loss, self.interval_targets,
                              torch.tensor(float(self.interval_tokens), dtype=torch.float64,
                                           device=self.device), (self.first_nonfinite >= 0).double()])
        loss_sum, targets, tokens, diverged = all_reduce_sum(totals, self.ctx).tolist()
        if diverged:  # every rank sees the sum, so every rank stops here
            self._diverged()
        row = {
            "step": pos.step,
            "epoch": round(pos.epoch + pos.batch / max(self.epoch_len, 1), 4),
            "loss": loss_sum / targets if targets > 0 else math.nan,
            "valid_loss": valid_loss,
            "lr": self.last_lr,
        }
        rows.append(row)
        tokens_per_s = tokens / self.interval_seconds if self.interval_seconds > 0 else math.nan
        self.throughput.append({"step": pos.step, "tokens_per_s": tokens_per_s})
        if self.curves is not None:
            self.curves.row(row, tokens_per_s)
        self._reset_interval()
        return row

    # ---------------------------------------------------------------- epoch end, validation
    def _end_epoch(self, complete: bool) -> None:
        pos = self.position
        valid_loss = self.validate()
        accuracy = self.validate_accuracy() if self.cfg.early_stopping_metric == "accuracy" else None
        row = self._log_row(valid_loss)
        if not math.isfinite(valid_loss):  # the last update diverged: these weights are never kept
            raise SumpipeError(f"the validation loss is not finite (NaN or infinity) after step {pos.step}: the "
                               f"weights diverged; lower the learning rate (lr is {self.cfg.lr:g}) or clip the "
                               "gradients (grad_clip), and train afresh with --no-resume")
        if self._improved(valid_loss, accuracy):
            pos.best_valid_loss, pos.best_step, pos.stale_epochs = valid_loss, pos.step, 0
            pos.best_valid_accuracy = accuracy
            if self.checkpoint_dir is not None and self.ctx.is_main:
                ckpt.save_best(self.checkpoint_dir, self.evaluated)
        else:
            pos.stale_epochs += 1
        if self.curves is not None:
            self.curves.validated(pos)
        if complete:
            pos.epoch += 1
            pos.batch = 0
        out_of_patience = self.cfg.patience is not None and pos.stale_epochs >= self.cfg.patience
        pos.done = self._capped() or pos.epoch >= self.cfg.epochs or out_of_patience
        if self.ctx.is_main:
            best = (f"best {pos.best_valid_loss:.4f}" if accuracy is None else
                    f"accuracy {accuracy:.4f}, best {pos.best_valid_accuracy:.4f}")
            tqdm.write(f"epoch {row['epoch']:g}: step {pos.step}, train loss {row['loss']:.4f}, "
                       f"valid loss {valid_loss:.4f} ({best} at step {pos.best_step})"
                       + (f"; early stop: no improvement for {pos.stale_epochs} epochs" if out_of_patience else ""),
                       file=sys.stderr)
        self._save()

    def _improved(self, valid_loss: float, accuracy: float | None) -> bool:
        """Whether this epoch beats the best so far: a lower loss, or with the accuracy metric a higher accuracy."""
        pos = self.position
        if accuracy is not None:
            return pos.best_valid_accuracy is None or accuracy > pos.best_valid_accuracy
        return pos.best_valid_loss is None or valid_loss < pos.best_valid_loss

    @torch.no_grad()
    def _validation_sums(self, measure: Callable[[Any, Any], tuple[torch.Tensor, torch.Tensor]]) -> tuple[float, float]:
        """(sum, targets) of `measure(model, batch)` over the validation split, summed over ranks."""
        self.evaluated.eval()  # the model itself (DDP's wrapper shares its mode) or the average
        totals = torch.zeros(2, dtype=torch.float64, device=self.device)
        for indices in self.task.valid_batches():
            mine = shard(indices, self.ctx)
            if not mine:
                continue
            batch = move_to_device(self.task.collate(mine, "valid"), self.device)
            with _autocast(self.device, self.cfg.bf16):
                total, n_targets = measure(self.evaluated, batch)
            totals += torch.stack([total.detach().double(), n_targets.detach().double()])
        all_reduce_sum(totals, self.ctx)
        total, targets = totals.tolist()
        return total, targets

    def validate(self) -> float:
        """Mean loss per target token over the validation split (same objective as training)."""
        loss_sum, targets = self._validation_sums(self.task.loss)
        if targets <= 0:
            raise SumpipeError("no validation targets: the validation split is empty")
        return loss_sum / targets

    def validate_accuracy(self) -> float:
        """Teacher-forced token accuracy over the validation split (the task's `token_accuracy`)."""
        correct, targets = self._validation_sums(self.task.token_accuracy)
        return correct / max(targets, 1.0)

    def _diverged(self) -> None:
        step = int(self.first_nonfinite)
        at = f"at step {step}" if step >= 0 else "on another rank"
        raise SumpipeError(f"the training loss is not finite (NaN or infinity) {at}: the weights diverged, nothing "
                           f"was saved from there on; lower the learning rate (lr is {self.cfg.lr:g}) or clip the "
                           "gradients (grad_clip), and train afresh with --no-resume")

    def _check_finite(self) -> None:
        """Stop (on every rank) once a training loss was not finite: such weights are never saved."""
        if float(all_reduce_sum((self.first_nonfinite >= 0).double(), self.ctx)):
            self._diverged()

    def _save(self) -> None:
        if self.checkpoint_dir is None:
            return
        self._check_finite()
        rng = all_gather_objects(ckpt.capture_rng(), self.ctx)
        self.position.interval = self._pending_interval()
        if self.ctx.is_main:
            ckpt.save_checkpoint(self.checkpoint_dir, model=self.model, optimizer=self.optimizer,
                                 scheduler=self.scheduler, position=self.position, rng_states=rng,
                                 fingerprint=self.fingerprint, average=self.average)


# --------------------------------------------------------------------------------------------
# What a training stage records: resume fingerprint, summary, log (train and pretrain stages)
# --------------------------------------------------------------------------------------------
# settings that change neither the weights nor the data order: a checkpoint survives changing them
_RESUME_NEUTRAL = ("device", "log_every", "checkpoint_every", "workers")


def fingerprint_of(settings: dict[str, Any], train: TrainConfig, files: list[Path], packages: list[Any]) -> str:
    """SHA-256 over `settings`, the resume-relevant `train` settings, torch's version, `files` and the
    `*.py` files of `packages` (see `run_fingerprint`)."""
    loop = {k: v for k, v in dataclasses.asdict(train).items() if k not in _RESUME_NEUTRAL}
    digest = hashlib.sha256(json.dumps({**settings, "train": loop, "torch": torch.__version__},
                                       sort_keys=True).encode())
    code = [p for pkg in packages for p in sorted(Path(pkg.__file__).parent.glob("*.py"))]
    for path in [*files, *code]:
        digest.update(path.name.encode())
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()




def training_summary(result: FitResult, model: torch.nn.Module, cfg: TrainConfig, n_train: int, n_valid: int,
                     device: torch.device) -> dict[str, Any]:
    """What config.json records about the run: only what a rerun reproduces (timings: `run_figures`)."""
    pos, rows = result.position, result.log_rows
    train_losses = [r["loss"] for r in rows]
    return {
        "optimizer": cfg.optimizer, "lr": cfg.lr, "warmup_steps": cfg.warmup_steps, "batch_size": cfg.batch_size,
        "label_smoothing": cfg.label_smoothing, "unk_target_weight": cfg.unk_target_weight,
        "copy_attention_weight": cfg.copy_attention_weight, "copy_target_weight": cfg.copy_target_weight,
        "ema_decay": cfg.ema_decay, "epochs": cfg.epochs,
        "max_steps": cfg.max_steps, "seed": cfg.seed,
        "steps": pos.step, "epochs_completed": rows[-1]["epoch"] if rows else 0.0,
        "best_valid_loss": pos.best_valid_loss, "best_step": pos.best_step,
        "early_stopping": {"metric": cfg.early_stopping_metric, "patience": cfg.patience,
                           "best_valid_accuracy": pos.best_valid_accuracy},
        "final_train_loss": train_losses[-1] if train_losses else None,
        "train_examples": n_train, "valid_examples": n_valid,
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": device.type,
    }


def run_figures(result: FitResult) -> dict[str, Any]:
    """This run's wall-clock figures and resume provenance, for `sumpipe.timings` (not for config.json:
    they differ between a straight, a resumed and a repeated run of the same training)."""
    seconds = result.train_seconds
    return {
        "train_seconds_this_run": round(seconds, 3), "resumed_from_step": result.resumed_from_step,
        "tokens_this_run": result.tokens_seen,
        "tokens_per_s": round(result.tokens_seen / seconds, 1) if seconds > 0 else None,
    }




def write_log(rows: list[dict[str, Any]], path: Path) -> Path:
    """`train_log.csv` for `dvc plots` (valid_loss left empty between epoch ends); atomic."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(LOG_COLUMNS))
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
    return path
