"""The paper configuration (seed 001, SEEDS.md §1.7) as a list of overrides of params.yaml.

One source of truth, two ways to use it:

    python -m sumpipe.train.paper > params-paper.yaml          # regenerate the full params file
    sumpipe train --model M1 -p params-paper.yaml                # any stage, by hand
    dvc exp run -n paper $(python -m sumpipe.train.paper --exp-args)   # as a DVC experiment

The thesis fixes: d_model = embedding 256, feed-forward 1024, 8 layers, 8 heads, dropout 0.2,
vocabulary 50,000 words for 400-token inputs and 25,000 for 200-token ones, summaries of 100
tokens, AdaGrad lr 0.15 (initial accumulator 0.1, as See et al.), 5 epochs, beam 4, at most 120
generated tokens. It leaves open the batch size (32 here; See et al. used 16), gradient clipping
(2.0, See et al.) and the label smoothing (0.1, Vaswani et al.).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

PAPER_OVERRIDES: dict[str, Any] = {
    "data.dataset": "cnn_dailymail",
    "vocab.size": 50000,
    "model.d_model": 256,
    "model.d_ff": 1024,
    "model.n_layers": 8,
    "model.n_heads": 8,
    "model.dropout": 0.2,
    "model.vocab_size": 50000,
    "model.max_source_tokens": 400,
    "model.max_summary_tokens": 100,
    "models.M1-200.arch.vocab_size": 25000,
    "models.M2-200.arch.vocab_size": 25000,
    "train.optimizer": "adagrad",
    "train.lr": 0.15,
    "train.adagrad_initial_accumulator": 0.1,
    "train.label_smoothing": 0.1,
    "train.grad_clip": 2.0,
    "train.batch_size": 32,
    "train.epochs": 5,
    "train.max_steps": None,
    "train.log_every": 100,
    "train.checkpoint_every": 1000,
    "train.threads": None,
    "decode.beam_size": 4,
    "decode.max_length": 120,
}

HEADER = """\
# The paper configuration (seed 001 / SEEDS.md §1.7): params.yaml with the overrides of
# src/sumpipe/train/paper.py. Generated: `python -m sumpipe.train.paper > params-paper.yaml`
# (tests/test_train_paper.py checks it holds every override). Use it with
#   sumpipe <stage> -p params-paper.yaml, or as a DVC experiment:
#   dvc exp run -n paper $(python -m sumpipe.train.paper --exp-args)
# For the local CNN stories instead of the Hugging Face download:
#   data.dataset: local, data.path: ../shared/data/cnndm/cnn_stories.jsonl.gz
"""


def apply_overrides(params: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of `params` with each dotted key set (missing mappings are created)."""
    out = copy.deepcopy(params)
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split(".")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return out


def paper_params(base: Path = Path("params.yaml")) -> dict[str, Any]:
    return apply_overrides(yaml.safe_load(base.read_text(encoding="utf-8")), PAPER_OVERRIDES)


def exp_args(base: Path = Path("params.yaml")) -> list[str]:
    """`-S key=value` flags for `dvc exp run` (Hydra syntax: `+key=value` adds a key params.yaml lacks)."""
    params = yaml.safe_load(base.read_text(encoding="utf-8"))
    flags = []
    for dotted, value in PAPER_OVERRIDES.items():
        prefix = "" if _has_key(params, dotted) else "+"
        flags += ["-S", f"{prefix}{dotted}={'null' if value is None else value}"]
    return flags


def _has_key(params: dict[str, Any], dotted: str) -> bool:
    *parents, leaf = dotted.split(".")
    node: Any = params
    for key in parents:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return isinstance(node, dict) and leaf in node


def main(argv: list[str]) -> None:
    if argv[1:] == ["--exp-args"]:
        print(" ".join(exp_args()))
    else:
        sys.stdout.write(HEADER + "\n" + yaml.safe_dump(paper_params(), sort_keys=False, allow_unicode=True))


if __name__ == "__main__":
    main(sys.argv)
