"""The file system refusing a stage's writes: a full disk and a read-only output folder.

- Full disk: the stage runs in a child process whose file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored)
  makes every write past a few hundred bytes fail with EFBIG inside the real writers (Arrow's C++,
  safetensors' Rust, torch.save), exactly where a full disk fails them.
- Read-only folder: chmod a-w when not root; as root (who may write anyway) creating a file in that
  folder is made to fail with EACCES, as it would for anyone else.

Either way the stage must end in one `error:` line naming the artifact, and the previous version of
the artifact must be intact (same bytes), with no temporary file left beside it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.reliability.harness import check, run_inprocess, sumpipe_argv

FSIZE_LIMIT = 512  # bytes: below every artifact checked here

# stage -> (argv, the artifact that must survive)
WRITES = {
    "vocab (Parquet)": (["vocab"], "data/vocab/vocab.parquet"),
    "extract (streamed Parquet)": (["extract"], "data/extracted/first400/train.parquet"),
    "train (safetensors)": (["train", "--model", "M1"], "models/M1/seed-1/model.safetensors"),
    "train afresh (torch.save checkpoint)": (["train", "--model", "M1", "--no-resume"],
                                             "models/M1/seed-1/model.safetensors"),
    "decode stage (Parquet)": (["decode", "--model", "M1"], "predictions/M1/seed-1/test.parquet"),
}


# A model folder is written as one unit beside it (sumpipe.io.atomic_folder): its parent is the folder
# written into, and it is tested before training starts.
WRITTEN_IN = {"models/M1/seed-1/model.safetensors": "models/M1"}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy(pipeline: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(pipeline, root, symlinks=True)
    return root


def _no_temporaries(root: Path) -> None:
    left = [str(p.relative_to(root)) for p in root.rglob(".*.tmp")]
    assert left == [], f"temporary files left behind: {left}"


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "artifact"), [pytest.param(*v, id=k) for k, v in WRITES.items()])
def test_full_disk_keeps_the_previous_artifact(argv, artifact, pipeline, tmp_path) -> None:
    root = _copy(pipeline, tmp_path)
    before = _digest(root / artifact)
    assert (root / artifact).stat().st_size > FSIZE_LIMIT
    import subprocess

    from tests.reliability.harness import classify, subprocess_env

    done = subprocess.run(sumpipe_argv(*argv), cwd=root, env=subprocess_env(), capture_output=True, text=True,
                          timeout=300, preexec_fn=_limit_file_size)
    result = classify(done.returncode, done.stdout, done.stderr)
    check(result, "error: cannot write")
    assert _digest(root / artifact) == before
    _no_temporaries(root)


@pytest.mark.parametrize(("argv", "artifact"), [pytest.param(*v, id=k) for k, v in WRITES.items()])
def test_read_only_output_folder(argv, artifact, pipeline, tmp_path, monkeypatch, capsys) -> None:
    root = _copy(pipeline, tmp_path)
    folder = root / WRITTEN_IN.get(artifact, str(Path(artifact).parent))
    before = _digest(root / artifact)
    if os.geteuid() == 0:
        real_mkstemp = tempfile.mkstemp

        def refusing_mkstemp(*args, dir=None, **kwargs):  # noqa: A002 - tempfile's own name
            if dir is not None and Path(dir).resolve() == folder.resolve():
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(Path(dir) / "x"))
            return real_mkstemp(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", refusing_mkstemp)
    else:
        folder.chmod(0o555)
    try:
        result = run_inprocess(argv, root, monkeypatch, capsys)
    finally:
        folder.chmod(0o755)
    check(result, f"error: {folder.relative_to(root)}")
    assert "cannot write (Permission denied)" in result.error_line
    assert "epoch" not in result.err, "training ran before the output folder was tested"
    assert _digest(root / artifact) == before
    _no_temporaries(root)


# --------------------------------------------------------------------------------------------
# Two trainers on one model folder: the second is refused at once, before training
# --------------------------------------------------------------------------------------------
def test_second_trainer_on_one_model_is_refused(pipeline, tmp_path, monkeypatch, capsys) -> None:
    from filelock import FileLock

    root = _copy(pipeline, tmp_path)
    before = _digest(root / "models/M1/seed-1/model.safetensors")
    with FileLock(str(root / "models/M1/.seed-1.train.lock"), timeout=0):  # the first trainer, still training
        result = run_inprocess(["train", "--model", "M1", "--no-resume"], root, monkeypatch, capsys)
    check(result, "error: models/M1/seed-1: another `sumpipe train` is training this model")
    assert "epoch" not in result.err
    assert _digest(root / "models/M1/seed-1/model.safetensors") == before
