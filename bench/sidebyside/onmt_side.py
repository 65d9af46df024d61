"""OpenNMT-py side of the side-by-side benchmark; runs in the benchmark's own venv (setup_onmt.sh).

    python onmt_side.py train  --config onmt_train.yaml --work DIR --steps N --batch-size B --out result.json
    python onmt_side.py decode --work DIR --beam 4 --length L --batch-size B --out result.json

`train` runs OpenNMT-py's own training entry point in this process with a thin timing hook around
`Trainer._gradient_accumulation` (one call = one update: forward, backward, optimizer step; the time
between the ends of two calls also covers fetching the next batch). Each update records the clock,
the source and target tokens OpenNMT counted (padding excluded) and the loss.
`decode` loads the last checkpoint with OpenNMT-py's inference engine (untimed) and times its
`_translate` (what `infer_file()` runs) on DIR/src-test.txt: beam search with copy attention, min = max length.
SIDEBYSIDE_PROFILE=1 prints a torch.profiler table of the timed work. Imports nothing from sumpipe.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

import torch


@contextlib.contextmanager
def profiled():
    """With SIDEBYSIDE_PROFILE=1: torch.profiler over the block, the top operators by self CPU time printed."""
    if os.environ.get("SIDEBYSIDE_PROFILE") != "1":
        yield
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        yield
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25), flush=True)


def train(config: Path, work: Path, steps: int, threads: int, batch_size: int, out: Path) -> None:
    import onmt.trainer
    from onmt.bin.train import _get_parser
    from onmt.bin.train import train as onmt_train

    torch.set_num_threads(threads)
    records: list[dict] = []
    original = onmt.trainer.Trainer._gradient_accumulation

    def timed(self, true_batches, normalization, total_stats, report_stats):
        src, tgt, loss = total_stats.n_src_words, total_stats.n_words, total_stats.loss
        original(self, true_batches, normalization, total_stats, report_stats)
        records.append({"t": time.perf_counter(), "src": total_stats.n_src_words - src,
                        "tgt": total_stats.n_words - tgt, "loss": (total_stats.loss - loss)
                        / max(total_stats.n_words - tgt, 1)})

    onmt.trainer.Trainer._gradient_accumulation = timed
    opt = _get_parser().parse_args(["-config", str(config), "-train_steps", str(steps), "-batch_size", str(batch_size),
                                    "-save_checkpoint_steps", str(steps), "-save_model", str(work / "onmt_model")])
    start = time.perf_counter()
    with profiled():
        onmt_train(opt)
    out.write_text(json.dumps({"start": start, "steps": records, "threads": torch.get_num_threads()}))


class _GeneratorState(dict):
    """OpenNMT-py 3.5.1 cannot load its own copy_attn checkpoints: `NMTModel.load_safe_state_dict`
    tests each CopyGenerator parameter by its last name (`weight`) but reads and deletes it as
    `generator.linear.weight`, while the checkpoint saves `linear.weight` ("Missing key in checkpoint:
    generator.linear.weight"). Entries here are stored under the full name, and `keys()` also lists
    the last names of those not yet loaded, so both look-ups succeed and nothing is left over."""

    def keys(self):  # type: ignore[override]
        names = list(super().keys())
        return names + [name.rsplit(".", 1)[1] for name in names]


def _patch_checkpoint_loading() -> None:
    import onmt.model_builder

    load = onmt.model_builder.load_checkpoint

    def patched(path):
        checkpoint = load(path)
        generator = checkpoint.get("generator") or {}
        checkpoint["generator"] = _GeneratorState({f"generator.{k}": v for k, v in generator.items()})
        return checkpoint

    onmt.model_builder.load_checkpoint = patched


def decode(work: Path, beam: int, length: int, batch_size: int, threads: int, out: Path) -> None:
    from onmt.bin.translate import _get_parser
    from onmt.inference_engine import InferenceEnginePY
    from onmt.utils.parse import ArgumentParser

    torch.set_num_threads(threads)
    model = max(work.glob("onmt_model_step_*.pt"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    _patch_checkpoint_loading()
    opt = _get_parser().parse_args([
        "-model", str(model), "-src", str(work / "src-test.txt"), "-output", str(work / "onmt_pred.txt"),
        "-beam_size", str(beam), "-min_length", str(length), "-max_length", str(length),
        "-batch_size", str(batch_size), "-batch_type", "sents", "-block_ngram_repeat", "3",
        "-length_penalty", "wu", "-alpha", "1.0", "-seed", "1234"])
    ArgumentParser.validate_translate_opts(opt)
    ArgumentParser._get_all_transform_translate(opt)
    ArgumentParser._validate_transforms_opts(opt)
    ArgumentParser.validate_translate_opts_dynamic(opt)
    # OpenNMT-py 3.5.1 checkpoints hold its options (an argparse.Namespace); torch >= 2.6 loads
    # with weights_only=True, which refuses that class unless it is allowed (our own checkpoint).
    with torch.serialization.safe_globals([argparse.Namespace]):
        engine = InferenceEnginePY(opt)
    start = time.perf_counter()
    # infer_file() of 3.5.1 builds its data iterator without copy=True, so a copy_attn model finds no
    # `src_map` (KeyError); the same iterator with the copy keys, then the engine's own _translate.
    from onmt.constants import CorpusTask
    from onmt.inputters.dynamic_iterator import build_dynamic_dataset_iter

    infer_iter = build_dynamic_dataset_iter(opt, engine.transforms_cls, engine.vocabs, task=CorpusTask.INFER,
                                            copy=engine.translator.copy_attn, device_id=engine.device_id)
    with profiled():
        engine._translate(infer_iter)
    seconds = time.perf_counter() - start
    engine.terminate()
    outputs = (work / "onmt_pred.txt").read_text(encoding="utf-8").splitlines()
    out.write_text(json.dumps({"seconds": seconds, "docs": len(outputs),
                               "mean_words": sum(len(o.split()) for o in outputs) / max(len(outputs), 1),
                               "threads": torch.get_num_threads()}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["train", "decode"])
    ap.add_argument("--config", type=Path)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--length", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.what == "train":
        train(args.config, args.work, args.steps, args.threads, args.batch_size, args.out)
    else:
        decode(args.work, args.beam, args.length, args.batch_size, args.threads, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
