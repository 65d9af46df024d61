"""Which systems the report compares, derived from params.yaml's models (no list to keep in step).

- a model with the transformer family's `rarity` option against the model that differs from it by
  that option alone (M2 against M1, M2-40 against M1-40: the thesis's rarity-scaled attention);
- a hybrid `<base>-<N>` against `<base>` (M1-200 against M1: the thesis's 3-gram selection of N
  tokens against the first tokens; `sumpipe.config.Params.check` ties the name to the budget);
- every model against Lead-3 and against the best extractive system (by mean ROUGE-1, among the
  systems that do not read the reference), added by the evaluate stage, which knows the scores, and
  against every byte prefix of `evaluate.prefix_bytes` (configured to be compared with: Rush et al.'s
  75-byte prefix on headlines);
- an ensemble of params.yaml's `ensembles:` (a model's seeds decoded as one) against its model (each seed
  alone) and against the same baselines; it is one system, one "seed", so its comparisons with the
  deterministic baselines rest on the documents only, and their `what` says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sumpipe.config import ModelSpec


@dataclass(frozen=True)
class Pair:
    """System `a` against system `b`, and what the difference between them is."""

    a: str
    b: str
    what: str


def model_pairs(models: Mapping[str, ModelSpec]) -> list[Pair]:
    """The rarity and selection pairs among `models` (module docstring), in params.yaml order."""
    pairs = []
    for name, spec in models.items():
        if spec.rarity:
            plain = dataclasses.replace(spec, rarity=False)
            twin = next((other for other, s in models.items() if s == plain), None)
            if twin is not None:
                pairs.append(Pair(name, twin, "rarity-scaled attention"))
        base, _, tokens = name.rpartition("-")
        if base in models and tokens.isdigit():
            pairs.append(Pair(name, base, f"{spec.input} selection against {models[base].input}"))
    return pairs


def baseline_pairs(models: list[str], lead: str, best_extractive: str | None,
                   others: Sequence[str] = ()) -> list[Pair]:
    """Every model against Lead-k, against the best extractive system (when that is not Lead-k) and against
    each of `others` (baselines asked for by name: the byte prefixes of `evaluate.prefix_bytes`)."""
    pairs = [Pair(name, lead, f"against {lead}") for name in models]
    if best_extractive is not None and best_extractive != lead:
        pairs += [Pair(name, best_extractive, "against the best extractive system") for name in models]
    for other in others:
        if other not in (lead, best_extractive):
            pairs += [Pair(name, other, f"against {other}") for name in models]
    return pairs


ENSEMBLE_NOTE = "(an ensemble: documents only)"


def ensemble_pairs(ensembles: Mapping[str, str], lead: str, best_extractive: str | None,
                   others: Sequence[str] = ()) -> list[Pair]:
    """Each ensemble ({name: its model}) against its model's seeds one by one, then against the baselines of
    `baseline_pairs`, each `what` marked as an ensemble's (module docstring)."""
    pairs = [Pair(name, model, "the ensemble of its seeds against each seed alone")
             for name, model in ensembles.items()]
    pairs += [dataclasses.replace(pair, what=f"{pair.what} {ENSEMBLE_NOTE}")
              for pair in baseline_pairs(list(ensembles), lead, best_extractive, others)]
    return pairs
