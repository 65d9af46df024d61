"""Training throughput of every family: tokens/s, FLOP/s against a ceiling (MFU), peak memory, the loss curve.

    python bench/bench_train.py                       # default config (params.yaml) on CNN stories, CPU/GPU
    python bench/bench_train.py --paper --seconds 300 # the paper configuration (on a GPU)
    python bench/bench_train.py --data data/extracted/first400   # an extract selection instead
    python bench/bench_train.py --paper --data data/extracted/first400 --vocab data/vocab/vocab.parquet \
        --batch-sizes 32 64 128 --compile both --seconds 20 --profile 6   # the GPU sweep (docs/gpu.md figures)
    python bench/bench_train.py --rarity              # M2 instead of M1
    python bench/bench_train.py --family rnn          # the recurrent family: params.yaml's PG-cov
    python bench/bench_train.py --family rnn --model PG-cov --phase coverage   # its coverage phase
    python bench/bench_train.py --family bert2stage --data data/extracted/first40   # BERT2S (needs data/subword)
    python bench/bench_train.py --family pretrain --data data/processed   # the encoder's masked-LM pre-training
    python bench/bench_train.py --numerics native     # the kernels of train.numerics: native | portable
    python bench/bench_train.py --numerics native --cpu-bf16 products   # bf16 autocast, attention in fp32

`--family rnn` / `bert2stage` trains a params.yaml model of that family (`--model`, default its first; its
own `train:` overrides apply, e.g. one thread) in the phase named by `--phase` (default: the first, i.e.
See et al.'s main phase without coverage). BERT2S's encoder starts from random weights (the pretrain
stage's encoder need not exist; the speed does not depend on the weights) and reads the subword model of
`--subword` (default params.yaml's paths.subword). `--family pretrain` is the pretrain stage's masked-LM
training of the encoder (`sumpipe.train.mlm`: `pretrain.encoder`, `pretrain.train`, sequences of
`pretrain.max_tokens` pieces) on the sources of `--data` (the pretrain stage reads data/processed).

Numerics: `--numerics` (default params.yaml's `train.numerics`) is pinned with `sumpipe.numerics.pin_numerics`
before torch is imported (this module imports torch only inside its functions), and every row says which
mode ran; `portable` runs MKL's COMPATIBLE branch, ATen's AVX2 and oneDNN's SSE4.1 kernels, so its ceiling
below is lower than native's and each mode's MFU is against its own.
`--cpu-bf16 all | products` runs the engine's steps under bfloat16 autocast on the CPU (the stage autocasts on
CUDA only); `products` keeps the models' attention (SDPA) in float32, whose CPU bfloat16 backward is slow.

Data: `--cnndm` (default) reads ../shared/data/cnndm/cnn_stories.jsonl.gz, preprocesses the first
`--examples` train stories and the valid ones with `sumpipe.text.preprocess.preprocess_text` and
cuts sources to the model's input length (first-N); the vocabulary is built from those train
stories. `--data DIR` reads DIR/{train,valid}.parquet and the vocabulary `--vocab` (the subword
families: `--subword`).

Training runs `sumpipe.train.engine.fit` (the same loop as the train stage) until `--seconds` of
training time have passed; the first `--warmup` updates are excluded from the rates (allocator
and kernel warm-up, and with `--compile` the compilation). `--batch-sizes` and `--compile both`
run a sweep in one process, a fresh model per setting, and end with a table. `--profile N` then
records N more updates of each setting with torch.profiler and prints the kernels that take the
most GPU time. On a GPU the script first times one large bf16 matrix product (the ceiling that
this GPU reaches in practice, next to its datasheet peak).

The CPU ceiling (a roofline's compute roof). On a CPU each setting first times the float32 product the
models run (`sumpipe.models.linear`, OpenBLAS) at the
model's own shapes, on the setting's thread count (`train.threads`, or `--threads`) and numerics, with B and
S a typical training batch's rows and padded source length, N_tgt its target tokens (padding excluded);
typical: the median by B·S of the first 16 batches of the first epoch (the first alone may be a bucket of
short sequences: pre-training's windows end in short tails):
  transformer, BERT2S, pretrain:  (B·S × d)·(d × d_ff)   the feed-forward
                                  (B·S × d)·(d × d)      a projection (Q, K, V, O)
                                  (N_tgt × d)·(d × V)    the output projection (pretrain: N_tgt = masked pieces)
                                  (d × B·S)·(B·S × d)    a weight gradient
  PG-cov (rnn):                   (B·S × E)·(E × gH)     the encoder's input-to-gates product (g = 4 LSTM, 3 GRU)
                                  (B × H)·(H × gH)       one recurrent step
                                  (N_tgt × H)·(H × V)    the output projection
                                  (gH × B·S)·(B·S × E)   a weight gradient
each as the best rate of repeated blocks over `--ceiling-seconds` (the best block: other load on the machine
only ever slows a block down). The ceiling is the best shape's rate, not a FLOP-weighted mean: it is the rate
this CPU's matrix unit reaches at the model's sizes, the same kind of figure as a GPU's peak, so MFU =
FLOP/s ÷ ceiling is how far the whole update (element-wise work, small products, the optimizer, Python)
is from running every FLOP at that rate. A mean would depend on which shapes are listed and how they are
weighted (none of them runs alone in an update), and would move the ceiling toward the model's own
inefficiency, which is what MFU is there to show. Where the CPU has native bf16 (`amx_bf16` or
`avx512_bf16` in /proc/cpuinfo) the same shapes are also timed in bfloat16, for reference (CPU training
runs float32, so MFU stays against the float32 ceiling); otherwise the script says "bf16: no native support".
`--no-ceiling` skips the measurement (no CPU MFU then).

FLOPs (model FLOPs, padding excluded; training = 3 × forward, i.e. forward + backward; the matrix products
only: element-wise work, softmaxes, layer norms and embedding lookups are left out):
  M1 / M2 (`forward_flops`; d = d_model, L layers, S / T the batch's padded source / target lengths):
  per source token:  L·(8d² + 4·d·d_ff + 4·S·d)          encoder self-attention + FFN
                   + (L + 1)·4d²                        cross-attention / pointer K, V
  per target token:  L·(12d² + 4·d·d_ff + 4·T·d + 4·S·d)  self-attn, cross-attn Q/O, FFN
                   + 2·d·V + 4d² + 4·S·d + 6d           output projection, pointer Q/O + scores, p_gen
  This is 2 × (weights touched per token) + the attention-score terms, i.e. the usual "6 × params"
  rule with the embedding lookup excluded and the attention terms added (M2's rarity term adds a
  head dimension's worth, left out).
  PG-cov (`rnn_forward_flops`; E embedding, H hidden per direction, A = attn_dim or H, g gates per cell,
  the encoder's layer l reading I_1 = E, I_l = 2H; S the padded source length):
  per source token:  Σ_l 2 directions · 2g·H·(I_l + H)     bidirectional encoder (input + recurrent products)
                   + 4·H·A                                 W_h h_i (attention keys, 2H → A)
  per target token:  2g·H·(E + H)                          decoder cell
                   + 2·H·A + 2·S·A + 4·S·H                  W_s s_t, vᵀ tanh(·) over S, context Σ a_i h_i (2H)
                   + 2·S·A                                  coverage w_c c_i (a model with coverage: every phase)
                   + 6H² + 2·H·V + 2·(3H + E)               V[s_t, h*_t], V'(·), p_gen
  (the bridge's 4H² or 8H² per document is left out; without attention the attention terms go and V[s_t]
  is 2H²; the decoder and the attention run over the padded T and S, counted per real token as everywhere;
  before the coverage phase w_c runs on zero coverage, which the model computes all the same).
  Every formula matches torch.utils.flop_counter's count of a forward without padding (tests/bench/), but for
  the rnn's bridge and its LSTM cells (a CPU kernel the counter cannot see into; a GRU's it counts).
  BERT2S (`bert2stage_forward_flops`; d, d_ff, L_e encoder layers of pretrain.encoder, L_d decoder layers of
  each stage, S / T padded source / draft lengths; stage 2 masks K positions of each summary, K =
  refine_positions (all L summary words with null), each variant an (L + 2)-long sequence, R = L + 2):
  per source token:  L_e·(8d² + 4·d·d_ff + 4·S·d)                  the encoder
                   + 8·L_d·d² + 4d²                                both stages' cross-attention K, V; W_c h (×2)
  per draft target:  L_d·(12d² + 4·d·d_ff + 4·T·d + 4·S·d)         the draft decoder, as the transformer's
                   + 2·d·V + 4·S·d + 4d                            tied output, copy scores + context, gate
  per refine piece:  L_e·(8d² + 4·d·d_ff + 4·R·d)                  the encoder over the masked draft
                   + (L_d − 1)·(12d² + 4·d·d_ff + 4·R·d + 4·S·d)   refine layers but the last
                   + 4d²                                           the last layer's self-attention K, V
  per variant:       8d² + 4·d·d_ff + 4·R·d + 8·S·d + 2·d·V + 4d   the last layer at the masked position + output
  (refine pieces: the real pieces of the variants whose masked position is a word, <s> and </s> included).
  pretrain (`mlm_forward_flops`; L layers, S the padded sequence length; the head only at the masked pieces):
  per piece:         L·(8d² + 4·d·d_ff + 4·S·d)
  per masked piece:  2d² + 2·d·V                                    the head's dense layer, the tied projection
MFU = FLOP/s ÷ the CPU ceiling above, or on a GPU ÷ its dense bf16 datasheet peak (H100 SXM / H200:
989 TFLOP/s, H100 PCIe: 756, A100: 312).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

# none of these imports torch: the numerics must be pinned before it loads
from sumpipe.config import ModelSpec, TrainConfig, params_from_dict  # noqa: E402
from sumpipe.errors import SumpipeError  # noqa: E402
from sumpipe.numerics import MODES, PORTABLE, pin_numerics  # noqa: E402
from sumpipe.train.paper import PAPER_OVERRIDES, apply_overrides  # noqa: E402

if TYPE_CHECKING:
    import pandas as pd
    import torch

PEAK_BF16 = {"H100 PCIe": 756e12, "H100": 989e12, "H200": 989e12, "GH200": 989e12, "A100": 312e12,
             "L40S": 362e12, "A10G": 70e12, "L4": 121e12}
FAMILIES = ("transformer", "rnn", "bert2stage", "pretrain")
TYPICAL_OF = 16  # the ceiling's shapes: the median of this many first training batches
BF16_FLAGS = ("amx_bf16", "avx512_bf16")  # /proc/cpuinfo flags of a CPU with bf16 arithmetic in hardware

Shape = tuple[str, int, int, int]  # (label, m, k, n): an (m × k)·(k × n) product, 2·m·k·n FLOPs


# --------------------------------------------------------------------------------------------
# FLOP formulas (module docstring): forward FLOPs of one batch, from its token counts
# --------------------------------------------------------------------------------------------
def forward_flops(arch: Any, vocab_size: int, n_src: int, n_tgt: int, src_len: int, tgt_len: int) -> float:
    """M1 / M2: forward FLOPs of one batch; `arch` has d_model, d_ff, n_layers."""
    d, f, L = arch.d_model, arch.d_ff, arch.n_layers
    per_src = L * (8 * d * d + 4 * d * f + 4 * src_len * d) + (L + 1) * 4 * d * d
    per_tgt = (L * (12 * d * d + 4 * d * f + 4 * tgt_len * d + 4 * src_len * d)
               + 2 * d * vocab_size + 4 * d * d + 4 * src_len * d + 6 * d)
    return float(n_src * per_src + n_tgt * per_tgt)


def rnn_forward_flops(arch: Any, vocab_size: int, n_src: int, n_tgt: int, src_len: int) -> float:
    """PG-cov (the rnn family): forward FLOPs of one batch; `arch` has cell, embedding_dim, hidden_dim,
    layers, attention, attn_dim, pointer, coverage (a model with w_c runs it in every phase: on zeros
    before the coverage phase)."""
    g = 4 if arch.cell == "lstm" else 3
    e, h = arch.embedding_dim, arch.hidden_dim
    attention = arch.attention != "none"
    a = arch.attn_dim or h
    per_src = sum(2 * 2 * g * h * ((e if layer == 0 else 2 * h) + h) for layer in range(arch.layers))
    per_tgt = 2 * g * h * (e + h) + 2 * (h + (2 * h if attention else 0)) * h + 2 * h * vocab_size
    if attention:
        per_src += 2 * (2 * h) * a
        per_tgt += 2 * h * a + 2 * src_len * a + 2 * src_len * (2 * h)
        if arch.coverage:
            per_tgt += 2 * src_len * a
    if arch.pointer:
        per_tgt += 2 * (2 * h + h + e)
    return float(n_src * per_src + n_tgt * per_tgt)


def bert2stage_forward_flops(encoder: Any, n_decoder_layers: int, vocab_size: int, n_src: int, n_tgt: int,
                             src_len: int, tgt_len: int, n_variants: int, n_refine: int, refine_len: int) -> float:
    """BERT2S: forward FLOPs of one batch; `encoder` has d_model, d_ff, n_layers (pretrain.encoder).
    n_variants: stage 2's masked variants whose position is a word; n_refine: their real pieces;
    refine_len: the variants' padded length (L + 2)."""
    d, f, le, ld = encoder.d_model, encoder.d_ff, encoder.n_layers, n_decoder_layers
    s, t, r = src_len, tgt_len, refine_len
    per_src = le * (8 * d * d + 4 * d * f + 4 * s * d) + 8 * ld * d * d + 4 * d * d
    per_tgt = ld * (12 * d * d + 4 * d * f + 4 * t * d + 4 * s * d) + 2 * d * vocab_size + 4 * s * d + 4 * d
    per_refine = (le * (8 * d * d + 4 * d * f + 4 * r * d) + (ld - 1) * (12 * d * d + 4 * d * f + 4 * r * d
                                                                         + 4 * s * d) + 4 * d * d)
    per_variant = 8 * d * d + 4 * d * f + 4 * r * d + 8 * s * d + 2 * d * vocab_size + 4 * d
    return float(n_src * per_src + n_tgt * per_tgt + n_refine * per_refine + n_variants * per_variant)


def mlm_forward_flops(encoder: Any, vocab_size: int, n_tokens: int, seq_len: int, n_targets: int) -> float:
    """The encoder's masked-LM pre-training: forward FLOPs of one batch (the head at the targets only)."""
    d, f, L = encoder.d_model, encoder.d_ff, encoder.n_layers
    per_token = L * (8 * d * d + 4 * d * f + 4 * seq_len * d)
    return float(n_tokens * per_token + n_targets * (2 * d * d + 2 * d * vocab_size))


def refine_counts(n_words: list[int], refine_positions: int | None) -> tuple[int, int, int]:
    """BERT2S's stage 2 in training: (variants whose masked position is a word, their real pieces, the
    variants' padded length) for summaries of `n_words` words (the batch's padded length: their max)."""
    length = max(n_words, default=0)
    k = length if refine_positions is None or refine_positions >= length else refine_positions
    variants = [min(k, n) for n in n_words]
    return sum(variants), sum(v * (n + 2) for v, n in zip(variants, n_words)), length + 2


def ceiling_shapes(family: str, *, rows: int, src_len: int, n_tgt: int, vocab_size: int, d: int, d_ff: int = 0,
                   embedding_dim: int = 0, gates: int = 0) -> list[Shape]:
    """The (m, k, n) matrix products the CPU ceiling is timed at (module docstring): `rows` B and `src_len` S
    of a typical training batch, `n_tgt` its target tokens; the rnn family's d is H, `gates` g·H."""
    bs = rows * src_len
    if family == "rnn":
        return [("B·S×E · E×gH", bs, embedding_dim, gates), ("B×H · H×gH (a step)", rows, d, gates),
                ("N_tgt×H · H×V", n_tgt, d, vocab_size), ("gH×B·S · B·S×E (w-grad)", gates, bs, embedding_dim)]
    return [("B·S×d · d×d_ff", bs, d, d_ff), ("B·S×d · d×d", bs, d, d), ("N_tgt×d · d×V", n_tgt, d, vocab_size),
            ("d×B·S · B·S×d (w-grad)", d, bs, d)]


# --------------------------------------------------------------------------------------------
# The CPU: its bf16 support, the numerics mode, the measured ceiling
# --------------------------------------------------------------------------------------------
def cpu_bf16_support(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The first of BF16_FLAGS the CPU has (its /proc/cpuinfo flags), or None (none, or no /proc/cpuinfo)."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    flags = next((set(line.split(":", 1)[1].split()) for line in text.splitlines() if line.startswith("flags")),
                 set())
    return next((flag for flag in BF16_FLAGS if flag in flags), None)


def numerics_mode(environ: Mapping[str, str] = os.environ) -> str:
    """The numerics torch loaded with, read back from the environment `pin_numerics` sets: `portable`
    (every variable of sumpipe.numerics.PORTABLE), `native` (none of them), else `native+` the ones set."""
    if all(environ.get(name) == value for name, value in PORTABLE.items()):
        return "portable"
    set_ = [f"{name}={environ[name]}" for name in PORTABLE if name in environ]
    return "native" if not set_ else f"native+{','.join(set_)}"


def matmul_rate(m: int, k: int, n: int, dtype: torch.dtype, seconds: float) -> float:
    """FLOP/s of (m × k)·(k × n) as the models multiply (float32: `sumpipe.models.linear`; bfloat16: `torch.mm`
    into a preallocated output): the best of blocks of repeats (each
    block about a tenth of `seconds`, for `seconds` in all, after 2 warm-ups). Random data from its own
    generator: the global one, which training draws from, is left as it was."""
    import torch

    from sumpipe.models.linear import linear

    generator = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=generator).to(dtype)
    b = torch.randn(k, n, generator=generator).to(dtype)
    out = torch.empty(m, n, dtype=dtype)
    weight = b.t().contiguous()  # (n, k), as a Linear layer holds it

    def product() -> None:  # float32: the models' own path (sumpipe.models.linear), else torch.mm
        if dtype == torch.float32:
            linear(a, weight)
        else:
            torch.mm(a, b, out=out)

    for _ in range(2):
        product()
    flops, best, repeats = 2.0 * m * k * n, 0.0, 1
    deadline = time.perf_counter() + seconds
    while True:
        started = time.perf_counter()
        for _ in range(repeats):
            product()
        elapsed = max(time.perf_counter() - started, 1e-9)
        best = max(best, flops * repeats / elapsed)
        if time.perf_counter() >= deadline:
            return best
        if elapsed < seconds / 10:
            repeats *= 2


def cpu_ceiling(shapes: list[Shape], threads: int | None, seconds: float) -> dict[str, Any]:
    """The float32 ceiling at `shapes` on `threads` (None: torch's count), and bfloat16 where the CPU has it
    natively: {"threads", "float32": {label: GFLOP/s}, "ceiling_gflops" (the best float32 shape),
    "bf16_support" (the flag or None), "bfloat16": {label: GFLOP/s} or None}."""
    import torch

    from sumpipe.device import torch_threads

    support = cpu_bf16_support()
    with torch_threads(threads):
        rates = {dtype: {label: matmul_rate(m, k, n, dtype, seconds) / 1e9 for label, m, k, n in shapes}
                 for dtype in ([torch.float32, torch.bfloat16] if support else [torch.float32])}
        used = torch.get_num_threads()
    f32 = rates[torch.float32]
    return {"threads": used, "float32": f32, "ceiling_gflops": max(f32.values()), "bf16_support": support,
            "bfloat16": rates.get(torch.bfloat16), "shapes": {label: [m, k, n] for label, m, k, n in shapes}}


def format_ceiling(ceiling: dict[str, Any]) -> str:
    shapes = ceiling["shapes"]
    lines = [f"CPU ceiling: the models' float32 product at their shapes, {ceiling['threads']} thread(s), numerics "
             f"{numerics_mode()}:"]
    for label, (m, k, n) in shapes.items():
        bf16 = ceiling["bfloat16"]
        other = f"   bf16 {bf16[label]:8.1f} GFLOP/s" if bf16 else ""
        lines.append(f"  {label:<26} {m:>6}×{k:<5}·{k:>5}×{n:<6} fp32 {ceiling['float32'][label]:8.1f} GFLOP/s{other}")
    best = max(ceiling["float32"], key=ceiling["float32"].get)
    lines.append(f"  ceiling (the best fp32 shape, {best}): {ceiling['ceiling_gflops']:.1f} GFLOP/s")
    if ceiling["bfloat16"]:
        capped = "; portable caps oneDNN at SSE4.1, not the bf16 kernels" if numerics_mode() == "portable" else ""
        lines.append(f"  bf16 ({ceiling['bf16_support']}): best {max(ceiling['bfloat16'].values()):.1f} GFLOP/s "
                     f"(for reference: CPU training runs float32{capped})")
    else:
        lines.append("  bf16: no native support")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The settings: a fresh model of each family and its counting task
# --------------------------------------------------------------------------------------------
class CountingTask:
    """Any family's TrainTask, adding up the tokens and model FLOPs (3 × `forward_of(batch)`) of every
    training batch (the engine calls `count_tokens` once per training batch, validation ones not), with
    what the ceiling is measured at (`shapes_of(typical_batch())`) and the model's `arch` (for callers)."""

    def __init__(self, task: Any, forward_of: Callable[[Any], float], shapes_of: Callable[[Any], list[Shape]],
                 family: str, name: str, arch: Any) -> None:
        self.task, self.forward_of, self.shapes_of = task, forward_of, shapes_of
        self.family, self.name, self.arch, self.flops, self.tokens = family, name, arch, 0.0, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.task, name)

    def count_tokens(self, batch: Any) -> int:
        n = self.task.count_tokens(batch)
        self.tokens += n
        self.flops += 3 * self.forward_of(batch)
        return n

    def typical_batch(self, first: int = TYPICAL_OF) -> Any:
        """The median by rows × padded length of the first `first` training batches (the very first may be a
        bucket of short sequences), collated as training will; torch's global generator, which MLM's masking
        draws from, restored after."""
        import torch

        state = torch.random.get_rng_state()
        try:
            batches = [self.task.collate(indices, "train") for indices in self.task.epoch_batches(0)[:first]]
        finally:
            torch.random.set_rng_state(state)
        return median_batch(batches)


def median_batch(batches: list[Any]) -> Any:
    """The median of `batches` by rows × padded length of their first tensor field (the lower median)."""
    def size(batch: Any) -> int:
        first = batch.src if hasattr(batch, "src") else batch.inputs
        return int(first.shape[0] * first.shape[1])

    return sorted(batches, key=size)[(len(batches) - 1) // 2]


def summary_shapes(batch: Any, d: int, d_ff: int, vocab_size: int) -> list[Shape]:
    """The transformer-like families' ceiling shapes of a summarization batch."""
    return ceiling_shapes("transformer", rows=batch.src.shape[0], src_len=batch.src.shape[1],
                          n_tgt=int(batch.trg_mask.sum()), vocab_size=vocab_size, d=d, d_ff=d_ff)


def transformer_setting(raw: dict, train_df, valid_df, vocab, batch_size: int, rarity: bool,
                        seed: int | None = None):
    """(task, model, cfg): a fresh M1 (M2 with `rarity`) of `raw`'s shared model shape, seeded by
    `train.seed` (or `seed`: the train stage's run of that seed), and its FLOP-counting task over `train_df` (and
    the first 64 of `valid_df`)."""
    from sumpipe.models.batching import encode_examples
    from sumpipe.models.registry import get_family
    from sumpipe.models.task import SummarizationTask
    from sumpipe.models.transformer import shared_arch
    from sumpipe.train.engine import seed_everything

    raw = {**raw, "train": {**raw["train"], "batch_size": batch_size}}
    params = params_from_dict(raw)
    cfg = params.train if seed is None else params.train.for_seed(seed)
    arch = shared_arch(params)
    encode = lambda df: encode_examples(df, vocab, arch.max_source_tokens, arch.max_summary_tokens)  # noqa: E731
    inner = SummarizationTask(encode(train_df), encode(valid_df[:64]), batch_size=cfg.batch_size, seed=cfg.seed,
                              label_smoothing=cfg.label_smoothing, vocab_size=len(vocab))
    v = len(vocab)

    def forward_of(batch) -> float:
        return forward_flops(arch, v, int(batch.src_mask.sum()), int(batch.trg_mask.sum()), batch.src.shape[1],
                             batch.trg_inp.shape[1])

    task = CountingTask(inner, forward_of, lambda batch: summary_shapes(batch, arch.d_model, arch.d_ff, v),
                        "transformer", "M2" if rarity else "M1", arch)
    seed_everything(cfg.seed)
    spec = ModelSpec(input="first400", rarity=rarity)
    model = get_family("transformer").build(replace(arch, vocab_size=v), spec)
    return task, model, cfg


def family_counting(family: str, name: str, task: Any, model: Any, arch: Any, vocab_size: int) -> CountingTask:
    """The counting task of params.yaml model `name` of `family` (rnn or bert2stage)."""
    if family == "rnn":
        gates = (4 if arch.cell == "lstm" else 3) * arch.hidden_dim

        def forward_of(batch) -> float:
            return rnn_forward_flops(arch, vocab_size, int(batch.src_mask.sum()), int(batch.trg_mask.sum()),
                                     batch.src.shape[1])

        def shapes_of(batch) -> list[Shape]:
            return ceiling_shapes("rnn", rows=batch.src.shape[0], src_len=batch.src.shape[1],
                                  n_tgt=int(batch.trg_mask.sum()), vocab_size=vocab_size, d=arch.hidden_dim,
                                  embedding_dim=arch.embedding_dim, gates=gates)

        return CountingTask(task, forward_of, shapes_of, family, name, arch)
    from sumpipe.names import PAD

    enc = arch.encoder

    def bert_forward_of(batch) -> float:
        n_words = (batch.trg_inp[:, 1:] != PAD).sum(dim=1).tolist()
        variants, refine, refine_len = refine_counts(n_words, arch.refine_positions)
        return bert2stage_forward_flops(enc, arch.n_decoder_layers, vocab_size, int(batch.src_mask.sum()),
                                        int(batch.trg_mask.sum()), batch.src.shape[1], batch.trg_inp.shape[1],
                                        variants, refine, refine_len)

    return CountingTask(task, bert_forward_of, lambda batch: summary_shapes(batch, enc.d_model, enc.d_ff, vocab_size),
                        family, name, arch)


def family_setting(args, raw: dict, train_df, valid_df, vocab, batch_size: int):
    """(task, model, cfg) of params.yaml model `args.model` (another family), in phase `args.phase`."""
    import torch

    from sumpipe.models.registry import TaskData, resolve_model
    from sumpipe.train.engine import seed_everything
    from sumpipe.validation import from_dict

    family, spec, arch = resolve_model(params_from_dict(raw), args.model)
    if family.name != args.family:
        raise SystemExit(f"--model {args.model} is of family {family.name!r}, not {args.family!r}")
    keys = ("device", "max_steps", "epochs", "log_every") + (("threads",) if getattr(args, "threads", None) else ())
    over = {k: raw["train"][k] for k in keys}
    cfg = from_dict(TrainConfig, {**raw["train"], **spec.train, **over, "batch_size": batch_size},
                    f"models.{args.model}.train")
    arch = replace(arch, vocab_size=len(vocab))
    if family.name == "bert2stage":
        arch = replace(arch, subword_dir=str(args.subword))
    inner = family.make_task(TaskData(train_df, valid_df[:64], vocab, arch, cfg))
    seed_everything(cfg.seed)
    model = family.build(arch, spec)
    if family.name == "bert2stage" and arch.length_control != "none":
        model.set_piece_costs(vocab.itos)  # what warm_start does besides loading the pre-trained encoder
    task = family_counting(family.name, args.model, inner, model, arch, len(vocab))
    phases = family.training_phases(arch, cfg, len(task.epoch_batches(0)))
    phase = next((p for p in phases if p.name == args.phase), None) if args.phase else phases[0]
    if phase is None:
        raise SystemExit(f"--phase {args.phase}: {args.model} has the phases {[p.name for p in phases]}")
    phase.prepare(model)
    print(f"model: {args.model} ({family.name}) {arch}; phase {phase.name}; {cfg.optimizer} lr {cfg.lr}, "
          f"batch {cfg.batch_size}, threads {cfg.threads or torch.get_num_threads()}", flush=True)
    return task, model, cfg


def pretrain_setting(raw: dict, train_df, valid_df, vocab, batch_size: int):
    """(task, model, cfg) of the pretrain stage: a fresh `BertForMaskedLM` of `pretrain.encoder` seeded by
    `pretrain.train.seed`, and its counting MLM task over windows of `train_df`'s sources (and the first 64
    of `valid_df`'s)."""
    import torch

    from sumpipe.models.bert import BertForMaskedLM
    from sumpipe.train.engine import seed_everything
    from sumpipe.train.mlm import MLMTask, source_windows

    section = raw.get("pretrain") or {}
    raw = {**raw, "pretrain": {**section, "train": {**(section.get("train") or {}), "batch_size": batch_size}}}
    pre = params_from_dict(raw).pretrain
    cfg, enc, v = pre.train, pre.encoder, len(vocab)
    windows = [source_windows(vocab.encode_many(df["source"].tolist()), pre.max_tokens)
               for df in (train_df, valid_df[:64])]
    inner = MLMTask(windows[0], windows[1], vocab.special_mask(), batch_size=cfg.batch_size, seed=cfg.seed,
                    mask_prob=pre.mask_prob, mask_token_prob=pre.mask_token_prob,
                    random_token_prob=pre.random_token_prob)

    def forward_of(batch) -> float:
        return mlm_forward_flops(enc, v, int(batch.keep.sum()), batch.inputs.shape[1], int(batch.targets.sum()))

    def shapes_of(batch) -> list[Shape]:
        rows, length = batch.inputs.shape
        return ceiling_shapes("pretrain", rows=rows, src_len=length, n_tgt=int(batch.targets.sum()),
                              vocab_size=v, d=enc.d_model, d_ff=enc.d_ff)

    task = CountingTask(inner, forward_of, shapes_of, "pretrain", "MLM", enc)
    seed_everything(cfg.seed)
    model = BertForMaskedLM(enc, v)
    print(f"model: pretrain (masked LM) {enc}, V {v}, {len(windows[0])} windows of {pre.max_tokens} pieces; "
          f"{cfg.optimizer} lr {cfg.lr}, batch {cfg.batch_size}, threads {cfg.threads or torch.get_num_threads()}",
          flush=True)
    return task, model, cfg


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------
def cnndm_frames(path: Path, n_train: int, max_tokens: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    from sumpipe.text.preprocess import preprocess_text

    rows: dict[str, list] = {"train": [], "valid": []}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            split = row.get("split")
            if split not in rows or (split == "train" and len(rows["train"]) >= n_train):
                continue
            source = " ".join(preprocess_text(row["source"]).split()[:max_tokens])
            rows[split].append({"id": row["id"], "source": source, "reference": preprocess_text(row["reference"])})
    return pd.DataFrame(rows["train"]), pd.DataFrame(rows["valid"][:200])


def build_vocab(train: pd.DataFrame, size: int):
    import pandas as pd

    from sumpipe.vocab.vocabulary import Vocabulary

    counts = Counter(w for text in pd.concat([train["source"], train["reference"]]) for w in text.split())
    return Vocabulary.from_counts(counts, size)


# --------------------------------------------------------------------------------------------
# The GPU's peak
# --------------------------------------------------------------------------------------------
def peak_flops(device: torch.device) -> tuple[str, float | None]:
    import torch

    if device.type != "cuda":
        return "CPU", None
    name = torch.cuda.get_device_name(device)
    for key, value in PEAK_BF16.items():  # "H100 PCIe" is listed before "H100"
        if key in name:
            return name, value
    return name, None


def matmul_ceiling(device: torch.device, n: int = 8192, repeats: int = 10) -> float:
    """Measured bf16 FLOP/s of an n×n×n matrix product on random data (after 3 warm-ups)."""
    import torch

    a, b = (torch.randn(n, n, device=device, dtype=torch.bfloat16) for _ in range(2))
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize()
    return 2 * n**3 * repeats / (time.perf_counter() - started)


# --------------------------------------------------------------------------------------------
# One setting
# --------------------------------------------------------------------------------------------
def autocast_cpu_bf16(attention_in_float32: bool) -> None:
    """--cpu-bf16: the engine's training and validation steps under torch.autocast on the CPU in bfloat16.
    The engine autocasts on CUDA only (`train.bf16`); this swaps its context for the run of this script.
    `attention_in_float32` (--cpu-bf16 products): the models' SDPA calls run in float32, outside autocast
    (the CPU flash kernel's bfloat16 backward was the slow part)."""
    import torch
    import torch.nn.functional as F

    from sumpipe.train import engine

    engine._autocast = lambda device, bf16: torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    if attention_in_float32:
        sdpa = F.scaled_dot_product_attention

        def sdpa_float32(q, k, v, attn_mask=None, **kwargs):
            with torch.autocast(device_type="cpu", enabled=False):
                mask = attn_mask.float() if attn_mask is not None and attn_mask.is_floating_point() else attn_mask
                return sdpa(q.float(), k.float(), v.float(), attn_mask=mask, **kwargs).to(q.dtype)

        F.scaled_dot_product_attention = sdpa_float32


def run_setting(args, raw: dict, train_df, valid_df, vocab, batch_size: int, compiled: bool) -> dict:
    """Train one fresh model for `args.seconds` (after warm-up) and return its figures. On a CPU, with
    `args.ceiling`, the ceiling is measured first at the model's shapes (`cpu_ceiling`)."""
    import torch

    from sumpipe.train.engine import fit, training_device

    family = getattr(args, "family", "transformer")
    if family == "pretrain":
        task, model, cfg = pretrain_setting(raw, train_df, valid_df, vocab, batch_size)
    elif family != "transformer":
        task, model, cfg = family_setting(args, raw, train_df, valid_df, vocab, batch_size)
    else:
        task, model, cfg = transformer_setting(raw, train_df, valid_df, vocab, batch_size, args.rarity,
                                               getattr(args, "seed", None))
    # Time ends a benchmark run, not early stopping: a fast machine would otherwise finish a tiny run's
    # epochs before its timed window closes (and there would be no window to measure).
    cfg = replace(cfg, patience=None)
    device = training_device(cfg.device)
    ceiling = None
    if device.type == "cpu" and getattr(args, "ceiling", False):
        ceiling = cpu_ceiling(task.shapes_of(task.typical_batch()), cfg.threads, args.ceiling_seconds)
        print(format_ceiling(ceiling), flush=True)
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
    roof = ceiling["ceiling_gflops"] * 1e9 if ceiling else None
    row = {"family": task.family, "model": task.name, "numerics": numerics_mode(),
           "threads": ceiling["threads"] if ceiling else cfg.threads,
           "batch": batch_size, "compile": compiled, "updates": int(marks["step"]), "seconds": elapsed,
           "ms_per_update": elapsed / max(marks["step"], 1) * 1000, "tokens_per_s": marks["tokens"] / elapsed,
           "gflops": flops_per_s / 1e9, "tflops": flops_per_s / 1e12,
           "ceiling_gflops": ceiling["ceiling_gflops"] if ceiling else None,
           "bf16_ceiling_gflops": max(ceiling["bfloat16"].values()) if ceiling and ceiling["bfloat16"] else None,
           "cpu_mfu": flops_per_s / roof if roof else None, "ceiling": ceiling,
           "mfu": flops_per_s / peak if peak else None,
           "memory_gib": marks.get("memory"), "warmup_seconds": marks["t"] - started,
           "final_loss": result.log_rows[-1]["loss"] if result.log_rows else None,
           "valid": last_valid(result.log_rows),
           "parameters": sum(p.numel() for p in model.parameters()), "gpu": name, "peak": peak}
    if profiler:
        sort = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
        table = profiler[0].key_averages().table(sort_by=sort, row_limit=25, max_name_column_width=70)
        row["profile"] = table
    model = task = None  # both freed before the CUDA cache is emptied
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return row


# --------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", action="store_true", help="the paper configuration (d 256, 8 layers, AdaGrad)")
    ap.add_argument("--seconds", type=float, default=60.0, help="training-time budget per setting")
    ap.add_argument("--warmup", type=int, default=10, help="updates left out of the rates")
    ap.add_argument("--data", type=Path, help="an extract selection dir with train/valid.parquet "
                    "(--family pretrain: the sources of any such dir, e.g. data/processed)")
    ap.add_argument("--vocab", type=Path, default=REPO / "data/vocab/vocab.parquet")
    ap.add_argument("--subword", type=Path, help="the subword model's dir (bert2stage, pretrain; default "
                    "params.yaml's paths.subword)")
    ap.add_argument("--cnndm", type=Path, default=REPO.parent / "shared/data/cnndm/cnn_stories.jsonl.gz")
    ap.add_argument("--examples", type=int, default=2000, help="CNN train stories to use")
    ap.add_argument("--batch-sizes", type=int, nargs="+", help="override train.batch_size (a sweep)")
    ap.add_argument("--seed", type=int, help="--family transformer: train the train stage's run of this seed "
                                               "(default: train.seed)")
    ap.add_argument("--cpu-bf16", choices=["off", "all", "products"], default="off",
                    help="CPU: every update under torch.autocast(cpu, bfloat16) (the engine autocasts on CUDA only); "
                         "products: attention (SDPA) stays float32")
    ap.add_argument("--compile", choices=["off", "on", "both"], default="off",
                    help="torch.compile the training forward + loss (engine's compile_model)")
    ap.add_argument("--profile", type=int, default=0, help="profile N updates after each timed window")
    ap.add_argument("--log-every", type=int, default=50, help="train.log_every (each log syncs the GPU)")
    ap.add_argument("--threads", type=int, help="override train.threads (CPU), a model's own threads too")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--numerics", choices=MODES, help="pin these CPU kernels (default: params.yaml's train.numerics)")
    ap.add_argument("--ceiling-seconds", type=float, default=0.5, help="CPU ceiling: timing per shape and dtype")
    ap.add_argument("--no-ceiling", dest="ceiling", action="store_false", help="skip the CPU ceiling (no CPU MFU)")
    ap.add_argument("--json", type=Path, help="also write the rows (and profiles) to this JSON file")
    ap.add_argument("-p", "--params", type=Path, default=REPO / "params.yaml")
    ap.add_argument("--family", choices=FAMILIES, default="transformer")
    ap.add_argument("--rarity", action="store_true", help="--family transformer: M2 (the rarity term) instead of M1")
    ap.add_argument("--model", help="--family rnn / bert2stage: the params.yaml model to train (default: the "
                    "family's first)")
    ap.add_argument("--phase", help="--family rnn: the training phase (default: the first)")
    return ap.parse_args(argv)


def main() -> None:
    args = parse_args()
    raw = yaml.safe_load(args.params.read_text())
    if args.paper:
        raw = apply_overrides(raw, PAPER_OVERRIDES)
    mode = args.numerics or params_from_dict(raw).train.numerics
    try:  # before the first import of torch (the next function's)
        pin_numerics(mode, "--numerics" if args.numerics else "train.numerics")
    except SumpipeError as exc:
        raise SystemExit(f"error: {exc}") from None
    run(args, raw, mode)


def run(args: argparse.Namespace, raw: dict, mode: str) -> None:
    import torch

    from sumpipe.models.transformer import shared_arch
    from sumpipe.train.engine import training_device
    from sumpipe.vocab.vocabulary import Vocabulary

    train_over = {"device": args.device, "max_steps": None, "epochs": 1000, "log_every": args.log_every}
    if args.threads:
        train_over["threads"] = args.threads
    raw["train"] = {**raw.get("train", {}), **train_over}
    pretrain = raw.get("pretrain") or {}
    raw["pretrain"] = {**pretrain, "train": {**(pretrain.get("train") or {}), **train_over}}
    params = params_from_dict(raw)
    if args.family in ("rnn", "bert2stage"):
        from sumpipe.models.registry import resolve_model

        if args.model is None:
            args.model = next((name for name, spec in params.models.items() if spec.family == args.family), None)
            if args.model is None:
                raise SystemExit(f"--family {args.family}: params.yaml has no model of that family")
        arch = resolve_model(params, args.model)[2]
        max_source = arch.max_source_tokens
    else:
        max_source = shared_arch(params).max_source_tokens
    args.subword = args.subword or REPO / params.paths.subword
    subword = args.family in ("bert2stage", "pretrain")

    started = time.perf_counter()
    if args.data:
        import pandas as pd

        train_df, valid_df = (pd.read_parquet(args.data / f"{s}.parquet") for s in ("train", "valid"))
        data_name = f"{args.data} ({len(train_df)} train examples)"
    else:
        train_df, valid_df = cnndm_frames(args.cnndm, args.examples, max_source)
        data_name = f"{args.cnndm.name} ({len(train_df)} train stories, first {max_source} tokens)"
    if subword:
        from sumpipe.subword.pieces import MODEL_FILE, SubwordVocab

        if not (args.subword / MODEL_FILE).is_file():
            raise SystemExit(f"error: {args.subword / MODEL_FILE} is missing (run `sumpipe subword`, or --subword DIR)")
        vocab = SubwordVocab.load(args.subword)
        data_name += f"; pieces of {args.subword / MODEL_FILE}"
    else:
        size = arch.vocab_size if args.family == "rnn" else shared_arch(params).vocab_size
        vocab = Vocabulary.load(args.vocab, size=size) if args.data else build_vocab(train_df, size)
    device = training_device(params.train.device)
    name, peak = peak_flops(device)
    print(f"data: {data_name}; prep {time.perf_counter() - started:.1f} s", flush=True)
    print(f"numerics: {numerics_mode()} ({'--numerics' if args.numerics else 'train.numerics'} {mode}); torch "
          f"{torch.__version__}, ATen CPU capability {torch.backends.cpu.get_cpu_capability()}; device {device} "
          f"({name})", flush=True)
    if args.family == "transformer":
        arch = shared_arch(params)
        print(f"model: {'M2' if args.rarity else 'M1'} d_model {arch.d_model}, d_ff {arch.d_ff}, {arch.n_layers} "
              f"layers, {arch.n_heads} heads, V {len(vocab)}; {params.train.optimizer} lr {params.train.lr}; "
              f"threads {params.train.threads or torch.get_num_threads()}", flush=True)
    if device.type == "cuda":
        print(f"bf16 8192^3 matmul: {matmul_ceiling(device) / 1e12:.0f} TFLOP/s measured; datasheet dense bf16 "
              f"peak {peak / 1e12 if peak else float('nan'):.0f} TFLOP/s (MFU below is against the datasheet)",
              flush=True)

    if args.family == "pretrain":
        default_batch = params.pretrain.train.batch_size
    elif args.family == "transformer":
        default_batch = params.train.batch_size
    else:
        default_batch = params.models[args.model].train.get("batch_size", params.train.batch_size)
    sizes = args.batch_sizes or [default_batch]
    if args.cpu_bf16 != "off" and device.type == "cpu":
        autocast_cpu_bf16(attention_in_float32=args.cpu_bf16 == "products")
        print(f"autocast: CPU bfloat16 (--cpu-bf16 {args.cpu_bf16}); MFU stays against the float32 ceiling", flush=True)
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
    trained = {"transformer": "M2" if args.rarity else "M1", "pretrain": "MLM"}.get(args.family, args.model)
    tokens = "pieces" if args.family == "pretrain" else "source + target"
    against = ("the CPU fp32 ceiling measured above (the best shape)" if device.type == "cpu"
               else f"{peak / 1e12 if peak else float('nan'):.0f} TFLOP/s dense bf16 (datasheet)")
    print(f"\n{trained} training throughput on {name} (tokens = {tokens}, padding excluded; training FLOPs "
          f"= 3 × forward; MFU against {against}):")
    print(TABLE_HEAD)
    for row in rows:
        print(format_row(row))


TABLE_HEAD = (f"  {'model':<18} {'numerics':<9} {'batch':>5} {'compile':>7} {'tok/s':>11} {'ms/update':>9} "
              f"{'GFLOP/s':>9} {'ceiling':>9} {'MFU %':>6}  peak mem, updates, loss")


def last_valid(rows: list[dict]) -> tuple[int, float] | None:
    """(step, loss) of the last validation in the training log (at each epoch's end; the task validates on
    the first 64 valid examples), or None when no epoch ended."""
    valid = [(int(r["step"]), float(r["valid_loss"])) for r in rows if r.get("valid_loss") is not None]
    return valid[-1] if valid else None


def format_row(row: dict) -> str:
    head = f"  {row.get('family', '?') + '/' + row.get('model', '?'):<18} {row.get('numerics', '?'):<9} " \
           f"{row['batch']:5d} {'on' if row['compile'] else 'off':>7}"
    if "error" in row:
        return f"{head}  error: {row['error']}"
    mfu = row["mfu"] if row.get("mfu") is not None else row.get("cpu_mfu")
    roof = row["peak"] / 1e9 if row.get("peak") else row.get("ceiling_gflops")
    memory = f"{row['memory_gib']:.2f} GiB" if row.get("memory_gib") is not None else "n/a"
    loss = row["final_loss"] if row["final_loss"] is None else round(row["final_loss"], 3)
    return (f"{head} {row['tokens_per_s']:>11,.0f} {row['ms_per_update']:9.1f} {row['gflops']:9.2f} "
            f"{_num(roof, '9.1f')} {_num(None if mfu is None else mfu * 100, '6.1f')}  {memory}, "
            f"{row['updates']} updates in {row['seconds']:.1f} s after {row['warmup_seconds']:.0f} s warm-up, "
            f"last logged loss {loss}"
            + (f", valid loss {row['valid'][1]:.4f} at update {row['valid'][0]}" if row.get("valid") else ""))


def _num(value: float | None, fmt: str) -> str:
    width = int(fmt.split(".")[0])
    return "n/a".rjust(width) if value is None or not math.isfinite(value) else format(value, fmt)


if __name__ == "__main__":
    main()
