"""Training throughput of M1 (or M2, `--rarity`): tokens/s, FLOP/s (MFU on a GPU), peak memory and the loss curve.

    python bench/bench_train.py                       # default config (params.yaml) on CNN stories, CPU/GPU
    python bench/bench_train.py --paper --seconds 300 # the paper configuration (on a GPU)
    python bench/bench_train.py --data data/extracted/first400   # an extract selection instead
    python bench/bench_train.py --paper --data data/extracted/first400 --vocab data/vocab/vocab.parquet \
        --batch-sizes 32 64 128 --compile both --seconds 20 --profile 6   # the GPU sweep (docs/gpu.md figures)
    python bench/bench_train.py --family rnn          # the recurrent family: params.yaml's PG-cov
    python bench/bench_train.py --family rnn --model PG-cov --phase coverage   # its coverage phase

`--family rnn` trains a params.yaml model of that family (`--model`, default PG-cov; its own `train:`
overrides apply, e.g. one thread) in the phase named by `--phase` (default: the first, i.e. See et al.'s
main phase without coverage); tokens/s only (no FLOP formula for the recurrent family: 0 TFLOP/s).

Data: `--cnndm` (default) reads ../shared/data/cnndm/cnn_stories.jsonl.gz, preprocesses the first
`--examples` train stories and the valid ones with `sumpipe.text.preprocess.preprocess_text` and
cuts sources to the model's input length (first-N); the vocabulary is built from those train
stories. `--data DIR` reads DIR/{train,valid}.parquet and the vocabulary `--vocab`.

Training runs `sumpipe.train.engine.fit` (the same loop as the train stage) until `--seconds` of
training time have passed; the first `--warmup` updates are excluded from the rates (allocator
and kernel warm-up, and with `--compile` the compilation). `--batch-sizes` and `--compile both`
run a sweep in one process, a fresh model per setting, and end with a table. `--profile N` then
records N more updates of each setting with torch.profiler and prints the kernels that take the
most GPU time. On a GPU the script first times one large bf16 matrix product (the ceiling that
this GPU reaches in practice, next to its datasheet peak).

FLOPs (model FLOPs, padding excluded; training = 3 × forward, i.e. forward + backward):
  per source token, forward:  L·(8d² + 4·d·d_ff + 4·S·d)          encoder self-attention + FFN
                            + (L + 1)·4d²                        cross-attention / pointer K, V
  per target token, forward:  L·(12d² + 4·d·d_ff + 4·T·d + 4·S·d)  self-attn, cross-attn Q/O, FFN
                            + 2·d·V + 4d² + 4·S·d                output projection, pointer Q/O + scores
with d = d_model, L layers, S / T the batch's padded source / target lengths, V the vocabulary.
This is 2 × (weights touched per token) + the attention-score terms, i.e. the usual "6 × params"
rule with the embedding lookup excluded and the attention terms added. MFU = FLOP/s ÷ the GPU's
dense bf16 peak (H100 SXM / H200: 989 TFLOP/s, H100 PCIe: 756, A100: 312).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from sumpipe.config import ModelSpec, TrainConfig, params_from_dict  # noqa: E402
from sumpipe.models.transformer import ArchConfig, shared_arch  # noqa: E402
from sumpipe.models.batching import encode_examples  # noqa: E402
from sumpipe.models.registry import get_family  # noqa: E402
from sumpipe.models.task import SummarizationTask  # noqa: E402
from sumpipe.train.engine import fit, seed_everything, training_device  # noqa: E402
from sumpipe.train.paper import PAPER_OVERRIDES, apply_overrides  # noqa: E402
from sumpipe.vocab.vocabulary import Vocabulary  # noqa: E402

PEAK_BF16 = {"H100 PCIe": 756e12, "H100": 989e12, "H200": 989e12, "GH200": 989e12, "A100": 312e12,
             "L40S": 362e12, "A10G": 70e12, "L4": 121e12}


def forward_flops(arch: ArchConfig, vocab_size: int, n_src: int, n_tgt: int, src_len: int, tgt_len: int) -> float:
    """Forward FLOPs of one batch (formula in the module docstring)."""
    d, f, L = arch.d_model, arch.d_ff, arch.n_layers
    per_src = L * (8 * d * d + 4 * d * f + 4 * src_len * d) + (L + 1) * 4 * d * d
    per_tgt = (L * (12 * d * d + 4 * d * f + 4 * tgt_len * d + 4 * src_len * d)
               + 2 * d * vocab_size + 4 * d * d + 4 * src_len * d)
    return float(n_src * per_src + n_tgt * per_tgt)


class TokenCountingTask:
    """Any family's TrainTask, counting the tokens of every training batch (no FLOP formula)."""

    def __init__(self, task) -> None:
        self.task, self.flops, self.tokens = task, 0.0, 0

    def __getattr__(self, name):
        return getattr(self.task, name)

    def count_tokens(self, batch) -> int:
        n = self.task.count_tokens(batch)
        self.tokens += n
        return n


def family_setting(args, raw: dict, train_df, valid_df, vocab, batch_size: int):
    """(task, model, cfg) of params.yaml model `args.model` (another family), in phase `args.phase`."""
    from sumpipe.validation import from_dict
    from sumpipe.models.registry import TaskData, resolve_model

    family, spec, arch = resolve_model(params_from_dict(raw), args.model)
    if family.name != args.family:
        raise SystemExit(f"--model {args.model} is of family {family.name!r}, not {args.family!r}")
    over = {k: raw["train"][k] for k in ("device", "max_steps", "epochs", "log_every")}
    cfg = from_dict(TrainConfig, {**raw["train"], **spec.train, **over, "batch_size": batch_size},
                    f"models.{args.model}.train")
    arch = replace(arch, vocab_size=len(vocab))
    task = TokenCountingTask(family.make_task(TaskData(train_df, valid_df[:64], vocab, arch, cfg)))
    seed_everything(cfg.seed)
    model = family.build(arch, spec)
    phases = family.training_phases(arch, cfg, len(task.epoch_batches(0)))
    phase = next((p for p in phases if p.name == args.phase), None) if args.phase else phases[0]
    if phase is None:
        raise SystemExit(f"--phase {args.phase}: {args.model} has the phases {[p.name for p in phases]}")
    phase.prepare(model)
    print(f"model: {args.model} ({family.name}) {arch}; phase {phase.name}; {cfg.optimizer} lr {cfg.lr}, "
          f"batch {cfg.batch_size}, threads {cfg.threads or torch.get_num_threads()}", flush=True)
    return task, model, cfg


class CountingTask(SummarizationTask):
    """SummarizationTask that also adds up the model FLOPs of every training batch it collates."""

    def __init__(self, *args, arch: ArchConfig, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.arch, self.flops, self.tokens = arch, 0.0, 0

    def count_tokens(self, batch) -> int:
        """Called by the engine once per training batch (validation batches are not counted)."""
        n_src, n_tgt = int(batch.src_mask.sum()), int(batch.trg_mask.sum())
        self.flops += 3 * forward_flops(self.arch, self.vocab_size, n_src, n_tgt, batch.src.shape[1],
                                        batch.trg_inp.shape[1])
        self.tokens += n_src + n_tgt
        return n_src + n_tgt


def cnndm_frames(path: Path, n_train: int, max_tokens: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from sumpipe.text.preprocess import preprocess_text

    rows = {"train": [], "valid": []}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            split = row.get("split")
            if split not in rows or (split == "train" and len(rows["train"]) >= n_train):
                continue
            source = " ".join(preprocess_text(row["source"]).split()[:max_tokens])
            rows[split].append({"id": row["id"], "source": source, "reference": preprocess_text(row["reference"])})
    return pd.DataFrame(rows["train"]), pd.DataFrame(rows["valid"][:200])


def build_vocab(train: pd.DataFrame, size: int) -> Vocabulary:
    counts = Counter(w for text in pd.concat([train["source"], train["reference"]]) for w in text.split())
    return Vocabulary.from_counts(counts, size)


def peak_flops(device: torch.device) -> tuple[str, float | None]:
    if device.type != "cuda":
        return "CPU", None
    name = torch.cuda.get_device_name(device)
    for key, value in PEAK_BF16.items():  # "H100 PCIe" is listed before "H100"
        if key in name:
            return name, value
    return name, None


def matmul_ceiling(device: torch.device, n: int = 8192, repeats: int = 10) -> float:
    """Measured bf16 FLOP/s of an n×n×n matrix product on random data (after 3 warm-ups)."""
    a, b = (torch.randn(n, n, device=device, dtype=torch.bfloat16) for _ in range(2))
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize()
    return 2 * n**3 * repeats / (time.perf_counter() - started)


def transformer_setting(raw: dict, train_df, valid_df, vocab, batch_size: int, rarity: bool):
    """(task, model, cfg): a fresh M1 (M2 with `rarity`) of `raw`'s shared model shape, seeded by
    `train.seed`, and its FLOP-counting task over `train_df` (and the first 64 of `valid_df`)."""
    raw = {**raw, "train": {**raw["train"], "batch_size": batch_size}}
    params = params_from_dict(raw)
    cfg = params.train
    arch = shared_arch(params)
    encode = lambda df: encode_examples(df, vocab, arch.max_source_tokens, arch.max_summary_tokens)  # noqa: E731
    task = CountingTask(encode(train_df), encode(valid_df[:64]), batch_size=cfg.batch_size, seed=cfg.seed,
                        label_smoothing=cfg.label_smoothing, vocab_size=len(vocab), arch=arch)
    seed_everything(cfg.seed)
    spec = ModelSpec(input="first400", rarity=rarity)
    model = get_family("transformer").build(replace(arch, vocab_size=len(vocab)), spec)
    return task, model, cfg


def run_setting(args, raw: dict, train_df, valid_df, vocab, batch_size: int, compiled: bool) -> dict:
    """Train one fresh model for `args.seconds` (after warm-up) and return its figures."""
    if args.family != "transformer":
        task, model, cfg = family_setting(args, raw, train_df, valid_df, vocab, batch_size)
    else:
        task, model, cfg = transformer_setting(raw, train_df, valid_df, vocab, batch_size, args.rarity)
    # Time ends a benchmark run, not early stopping: a fast machine would otherwise finish a tiny run's
    # epochs before its timed window closes (and there would be no window to measure).
    cfg = replace(cfg, patience=None)
    device = training_device(cfg.device)
    marks: dict[str, float] = {}
    profiler: list = []

    def stop(position) -> bool:
        if position.step == args.warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            marks.update(t=time.perf_counter(), flops=task.flops, tokens=task.tokens, step=position.step)
            return False
        if "end" not in marks:
            if position.step < args.warmup or time.perf_counter() - marks["t"] < args.seconds:
                return False
            if device.type == "cuda":
                torch.cuda.synchronize()
            marks.update(end=time.perf_counter(), flops=task.flops - marks["flops"],
                         tokens=task.tokens - marks["tokens"], step=position.step - marks["step"],
                         last=position.step)
            if device.type == "cuda":
                marks["memory"] = torch.cuda.max_memory_allocated() / 2**30
            if not args.profile:
                return True
            activities = [torch.profiler.ProfilerActivity.CPU]
            if device.type == "cuda":
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            profiler.append(torch.profiler.profile(activities=activities))
            profiler[0].__enter__()
            return False
        if position.step - marks["last"] < args.profile:
            return False
        if device.type == "cuda":
            torch.cuda.synchronize()
        profiler[0].__exit__(None, None, None)
        return True

    started = time.perf_counter()
    result = fit(model, task, cfg, None, should_stop=stop, progress=False, compile_model=compiled)
    if "end" not in marks:
        raise SystemExit(f"error: training ended after {result.log_rows[-1]['step'] if result.log_rows else 0} "
                         f"updates, before the timed window of {args.seconds} s (after {args.warmup} warm-up "
                         "updates) closed: raise the epochs or lower --seconds")
    elapsed = marks["end"] - marks["t"]
    name, peak = peak_flops(device)
    flops_per_s = marks["flops"] / elapsed
    row = {"batch": batch_size, "compile": compiled, "updates": int(marks["step"]), "seconds": elapsed,
           "ms_per_update": elapsed / max(marks["step"], 1) * 1000, "tokens_per_s": marks["tokens"] / elapsed,
           "tflops": flops_per_s / 1e12, "mfu": flops_per_s / peak if peak else None,
           "memory_gib": marks.get("memory"), "warmup_seconds": marks["t"] - started,
           "final_loss": result.log_rows[-1]["loss"] if result.log_rows else None,
           "parameters": sum(p.numel() for p in model.parameters()), "gpu": name, "peak": peak}
    if profiler:
        sort = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
        table = profiler[0].key_averages().table(sort_by=sort, row_limit=25, max_name_column_width=70)
        row["profile"] = table
    del model, task
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", action="store_true", help="the paper configuration (d 256, 8 layers, AdaGrad)")
    ap.add_argument("--seconds", type=float, default=60.0, help="training-time budget per setting")
    ap.add_argument("--warmup", type=int, default=10, help="updates left out of the rates")
    ap.add_argument("--data", type=Path, help="an extract selection dir with train/valid.parquet")
    ap.add_argument("--vocab", type=Path, default=REPO / "data/vocab/vocab.parquet")
    ap.add_argument("--cnndm", type=Path, default=REPO.parent / "shared/data/cnndm/cnn_stories.jsonl.gz")
    ap.add_argument("--examples", type=int, default=2000, help="CNN train stories to use")
    ap.add_argument("--batch-sizes", type=int, nargs="+", help="override train.batch_size (a sweep)")
    ap.add_argument("--compile", choices=["off", "on", "both"], default="off",
                    help="torch.compile the training forward + loss (engine's compile_model)")
    ap.add_argument("--profile", type=int, default=0, help="profile N updates after each timed window")
    ap.add_argument("--log-every", type=int, default=50, help="train.log_every (each log syncs the GPU)")
    ap.add_argument("--threads", type=int, help="override train.threads (CPU)")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--json", type=Path, help="also write the rows (and profiles) to this JSON file")
    ap.add_argument("-p", "--params", type=Path, default=REPO / "params.yaml")
    ap.add_argument("--family", choices=["transformer", "rnn"], default="transformer")
    ap.add_argument("--rarity", action="store_true", help="--family transformer: M2 (the rarity term) instead of M1")
    ap.add_argument("--model", default="PG-cov", help="--family rnn: the params.yaml model to train")
    ap.add_argument("--phase", help="--family rnn: the training phase (default: the first)")
    args = ap.parse_args()

    raw = yaml.safe_load(args.params.read_text())
    if args.paper:
        raw = apply_overrides(raw, PAPER_OVERRIDES)
    train_over = {"device": args.device, "max_steps": None, "epochs": 1000, "log_every": args.log_every}
    if args.threads:
        train_over["threads"] = args.threads
    raw["train"] = {**raw.get("train", {}), **train_over}
    params = params_from_dict(raw)
    arch = shared_arch(params)
    if args.family != "transformer":
        from sumpipe.models.registry import resolve_model

        arch = resolve_model(params, args.model)[2]

    started = time.perf_counter()
    if args.data:
        train_df, valid_df = (pd.read_parquet(args.data / f"{s}.parquet") for s in ("train", "valid"))
        vocab = Vocabulary.load(args.vocab, size=arch.vocab_size)
        data_name = f"{args.data} ({len(train_df)} train examples)"
    else:
        train_df, valid_df = cnndm_frames(args.cnndm, args.examples, arch.max_source_tokens)
        vocab = build_vocab(train_df, arch.vocab_size)
        data_name = f"{args.cnndm.name} ({len(train_df)} train stories, first {arch.max_source_tokens} tokens)"
    device = training_device(params.train.device)
    name, peak = peak_flops(device)
    print(f"data: {data_name}; prep {time.perf_counter() - started:.1f} s", flush=True)
    if args.family == "transformer":
        print(f"model: M1 d_model {arch.d_model}, d_ff {arch.d_ff}, {arch.n_layers} layers, {arch.n_heads} heads, "
              f"V {len(vocab)}; {params.train.optimizer} lr {params.train.lr}; device {device} ({name}); "
              f"torch {torch.__version__}, threads {params.train.threads or torch.get_num_threads()}", flush=True)
    if device.type == "cuda":
        print(f"bf16 8192^3 matmul: {matmul_ceiling(device) / 1e12:.0f} TFLOP/s measured; datasheet dense bf16 "
              f"peak {peak / 1e12 if peak else float('nan'):.0f} TFLOP/s (MFU below is against the datasheet)",
              flush=True)

    own = params.models[args.model].train if args.family != "transformer" else {}
    sizes = args.batch_sizes or [own.get("batch_size", params.train.batch_size)]
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.compile]
    rows = []
    for compiled in modes:
        for batch_size in sizes:
            try:
                row = run_setting(args, raw, train_df, valid_df, vocab, batch_size, compiled)
            except Exception as exc:  # one failing setting (e.g. out of memory) must not end the sweep
                row = {"batch": batch_size, "compile": compiled, "error": f"{type(exc).__name__}: {exc}"[:300]}
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            rows.append(row)
            print(format_row(row), flush=True)
            if row.get("profile"):
                print(row["profile"], flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    trained = args.model if args.family != "transformer" else "M2" if args.rarity else "M1"
    print(f"\n{trained} training throughput on {name} (tokens = source + target, padding excluded; "
          f"MFU vs {peak / 1e12 if peak else float('nan'):.0f} TFLOP/s dense bf16):")
    for row in rows:
        print(format_row(row))


def format_row(row: dict) -> str:
    head = f"  batch {row['batch']:4d}  compile {'on ' if row['compile'] else 'off'}"
    if "error" in row:
        return f"{head}  error: {row['error']}"
    mfu = f"{row['mfu'] * 100:5.1f}%" if row.get("mfu") is not None else "   n/a"
    memory = f"{row['memory_gib']:6.2f} GiB" if row.get("memory_gib") is not None else "       n/a"
    return (f"{head}  {row['tokens_per_s']:>11,.0f} tok/s  {row['ms_per_update']:7.1f} ms/update  "
            f"{row['tflops']:7.2f} TFLOP/s  MFU {mfu}  peak mem {memory}  "
            f"({row['updates']} updates in {row['seconds']:.1f} s after {row['warmup_seconds']:.0f} s warm-up; "
            f"last logged loss {row['final_loss'] if row['final_loss'] is None else round(row['final_loss'], 3)})")


if __name__ == "__main__":
    main()
