"""Model families: the one registry train, decode, evaluate and report dispatch through.

A family is a kind of model (`transformer`: M1/M2 of the thesis). params.yaml names it per model:

    models:
      M2: {family: transformer, input: first400, rarity: true, arch: {n_layers: 4}}
      R1: {family: rnn, input: ngram400, arch: {hidden_dim: 128}}
    families:
      rnn: {hidden_dim: 256, ...}     # shared architecture of a family (the transformer's is `model:`)

Adding a family = one module that builds a `Family` and calls `register_family`, plus one line in
`BUILTIN` below (name -> module, imported on first use, so torch loads only when a model is needed),
plus its params. What a family brings:

    Family(
        name="rnn",
        arch_type=RNNArch,              # frozen dataclass with a `check(key)`, validated like params.yaml;
                                        #   must have `max_summary_tokens` (decode's length rule)
        build=lambda arch, spec: ...,   # (resolved arch, ModelSpec) -> untrained nn.Module implementing
                                        #   `sumpipe.models.protocol.Decodable` (info keys p_gen/attn optional)
        make_task=lambda data: ...,     # TaskData -> a `sumpipe.train.engine.TrainTask` (epoch_batches,
                                        #   valid_batches, collate, count_tokens, loss): the family's
                                        #   encoding, batching and loss (coverage, second-stage...)
        codec=lambda vocab, arch: ...,  # -> Codec: a document -> decoder input, ids -> words
        vocabulary=WORD_VOCABULARY,     # how its vocabulary is made for training, saved and loaded
                                        #   (`sumpipe.models.vocabulary.VocabularyKind`)
        options=("rarity",),            # ModelSpec options it honours (others must stay at default)
        card_section=lambda model: {},  # extra facts for its model card (`ModelCard.family_info`)
        arch_defaults=None,             # Params -> base arch mapping, validated; default `families.<name>`
                                        #   (transformer: the `model:` section)
        phases=None,                    # (arch, train cfg, batches per epoch) -> [TrainPhase]: a
                                        #   training schedule in phases (rnn: See et al.'s coverage
                                        #   phase); default one phase, the `train:` section
        warm_start=None,                # (untrained model, arch) -> files read: start from an earlier
                                        #   stage's weights (bert2stage: the pre-trained encoder)
        legacy_arch={},                 # arch keys older model cards lack -> the value those models had
    )

`resolve_model(params, name)` applies a model's overrides once (family defaults <- `models.<name>.arch`)
and validates the result; the trainer then sets the vocabulary size (`Vocabulary.for_training`) and
calls `build`. `load_pretrained` (`sumpipe.models.io`) rebuilds a model from its typed card.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sumpipe.config import ModelSpec, Params, TrainConfig
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.models.vocabulary import WORD_VOCABULARY, VocabularyKind
from sumpipe.registry import Registry
from sumpipe.validation import from_dict

if TYPE_CHECKING:
    import pandas as pd
    from torch import nn

# name -> module that registers it
BUILTIN: dict[str, str] = {
    "transformer": "sumpipe.models.transformer",
    "rnn": "sumpipe.models.rnn",
    "bert2stage": "sumpipe.models.bert2stage",
}


class Codec(Protocol):
    """Decode-time text <-> ids of one trained model (its vocabulary and input cut).

    `sentence_end_ids`: the ids of the tokens that end a sentence (`sumpipe.names.SENTENCE_END`),
    for the decoder's minimum-length rule (a sentence end counts as an end).
    """

    sentence_end_ids: tuple[int, ...]

    def encode(self, example_id: str, source: str) -> Any:
        """A preprocessed document (text convention) -> one example for `collate`."""

    def collate(self, examples: Sequence[Any]) -> Any:
        """Examples -> a batch for `Decodable.start_decoding` (with `src` (B, S) and `oov_words`)."""

    def words(self, ids: Sequence[int], example: Any) -> list[str]:
        """Generated (extended) ids -> output words."""

    def source_tokens(self, source: str) -> list[str]:
        """The input tokens the model reads: the columns of its attention."""


@dataclass(frozen=True)
class TaskData:
    """What a family's `make_task` gets: the selection's train/valid frames (id, source, reference),
    the training vocabulary, the resolved arch and the `train:` section."""

    train: pd.DataFrame
    valid: pd.DataFrame
    vocab: Any
    arch: Any
    cfg: TrainConfig


@dataclass(frozen=True)
class TrainPhase:
    """One phase of a family's training schedule: a name (its checkpoint sub-folder when there are
    several phases), its `train:` settings, and what to switch on the model before it runs."""

    name: str
    cfg: TrainConfig
    prepare: Callable[[Any], None]  # gets the family's own model (what its `build` returned)


@dataclass(frozen=True)
class Family:
    """One model family (see the module docstring)."""

    name: str
    arch_type: type
    build: Callable[[Any, ModelSpec], nn.Module]
    make_task: Callable[[TaskData], Any]
    codec: Callable[[Any, Any], Codec]
    vocabulary: VocabularyKind = WORD_VOCABULARY
    options: tuple[str, ...] = ()
    # the callbacks that get a model get the family's own class (what `build` returned), hence Any
    card_section: Callable[[Any], dict[str, Any]] = field(default=lambda model: {})
    arch_defaults: Callable[[Params], dict[str, Any]] | None = None
    phases: Callable[[Any, TrainConfig, int], list[TrainPhase]] | None = None
    # Called by the trainer on the freshly built model, before training (a resumed run's checkpoint
    # then overrides it); returns the files it read, which join the resume fingerprint.
    warm_start: Callable[[Any, Any], list[Path]] | None = None
    # Arch keys added after models were trained and shipped, with the value those models were built with:
    # a model card (config.json) without the key reads it (`sumpipe.models.io.read_typed_card`), so an
    # older model folder still loads when the key's default has changed since.
    legacy_arch: dict[str, Any] = field(default_factory=dict)

    def training_phases(self, arch: Any, cfg: TrainConfig, n_batches: int) -> list[TrainPhase]:
        """The schedule for `arch` (`n_batches` training batches an epoch): the family's, or one phase."""
        if self.phases is None:
            return [TrainPhase("main", cfg, lambda model: None)]
        return self.phases(arch, cfg, n_batches)

    def base_arch(self, params: Params) -> dict[str, Any]:
        """The family's shared architecture from params (validated), before a model's overrides."""
        if self.arch_defaults is not None:
            return self.arch_defaults(params)
        base = params.families.get(self.name, {})
        return dataclasses.asdict(from_dict(self.arch_type, base, f"families.{self.name}"))

    def arch_from(self, data: Any, key: str) -> Any:
        """A mapping validated into this family's arch type; errors name `key.<field>`."""
        return from_dict(self.arch_type, data, key)


FAMILIES: Registry[Family] = Registry("model family", BUILTIN)


def register_family(family: Family) -> Family:
    """Add `family` to the registry (a second registration under the same name replaces the first)."""
    return FAMILIES.register(family.name, family)


def get_family(name: str, key: str = "family") -> Family:
    """The registered family `name`; an unknown one is a one-line ConfigError naming `key`."""
    return FAMILIES.get(name, key)


_SPEC_DEFAULTS = ModelSpec()


def resolve_model(params: Params, name: str) -> tuple[Family, ModelSpec, Any]:
    """(family, spec, arch) of `params.models[name]`, the overrides applied once and validated.

    Errors are one line: an unknown model lists the known ones; a bad override names
    `models.<name>.arch.<key>`; an option the family does not have names `models.<name>.<option>`.
    """
    if name not in params.models:
        known = ", ".join(params.models) or "none (add a `models:` block to params.yaml)"
        raise SumpipeError(f"unknown model {name!r} (known: {known})")
    spec = params.models[name]
    key = f"models.{name}"
    family = get_family(spec.family, f"{key}.family")
    for option in ("rarity",):
        if getattr(spec, option) != getattr(_SPEC_DEFAULTS, option) and option not in family.options:
            raise ConfigError(f"{key}.{option}: not an option of the {family.name!r} family")
    arch = family.arch_from({**family.base_arch(params), **spec.arch}, f"{key}.arch")
    return family, spec, arch
