"""Model speed: collation vs a training step, M1 vs M2, cached decoding vs recomputation.

Synthetic token data of the chosen shape (no corpus needed). Prints, for one batch:
1. `collate` time (numpy padding + one torch conversion per field) vs a forward+backward step,
2. M1 and M2 training-step times and tokens/s (source + target tokens),
3. greedy decoding of T steps with the KV cache (`decode_step`) vs re-running the teacher-forced
   decoder on the whole prefix each step (what a cache-less decoder does), and their agreement.

    python bench/bench_models.py                   # params.yaml `model:` section (CPU default)
    python bench/bench_models.py --paper --device cuda --bf16   # d 256, ff 1024, 8 layers, 8 heads
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from sumpipe.config import load_params
from sumpipe.models.batching import Example, collate
from sumpipe.models.loss import label_smoothed_nll
from sumpipe.names import BOS, EOS
from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer, shared_arch

REPO = Path(__file__).resolve().parents[1]
PAPER = dict(d_model=256, d_ff=1024, n_layers=8, n_heads=8, dropout=0.2, vocab_size=50000,
             max_source_tokens=400, max_summary_tokens=100)


def synthetic_examples(n: int, arch: ArchConfig, rng: np.random.Generator) -> list[Example]:
    """Examples of full source length and ~full summary length, ~5% OOV source tokens."""
    v = arch.vocab_size
    out = []
    for i in range(n):
        s = arch.max_source_tokens - int(rng.integers(0, 20))
        t = arch.max_summary_tokens - int(rng.integers(0, 10))
        src = rng.integers(4, v, size=s)
        oov = rng.random(s) < 0.05
        src_ext = src.copy()
        src_ext[oov] = v + np.arange(oov.sum())
        src[oov] = 0
        summary = rng.integers(4, v, size=t)
        out.append(Example(str(i), src, src_ext, rng.random(s).astype(np.float32) + 0.5,
                           np.concatenate([[BOS], summary]), np.concatenate([summary, [EOS]]),
                           [f"w{j}" for j in range(int(oov.sum()))]))
    return out


def timed(fn, repeats: int, sync) -> float:
    fn()  # warm-up
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paper", action="store_true", help="the thesis configuration")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast (CUDA)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--decode-steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)  # on a shared, loaded box 1 thread avoids spin-wait stalls

    arch = shared_arch(load_params(REPO / "params.yaml"))
    if args.paper:
        arch = replace(arch, **PAPER)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16)
    rng = np.random.default_rng(0)
    examples = synthetic_examples(args.batch_size, arch, rng)
    print(f"arch: {arch}")
    print(f"device: {device}, bf16: {args.bf16}, batch {args.batch_size} x {arch.max_source_tokens} src tokens, "
          f"torch threads {torch.get_num_threads()} (shared machine: timings under load)")

    t_collate = timed(lambda: collate(examples), 20, lambda: None)
    batch = collate(examples).to(device)
    n_tokens = int(batch.src_mask.sum() + batch.trg_mask.sum())

    for rarity in (False, True):
        torch.manual_seed(0)
        model = PointerGeneratorTransformer(arch, rarity=rarity).to(device).train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)

        def step() -> None:
            opt.zero_grad(set_to_none=True)
            with autocast:
                log_probs = model(batch)
            loss, _ = label_smoothed_nll(log_probs, batch.trg_ext, batch.trg_mask, 0.1, n_smooth=arch.vocab_size)
            loss.backward()
            opt.step()

        t_step = timed(step, args.repeats, sync)
        name = "M2" if rarity else "M1"
        print(f"{name}: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters; train step {t_step * 1e3:.1f} ms, "
              f"{n_tokens / t_step:,.0f} tokens/s")
    print(f"collate: {t_collate * 1e3:.2f} ms per batch ({100 * t_collate / t_step:.1f}% of an M2 train step)")

    model.eval()
    steps = min(args.decode_steps, arch.max_summary_tokens)

    @torch.inference_mode()
    def cached() -> torch.Tensor:
        with autocast:
            state = model.start_decoding(batch)
            prev = torch.full((len(batch),), BOS, device=device)
            out = []
            for _ in range(steps):
                log_probs, state, _ = model.decode_step(state, prev)
                prev = log_probs.argmax(-1)
                out.append(prev)
        return torch.stack(out, 1)

    @torch.inference_mode()
    def recompute() -> torch.Tensor:
        with autocast:
            memory, bias = model.encode(batch.src, batch.src_freq, batch.src_mask)
            kvs = [layer.cross_attn.project_kv(memory) for layer in model.decoder_layers]
            pkv = model.pointer.attention.project_kv(memory)
            tokens = torch.full((len(batch), 1), BOS, device=device)
            for _ in range(steps):
                log_probs, _, _ = model._decode(model._embed(tokens), kvs, pkv, bias, batch.src_ext, batch.n_oov, None)
                tokens = torch.cat([tokens, log_probs[:, -1].argmax(-1, keepdim=True)], 1)
        return tokens[:, 1:]

    t_cached = timed(cached, 1, sync)
    t_full = timed(recompute, 1, sync)
    same = (cached() == recompute()).float().mean().item()
    print(f"greedy decoding, {steps} steps x {len(batch)} rows: KV cache {t_cached * 1e3:.0f} ms "
          f"({t_cached / steps * 1e3:.1f} ms/step), recompute prefix {t_full * 1e3:.0f} ms "
          f"-> {t_full / t_cached:.1f}x; same tokens: {100 * same:.1f}%")
    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
