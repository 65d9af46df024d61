"""Where the probability mass goes when the reference asks for a word outside the vocabulary (the rare-words study).

    python experiments/rarewords/diagnose.py MODEL_DIR [MODEL_DIR ...] [--split valid] [--data data]

Teacher-forces each trained model on the validation split (its input selection, `data/extracted/<input>/`)
and, over every target position, splits the targets into three kinds:

- copyable OOV: a reference word outside the vocabulary that the model's input holds (its extended id);
- `<unk>`: a reference word outside the vocabulary that the input lacks (trained as `<unk>`);
- vocabulary: every other target word.

For each kind it prints the mean of: p_gen, the copy distribution's mass on the source positions holding
the target word (the pointer's aim, whatever p_gen), the final probability of the target, the final
probability of `<unk>` (p_gen · P_vocab(<unk>)), the copy distribution's mass on any OOV position, and the
share of positions where the model's likeliest word other than `<unk>` (what decoding, which never writes
`<unk>`, would pick greedily) is the target.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch


def diagnose(model_dir: Path, data: Path, split: str) -> dict[str, dict[str, float]]:
    """{kind: {figure: mean}} for one model directory (see the module docstring)."""
    from sumpipe.decode.batches import load_model
    from sumpipe.io.atomic import read_parquet
    from sumpipe.models.batching import collate, encode_examples
    from sumpipe.names import UNK

    model, vocab, card = load_model(model_dir)
    frame = read_parquet(data / "extracted" / card.input / f"{split}.parquet")
    examples = encode_examples(frame, vocab, card.arch.max_source_tokens, card.arch.max_summary_tokens)
    v = len(vocab)
    rows: dict[str, list[np.ndarray]] = {k: [] for k in ("copyable OOV", "<unk>", "vocabulary")}
    with torch.no_grad():
        for start in range(0, len(examples), 64):
            batch = collate(examples[start : start + 64])
            log_probs, info = model.forward_with_info(batch)
            probs = log_probs.exp()  # (B, T, X)
            target = batch.trg_ext
            p_target = probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            on_target = (batch.src_ext[:, None, :] == target[:, :, None]) & batch.src_mask[:, None, :]
            aim = (info["attn"] * on_target).sum(-1)  # copy distribution's mass on the target's positions
            on_oov = (info["attn"] * (batch.src_ext >= v)[:, None, :]).sum(-1)  # ... on any OOV position
            best = probs.clone()
            best[..., UNK] = 0.0
            hit = best.argmax(-1) == target
            kinds = {"copyable OOV": target >= v, "<unk>": target == UNK,
                     "vocabulary": (target < v) & (target != UNK)}
            for kind, where in kinds.items():
                where = where & batch.trg_mask
                rows[kind].append(torch.stack([info["p_gen"][where], aim[where], on_oov[where], p_target[where],
                                               probs[..., UNK][where], hit[where].float()], dim=1).numpy())
    names = ("p_gen", "copy mass on target", "copy mass on OOV", "P(target)", "P(<unk>)", "greedy hit (no <unk>)")
    out: dict[str, dict[str, float]] = {}
    for kind, parts in rows.items():
        table = np.concatenate(parts) if parts else np.zeros((0, len(names)))
        out[kind] = {"positions": float(len(table))} | {n: float(table[:, i].mean()) for i, n in enumerate(names)}
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dirs", nargs="+", type=Path)
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--split", default="valid")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print("| model | target kind | positions | p_gen | copy mass on target | copy mass on any OOV | P(target)"
          " | P(<unk>)"
          " | greedy hit |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for model_dir in args.model_dirs:
        for kind, f in diagnose(model_dir, args.data, args.split).items():
            print(f"| {model_dir} | {kind} | {f['positions']:.0f} | {f['p_gen']:.3f} | {f['copy mass on target']:.3f}"
                  f" | {f['copy mass on OOV']:.3f} | {f['P(target)']:.3f} | {f['P(<unk>)']:.3f}"
                  f" | {f['greedy hit (no <unk>)']:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
