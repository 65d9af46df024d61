"""`sumpipe compare A B`: two experiments' systems compared the seed-aware way.

`dvc metrics diff` shows how one number moved between two experiments; when each model was trained
once, the move may be the seed. This reads the evaluate stage's per-example, per-seed scores
(`<paths.scores>/<system>.parquet`) of both experiments and, for every system they share (or the ones
asked for), prints the mean ± sd over seeds on each side and the difference with the two-level
bootstrap's interval and p (`sumpipe.evaluate.bootstrap.two_level_bootstrap`).

An experiment is named by where its scores are:
- a folder of score files (`scores/`), or a project folder whose params.yaml names one (`paths.scores`):
  another clone, or the workspace;
- else a DVC experiment or a Git revision (`dvc exp run -n lr005`, a branch, a tag, a commit): its
  scores are read from what the revision holds through `dvc.api.DVCFileSystem` (the pipeline keeps
  `scores/` in Git beside the metrics, so any clone can read them; a DVC-tracked folder comes from the
  cache), so `dvc exp run` twice, or `dvc exp run --queue` and `dvc queue start -j 2`, then `sumpipe
  compare lr005 lr01` compares them without checking either out, on any machine.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sumpipe.errors import SumpipeError
from sumpipe.evaluate.summary import ScoringSetup, compare_seeds

SCORE_SUFFIX = ".parquet"
Runs = dict[int, pd.DataFrame]


@dataclass(frozen=True)
class Experiment:
    """Where one experiment's score files are: a folder, or a revision of the project at `repo`."""

    label: str
    list_systems: Callable[[], list[str]]
    read_bytes: Callable[[str], bytes]


def open_experiment(where: str, repo: Path = Path("."), scores_path: str = "scores") -> Experiment:
    """The experiment named `where` (module docstring); a one-line error when it names nothing."""
    folder = Path(where)
    if folder.is_dir():
        scores = folder if any(folder.glob(f"*{SCORE_SUFFIX}")) else _project_scores(folder)
        return Experiment(where, lambda: sorted(p.stem for p in scores.glob(f"*{SCORE_SUFFIX}")),
                          lambda name: (scores / f"{name}{SCORE_SUFFIX}").read_bytes())
    return _revision(where, repo, scores_path)


def _project_scores(folder: Path) -> Path:
    from sumpipe.config import load_params

    params = folder / "params.yaml"
    if not params.is_file():
        raise SumpipeError(f"{folder}: holds no score files and no params.yaml (give a scores folder, a project "
                           "folder, a DVC experiment or a Git revision)")
    scores = folder / load_params(params).paths.scores
    if not scores.is_dir():
        raise SumpipeError(f"{scores}: no such folder (run `dvc repro` in {folder})")
    return scores


def _revision(rev: str, repo: Path, scores_path: str) -> Experiment:
    """Score files of a DVC experiment or Git revision, read from what the revision holds: Git (the
    pipeline keeps `scores/` in Git, as the metrics), else the DVC cache."""
    from dvc.api import DVCFileSystem

    try:
        fs = DVCFileSystem(str(repo), rev=rev)
        _ = fs.repo  # opens the revision: an unknown one fails here, not as a missing folder
    except Exception as exc:  # dvc's own errors (an unknown revision, no DVC repository) have no common base
        raise SumpipeError(f"{rev}: not a folder, a DVC experiment or a Git revision of {repo} "
                           f"({type(exc).__name__}: {exc})") from None
    try:
        names = [Path(p).name for p in fs.ls(scores_path, detail=False)]
    except FileNotFoundError:
        raise SumpipeError(f"{rev}: has no {scores_path}/ (was the evaluate stage run there?)") from None
    except Exception:  # a DVC-tracked folder whose files this cache lacks (DataIndexDirError)
        raise SumpipeError(f"{rev}: {scores_path}/ is a DVC output that this cache does not hold (a revision from "
                           f"before scores were kept in Git, built elsewhere): `dvc pull` it, or check {rev} out "
                           "and run `dvc repro`") from None
    systems = sorted(n.removesuffix(SCORE_SUFFIX) for n in names if n.endswith(SCORE_SUFFIX))

    def read(name: str) -> bytes:
        try:
            return fs.read_bytes(f"{scores_path}/{name}{SCORE_SUFFIX}")
        except FileNotFoundError:
            raise SumpipeError(f"{rev}: {scores_path}/{name}{SCORE_SUFFIX} is not in the DVC cache "
                               "(`dvc pull` it, or run the experiment here)") from None

    return Experiment(rev, lambda: systems, read)


def read_runs(experiment: Experiment, system: str) -> Runs:
    """{seed: per-example scores} of one system (a deterministic system: one "seed", 0)."""
    try:
        frame = pd.read_parquet(io.BytesIO(experiment.read_bytes(system)))
    except (OSError, ValueError) as exc:
        raise SumpipeError(f"{experiment.label}: {system}{SCORE_SUFFIX} is not a score file ({exc})") from None
    if "id" not in frame.columns or "rouge1_fmeasure" not in frame.columns:
        raise SumpipeError(f"{experiment.label}: {system}{SCORE_SUFFIX} is not a score file of `sumpipe evaluate`")
    if "seed" not in frame.columns:
        return {0: frame}
    return {int(seed): frame[frame["seed"] == seed].reset_index(drop=True) for seed in sorted(frame["seed"].unique())}


def compare_experiments(a: Experiment, b: Experiment, systems: list[str] | None, setup: ScoringSetup,
                        types: tuple[str, ...]) -> list[dict]:
    """Per system: both sides' means (± sd over seeds) and the seed-aware difference B - A."""
    shared = [s for s in a.list_systems() if s in set(b.list_systems())]
    if systems:
        missing = [s for s in systems if s not in shared]
        if missing:
            raise SumpipeError(f"{missing[0]}: not scored in both {a.label} and {b.label} "
                               f"(shared: {', '.join(shared) or 'none'})")
        shared = systems
    if not shared:
        raise SumpipeError(f"{a.label} and {b.label} share no scored system")
    rows = []
    for name in shared:
        runs_a, runs_b = read_runs(a, name), read_runs(b, name)
        rows.append({"system": name, "a": _side(runs_a, types), "b": _side(runs_b, types),
                     **compare_seeds(runs_b, runs_a, setup, types)})
    return rows


def _side(runs: Runs, types: tuple[str, ...]) -> dict:
    means = {t: [float(df[f"{t}_fmeasure"].mean()) * 100 for df in runs.values()] for t in types}
    out: dict = {"n_seeds": len(runs)}
    for t, values in means.items():
        out[t] = round(sum(values) / len(values), 2)
        if len(values) > 1:
            out[f"{t}_sd"] = round(float(pd.Series(values).std(ddof=1)), 2)
    return out


WIDTH = 120  # the most columns a line of `render` takes (a terminal, a CI log, a commit message's quote)


def fit(text: str, width: int = WIDTH) -> str:
    """`text`, or when longer than `width`, its start and end around "…" (a path's last folders stay)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def render(rows: list[dict], a: str, b: str, types: tuple[str, ...], confidence: float) -> str:
    """A plain-text table: per system and type, A, B and Δ = B - A [interval] (p); no line is wider than
    `WIDTH` (long labels and system names go on lines of their own, and are shortened only past it)."""
    def side(v: dict, t: str) -> str:
        return f"{v[t]:.2f}" + (f" ± {v[t + '_sd']:.2f}" if f"{t}_sd" in v else "")

    what = "mean F1 x 100 (± sd over training seeds); Δ = B - A,"
    first = f"A = {a}, B = {b}: {what}"
    lines = [first] if len(first) <= WIDTH else [fit(f"A = {a}"), fit(f"B = {b}"), what]
    lines.append(f"its {confidence:.0%} interval and two-sided p from one two-level bootstrap (seeds, then documents)")
    for row in rows:
        seeds = f"({row['a']['n_seeds']}/{row['b']['n_seeds']} seeds, {row['n']} documents)"
        title = f"{row['system']} {seeds}"
        lines += [title] if len(title) <= WIDTH else [fit(row["system"]), f"  {seeds}"]
        for t in types:
            r = row[t]
            # p < 1 - confidence exactly when the interval excludes 0 (`bootstrap.percentile_p_value`)
            verdict = "different" if r["low"] > 0 or r["high"] < 0 else "not shown different"
            # at most about 105 columns: scores are 0-100, the type names at most 9 characters
            lines.append(f"  {t:<9} A {side(row['a'], t):<14} B {side(row['b'], t):<14} "
                         f"Δ {r['delta']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}] p {r['p_value']:.3f}  {verdict}")
    return "\n".join(lines)
