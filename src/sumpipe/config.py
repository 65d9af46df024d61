"""params.yaml, validated once into typed, frozen dataclasses.

Every stage receives the section it needs as a typed object; nothing else reads params.yaml.
Validation is driven by the dataclass annotations (`sumpipe.validation`): a wrong type, an unknown
key or a value out of range raises `ConfigError` with a one-line message that names the dotted key, e.g.

    params.yaml: vocab.size: expected int, got 'big'

Range checks live in each class's `check()`. The model families' architectures are not here: each
lives beside its model (`ArchConfig` in `sumpipe.models.transformer` for the `model:` section, the
others' under `families.<name>`), and its family validates it when a model is resolved
(`sumpipe.models.registry.resolve_model`), so loading params never imports torch.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.inputs import read_capped
from sumpipe.names import SPLITS, Split
from sumpipe.validation import (
    MAX_BATCH,
    MAX_BOOTSTRAP,
    MAX_COUNT,
    MAX_FF_WIDTH,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_POSITIONS,
    MAX_VOCAB,
    MAX_WIDTH,
    MAX_WORKERS,
    from_dict,
    require,
    require_at_most,
    require_fits_in_memory,
    require_name,
)
from sumpipe.validation import child_key as _k  # every check() names keys

DEFAULT_PARAMS = "params.yaml"
MAX_SEED = 2**63  # torch.manual_seed's range
MAX_SEEDS = 100   # training runs per model: each is a DVC stage


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PathsConfig:
    """Where every artifact lives; the only place paths are written down."""

    raw: str = "data/raw"
    processed: str = "data/processed"
    vocab: str = "data/vocab"
    extracted: str = "data/extracted"
    models: str = "models"
    predictions: str = "predictions"
    scores: str = "scores"
    reports: str = "reports"
    metrics: str = "metrics"
    crosseval: str = "crosseval"
    checkpoints: str = "checkpoints"
    extractive: str = "data/extractive"  # the extractive systems' corpus statistics and NMF keywords
    subword: str = "data/subword"
    pretrain: str = "pretrain"
    timings: str = "timings"  # wall-clock figures of each run: gitignored, no DVC output (sumpipe.timings)
    dvclive: str = "dvclive"  # each training run's live curves (sumpipe.train.live): in git, no DVC output

    def check(self, key: str) -> None:
        # Every stage writes one of these and reads others: two equal or nested paths would let a
        # stage overwrite its own input (paths.processed: data/raw turns preprocess into a deleter).
        folders = {name: _normalised(getattr(self, name)) for name in (f.name for f in dataclasses.fields(self))}
        for name, path in folders.items():
            require(bool(getattr(self, name).strip()), _k(key, name), "must not be empty")
            for other, other_path in folders.items():
                if other != name and (path == other_path or other_path in path.parents):
                    where = "the same folder as" if path == other_path else "inside"
                    raise ConfigError(f"{_k(key, name)}: {getattr(self, name)!r} is {where} {_k(key, other)} "
                                      f"({getattr(self, other)!r}): a stage would overwrite its input")


def _normalised(path: str) -> Path:
    """`path` absolute and without `..`/symlinks, for comparing folders (nothing is created)."""
    return Path(path).expanduser().resolve()


@dataclass(frozen=True)
class SplitRatios:
    train: float = 0.9
    valid: float = 0.05
    test: float = 0.05

    def check(self, key: str) -> None:
        for name in SPLITS:
            require(0.0 <= getattr(self, name) <= 1.0, _k(key, name), "must be between 0 and 1")
        require(abs(self.train + self.valid + self.test - 1.0) < 1e-6, key, "train + valid + test must sum to 1")


@dataclass(frozen=True)
class DataConfig:
    """A corpus for the download stage (and crosseval). `dataset` names an entry of the data-set
    registry (`sumpipe.data.datasets`), which checks the name and what that data set needs (e.g.
    `path` for `local`) where the config is used: this module sits below the loaders.

    `options`: per data set, its own options (`data.options.pydoc.packages`), typed by the dataclass
    its loader module defines beside it and validated by the registry where the config is used, as a
    model family validates its arch section (`sumpipe.data.datasets.dataset_of`)."""

    dataset: str = "pydoc"
    path: str | None = None
    split_ratios: SplitRatios = field(default_factory=SplitRatios)
    max_examples: int | None = None
    seed: int = 13
    options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def check(self, key: str) -> None:
        require(self.max_examples is None or self.max_examples > 0, _k(key, "max_examples"), "must be > 0")


@dataclass(frozen=True)
class PreprocessConfig:
    """Morozovskii 2022 Alg. 2 on every split. Rows with fewer source or reference tokens than the
    minimums (>= 1) are dropped (and counted); `max_source_tokens` (null: whole) cuts the sources;
    `workers` (>= 1): processes, the output does not depend on them."""

    min_source_tokens: int = 1
    min_reference_tokens: int = 1
    max_source_tokens: int | None = None
    # How a hard line break counts for Punkt: "always" ends a sentence (one paragraph/highlight per
    # line, as in CNN/DM), "paragraph" only at a blank line, "ignore" = punctuation only (NLTK).
    line_breaks: Literal["always", "paragraph", "ignore"] = "always"
    workers: int = 2  # processes; the output does not depend on it

    def check(self, key: str) -> None:
        require(self.min_source_tokens >= 1, _k(key, "min_source_tokens"), "must be >= 1")
        require(self.min_reference_tokens >= 1, _k(key, "min_reference_tokens"), "must be >= 1")
        require(self.max_source_tokens is None or self.max_source_tokens >= self.min_source_tokens,
                _k(key, "max_source_tokens"), "must be >= min_source_tokens")
        require(self.workers >= 1, _k(key, "workers"), "must be >= 1")
        require_at_most(self.workers, MAX_WORKERS, _k(key, "workers"))


@dataclass(frozen=True)
class VocabConfig:
    """The vocab stage (sumpipe.vocab): vocabulary size (four specials included), n-gram order and the
    count an n-gram needs to enter the table (score 1/log10(count): a count of 1 would be infinite)."""

    size: int = 50000
    ngram_n: int = 3
    ngram_min_count: int = 2

    def check(self, key: str) -> None:
        require(self.size >= 5, _k(key, "size"), "must be >= 5 (four special tokens plus words)")
        require_at_most(self.size, MAX_VOCAB, _k(key, "size"))
        require(1 <= self.ngram_n <= 8, _k(key, "ngram_n"), "must be between 1 and 8")
        require(self.ngram_min_count >= 2, _k(key, "ngram_min_count"),
                "must be >= 2 (the score 1/log10(count) is infinite for 1)")


@dataclass(frozen=True)
class Budget:
    """One input selection of the extract stage: `method` (a name in `sumpipe.selection.methods`) under a
    budget of `tokens` tokens. Its name is `<method><tokens>` (`ngram200`), the folder it is written to
    and what `models.<name>.input` refers to; `tokens` >= 1. `first_k` (>= 0): the leading sentences a
    method keeps first (`ngram`, Morozovskii 2022 Alg. 1; null: `tokens // 40`, so 5 for 200, 10 for
    400); `options`: method-specific settings, validated by the method."""

    method: str
    tokens: int
    first_k: int | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def check(self, key: str) -> None:
        require(bool(self.method), _k(key, "method"), "must name a selection method")
        require(self.tokens >= 1, _k(key, "tokens"), "must be >= 1")
        require_at_most(self.tokens, MAX_POSITIONS, _k(key, "tokens"))
        require(self.first_k is None or self.first_k >= 0, _k(key, "first_k"), "must be >= 0")

    @property
    def leading_sentences(self) -> int:
        """`first_k`, else the thesis rule: 10 leading sentences for 400 tokens, 5 for 200."""
        return self.first_k if self.first_k is not None else max(1, self.tokens // 40)


def _default_budgets() -> list[Budget]:
    return [Budget("ngram", 200, 5), Budget("first", 200), Budget("ngram", 400, 10), Budget("first", 400)]


@dataclass(frozen=True)
class ExtractConfig:
    """The extract stage (sumpipe.selection): one selection per `budgets` entry (`method`, `tokens`)."""

    budgets: list[Budget] = field(default_factory=_default_budgets)
    workers: int = 2  # processes, used from 10,000 documents per worker on; the output does not depend on it

    def check(self, key: str) -> None:
        require(self.workers >= 1, _k(key, "workers"), "must be >= 1")
        require_at_most(self.workers, MAX_WORKERS, _k(key, "workers"))
        require(len(self.budgets) >= 1, _k(key, "budgets"), "needs at least one budget")
        names = [(b.method, b.tokens) for b in self.budgets]
        require(len(set(names)) == len(names), _k(key, "budgets"), "each (method, tokens) may appear only once")


def check_seeds(seeds: list[int], key: str, or_else: str = "") -> None:
    """A list of training seeds: at least one, none twice, each in [0, MAX_SEED)."""
    require(len(seeds) >= 1, key, f"needs at least one seed {or_else}".rstrip())
    require(len(set(seeds)) == len(seeds), key, "lists a seed twice")
    require_at_most(len(seeds), MAX_SEEDS, key)
    for i, seed in enumerate(seeds):
        require(0 <= seed < MAX_SEED, f"{key}[{i}]", f"must be in [0, {MAX_SEED})")


@dataclass(frozen=True)
class ModelSpec:
    """A named model: its family, the input selection it reads, and per-model overrides.

    `family` names a model family in `sumpipe.models.registry` (`transformer`: M1/M2); `input` names
    an extract selection (`<method><tokens>`, e.g. `first400`, `ngram200`); `rarity` is the transformer
    family's option that turns M1 into M2 (rarity-scaled encoder self-attention); `arch` overrides
    fields of the family's shared architecture (for `transformer`, the `model:` section; for another
    family, `families.<family>:`). The family validates `arch` once, when the model is resolved
    (`sumpipe.models.registry.resolve_model`), with errors naming `models.<name>.arch.<key>`. `train`
    overrides fields of the `train:` section for this model only (never `seed`, `seeds` or `workers`),
    validated when the model is trained. `seeds`: this model's random seeds where they are not
    `train.seeds` (`Params.runs` lists each run for DVC).
    """

    family: str = "transformer"
    input: str = "first400"
    rarity: bool = False
    arch: dict[str, Any] = field(default_factory=dict)
    train: dict[str, Any] = field(default_factory=dict)
    seeds: list[int] | None = None

    def check(self, key: str) -> None:
        if self.seeds is not None:
            check_seeds(self.seeds, _k(key, "seeds"), "(or leave it out: train.seeds)")


def expand_runs(models: Mapping[str, Any], seeds: Sequence[int]) -> dict[str, dict[str, Any]]:
    """`runs:` as params.yaml spells it, from raw `models:` entries: each model with each of its seeds
    (its own `seeds`, else `seeds`, i.e. train.seeds), named `<model>-<seed>`."""
    return {f"{name}-{seed}": {"model": name, "seed": seed}
            for name, spec in models.items() for seed in ((spec or {}).get("seeds") or seeds)}


@dataclass(frozen=True)
class Run:
    """One training run of dvc.yaml's `train` and `decode` stages: a model of `models:` and a seed."""

    model: str
    seed: int


@dataclass(frozen=True)
class EnsembleSpec:
    """A system of the default run made of one model's seeds decoded as one summarizer
    (`sumpipe.decode.ensemble`: each step's distributions averaged, one beam search over the mean):
    `model` names a model of `models:`, `seeds` a subset of its seeds (default: all of them; at least 2).
    dvc.yaml's predict stage writes `predictions/<name>/`, scored by evaluate as one system."""

    model: str
    seeds: list[int] | None = None

    def check(self, key: str) -> None:
        if self.seeds is not None:
            check_seeds(self.seeds, _k(key, "seeds"), "(or leave it out: every seed of the model)")


@dataclass(frozen=True)
class TrainConfig:
    """The training loop (sumpipe.train) of one run; each field, its unit and range (`check`):

    - `optimizer`: adagrad | adam | sgd | rmsprop. `lr` (> 0): Adam's peak rate, reached after
      `warmup_steps` (>= 1) updates of linear warm-up, then inverse-sqrt decay; the others' constant
      rate. `adagrad_initial_accumulator` (>= 0): AdaGrad's. `momentum` ([0, 1)): SGD's and RMSProp's.
    - `label_smoothing` ([0, 1)): of the cross-entropy over the extended vocabulary. `grad_clip` (>= 0;
      0: off): the cap on the global gradient norm.
    - `batch_size` (>= 1): examples in the global batch (all DDP ranks); `accumulate` (>= 1): batches
      per update. `epochs` (>= 1): passes over the data, at most; `max_steps` (>= 1; null: no cap): updates.
    - `patience` (>= 1; null: never): stop after this many epochs without a better validation
      `early_stopping_metric`, `loss` (per target token) or `accuracy` (teacher-forced tokens); the
      weights kept are the best epoch's by that metric.
    - `log_every`, `checkpoint_every` (>= 1): updates per train_log.csv row, and between resume
      checkpoints (one is also written at every epoch end).
    - `device`: auto (CUDA when present) | cpu | cuda. `bf16`: bf16 autocast on CUDA (CPU: float32).
    - `fused_optimizer`: AdaGrad with PyTorch's fused kernel (CPU and CUDA), the same rule in other
      rounding (Adam is always fused). `flash_unpadded`: a transformer batch whose sources all have one
      length attends without a padding mask, so PyTorch may pick its flash kernel.
    - `threads` (>= 1; null: all cores): torch's CPU threads during training; the count changes the weights.
    - `numerics` (`train.numerics` only): torch's CPU kernels for train, pretrain and decode, pinned before
      torch loads (`sumpipe.numerics`): `native` (this CPU's fastest) | `portable` (the same bytes on any x86-64).
    - `workers` (`train.workers` only; >= 1; null: as many as the cores hold): runs `sumpipe train` trains
      side by side, each in its own process on `threads` threads; the weights do not depend on it.
    - `ema_decay` d ((0, 1); null: off): after every update avg <- d * avg + (1 - d) * weights, and the
      average is validated, kept and written instead of the last weights (Polyak averaging).
    - The word families' loss weights (`sumpipe.models.loss`; BERT2S's loss reads none):
      `unk_target_weight` ([0, 1]; See et al. 2017: 1) of a `<unk>` target, a word outside the vocabulary
      that the source lacks; `copy_attention_weight` ([0, 100]; 0: off), lambda of -log(the copy
      distribution's mass on the target's source positions); `copy_target_weight` ([1, 100]; 1: as any
      word) of a target only the pointer can write, a word outside the vocabulary that the source holds.
    - `sentence_ends`: a "." ends each training and validation reference line that ends no sentence
      (`sumpipe.train.targets`); decoding turns it back into a line break.
    - `seed` ([0, 2**63)): the random seed of one run (weights, dropout, batch order). `seeds` (null: one
      run with `seed`): the train stage's list, one model per seed, each run with `seed` set to it.
    """

    optimizer: Literal["adagrad", "adam", "sgd", "rmsprop"] = "adam"
    lr: float = 0.01
    adagrad_initial_accumulator: float = 0.1
    momentum: float = 0.0
    patience: int | None = 1
    early_stopping_metric: Literal["loss", "accuracy"] = "loss"
    warmup_steps: int = 100
    label_smoothing: float = 0.1
    grad_clip: float = 2.0
    batch_size: int = 64
    accumulate: int = 1
    epochs: int = 5
    max_steps: int | None = None
    log_every: int = 10
    checkpoint_every: int = 50
    device: Literal["auto", "cpu", "cuda"] = "auto"
    bf16: bool = True
    fused_optimizer: bool = False
    flash_unpadded: bool = False
    threads: int | None = None
    seed: int = 1234
    seeds: list[int] | None = None
    ema_decay: float | None = None
    numerics: Literal["native", "portable"] = "portable"
    unk_target_weight: float = 0.0
    copy_attention_weight: float = 1.0
    copy_target_weight: float = 6.0
    sentence_ends: bool = False
    workers: int | None = None

    def check(self, key: str) -> None:
        require(self.lr > 0, _k(key, "lr"), "must be > 0")
        require(self.workers is None or self.workers >= 1, _k(key, "workers"), "must be >= 1 (or null: one per core)")
        if self.workers is not None:
            require_at_most(self.workers, MAX_WORKERS, _k(key, "workers"))
        require(self.ema_decay is None or 0.0 < self.ema_decay < 1.0, _k(key, "ema_decay"),
                "must be in (0, 1) (or null: no weight averaging)")
        require(0 <= self.seed < MAX_SEED, _k(key, "seed"), f"must be in [0, {MAX_SEED})")
        if self.seeds is not None:
            check_seeds(self.seeds, _k(key, "seeds"), "(or null: one run with `seed`)")
        require(self.adagrad_initial_accumulator >= 0, _k(key, "adagrad_initial_accumulator"), "must be >= 0")
        require(0.0 <= self.momentum < 1.0, _k(key, "momentum"), "must be in [0, 1)")
        require(self.patience is None or self.patience >= 1, _k(key, "patience"), "must be >= 1 (or null)")
        require(self.warmup_steps >= 1, _k(key, "warmup_steps"), "must be >= 1")
        require(self.batch_size >= 1, _k(key, "batch_size"), "must be >= 1")
        require(self.accumulate >= 1, _k(key, "accumulate"), "must be >= 1 (batches per update)")
        require(self.epochs >= 1, _k(key, "epochs"), "must be >= 1")
        require(self.max_steps is None or self.max_steps >= 1, _k(key, "max_steps"), "must be >= 1 (or null)")
        require(self.log_every >= 1, _k(key, "log_every"), "must be >= 1")
        require(self.checkpoint_every >= 1, _k(key, "checkpoint_every"), "must be >= 1")
        require(self.threads is None or self.threads >= 1, _k(key, "threads"), "must be >= 1 (or null)")
        require(0.0 <= self.label_smoothing < 1.0, _k(key, "label_smoothing"), "must be in [0, 1)")
        require(0.0 <= self.unk_target_weight <= 1.0, _k(key, "unk_target_weight"), "must be in [0, 1]")
        require(0.0 <= self.copy_attention_weight <= 100.0, _k(key, "copy_attention_weight"), "must be in [0, 100]")
        require(1.0 <= self.copy_target_weight <= 100.0, _k(key, "copy_target_weight"), "must be in [1, 100]")
        require(self.grad_clip >= 0, _k(key, "grad_clip"), "must be >= 0")
        for name, limit in (("batch_size", MAX_BATCH), ("accumulate", MAX_BATCH), ("epochs", MAX_COUNT),
                            ("max_steps", MAX_COUNT), ("threads", MAX_WORKERS), ("warmup_steps", MAX_COUNT)):
            require_at_most(getattr(self, name), limit, _k(key, name))

    @property
    def run_seeds(self) -> list[int]:
        """The seeds the train stage trains a model with: `seeds`, else `seed` alone."""
        return list(self.seeds) if self.seeds is not None else [self.seed]

    def for_seed(self, seed: int) -> TrainConfig:
        """The configuration of one training run: `seed` set, no seed list."""
        return dataclasses.replace(self, seed=seed, seeds=None)


# ---- BERT2S (Roy Choudhury 2020): subword vocabulary and the pre-trained BERT-style encoder ----
@dataclass(frozen=True)
class SubwordConfig:
    """The subword stage (sumpipe.subword): a sentencepiece model of `size` pieces (>= 16, a soft limit,
    five specials included; Roy Choudhury 2020: 30,000 WordPieces), `model_type` bpe or unigram,
    covering `character_coverage` ([0.9, 1]) of the characters, trained on at most `max_sentences` lines
    (> 100; null: all; a sample with random seed `seed`) with `threads` (>= 1) threads, on which its
    output depends."""

    size: int = 4000
    model_type: Literal["bpe", "unigram"] = "bpe"
    character_coverage: float = 1.0
    max_sentences: int | None = None
    threads: int = 1
    seed: int = 1234

    def check(self, key: str) -> None:
        require(self.size >= 16, _k(key, "size"), "must be >= 16 (five specials plus pieces)")
        require_at_most(self.size, MAX_VOCAB, _k(key, "size"))
        require_at_most(self.threads, MAX_WORKERS, _k(key, "threads"))
        require(0.9 <= self.character_coverage <= 1.0, _k(key, "character_coverage"), "must be in [0.9, 1]")
        require(self.max_sentences is None or self.max_sentences > 100, _k(key, "max_sentences"),
                "must be > 100 (sentencepiece's minimum sample) or null")
        require(self.threads >= 1, _k(key, "threads"), "must be >= 1")


@dataclass(frozen=True)
class EncoderConfig:
    """A BERT-style encoder (Devlin et al. 2019; Roy Choudhury 2020 ch. 9): learned positions, GELU,
    post-LN. Sizes >= 1, `n_heads` divides `d_model`, `dropout` in [0, 1). The paper's: BERT-base, 12
    layers, 12 heads, d_model 768, d_ff 3072, 512 positions, dropout 0.1.
    """

    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256
    dropout: float = 0.1
    max_positions: int = 256
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    def check(self, key: str) -> None:
        for name in ("d_model", "n_layers", "n_heads", "d_ff", "max_positions", "type_vocab_size"):
            require(getattr(self, name) >= 1, _k(key, name), "must be >= 1")
        for name, limit in (("d_model", MAX_WIDTH), ("d_ff", MAX_FF_WIDTH), ("n_layers", MAX_LAYERS),
                            ("n_heads", MAX_HEADS), ("max_positions", MAX_POSITIONS), ("type_vocab_size", 1024)):
            require_at_most(getattr(self, name), limit, _k(key, name))
        layers = self.n_layers * (4 * self.d_model ** 2 + 2 * self.d_model * self.d_ff)
        require_fits_in_memory(layers + self.max_positions * self.d_model, _k(key, "d_model"))
        require(self.d_model % self.n_heads == 0, _k(key, "n_heads"), "must divide d_model")
        require(0.0 <= self.dropout < 1.0, _k(key, "dropout"), "must be in [0, 1)")
        require(self.layer_norm_eps > 0, _k(key, "layer_norm_eps"), "must be > 0")


def _pretrain_train() -> TrainConfig:
    # a short masked-LM run without early stopping; keys `pretrain.train:` leaves out keep these. One thread:
    # a fixed count gives the same encoder on any core count (docs/decisions.md)
    return TrainConfig(lr=0.002, warmup_steps=30, label_smoothing=0.0, batch_size=64, epochs=1, patience=None,
                       max_steps=100, threads=1)


@dataclass(frozen=True)
class PretrainConfig:
    """The pretrain stage (sumpipe.pretrain): masked-LM pre-training of the encoder on train sources.

    Sources are cut into sequences of `max_tokens` pieces (3 to `encoder.max_positions`; `<s>` and
    `</s>` included); of the pieces that are not specials, `mask_prob` ((0, 1); BERT: 0.15) are
    predicted, and of those `mask_token_prob` ([0, 1]) become `<mask>`, `random_token_prob` ([0, 1 -
    mask_token_prob]) a random non-special piece, the rest stay (BERT: 80/10/10). `init_from` names a
    local Hugging Face BERT folder (config.json, model.safetensors, vocab.txt) to start from instead of
    random weights. `train` is the training loop's configuration for this stage (same keys as the
    `train:` section; one run: a `seed`, no `seeds`).
    """

    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    max_tokens: int = 64
    mask_prob: float = 0.15
    mask_token_prob: float = 0.8
    random_token_prob: float = 0.1
    init_from: str | None = None
    train: TrainConfig = field(default_factory=_pretrain_train)

    def check(self, key: str) -> None:
        require(self.train.seeds is None, _k(key, "train.seeds"),
                "the encoder is pre-trained once: give pretrain.train.seed (every seed of train.seeds starts from it)")
        require(3 <= self.max_tokens <= self.encoder.max_positions, _k(key, "max_tokens"),
                "must be between 3 and encoder.max_positions")
        require(0.0 < self.mask_prob < 1.0, _k(key, "mask_prob"), "must be in (0, 1)")
        require(0.0 <= self.mask_token_prob <= 1.0, _k(key, "mask_token_prob"), "must be in [0, 1]")
        require(0.0 <= self.random_token_prob <= 1.0 - self.mask_token_prob, _k(key, "random_token_prob"),
                "must be in [0, 1 - mask_token_prob]")


@dataclass(frozen=True)
class DecodeConfig:
    """Decoding (Morozovskii 2022 §2.3.4; Roy Choudhury 2020 for sampling); see `sumpipe.decode.search`.

    `strategy`: beam (`beam_size` >= 1 hypotheses) | greedy | sample (`top_k` >= 0, 0: no cut; `top_p`
    in (0, 1]; `temperature` > 0; random seed `seed`). `length_penalty` ([0, 10]): GNMT's alpha.
    `min_length` (>= 0, <= `max_length`): words before `</s>` may end a summary, a sentence end always
    may. `max_length` (>= 1; null: by data set, Morozovskii 2022 Table 4.3: CNN/DM 120, XSum 30,
    Gigaword 25; pydoc 48; else 1.2 x the model's max_summary_tokens). `block_ngram_repeat` (>= 0; 0:
    off): no n-gram of this size twice. `repeat_stop_words`: that rule exempts n-grams made only of stop
    words (NLTK's list), so under 1 a summary may say "the" twice but no content word twice.
    `block_adjacent_repeat`: never the same token twice in a row
    (the decode stage then also writes the summaries without the rule, so the report shows both).
    `min_sentences` (>= 0; 0: off): `</s>` is forbidden while a summary holds fewer sentence ends ("."
    "!" "?"; for models trained with `train.sentence_ends`). `split`: the extracted split the `decode`
    stage summarises. `batch_size` (>= 1): documents per batch. `device`: auto | cpu | cuda.
    `threads` (1 to MAX_WORKERS; null: torch's default, every core): torch's CPU threads while decoding;
    the count changes the last bits of attention weights, and on 2 cores 1 thread is also the fastest.
    `workers` (1 to MAX_WORKERS; null: the cores divided by `threads`): the summarizers the predict stage
    runs side by side, one process each (`sumpipe.decode.pool`); it never changes a prediction.
    `target_length` ([1, 1000]; null: none, the only choice for a model without length control): the
    length budget of every summary, in `length_unit` (`words`, or `bytes` of the summary text), for a
    model trained with length control (`arch.length_control`, counting in the same unit).
    `known_words`: a subword model (BERT2S) writes only words of its training text or of the document
    (`sumpipe.models.known_words`); a word model writes nothing else anyway. `banned_words` (a regular
    expression, or null): no output-vocabulary word that it matches in full is ever written (a subword
    model: no piece whose text does), e.g. Gigaword's placeholders `unk|[#.,]*#[#.,]*` on texts that
    hold neither. `novel_bigram_penalty` ([0, 20]; 0: off): the log-probability every written token pays
    when it and the token before it are a pair the source never writes side by side (Rush et al. 2015's
    bigram-match feature; `sumpipe.decode.search`).
    """

    beam_size: int = 4
    length_penalty: float = 1.0
    min_length: int = 1
    max_length: int | None = None
    block_ngram_repeat: int = 2
    repeat_stop_words: bool = False
    block_adjacent_repeat: bool = False
    min_sentences: int = 0
    strategy: Literal["beam", "greedy", "sample"] = "beam"
    top_k: int = 0
    top_p: float = 1.0
    temperature: float = 1.0
    batch_size: int = 16
    seed: int = 1234
    split: Split = "test"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    threads: int | None = 1
    workers: int | None = None
    target_length: int | None = None
    length_unit: Literal["words", "bytes"] = "bytes"
    known_words: bool = False
    banned_words: str | None = None
    novel_bigram_penalty: float = 0.0

    def check(self, key: str) -> None:
        if self.banned_words is not None:
            import re

            try:
                re.compile(self.banned_words)
            except re.error as exc:
                raise ConfigError(f"{_k(key, 'banned_words')}: not a regular expression ({exc})") from None
        require(self.beam_size >= 1, _k(key, "beam_size"), "must be >= 1")
        # the models' own limit (sumpipe.models.length.MAX_BUDGET: 200 words, 1,000 bytes) is checked at decoding
        require(self.target_length is None or 1 <= self.target_length <= 1000, _k(key, "target_length"),
                "must be in [1, 1000] (or null)")
        require(self.threads is None or 1 <= self.threads <= MAX_WORKERS, _k(key, "threads"),
                f"must be between 1 and {MAX_WORKERS} (or null)")
        require(self.workers is None or 1 <= self.workers <= MAX_WORKERS, _k(key, "workers"),
                f"must be between 1 and {MAX_WORKERS} (or null)")
        # lp = ((5 + |Y|) / 6) ** alpha: past 10 it overflows for long summaries (and 2 is already extreme)
        require(0 <= self.length_penalty <= 10, _k(key, "length_penalty"), "must be in [0, 10]")
        require(self.min_length >= 0, _k(key, "min_length"), "must be >= 0")
        require(self.max_length is None or self.max_length >= 1, _k(key, "max_length"), "must be >= 1")
        require(self.max_length is None or self.min_length <= self.max_length, _k(key, "min_length"),
                f"must be <= max_length ({self.max_length})")
        require(self.block_ngram_repeat >= 0, _k(key, "block_ngram_repeat"), "must be >= 0 (0 = off)")
        require(self.min_sentences >= 0, _k(key, "min_sentences"), "must be >= 0 (0 = off)")
        require(self.top_k >= 0, _k(key, "top_k"), "must be >= 0")
        require(0.0 < self.top_p <= 1.0, _k(key, "top_p"), "must be in (0, 1]")
        require(self.temperature > 0, _k(key, "temperature"), "must be > 0")
        require(self.batch_size >= 1, _k(key, "batch_size"), "must be >= 1")
        require(0 <= self.novel_bigram_penalty <= 20, _k(key, "novel_bigram_penalty"), "must be in [0, 20] (0 = off)")
        for name, limit in (("beam_size", MAX_BATCH), ("batch_size", MAX_BATCH), ("max_length", MAX_POSITIONS),
                            ("min_length", MAX_POSITIONS), ("block_ngram_repeat", MAX_POSITIONS),
                            ("min_sentences", MAX_POSITIONS), ("top_k", MAX_VOCAB)):
            require_at_most(getattr(self, name), limit, _k(key, name))


@dataclass(frozen=True)
class ScoringProtocol:
    """How summaries are scored against their references (`evaluate.protocol`, `crosseval.protocol`).

    `max_bytes` (>= 1): every summary (models' and baselines') is cut to its first N bytes before
    scoring, as ROUGE-1.5.5's `-b N` (a word may be cut in two; DUC 2003/2004 task 1: 75); null: whole.
    `references`: with several references per document, `best` keeps per ROUGE type the reference with the
    highest F1 (rouge-score's `score_multi`), `average` takes the mean of P, R and F1 over the references
    (ROUGE-1.5.5's `-f A`, what DUC and Rush et al. 2015 report).
    `measure`: the figure the tables lead with and the comparisons test, `fmeasure` (F1) or `recall`
    (DUC at 75 bytes, where the cut fixes the length); every table keeps F1 beside it.
    The DUC protocol is `{max_bytes: 75, references: average, measure: recall}`."""

    max_bytes: int | None = None
    references: Literal["best", "average"] = "best"
    measure: Literal["fmeasure", "recall"] = "fmeasure"

    def check(self, key: str) -> None:
        require(self.max_bytes is None or self.max_bytes >= 1, _k(key, "max_bytes"), "must be >= 1 (or null)")
        require_at_most(self.max_bytes, MAX_POSITIONS, _k(key, "max_bytes"))


@dataclass(frozen=True)
class EvaluateConfig:
    """The evaluate stage (sumpipe.evaluate): ROUGE with rouge-score's numbers, bootstrap intervals
    (`bootstrap_samples` resamples, `confidence`, numpy Generator seeded with `seed`), Porter stemming,
    and the Lead-k baseline's k (`lead_sentences` >= 1; Morozovskii 2022: 3). `rare_word_max_count`
    (>= 0): a reference word seen at most this often in training is rare (`sumpipe.evaluate.rare_words`).
    `prefix_bytes`: a baseline `prefix<B>` per entry (each B once, 1 to MAX_POSITIONS), the first B bytes
    of the preprocessed source (Rush et al. 2015's "prefix" headline baseline: 75). `protocol`: how
    summaries are scored (`ScoringProtocol`)."""

    bootstrap_samples: int = 1000
    confidence: float = 0.95
    seed: int = 1234
    use_stemmer: bool = True
    lead_sentences: int = 3
    rare_word_max_count: int = 5
    prefix_bytes: list[int] = field(default_factory=list)
    protocol: ScoringProtocol = field(default_factory=ScoringProtocol)

    def check(self, key: str) -> None:
        for i, size in enumerate(self.prefix_bytes):
            require(1 <= size <= MAX_POSITIONS, _k(key, f"prefix_bytes[{i}]"), f"must be between 1 and {MAX_POSITIONS}")
        require(len(set(self.prefix_bytes)) == len(self.prefix_bytes), _k(key, "prefix_bytes"), "lists a size twice")
        require(self.bootstrap_samples >= 1, _k(key, "bootstrap_samples"), "must be >= 1")
        require(self.rare_word_max_count >= 0, _k(key, "rare_word_max_count"), "must be >= 0")
        require_at_most(self.bootstrap_samples, MAX_BOOTSTRAP, _k(key, "bootstrap_samples"))
        require_at_most(self.lead_sentences, MAX_POSITIONS, _k(key, "lead_sentences"))
        require(0.0 < self.confidence < 1.0, _k(key, "confidence"), "must be in (0, 1)")
        require(self.lead_sentences >= 1, _k(key, "lead_sentences"), "must be >= 1")


@dataclass(frozen=True)
class ReportConfig:
    """The report stage (sumpipe.report): how many test examples get a sample-summary table
    (`n_samples`) and attention heat maps (`n_heatmaps`, the first of the same examples)."""

    n_samples: int = 5
    n_heatmaps: int = 1

    def check(self, key: str) -> None:
        require(self.n_samples >= 0, _k(key, "n_samples"), "must be >= 0")
        require(self.n_heatmaps >= 0, _k(key, "n_heatmaps"), "must be >= 0")
        require_at_most(self.n_samples, 1000, _k(key, "n_samples"))
        require_at_most(self.n_heatmaps, 100, _k(key, "n_heatmaps"))


def _crosseval_data() -> DataConfig:
    return DataConfig(dataset="pydoc", options={"pydoc": {"packages": ["matplotlib"]}})


@dataclass(frozen=True)
class CrossEvalConfig:
    """The crosseval stage (Morozovskii 2022 Table 5.22): trained `models` tested on another corpus, `data`
    (same keys as the `data:` section, read with the download stage's loaders), with the training
    preprocessing and input selection; several references per example are scored best-of.

    `split`: which examples of that corpus (`all`: every one; fine for a corpus the models never saw);
    `max_examples` (>= 1; null: all): a fixed id-hash sample; `name` labels the corpus in tables.
    `protocol`: how the summaries are scored (`ScoringProtocol`; DUC: 75 bytes, recall averaged over the
    references). `decode`: keys of the `decode:` section set otherwise for this corpus only (DUC:
    `{min_length: 13}`), validated with the rest of params (`decode_config`). `ensembles`: names
    of params `ensembles:` tested as well, each its model's seeds decoded as one (none by default). Outputs
    go to `paths.crosseval`.
    """

    models: list[str] = field(default_factory=lambda: ["M1"])
    ensembles: list[str] = field(default_factory=list)
    data: DataConfig = field(default_factory=_crosseval_data)
    split: Literal[Split, "all"] = "all"
    max_examples: int | None = 100
    name: str = "pydoc-matplotlib"
    protocol: ScoringProtocol = field(default_factory=ScoringProtocol)
    decode: dict[str, Any] = field(default_factory=dict)

    def decode_config(self, base: DecodeConfig) -> DecodeConfig:
        """`base` (the `decode:` section) with this corpus's `decode` keys; a bad one is a one-line
        ConfigError naming `crosseval.decode.<key>`."""
        if not self.decode:
            return base
        return from_dict(DecodeConfig, {**dataclasses.asdict(base), **self.decode}, "crosseval.decode")

    def check(self, key: str) -> None:
        require(len(self.models) >= 1, _k(key, "models"), "needs at least one model")
        for i, name in enumerate(self.models):
            require_name(name, _k(key, f"models[{i}]"))
        for i, name in enumerate(self.ensembles):
            require_name(name, _k(key, f"ensembles[{i}]"))
        require(len(set(self.ensembles)) == len(self.ensembles), _k(key, "ensembles"), "lists an ensemble twice")
        require(self.max_examples is None or self.max_examples >= 1, _k(key, "max_examples"), "must be >= 1")
        require(bool(self.name.strip()), _k(key, "name"), "must not be empty")


def _default_systems() -> list[str]:
    return ["lead", "wordfreq", "tfidf", "lsa", "nmf", "textrank", "lexrank", "oracle"]


@dataclass(frozen=True)
class ExtractiveConfig:
    """The extractive summarizers as systems (sumpipe.extractive.stage): each named method's best
    `sentences` sentences (and at most `tokens` tokens, when set) of every `decode.split` document,
    evaluated like a model. `options`: per method, its keyword options (e.g. lexrank: {threshold: 0.1}).
    `keyword_topics` NMF topics of the corpus's references and `keyword_words` top words each (Sokol
    2022 §4.2). Counts >= 1; `sentences` or `tokens` (or both) must be set."""

    systems: list[str] = field(default_factory=_default_systems)
    sentences: int | None = 1
    tokens: int | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    keyword_topics: int = 10
    keyword_words: int = 10

    def check(self, key: str) -> None:
        # method names are checked against the extractive-method registry where they are used (sumpipe.extractive.stage)
        require(len(set(self.systems)) == len(self.systems), _k(key, "systems"), "lists a method twice")
        require(self.sentences is not None or self.tokens is not None, _k(key, "sentences"),
                "a budget needs sentences or tokens")
        require(self.sentences is None or self.sentences >= 1, _k(key, "sentences"), "must be >= 1")
        require(self.tokens is None or self.tokens >= 1, _k(key, "tokens"), "must be >= 1")
        require(self.keyword_topics >= 1, _k(key, "keyword_topics"), "must be >= 1")
        require(self.keyword_words >= 1, _k(key, "keyword_words"), "must be >= 1")
        for name, limit in (("sentences", MAX_POSITIONS), ("tokens", MAX_POSITIONS), ("keyword_topics", 1000),
                            ("keyword_words", 1000)):
            require_at_most(getattr(self, name), limit, _k(key, name))


@dataclass(frozen=True)
class Params:
    paths: PathsConfig = field(default_factory=PathsConfig)
    data: DataConfig = field(default_factory=DataConfig)
    preprocess: PreprocessConfig = field(default_factory=PreprocessConfig)
    vocab: VocabConfig = field(default_factory=VocabConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    # The shared architecture of the transformer family (`ArchConfig`, sumpipe.models.transformer) and of
    # every other family, by family name: mappings here, validated by the family's arch type when a
    # model is resolved (`sumpipe.models.registry.resolve_model`), so loading params never imports torch.
    model: dict[str, Any] = field(default_factory=dict)
    families: dict[str, dict[str, Any]] = field(default_factory=dict)
    models: dict[str, ModelSpec] = field(default_factory=dict)
    # the runs dvc.yaml's train stage trains side by side and its predict stage decodes (`M1-2`: models/M1/seed-2/):
    # every model with each of its seeds (`seeds_of`), spelled out because DVC cannot cross a model with a
    # list the model itself holds
    runs: dict[str, Run] = field(default_factory=dict)
    # systems made of one model's seeds decoded as one (by dvc.yaml's predict stage, into predictions/<name>/)
    ensembles: dict[str, EnsembleSpec] = field(default_factory=dict)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(seeds=[1, 2, 3], threads=1, epochs=5, ema_decay=0.99))
    decode: DecodeConfig = field(default_factory=lambda: DecodeConfig(length_penalty=2.0, block_adjacent_repeat=True))
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    crosseval: CrossEvalConfig = field(default_factory=CrossEvalConfig)
    extractive: ExtractiveConfig = field(default_factory=ExtractiveConfig)
    subword: SubwordConfig = field(default_factory=SubwordConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)

    def check(self, key: str) -> None:
        """Model names are names (`require_name`: never a path). Names that say a budget hold it:
        `<model>-<N>`, where `<model>` is another named model (M1 and
        M1-40), is that model on an N-token selection, so its input must be an extract budget of N tokens
        (the thesis's M1-200 reads `ngram200`). Budgets are data in `extract.budgets`; this keeps the names
        from drifting away from them when a budget is rescaled for another corpus."""
        for name in self.models:
            require_name(name, _k(key, f"models.{name}"))
        self._check_inputs(key)
        # dvc.yaml's `train` matrix crosses every model with every seed of train.seeds: a list it must be,
        # and a seed set anywhere else would be silently overridden by it
        require(self.train.seeds is not None, _k(key, "train.seeds"),
                "list the training seeds (dvc.yaml trains one model per seed), e.g. [1234]")
        require(self.train.seed == TrainConfig.seed, _k(key, "train.seed"),
                "the train stage trains one model per seed of train.seeds: list it there")
        for name, spec in self.models.items():
            for seed_key in ("seed", "seeds"):
                require(seed_key not in spec.train, _k(key, f"models.{name}.train.{seed_key}"),
                        f"a model's own seeds are models.{name}.seeds (default: train.seeds)")
            require("workers" not in spec.train, _k(key, f"models.{name}.train.workers"),
                    "runs side by side is one setting for the stage: train.workers")
        self._check_runs(key)
        self._check_ensembles(key)
        for i, name in enumerate(self.crosseval.ensembles):
            require(name in self.ensembles, _k(key, f"crosseval.ensembles[{i}]"),
                    f"no ensemble {name!r} in ensembles: (known: {', '.join(self.ensembles) or 'none'})")
        self.crosseval.decode_config(self.decode)  # its overrides of `decode:` are checked here, at load
        budgets = {f"{b.method}{b.tokens}": b.tokens for b in self.extract.budgets}
        for name, spec in self.models.items():
            base, _, tokens = name.rpartition("-")
            if base in self.models and tokens.isdigit() and spec.input in budgets:
                require(budgets[spec.input] == int(tokens), _k(key, f"models.{name}.input"),
                        f"{spec.input} holds {budgets[spec.input]} tokens but the name says {int(tokens)}: "
                        "rename the model or give it a selection of that budget")

    def seeds_of(self, name: str) -> list[int]:
        """The seeds model `name` is trained with: its own `seeds`, else `train.seeds`."""
        if name not in self.models:
            raise SumpipeError(f"unknown model {name!r} (known: {', '.join(self.models) or 'none'})")
        own = self.models[name].seeds
        return list(own) if own is not None else self.train.run_seeds

    def seeds_by_model(self) -> dict[str, list[int]]:
        """Every model's training seeds (`seeds_of`), in `models:` order."""
        return {name: self.seeds_of(name) for name in self.models}

    def _check_runs(self, key: str) -> None:
        """`runs` (when given: the main dvc.yaml's stages) lists each model with each of its seeds, no more,
        under the name DVC gives the stage (`M1-2`); a pipeline without `runs` crosses `models` with
        `train.seeds` (dvc.yaml's matrix), so no model may name seeds of its own there."""
        wanted = {f"{name}-{seed}": Run(name, seed) for name, seeds in self.seeds_by_model().items() for seed in seeds}
        if not self.runs:
            for name, spec in self.models.items():
                require(spec.seeds is None, _k(key, f"models.{name}.seeds"),
                        "a model's own seeds need `runs:` (the train stages dvc.yaml makes), else use train.seeds")
            return
        for label, run in self.runs.items():
            require(run.model in self.models, _k(key, f"runs.{label}.model"),
                    f"no model {run.model!r} in models: (known: {', '.join(self.models) or 'none'})")
            require(label == f"{run.model}-{run.seed}", _k(key, f"runs.{label}"),
                    f"name it {run.model}-{run.seed} (its model and seed)")
            seeds = ", ".join(map(str, self.seeds_of(run.model)))
            require(label in wanted, _k(key, f"runs.{label}"),
                    f"seed {run.seed} is not among {run.model}'s seeds ({seeds})")
        for label, run in wanted.items():
            require(label in self.runs, _k(key, "runs"),
                    f"misses {label}: add `{label}: {{model: {run.model}, seed: {run.seed}}}` (models.{run.model} "
                    f"trains seed {run.seed})")

    def ensemble_seeds(self, name: str) -> list[int]:
        """The seeds ensemble `name` decodes as one: its own `seeds`, else every seed of its model."""
        spec = self.ensembles[name]
        return sorted(spec.seeds) if spec.seeds is not None else self.seeds_of(spec.model)

    def _check_ensembles(self, key: str) -> None:
        """Each ensemble is a new system name (not a model's, an extractive system's or Lead-k's) over a model of
        `models:` and at least two of that model's seeds."""
        taken = {*self.models, *self.extractive.systems, f"lead{self.evaluate.lead_sentences}"}
        for name, spec in self.ensembles.items():
            where = _k(key, f"ensembles.{name}")
            require_name(name, where)
            require(name not in taken, where, "is already a system's name (a model, an extractive system or "
                                              "Lead-k): give the ensemble its own")
            require(spec.model in self.models, _k(where, "model"),
                    f"no model {spec.model!r} in models: (known: {', '.join(self.models) or 'none'})")
            trained = self.seeds_of(spec.model)
            for seed in spec.seeds or []:
                require(seed in trained, _k(where, "seeds"),
                        f"seed {seed} is not among {spec.model}'s seeds ({', '.join(map(str, trained))})")
            n = len(self.ensemble_seeds(name))
            listed = spec.seeds is not None
            require(n >= 2, _k(where, "seeds" if listed else "model"),
                    f"an ensemble needs at least 2 seeds; {'it lists' if listed else spec.model + ' trains'} {n}")

    def inputs(self) -> dict[str, str]:
        """The files and folders of the user's that stages read (dotted key -> path)."""
        found = {"data.path": self.data.path, "crosseval.data.path": self.crosseval.data.path,
                 "pretrain.init_from": self.pretrain.init_from}
        return {name: path for name, path in found.items() if path}

    def _check_inputs(self, key: str) -> None:
        """No input of the user's lies in a folder a stage writes, and no such folder in an input: a stage
        replaces its output folder as a whole (and `dvc repro` deletes it before running the stage), so a
        corpus in data/raw or a checkpoint in pretrain/ would be lost; an output inside an input folder
        would be read back as input."""
        names = [f.name for f in dataclasses.fields(self.paths)]
        outputs = {name: _normalised(getattr(self.paths, name)) for name in names}
        for name, given in self.inputs().items():
            path = _normalised(given)
            for out, folder in outputs.items():
                out_key = _k(_k(key, "paths"), out)
                if path == folder or folder in path.parents:
                    where = "is" if path == folder else "is inside"
                    raise ConfigError(f"{_k(key, name)}: {given!r} {where} {out_key} ({getattr(self.paths, out)!r}), "
                                      "a folder the pipeline replaces: it would be lost; move it elsewhere")
                if path in folder.parents:
                    raise ConfigError(f"{_k(key, name)}: {given!r} holds {out_key} ({getattr(self.paths, out)!r}): "
                                      "the stage would read its own outputs; give a folder that holds only input")


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------
MAX_PARAMS_BYTES = 1 << 20  # params.yaml is ~10 KB; PyYAML needs ~80 bytes of memory per byte it reads
MAX_PARAMS_DEPTH = 32       # nesting of mappings and lists (params.yaml's deepest key is 5 levels down)


class _UniqueKeySafeLoader(yaml.SafeLoader):
    """yaml.SafeLoader that rejects a key repeated in one mapping (YAML would silently keep the last
    one, so an edit near the top of params.yaml could be overridden by a forgotten one below), and
    nesting deeper than MAX_PARAMS_DEPTH (`[[[[...]]]]` would end in a RecursionError)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_PARAMS_DEPTH:
                mark = self.peek_event().start_mark
                raise ConfigError(f"nested deeper than {MAX_PARAMS_DEPTH} levels at line {mark.line + 1}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, once it is short enough to read: at most `sumpipe.inputs.MAX_INT_DIGITS` digits (else
        a one-line ConfigError; `int()` itself refuses more than 4,300 with a traceback)."""
        from sumpipe.inputs import MAX_INT_DIGITS

        digits = sum(c.isdigit() for c in node.value)
        if digits > MAX_INT_DIGITS:
            raise ConfigError(f"line {node.start_mark.line + 1}: a number of {digits:,} digits, too large to read "
                              f"(at most {MAX_INT_DIGITS})")
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, typing.Hashable) and key in seen:
                raise ConfigError(f"duplicate key {key!r} at line {key_node.start_mark.line + 1}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_UniqueKeySafeLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeySafeLoader.construct_yaml_int)


def load_params(path: str | Path = DEFAULT_PARAMS) -> Params:
    """Read and validate params.yaml; every problem is a one-line `ConfigError` naming the key."""
    return load_config(path, Params)


def load_config(path: str | Path, cls: type) -> Any:
    """Read a YAML params file into dataclass `cls` (params.yaml, or an experiment's own params)."""
    path = Path(path)
    data = read_params_yaml(path)
    try:
        return from_dict(cls, data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def read_params_yaml(path: str | Path) -> Any:
    """A YAML params file as plain data, read within the limits above (size, nesting, a repeated key, an
    integer too long to read: one-line ConfigErrors naming the file), not yet validated: for the
    commands that edit params.yaml's keys before validating (`sumpipe paper`, a sweep)."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such params file")
    try:
        text = read_capped(path, MAX_PARAMS_BYTES, "a params file").decode("utf-8")
    except SumpipeError as exc:
        raise ConfigError(str(exc)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeySafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return data


def params_from_dict(data: dict[str, Any]) -> Params:
    """Validate an in-memory params mapping (tests and programmatic use)."""
    return from_dict(Params, data)
