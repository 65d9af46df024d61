"""The registries from the outside: a toy model family and a toy selection method, both defined and
registered in this file alone, go through the real extract -> train -> decode -> evaluate stages."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import torch
from torch import nn

from sumpipe.config import Budget, params_from_dict
from sumpipe.errors import ConfigError
from sumpipe.io.atomic import write_parquet
from sumpipe.models import registry
from sumpipe.models.batching import Batch, WordCodec, bucket_batches, collate, encode_examples, example_lengths
from sumpipe.names import PAD, UNK
from sumpipe.selection import methods
from sumpipe.vocab.vocabulary import Vocabulary

WORDS = "the a cat dog sat on mat ran fast red blue big house tree river bird".split()


# --------------------------------------------------------------------------------------------
# A toy family: mean-of-embeddings encoder, a decoder that sees only the previous word, no copying
# (so its decode_step returns no `p_gen` / `attn` info), its own arch type and training task.
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToyArch:
    vocab_size: int = 40
    d: int = 8
    max_source_tokens: int = 20
    max_summary_tokens: int = 5

    def check(self, key: str) -> None:
        if self.d < 1:
            raise ConfigError(f"{key}.d: must be >= 1")


@dataclass
class ToyState:
    memory: torch.Tensor  # (N, d)
    n_oov: int

    def index_select(self, idx: torch.Tensor) -> ToyState:
        return ToyState(self.memory.index_select(0, idx), self.n_oov)


class ToyModel(nn.Module):
    def __init__(self, arch: ToyArch) -> None:
        super().__init__()
        self.vocab_size = arch.vocab_size
        self.embed = nn.Embedding(arch.vocab_size, arch.d, padding_idx=PAD)
        self.out = nn.Linear(2 * arch.d, arch.vocab_size)

    def _memory(self, batch: Batch) -> torch.Tensor:
        mask = batch.src_mask[..., None].float()
        return (self.embed(batch.src) * mask).sum(1) / mask.sum(1)

    def _log_probs(self, prev: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.embed(prev.masked_fill(prev >= self.vocab_size, UNK)), memory], dim=-1)
        return self.out(x).log_softmax(-1)

    def forward(self, batch: Batch) -> torch.Tensor:
        memory = self._memory(batch)[:, None].expand(-1, batch.trg_inp.size(1), -1)
        return self._log_probs(batch.trg_inp, memory)  # (B, T, V)

    def start_decoding(self, batch: Batch) -> ToyState:
        return ToyState(self._memory(batch.to(self.embed.weight.device)), batch.n_oov)

    def decode_step(self, state: ToyState, prev: torch.Tensor):
        log_probs = self._log_probs(prev, state.memory)
        no_copy = log_probs.new_full((len(prev), state.n_oov), float("-inf"))  # extended ids: never
        return torch.cat([log_probs, no_copy], dim=-1), state, {}


class ToyTask:
    """Fixed batches of 4, plain NLL with OOV targets read as <unk>."""

    def __init__(self, data: registry.TaskData) -> None:
        encode = lambda df: encode_examples(df, data.vocab, data.arch.max_source_tokens,  # noqa: E731
                                            data.arch.max_summary_tokens)
        self.examples = {"train": encode(data.train), "valid": encode(data.valid)}
        self.vocab_size = len(data.vocab)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return bucket_batches(example_lengths(self.examples["train"]), 4, 0, epoch)

    def valid_batches(self) -> list[list[int]]:
        return [list(range(len(self.examples["valid"])))]

    def collate(self, indices, split: str) -> Batch:
        return collate([self.examples[split][i] for i in indices])

    def count_tokens(self, batch: Batch) -> int:
        return int(batch.trg_mask.sum())

    def loss(self, model: nn.Module, batch: Batch):
        target = batch.trg_ext.masked_fill(batch.trg_ext >= self.vocab_size, UNK)
        nll = -model(batch).gather(-1, target[..., None]).squeeze(-1)
        return (nll * batch.trg_mask).sum(), batch.trg_mask.sum()


TOY = registry.Family(
    name="toy",
    arch_type=ToyArch,
    build=lambda arch, spec: ToyModel(arch),
    make_task=ToyTask,
    codec=lambda vocab, arch: WordCodec(vocab, arch.max_source_tokens),
    card_section=lambda model: {"parameters": sum(p.numel() for p in model.parameters())},
)


# --------------------------------------------------------------------------------------------
# A toy selection method: the last sentences that fit the budget; its state (fitted on the train
# split) is the number of training documents, recorded in every analysis to prove it was passed.
# --------------------------------------------------------------------------------------------
def _fit_last(ctx: methods.FitContext) -> int:
    return len(pd.read_parquet(Path(ctx.processed_dir) / "train.parquet"))


def _choose_last(document, n_train: int, budget: Budget) -> list[int]:
    assert n_train == 24
    chosen, used = [], 0
    for i in reversed(range(len(document))):
        if used + len(document[i]) > budget.tokens:
            break
        chosen.append(i)
        used += len(document[i])
    return sorted(chosen)


LAST = methods.SelectionMethod(name="last", fit=_fit_last, prepare=lambda n, docs: [n] * len(docs),
                               choose=_choose_last, baseline=True)


@pytest.fixture
def toy_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the toy family and method for one test (the registries are restored afterwards)."""
    monkeypatch.setattr(registry.FAMILIES, "entries", dict(registry.FAMILIES.entries))
    monkeypatch.setattr(methods.SELECTION_METHODS, "entries", dict(methods.SELECTION_METHODS.entries))
    registry.register_family(TOY)
    methods.register_method(LAST)


def _documents(n: int, seed: int) -> pd.DataFrame:
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(n):
        sentences = [" ".join(WORDS[j] for j in torch.randint(0, len(WORDS), (4,), generator=g).tolist()) + " ."
                     for _ in range(3)]
        rows.append({"id": f"{seed}-{i}", "source": "\n".join(sentences), "reference": sentences[-1]})
    return pd.DataFrame(rows)


def _params(root: Path, **models: Any):
    return params_from_dict({
        "paths": {k: str(root / k) for k in ("raw", "processed", "vocab", "extracted", "models", "checkpoints",
                                             "predictions", "scores", "metrics", "timings", "dvclive")},
        "extract": {"budgets": [{"method": "last", "tokens": 10}, {"method": "first", "tokens": 10}]},
        "families": {"toy": {"d": 6}},
        "models": models,
        "train": {"batch_size": 4, "epochs": 2, "device": "cpu", "threads": 1, "lr": 0.05, "warmup_steps": 2,
                  "seeds": [1]},
        "evaluate": {"bootstrap_samples": 20},
        "decode": {"min_length": 1},  # the toy's summaries are 4 tokens
    })


def test_toy_family_and_method_run_through_every_stage(tmp_path: Path, toy_registries: None) -> None:
    from sumpipe.decode.batches import load_model
    from sumpipe.decode.stage import decode_stage
    from sumpipe.evaluate.stage import run_evaluate
    from sumpipe.selection.stage import extract
    from sumpipe.train.stage import resolve_inputs, train_model

    params = _params(tmp_path, toy={"family": "toy", "input": "last10", "arch": {"max_summary_tokens": 4}})
    paths = params.paths
    Path(paths.processed).mkdir()
    for split, n, seed in (("train", 24, 1), ("valid", 6, 2), ("test", 5, 3)):
        _documents(n, seed).to_parquet(Path(paths.processed) / f"{split}.parquet")
    Path(paths.raw).mkdir()  # evaluate reads the raw test and train texts (read quality: names, names' dots)
    _documents(5, 3).to_parquet(Path(paths.raw) / "test.parquet")
    _documents(24, 1).to_parquet(Path(paths.raw) / "train.parquet")
    Vocabulary.from_counts({w: 100 - i for i, w in enumerate(WORDS)}, 14).save(Path(paths.vocab) / "vocab.parquet")
    counts = {w: 100 - i for i, w in enumerate(WORDS)}  # the vocab stage's training counts (rare-word recall)
    write_parquet(pd.DataFrame({"id": range(len(counts)), "token": list(counts), "count": list(counts.values())}),
                  Path(paths.vocab) / "words.parquet")

    extract(paths.processed, paths.vocab, paths.extracted, params.extract, Path(paths.metrics) / "coverage.json",
            progress=False)
    test_last = pd.read_parquet(Path(paths.extracted) / "last10" / "test.parquet")
    assert test_last["selected"].map(list).tolist() == [[1, 2]] * 5  # two 5-token sentences from the end

    inputs = resolve_inputs(params, "toy", 1)
    assert inputs.arch == ToyArch(vocab_size=40, d=6, max_source_tokens=20, max_summary_tokens=4)
    summary = train_model(inputs, progress=False)
    assert summary["steps"] == 12

    model, vocab, card = load_model(Path(paths.models) / "toy" / "seed-1")
    assert isinstance(model, ToyModel) and len(vocab) == 14 == model.vocab_size
    assert card.family == "toy" and card.arch == ToyArch(vocab_size=14, d=6, max_source_tokens=20,
                                                         max_summary_tokens=4)
    assert card.selection == Budget("last", 10) and card.family_info == {"parameters": 14 * 6 + 12 * 14 + 14}

    result = decode_stage(Path(paths.models) / "toy" / "seed-1", paths.extracted,
                          Path(paths.predictions) / "toy" / "seed-1", params.decode)
    predictions = pd.read_parquet(result.path)["prediction"]
    assert len(predictions) == 5 and all(1 <= len(p.split()) <= result.max_length for p in predictions)
    assert result.max_length == 5  # 1.2 x the toy's max_summary_tokens (pydoc has no Table 4.3 entry)

    scored = run_evaluate(paths, params.evaluate, params.models, [1], [],
                          methods.baseline_selections(params.extract.budgets))
    assert list(scored.summaries) == ["toy", "lead3", "last10", "first10"]
    assert scored.summaries["last10"]["n"] == 5


def test_unknown_family_and_method_are_one_line_errors(tmp_path: Path) -> None:
    from sumpipe.train.stage import resolve_inputs

    params = _params(tmp_path, toy={"family": "toy", "input": "last10"})
    with pytest.raises(ConfigError, match=r"^models.toy.family: unknown model family 'toy' "
                                          r"\(known: bert2stage, rnn, transformer\)$"):
        resolve_inputs(params, "toy", 1)
    with pytest.raises(ConfigError, match=r"^extract.budgets\[0\].method: unknown selection method 'last' "
                                          r"\(known: [a-z_, ]*\bfirst\b[a-z_, ]*\bngram\b[a-z_, ]*\)$"):
        methods.resolve_selections(params.extract.budgets)


def test_family_options_and_arch_defaults_are_checked(tmp_path: Path, toy_registries: None) -> None:
    params = _params(tmp_path, toy={"family": "toy", "input": "last10", "rarity": True})
    with pytest.raises(ConfigError, match=r"^models.toy.rarity: not an option of the 'toy' family$"):
        registry.resolve_model(params, "toy")
    params = dataclasses.replace(_params(tmp_path, toy={"family": "toy", "input": "last10"}),
                                 families={"toy": {"d": 0}})
    with pytest.raises(ConfigError, match=r"^families.toy.d: must be >= 1$"):
        registry.resolve_model(params, "toy")
