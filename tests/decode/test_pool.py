"""The predict stage's pool (`sumpipe.decode.pool`): which commands it runs, in what order, how many side by
side, and how a failed job ends the stage. That 1 and 2 workers write the same bytes is checked on a
trained pipeline (tests/test_pipeline_e2e.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml

from sumpipe.config import load_params
from sumpipe.decode.pool import Job, _failure, plan_jobs, run_jobs, worker_count
from sumpipe.errors import SumpipeError


def test_every_summarizer_of_params_is_one_command_longest_first(repo_root: Path) -> None:
    jobs = plan_jobs(load_params(repo_root / "params.yaml"))
    assert [job.name for job in jobs] == [
        "M1-ens", "M2-ens", "PG-cov-ens",                                   # a model per seed, at each step
        "M1-1", "M1-2", "M1-3", "M2-1", "M2-2", "M2-3", "PG-cov-1", "PG-cov-2", "PG-cov-3", "BERT2S-1",
        "lead", "wordfreq", "tfidf", "lsa", "nmf", "textrank", "lexrank", "oracle"]
    by_name = {job.name: job.args for job in jobs}
    assert by_name["M1-ens"] == ("decode", "--model", "M1-ens")
    assert by_name["PG-cov-2"] == ("decode", "--model", "PG-cov", "--train-seed", "2")
    assert by_name["lsa"] == ("extractive", "--system", "lsa")


@pytest.mark.parametrize(("requested", "threads", "jobs", "cores", "expected"), [
    (None, 1, 21, 2, 2),      # one job a core
    (None, 2, 21, 4, 2),      # two-thread jobs on 4 cores
    (None, None, 21, 8, 1),   # threads null: a job takes every core
    (None, 16, 21, 4, 1),     # wider than the machine: one at a time
    (3, 1, 21, 2, 3),         # asked for: as asked
    (None, 1, 1, 8, 1),       # never more than the jobs
    (5, 1, 2, 8, 2),
])
def test_worker_count(requested, threads, jobs, cores, expected) -> None:
    assert worker_count(requested, threads, jobs, cores=cores) == expected


def test_worker_count_obeys_a_cgroup_cpu_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container limited to 2 CPUs on a 64-core host (`docker --cpus 2`) runs 2 jobs, not 21 torch processes."""
    import sumpipe.train.pool as train_pool

    monkeypatch.setattr(train_pool.os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.setattr(train_pool, "_cgroup_cpu_quota", lambda: 2)
    assert worker_count(None, 1, 21) == 2
    monkeypatch.setattr(train_pool, "_cgroup_cpu_quota", lambda: None)
    assert worker_count(None, 1, 21) == 21


def test_a_failed_job_names_itself_and_no_job_starts_after_it(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"models": {}, "runs": {}}))
    printed: list[str] = []
    jobs = [Job("first", ("decode", "--model", "nope")), Job("second", ("extractive", "--system", "lead"))]
    with pytest.raises(SumpipeError) as error:
        run_jobs(params, jobs, workers=1, progress=False, echo=printed.append)
    assert str(error.value) == "predict first: unknown model 'nope'; params.yaml `models:` and `ensembles:` have none"
    assert printed == ["error: unknown model 'nope'; params.yaml `models:` and `ensembles:` have none"]


def test_every_failure_is_named_when_jobs_fail_side_by_side(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"models": {}, "runs": {}}))
    jobs = [Job("a", ("decode", "--model", "nope")), Job("b", ("decode", "--model", "nada"))]
    with pytest.raises(SumpipeError, match=r"^predict (a|b): unknown model .* \(also failed: (a|b)\)$"):
        run_jobs(params, jobs, workers=2, progress=False, echo=lambda line: None)


@pytest.mark.parametrize(("returncode", "lines", "expected"), [
    (1, ["decode M1/seed-1: ...", "error: models/M1: not found"], "models/M1: not found"),
    (-signal.SIGKILL, ["loading"], "its process was killed (SIGKILL)"),
    (3, ["Traceback ...", "ValueError: bad"], "exit status 3: ValueError: bad"),
    (2, [], "exit status 2"),
])
def test_a_failure_in_one_line(returncode, lines, expected) -> None:
    assert _failure(returncode, lines) == expected
