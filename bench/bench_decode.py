"""Decoding speed: documents/s for beam search on the CNN test split, and `sumpipe decode` latency.

    python bench/bench_decode.py                 # default-config model (params.yaml `model:`)
    python bench/bench_decode.py --paper         # the paper configuration (d 256, 8 layers, V 50k)
    python bench/bench_decode.py --limit 64 --device cuda

The model is freshly initialised (speed does not depend on training, but an untrained model rarely
emits `</s>`, so nearly every document runs to the maximum length: CNN/DM 120 words, a worst case).
The vocabulary holds the most frequent words of the CNN stories, padded with placeholder words up
to the model's size. Prints:
1. throughput: documents/s for beam k over the test split (first-400-token inputs, length-sorted
   batches), preprocessing excluded;
2. latency of one article through `sumpipe decode`: a fresh process from start until the model is
   loaded (imports, params, model directory), then the decode of one article (preprocessing,
   selection, beam search), then the whole command end to end.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CNN = REPO.parent / "shared" / "data" / "cnndm" / "cnn_stories.jsonl.gz"
PAPER = dict(d_model=256, d_ff=1024, n_layers=8, n_heads=8, vocab_size=50000, max_source_tokens=400,
             max_summary_tokens=100, dropout=0.2)


def load_stories(split: str, limit: int | None) -> list[dict]:
    rows = []
    with gzip.open(CNN, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["split"] == split:
                rows.append(row)
                if limit and len(rows) >= limit:
                    break
    return rows


def build_model_dir(path: Path, paper: bool, vocab_docs: list[str]) -> Path:
    import torch

    from sumpipe.config import Budget, ModelSpec, load_params
    from sumpipe.models.card import ModelCard
    from sumpipe.models.io import save_pretrained
    from sumpipe.models.registry import get_family
    from sumpipe.vocab.vocabulary import Vocabulary

    arch = load_params(REPO / "params.yaml").model
    if paper:
        arch = replace(arch, **PAPER)
    counts = Counter(t for doc in vocab_docs for t in doc.split())
    for i in range(arch.vocab_size):                  # placeholder words up to the model's size
        counts.setdefault(f"<w{i}>", 1)
    vocab = Vocabulary.from_counts(counts, arch.vocab_size)
    torch.manual_seed(0)
    spec = ModelSpec(family="transformer", input="first400")
    model = get_family(spec.family).build(arch, spec)
    card = ModelCard(family=spec.family, arch=arch, vocab_size=arch.vocab_size, name="M1", input=spec.input,
                     spec=spec, selection=Budget("first", 400), dataset="cnn_dailymail")
    return save_pretrained(model, path, vocab, card)


def throughput(model_dir: Path, docs: list[str], beam: int, batch_size: int, device: str, threads: int) -> None:
    import torch

    from sumpipe.config import DecodeConfig
    from sumpipe.decode.batches import load_model, resolve_max_length, summarize

    torch.set_num_threads(threads)
    model, vocab, config = load_model(model_dir, device=device)
    cfg = DecodeConfig(beam_size=beam, batch_size=batch_size, device=device)
    summarize(model, vocab, config, docs[:2], cfg)     # warm-up (allocator, kernels)
    started = time.perf_counter()
    out = summarize(model, vocab, config, docs, cfg)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    lengths = [len(s.tokens) for s in out]
    print(f"throughput: {len(docs)} documents, beam {beam}, batch {batch_size}, {device}, {threads} thread(s): "
          f"{seconds:.1f} s = {len(docs) / seconds:.2f} documents/s "
          f"(mean summary {sum(lengths) / len(lengths):.0f} words, max length {resolve_max_length(cfg, config)}, "
          f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters)")


CHILD = """
import sys, time, json
from pathlib import Path
from sumpipe.cli import app                          # what the console script imports
from sumpipe.config import Params
from sumpipe.decode.interactive import read_input, summarize_input
import torch
from sumpipe.decode.batches import load_model, prepare_raw, summarize, cap_raw
torch.set_num_threads(1)
model_dir, article = Path(sys.argv[1]), sys.argv[2]
cfg = Params().decode
model, vocab, config = load_model(model_dir)
loaded = time.time()
doc = prepare_raw(cap_raw(read_input(article)), config)
summary = summarize(model, vocab, config, [doc], cfg)[0]
print(json.dumps({"loaded": loaded, "done": time.time(), "words": len(summary.tokens)}))
"""


def latency(model_dir: Path, article: str, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "article.txt"
        path.write_text(article, encoding="utf-8")
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        for i in range(repeats):
            start = time.time()
            proc = subprocess.run([sys.executable, "-c", CHILD, str(model_dir), str(path)],
                                  capture_output=True, text=True, env=env, check=True)
            marks = json.loads(proc.stdout.strip().splitlines()[-1])
            start_cli = time.time()
            subprocess.run([sys.executable, "-m", "sumpipe.cli", "decode", "--model", str(model_dir), str(path)],
                           capture_output=True, text=True, env=env, check=True, cwd=tmp)
            total = time.time() - start_cli
            print(f"latency run {i + 1}: process start + load {marks['loaded'] - start:.2f} s, "
                  f"decode one article {marks['done'] - marks['loaded']:.2f} s ({marks['words']} words); "
                  f"`sumpipe decode` end to end {total:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper", action="store_true", help="paper configuration instead of params.yaml `model:`")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--limit", type=int, default=None, help="decode only the first N test documents")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=torch_threads())
    parser.add_argument("--repeats", type=int, default=3, help="latency runs")
    args = parser.parse_args()
    if not CNN.is_file():
        sys.exit(f"{CNN} is absent: nothing to benchmark")

    from sumpipe.text.preprocess import preprocess_text, truncate_tokens

    started = time.perf_counter()
    test = load_stories("test", args.limit)
    train = load_stories("train", 500)
    docs = [truncate_tokens(preprocess_text(r["source"]), 400) for r in test]
    vocab_docs = [preprocess_text(r["source"]) for r in train] + docs
    print(f"prepared {len(docs)} test stories (+{len(train)} train stories for the vocabulary) "
          f"in {time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model_dir(Path(tmp) / "model", args.paper, vocab_docs)
        throughput(model_dir, docs, args.beam, args.batch_size, args.device, args.threads)
        latency(model_dir, test[0]["source"], args.repeats)


def torch_threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


if __name__ == "__main__":
    main()
