"""Faults and concurrency on a real DVC pipeline (tiny numerals configuration, one model).

- Kills: each stage is SIGKILLed inside `dvc repro` at a random point among its artifact commits
  (just before or just after its k-th atomic rename, k drawn at random from the writes the stage
  made in the baseline run; training twice in a row). Then: DVC recorded nothing (dvc.lock
  unchanged), `dvc repro` recovers, every artifact equals the uninterrupted run's (sha256; for
  training that is the resumed weights), no temporary file is left and `dvc status` is clean.
- Concurrency: two `sumpipe decode` on one model at once; `dvc repro` while another holds the lock.

Every stage of dvc.yaml is covered (a family's `pretrain` stage joins by itself); TRAINING_STAGES says
which are killed twice.
The draws are printed (`-s`) and reproducible: RELIABILITY_SEED (default 14) seeds them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.reliability.harness import REPO, check, classify, subprocess_env, tiny_params

pytestmark = pytest.mark.faults

INJECTOR = Path(__file__).resolve().parent / "faultinject"
SEED = int(os.environ.get("RELIABILITY_SEED", "14"))

# Every stage of dvc.yaml is killed (a family's new stage, e.g. `pretrain`, joins by itself); a
# foreach stage once per model of the tiny configuration. The training stages resume from their
# checkpoints: each is killed twice in a row from scratch, and its final weights must equal the
# uninterrupted run's.
TRAINING_STAGES = ("train", "pretrain")
# The train stage trains every run side by side, one worker process each (sumpipe.train.pool), and the predict
# stage runs every summarizer's command side by side, one process each (sumpipe.decode.pool): each run or
# summarizer is killed on its own (its process, labelled `train@<run>` / `predict@<name>` by the fault
# injector) inside `dvc repro -s <stage>`.
POOL_STAGES = ("train", "predict")


def pool_items(stage: str, params: dict) -> list[str]:
    """What a pool stage runs side by side, as its processes are labelled: the train stage's runs; the predict
    stage's ensembles, runs and extractive systems."""
    if stage == "train":
        return list(params["runs"])
    return [*params["ensembles"], *params["runs"], *params["extractive"]["systems"]]


def dvc_stages() -> dict[str, int]:
    """dvc.yaml's stages as the kills name them (`train@M1-1`, `predict@lead`: a pool's run) -> kills in a row."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    params = tiny_params()

    def value_of(reference: str) -> list:  # `${models}` (a mapping: its keys) or a list such as `${train.seeds}`
        value = params
        for part in reference.strip("${}").split("."):
            value = value[part]
        return list(value)

    out = {}
    for name, stage in stages.items():
        items = [""]
        if "foreach" in stage:
            items = [f"@{item}" for item in value_of(stage["foreach"])]
        if "matrix" in stage:  # DVC joins a matrix item's values with "-": train@M1-1
            axes = [value_of(reference) for reference in stage["matrix"].values()]
            items = ["@" + "-".join(map(str, combo)) for combo in itertools.product(*axes)]
        if name in POOL_STAGES:  # one stage, a process per run or summarizer: each is killed
            items = [f"@{item}" for item in pool_items(name, params)]
        for item in items:
            out[name + item] = 2 if name in TRAINING_STAGES else 1
    return out


KILLS = dvc_stages()
RESUMED_WRITES = 3  # a resumed training run still writes the weights, vocabulary and card
# What legitimately differs between an interrupted and an uninterrupted run: wall-clock figures and
# the resume provenance in the model card. JSON keys and Parquet columns of these names are left out
# of the comparison; everything else must be identical (dvc.lock then differs only by those files'
# hashes, so it is checked through `dvc status` instead).
TIMING_KEYS = {"seconds", "scoring_seconds", "decode_seconds", "tokens_per_s", "elapsed", "wall_seconds",
               "train_seconds_this_run", "resumed_from_step"}


# Not compared: version control, the code, and timings/ (each run's seconds and resume provenance by
# design: gitignored and named nowhere in dvc.yaml; a writer killed there leaves at most a temporary
# that the next write of that file removes).
NOT_ARTIFACTS = (".git", ".dvc", "src", "timings")


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root.parent / "stages.jsonl"

    def env(self, fault: str | None = None) -> dict[str, str]:
        extra = {"RELIABILITY_LOG": str(self.log)}
        if fault:
            extra["RELIABILITY_FAULT"] = fault
        return subprocess_env(extra, pythonpath=[INJECTOR, self.root / "src"])

    def dvc(self, *args: str, fault: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=self.root, env=self.env(fault),
                              capture_output=True, text=True, timeout=timeout)

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def digests(self) -> dict[str, str]:
        out = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if path.is_file() and rel.parts[0] not in NOT_ARTIFACTS and rel.name != "dvc.lock":
                out[str(rel)] = _digest(path)
        return out

    def temporaries(self) -> list[str]:
        return [str(p.relative_to(self.root)) for p in self.root.rglob(".*.tmp")
                if p.relative_to(self.root).parts[0] not in NOT_ARTIFACTS]


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _canonical(value):
    if isinstance(value, dict):
        return sorted((str(k), _canonical(v)) for k, v in value.items() if k not in TIMING_KEYS)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if hasattr(value, "detach"):
        return hashlib.sha256(value.detach().cpu().contiguous().numpy().tobytes()).hexdigest()
    return repr(value)


def _digest(path: Path) -> str:
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
            return hashlib.sha256(json.dumps(_without_timings(data), sort_keys=True).encode()).hexdigest()
        except ValueError:
            pass
    if path.suffix in (".csv", ".tsv"):  # train_log.csv, DVCLive's curves: step, losses, lr, throughput (timing)
        import pandas as pd

        frame = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")
        frame = frame.drop(columns=[c for c in frame.columns if c in TIMING_KEYS or "per_s" in c or "second" in c])
        return hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()
    if path.suffix == ".pt":  # a resume checkpoint: its tensors and plain values, without timings
        import torch

        return hashlib.sha256(repr(_canonical(torch.load(path, weights_only=True))).encode()).hexdigest()
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        table = table.drop_columns([c for c in table.column_names if c in TIMING_KEYS])
        return hashlib.sha256(repr(table.to_pydict()).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ok(done: subprocess.CompletedProcess, what: str) -> None:
    assert done.returncode == 0, f"{what} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    base = tmp_path_factory.mktemp("rel-faults")
    work = base / "repo"
    work.mkdir()
    shutil.copytree(REPO / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / "dvc.yaml", work / "dvc.yaml")
    shutil.copy(REPO / "constraints.txt", work / "constraints.txt")
    (work / "params.yaml").write_text(yaml.safe_dump(tiny_params(), sort_keys=False))
    (work / "input.txt").write_text("1 2 3 4 5\n")
    r = Repo(work)
    for args in (["git", "init", "-q"], ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                         "--allow-empty", "-m", "init"]):
        subprocess.run(args, cwd=work, check=True, capture_output=True)
    _ok(r.dvc("init", "-q"), "dvc init")
    _ok(r.dvc("config", "core.analytics", "false"), "dvc config")
    _ok(r.dvc("repro"), "baseline dvc repro")
    r.baseline = r.digests()
    r.lock = (work / "dvc.lock").read_text()
    r.writes = {rec["stage"]: rec["writes"] for rec in r.records() if "writes" in rec}
    return r


def _assert_recovered(repo: Repo) -> None:
    _ok(repo.dvc("repro"), "recovering dvc repro")
    after = repo.digests()
    changed = sorted(k for k in set(repo.baseline) | set(after) if repo.baseline.get(k) != after.get(k))
    assert changed == [], f"artifacts differ from the uninterrupted run: {changed}"
    assert repo.temporaries() == []
    status = repo.dvc("status")
    _ok(status, "dvc status")
    assert "up to date" in status.stdout, status.stdout


def _checkpoint_folder(stage: str) -> str:
    """The checkpoint folder of a training stage: `pretrain`, or `<model>/seed-<seed>` for `train@<run>`."""
    if "@" not in stage:
        return stage
    run = tiny_params()["runs"][stage.split("@")[1]]
    return f"{run['model']}/seed-{run['seed']}"


@pytest.mark.parametrize(("stage", "kills"), [pytest.param(k, v, id=k) for k, v in KILLS.items()])
def test_sigkill_then_repro(stage: str, kills: int, repo: Repo) -> None:
    writes = repo.writes.get(stage)
    assert writes, f"stage {stage} made no atomic write in the baseline run ({repo.writes})"
    rng = random.Random(f"{SEED}-{stage}")
    repo.lock = (repo.root / "dvc.lock").read_text()
    kind = stage.split("@")[0]
    target = kind if kind in POOL_STAGES else stage  # a pool's run is killed inside its stage
    if kind in TRAINING_STAGES:  # from scratch, so the first run makes the baseline's writes
        shutil.rmtree(repo.root / "checkpoints" / _checkpoint_folder(stage), ignore_errors=True)
    if kind == "train":  # the models folder persists: without the run's folder, DVC sees the stage unfinished
        shutil.rmtree(repo.root / "models" / _checkpoint_folder(stage), ignore_errors=True)
    for attempt in range(kills):
        # a resumed run has fewer commits left: a later kill falls among its first RESUMED_WRITES
        k = rng.randint(1, writes if attempt == 0 else min(writes, RESUMED_WRITES))
        when = rng.choice(["before", "after"])
        print(f"kill {stage} #{attempt + 1}: {when} write {k} of {writes}")
        n_killed = sum("killed_at" in rec for rec in repo.records())
        done = repo.dvc("repro", "-f", "-s", target, fault=f"{stage}:{when}:{k}")
        assert done.returncode != 0, "the stage was not killed"
        assert sum("killed_at" in rec for rec in repo.records()) == n_killed + 1, done.stderr[-2000:]
        assert (repo.root / "dvc.lock").read_text() == repo.lock, "a killed stage was recorded in dvc.lock"
    _assert_recovered(repo)


# --------------------------------------------------------------------------------------------
# Concurrency
# --------------------------------------------------------------------------------------------
def _sumpipe(repo: Repo, *args: str, fault: str | None = None) -> subprocess.Popen:
    return subprocess.Popen([str(Path(sys.executable).parent / "sumpipe"), *args], cwd=repo.root,
                            env=repo.env(fault), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(proc: subprocess.Popen, timeout: float = 300):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return classify(None, out, err)
    return classify(proc.returncode, out, err)


def _two_decode_stages(repo: Repo) -> None:
    procs = [_sumpipe(repo, "decode", "--model", "M1") for _ in range(2)]
    for proc in procs:
        check(_wait(proc), "ok")
    _assert_recovered(repo)  # same predictions as the baseline, nothing for dvc to redo


def _two_decode_inputs(repo: Repo) -> None:
    procs = [_sumpipe(repo, "decode", "-m", "M1", "input.txt") for _ in range(2)]
    results = [_wait(proc) for proc in procs]
    for result in results:
        check(result, "ok")
    assert results[0].out == results[1].out and results[0].out.strip()


def _repro_while_locked(repo: Repo) -> None:
    holder = subprocess.Popen([sys.executable, "-m", "dvc", "repro", "-f", "-s", "evaluate"], cwd=repo.root,
                              env=repo.env("evaluate:hold:20"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    deadline = time.monotonic() + 240
    while not any(rec.get("started") and rec["stage"] == "evaluate" for rec in repo.records()):
        assert holder.poll() is None, holder.communicate()
        assert time.monotonic() < deadline, "the lock holder never started its stage"
        time.sleep(0.5)
    start = time.monotonic()
    second = repo.dvc("repro", timeout=120)
    waited = time.monotonic() - start
    assert second.returncode != 0 and "lock" in second.stderr.lower(), second.stderr[-2000:]
    assert "Traceback" not in second.stderr
    assert waited < 60, f"the second dvc repro waited {waited:.0f} s"
    out, err = holder.communicate(timeout=600)
    assert holder.returncode == 0, err[-3000:]
    _assert_recovered(repo)


def _two_trainers(repo: Repo) -> None:
    """Two `sumpipe train` on one model at once: one trains, the other is refused in one line (or, if
    the first had finished already, trains too); the folder is one run's complete set either way."""
    from sumpipe.models.io import load_pretrained

    procs = [_sumpipe(repo, "train", "--model", "M1", "--no-resume") for _ in range(2)]
    results = [_wait(proc) for proc in procs]
    assert any(r.outcome == "ok" for r in results), [r.describe() for r in results]
    for result in results:
        if result.outcome != "ok":
            check(result, "error: models/M1/seed-1: another `sumpipe train` is training this model")
    load_pretrained(repo.root / "models/M1/seed-1")  # checksums, hash and shapes all agree: one writer's files
    assert not repo.temporaries()


CONCURRENCY = {
    "two `sumpipe train` on one model": _two_trainers,
    "two `sumpipe decode` stages on one model": _two_decode_stages,
    "two `sumpipe decode INPUT` on one model": _two_decode_inputs,
    "`dvc repro` while another holds the lock": _repro_while_locked,
}


@pytest.mark.parametrize("scenario", [pytest.param(v, id=k) for k, v in CONCURRENCY.items()])
def test_concurrency(scenario, repo: Repo) -> None:
    scenario(repo)
