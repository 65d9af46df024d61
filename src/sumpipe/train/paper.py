"""The paper configuration (Morozovskii 2022, SEEDS.md §1.7) as a list of overrides of params.yaml.

One source of truth, two ways to use it:

    python -m sumpipe.train.paper > params-paper.yaml          # regenerate the full params file
    sumpipe train --model M1 -p params-paper.yaml                # any stage, by hand
    dvc exp run -n paper $(python -m sumpipe.train.paper --exp-args)   # as a DVC experiment

The thesis fixes: d_model = embedding 256, feed-forward 1024, 8 layers, 8 heads, dropout 0.2,
vocabulary 50,000 words for 400-token inputs and 25,000 for 200-token ones, summaries of 100
tokens, AdaGrad lr 0.15 (initial accumulator 0.1, as See et al. 2017), 5 epochs, beam 4 with the GNMT
length penalty, at most 120 generated tokens. It leaves open the batch size (32 here; See et al. used
16), gradient clipping (2.0, See et al.), the label smoothing (0.1, Vaswani et al. 2017) and the length
penalty's alpha (1, Roy Choudhury 2020's). The recurrent models are See et al.'s pointer-generator with
coverage (PG-cov) and Sokol 2022's BiLSTM (BiLSTM-000), with their own training. docs/paper.md traces
every value to its source; params-paper.yaml is what `main` writes (tests/train/test_paper.py).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from sumpipe.config import expand_runs, read_params_yaml

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
    # The thesis's budgets and the six models on them (params.yaml scales them to its short documents).
    "extract.budgets": [
        {"method": "ngram", "tokens": 200, "first_k": 5},
        {"method": "first", "tokens": 200},
        {"method": "ngram", "tokens": 400, "first_k": 10},
        {"method": "first", "tokens": 400},
    ],
    "models.M1.input": "first400",
    "models.M2.input": "first400",
    "models.M1-200": {"family": "transformer", "input": "ngram200", "rarity": False,
                      "arch": {"max_source_tokens": 200, "vocab_size": 25000}},
    "models.M2-200": {"family": "transformer", "input": "ngram200", "rarity": True,
                      "arch": {"max_source_tokens": 200, "vocab_size": 25000}},
    "models.M1-400": {"family": "transformer", "input": "ngram400", "rarity": False},
    "models.M2-400": {"family": "transformer", "input": "ngram400", "rarity": True},
    "models.PG-cov.input": "first400",
    "models.BERT2S.input": "first400",
    # Decoding (docs/paper.md traces each value): the thesis's GNMT penalty with alpha 1 (its value is
    # not stated; Roy Choudhury 2020 §10.3 sets 1), no n-gram blocking (the thesis names 2-gram blocking
    # only for Deaton et al.'s system, Table 5.26), no adjacent rule, no minimum beyond one word.
    "decode.length_penalty": 1.0,
    "decode.block_ngram_repeat": 0,
    "decode.min_length": 1,
    "decode.block_adjacent_repeat": False,
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
    # "All models have been trained on 5 epochs" (§5.2.2): every epoch, no early stop, no weight average
    "train.patience": None,
    "train.ema_decay": None,
    "decode.beam_size": 4,
    "decode.max_length": 120,
    # the thesis's word handling (the default run changed its own): every word outside the vocabulary is
    # one <unk> vector, and a reference word the pointer cannot copy is trained as <unk>
    "model.oov_slots": 0,
    "model.oov_rarity": "unknown",
    "model.oov_spelling": 0,
    "families.rnn.oov_slots": 0,
    "families.rnn.oov_spelling": 0,
    "train.unk_target_weight": 1.0,
    "train.copy_attention_weight": 0.0,
    "train.copy_target_weight": 1.0,
    # --- the recurrent family ---
    # See et al. 2017: BiLSTM encoder 256, embedding 128, vocabulary 50k, 400 -> 100 tokens, AdaGrad 0.15
    # (accumulator 0.1), batch 16, no label smoothing, ~13 epochs (230k updates)
    # of the pointer-generator, then 3,000 updates with coverage (λ = 1).
    "families.rnn.cell": "lstm",
    "families.rnn.embedding_dim": 128,
    "families.rnn.hidden_dim": 256,
    "families.rnn.layers": 1,
    "families.rnn.vocab_size": 50000,
    "families.rnn.max_source_tokens": 400,
    "families.rnn.max_summary_tokens": 100,
    "models.PG-cov.arch.coverage_phase_steps": 3000,
    "models.PG-cov.train.optimizer": "adagrad",
    "models.PG-cov.train.lr": 0.15,
    "models.PG-cov.train.adagrad_initial_accumulator": 0.1,
    "models.PG-cov.train.batch_size": 16,
    "models.PG-cov.train.label_smoothing": 0.0,
    "models.PG-cov.train.epochs": 13,
    "models.PG-cov.train.max_steps": None,
    "models.PG-cov.train.threads": None,
    # See et al. "do not use any form of regularization": no weight average; one loss weight for every word
    "models.PG-cov.train.ema_decay": None,
    "models.PG-cov.train.copy_attention_weight": 0.0,
    "models.PG-cov.train.copy_target_weight": 1.0,
    # Sokol 2022 §4.3 (Amazon fine-food reviews -> summaries): 3 BiLSTM encoder layers, one LSTM decoder,
    # a softmax output (no attention, no copying), RMSProp, batch 128, up to 50 epochs with early stopping
    # on validation accuracy (it stopped at 12; the patience is not given: 3 here). Its data: data.dataset local,
    # data.path ../shared/data/amazon_food/reviews_first200.jsonl.gz (200 rows on this machine).
    "models.BiLSTM-000.family": "rnn",
    "models.BiLSTM-000.input": "first400",
    "models.BiLSTM-000.arch.layers": 3,
    "models.BiLSTM-000.arch.attention": "none",
    "models.BiLSTM-000.arch.pointer": False,
    "models.BiLSTM-000.arch.coverage": False,
    "models.BiLSTM-000.train.optimizer": "rmsprop",
    "models.BiLSTM-000.train.lr": 0.001,
    "models.BiLSTM-000.train.batch_size": 128,
    "models.BiLSTM-000.train.epochs": 50,
    "models.BiLSTM-000.train.patience": 3,
    "models.BiLSTM-000.train.early_stopping_metric": "accuracy",
    "models.BiLSTM-000.train.label_smoothing": 0.0,
    # ---- Roy Choudhury 2020 (family bert2stage, model BERT2S): BERT-base encoder over 30,000 subwords, 12
    # decoder layers per stage, dropout 0.1, Adam, batch 2 x 36 accumulation steps, label smoothing
    # 0.1, 4 epochs; beams 2-4 with length penalty 1 (decode.* above). BERT's weights cannot be
    # downloaded here, so the encoder is pre-trained on the corpus (masked LM, 512-piece windows,
    # effective batch 256 as BERT) unless pretrain.init_from names a local checkpoint. The thesis leaves
    # the learning rates open: 1e-4 peaks after 10,000 / 1,000 warm-up updates (BERT / BERT fine-tuning).
    "subword.size": 30000,
    "pretrain.encoder.d_model": 768,
    "pretrain.encoder.n_layers": 12,
    "pretrain.encoder.n_heads": 12,
    "pretrain.encoder.d_ff": 3072,
    "pretrain.encoder.dropout": 0.1,
    "pretrain.encoder.max_positions": 512,
    "pretrain.max_tokens": 512,
    "pretrain.train.lr": 0.0001,
    "pretrain.train.warmup_steps": 10000,
    "pretrain.train.batch_size": 32,
    "pretrain.train.accumulate": 8,
    "pretrain.train.epochs": 10,
    "pretrain.train.max_steps": None,
    "pretrain.train.log_every": 100,
    "pretrain.train.checkpoint_every": 1000,
    "families.bert2stage.n_decoder_layers": 12,
    "families.bert2stage.dropout": 0.1,
    "families.bert2stage.max_source_tokens": 512,
    "families.bert2stage.max_summary_tokens": 100,
    "families.bert2stage.refine_positions": None,
    "models.BERT2S.train.optimizer": "adam",
    "models.BERT2S.train.lr": 0.0001,
    "models.BERT2S.train.warmup_steps": 1000,
    "models.BERT2S.train.batch_size": 2,
    "models.BERT2S.train.accumulate": 36,
    "models.BERT2S.train.epochs": 4,
    "models.BERT2S.train.max_steps": None,
    "models.BERT2S.train.label_smoothing": 0.1,
    "models.BERT2S.train.ema_decay": None,
}

# Keys of params.yaml that the paper configuration does not have (none today: the default run trains no
# hybrid; the paper's are added above). `runs` is recomputed from the paper's models (`paper_params`).
PAPER_REMOVES: list[str] = []

HEADER = """\
# The paper configuration (Morozovskii 2022; docs/paper.md traces every value): params.yaml with the
# overrides of src/sumpipe/train/paper.py. Generated, never edited by hand:
#   python -m sumpipe.train.paper > params-paper.yaml
# (tests/train/test_paper.py fails when this file differs from what that writes). Use it with
#   sumpipe <stage> -p params-paper.yaml, or as a DVC experiment:
#   dvc exp run -n paper $(python -m sumpipe.train.paper --exp-args)
# For the local CNN stories instead of the Hugging Face download:
#   data.dataset: local, data.path: ../shared/data/cnndm/cnn_stories.jsonl.gz
"""


def apply_overrides(params: dict[str, Any], overrides: dict[str, Any], removes: Sequence[str] = ()) -> dict[str, Any]:
    """A deep copy of `params` without the dotted keys `removes` and with each dotted key of `overrides`
    set (missing mappings are created)."""
    out = copy.deepcopy(params)
    for dotted in removes:
        *parents, leaf = dotted.split(".")
        node = out
        for key in parents:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(leaf, None)
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split(".")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return out


def paper_overrides(params: dict[str, Any]) -> dict[str, Any]:
    """PAPER_OVERRIDES and `runs` for the paper's models, each with its seeds (params.yaml's `runs` lists
    the default run's models)."""
    applied = apply_overrides(params, PAPER_OVERRIDES, PAPER_REMOVES)
    return {**PAPER_OVERRIDES, "runs": expand_runs(applied["models"], applied["train"]["seeds"])}


def paper_params(base: Path = Path("params.yaml")) -> dict[str, Any]:
    """params.yaml with the paper's overrides (`paper_overrides`)."""
    params = read_params_yaml(base)  # bounded, and a number too long to read is one line
    return apply_overrides(params, paper_overrides(params), PAPER_REMOVES)


def _hydra(value: Any) -> str:
    """A value in Hydra's override grammar (what `dvc exp run -S` parses): null, true/false, [..], {k:v}."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_hydra(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_hydra(v) for v in value) + "]"
    return str(value)


def exp_args(base: Path = Path("params.yaml")) -> list[str]:
    """`-S key=value` flags for `dvc exp run` (Hydra syntax: `+key=value` adds a key params.yaml lacks,
    `~key` removes one)."""
    params = read_params_yaml(base)  # bounded, and a number too long to read is one line
    flags = []
    for dotted in PAPER_REMOVES:
        if _has_key(params, dotted):
            flags += ["-S", f"~{dotted}"]
    for dotted, value in paper_overrides(params).items():
        if dotted == "runs" and _has_key(params, dotted):  # a mapping with other keys: replaced, not merged
            flags += ["-S", "~runs"]
        prefix = "" if _has_key(params, dotted) and dotted != "runs" else "+"
        flags += ["-S", f"{prefix}{dotted}={_hydra(value)}"]
    return flags


def _has_key(params: dict[str, Any], dotted: str) -> bool:
    *parents, leaf = dotted.split(".")
    node: Any = params
    for key in parents:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return isinstance(node, dict) and leaf in node


def validate_paper_params(data: dict[str, Any]) -> None:
    """Refuse a paper configuration that a stage would refuse: the params, and every model's resolved
    architecture (the `model:` and `families.<name>` sections are validated by their family)."""
    from sumpipe.config import params_from_dict
    from sumpipe.models.registry import resolve_model

    params = params_from_dict(data)
    for name in params.models:
        resolve_model(params, name)


def paper_yaml(base: Path = Path("params.yaml")) -> str:
    """The text of params-paper.yaml: HEADER and `paper_params(base)`, validated. The committed file is
    exactly this (tests/train/test_paper.py)."""
    params = paper_params(base)
    validate_paper_params(params)  # before anything is written
    return HEADER + "\n" + yaml.safe_dump(params, sort_keys=False, allow_unicode=True)


def main(argv: list[str]) -> None:
    if argv[1:] == ["--exp-args"]:
        validate_paper_params(paper_params())  # before anything is printed
        print(" ".join(exp_args()))
    else:
        sys.stdout.write(paper_yaml())


if __name__ == "__main__":
    main(sys.argv)
