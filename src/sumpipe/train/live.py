"""Live training curves with DVCLive (the DVC team's logger): one folder per training run.

`RunCurves(folder)` writes, while the run trains, DVCLive's layout:

- `<folder>/plots/metrics/{loss,lr,tokens_per_s}.tsv` at every log row (`train.log_every` updates) and
  `<folder>/plots/metrics/valid_loss.tsv` at every validation, each with the columns `step` (the update
  count, numbered on across a family's training phases) and the metric;
- `<folder>/metrics.json`: the latest values, `step`, and `best_step` / `best_valid_loss` (the update
  whose weights the run keeps and its validation loss; the figures the pipeline keeps in git are in
  `metrics/figures.json`, since git ignores this file: it holds the last tokens/s, a wall-clock figure).

The folders are `<paths.dvclive>/train/<model>/seed-<seed>/` and `<paths.dvclive>/pretrain/`, drawn by
dvc.yaml's top-level `plots:`; git keeps their loss, validation-loss and learning-rate curves (so a fresh
clone has them, and `dvc exp run` commits each experiment's curves with it) and ignores tokens/s and
metrics.json, wall-clock figures that would leave a rebuild's `git status` dirty. They are no DVC output
either: a rerun must leave dvc.lock unchanged.

Choices:

- DVCLive logs and nothing else. `_Live` turns off its repository hooks: it writes no dvc.yaml (the
  project's dvc.yaml declares the plots), saves no experiment, runs no `git add` at the end of `dvc exp
  run`, posts nothing to DVC Studio (offline), and never runs the `dvc init` that DVCLive does in a git
  repository without DVC. Its metrics.json is no `metrics:` of dvc.yaml either.
- Exact resume. A checkpoint carries its log rows; DVCLive's files can be ahead of it (a kill between a
  log row and the next checkpoint), and DVCLive's own `resume` would continue after the step in its
  metrics.json and leave those rows twice. So every start rebuilds the folder through DVCLive from the
  checkpoint's rows (`Live(resume=False)`, then the rows logged again in order): the files of a resumed
  run are those of a straight one, and a run that finds its finished checkpoint (unchanged, not trained
  again) writes the same curves back. tokens/s, which the checkpoint does not keep (a timing), is carried
  over from the old file up to the checkpoint's step.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sumpipe.errors import SumpipeError
from sumpipe.names import seed_folder

TRAIN_FOLDER = "train"
PRETRAIN_FOLDER = "pretrain"
# the curves, one file each: <folder>/plots/metrics/<name>.tsv
CURVES = ("loss", "valid_loss", "lr", "tokens_per_s")


def train_curves_dir(root: Path, model: str, seed: int) -> Path:
    """`<paths.dvclive>/train/<model>/seed-<seed>`: one training run's DVCLive folder."""
    return Path(root) / TRAIN_FOLDER / model / seed_folder(seed)


def pretrain_curves_dir(root: Path) -> Path:
    """`<paths.dvclive>/pretrain`: the encoder pre-training's DVCLive folder."""
    return Path(root) / PRETRAIN_FOLDER


def curve_file(folder: Path, name: str) -> Path:
    """Where DVCLive writes curve `name` of `folder` (dvc.yaml's `plots:` names these files)."""
    return Path(folder) / "plots" / "metrics" / f"{name}.tsv"


def _live(folder: Path) -> Any:
    """A DVCLive `Live` on `folder`, emptied, with its DVC-repository and Studio hooks off (module docstring)."""
    from dvclive import Live

    class _Live(Live):
        def _init_dvc(self) -> None:  # no dvc.yaml, no experiment, no git add, no `dvc init`
            pass

        def _init_studio(self) -> None:  # offline: nothing is posted
            self._studio_events_to_skip = {"start", "data", "done"}

    return _Live(str(folder), resume=False, report=None, save_dvc_exp=False, dvcyaml=None)


def _read_curve(path: Path, name: str) -> list[tuple[int, float]]:
    """(step, value) rows of a DVCLive curve file; a last line cut short by a kill is skipped."""
    if not path.is_file():
        return []
    rows = []
    try:
        with open(path, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                try:
                    rows.append((int(row["step"]), float(row[name])))
                except (KeyError, TypeError, ValueError):
                    continue
    except (OSError, UnicodeDecodeError) as exc:
        raise SumpipeError(f"{path}: cannot read the training curve: {exc}") from exc
    return rows


class RunCurves:
    """One run's DVCLive folder; `phase(offset)` gives `fit` the logger of one training phase."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        # tokens/s of the run this one may resume: the checkpoint does not keep it (module docstring)
        self._carried = _read_curve(curve_file(self.folder, "tokens_per_s"), "tokens_per_s")
        try:
            self.live = _live(self.folder)
        except OSError as exc:
            raise SumpipeError(f"{self.folder}: cannot write the training curves: {exc}") from exc

    def phase(self, offset: int = 0) -> PhaseCurves:
        """The logger of a phase whose step 1 is the run's step `offset` + 1."""
        return PhaseCurves(self, offset)

    def log(self, step: int, values: Mapping[str, float | None]) -> None:
        """Append `values` (None: not at this step) at `step` and write metrics.json."""
        self.live.step = step
        for name, value in values.items():
            if value is not None:
                self.live.log_metric(name, float(value))
        self.live.make_summary()

    def best(self, step: int | None, valid_loss: float | None) -> None:
        """Record the kept weights' step and validation loss in metrics.json (not drawn)."""
        if step is None or valid_loss is None:
            return
        self.live.log_metric("best_step", step, plot=False)
        self.live.log_metric("best_valid_loss", float(valid_loss), plot=False)
        self.live.make_summary()


class PhaseCurves:
    """What the engine calls (`sumpipe.train.engine.Curves`): steps are the phase's, written as the run's."""

    def __init__(self, run: RunCurves, offset: int) -> None:
        self.run, self.offset = run, offset

    def start(self, position: Any) -> None:
        """Write again what the checkpoint `position` (a `checkpoint.Position`) already logged (module docstring)."""
        speed = {step: value for step, value in self.run._carried
                 if self.offset < step <= self.offset + position.step}
        for row in position.log_rows:
            step = self.offset + row["step"]
            self.run.log(step, {"loss": row["loss"], "lr": row["lr"], "tokens_per_s": speed.pop(step, None),
                                "valid_loss": row["valid_loss"]})
        self._best(position)

    def row(self, row: Mapping[str, Any], tokens_per_s: float | None) -> None:
        """A new log row (`tokens_per_s` of its interval) or, with `tokens_per_s` None and only
        `valid_loss` new, a validation at the last row's step."""
        step = self.offset + row["step"]
        if tokens_per_s is None:
            self.run.log(step, {"valid_loss": row["valid_loss"]})
        else:
            self.run.log(step, {"loss": row["loss"], "lr": row["lr"],
                                "tokens_per_s": tokens_per_s if math.isfinite(tokens_per_s) else None,
                                "valid_loss": row["valid_loss"]})

    def validated(self, position: Any) -> None:
        """After a validation: the best step and loss so far."""
        self._best(position)

    def _best(self, position: Any) -> None:
        best = position.best_step
        self.run.best(None if best is None else self.offset + best, position.best_valid_loss)
