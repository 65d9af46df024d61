"""Several trained models decoded as one summarizer: ensemble decoding (OpenNMT-py's `-model a b c`,
fairseq's `--path a:b:c`).

    model, vocab, card = load_ensemble([Path("models/PG-cov/seed-1"), Path("models/PG-cov/seed-2")])
    summarize(model, vocab, card, documents, cfg)        # sumpipe.decode.batches, unchanged

`EnsembleModel` implements the decoding protocol of `sumpipe.models.protocol` over its members, so beam
search, greedy decoding and sampling (`sumpipe.decode.search`) run over it unchanged. At every step each
member advances its own state and the step's distribution is the members' mean *in probability space*
over the extended vocabulary:

    log p(w) = log (1/n · Σ_i p_i(w)) = logsumexp_i(log p_i(w)) - log n        (N, V + n_oov)

where p_i is member i's final distribution, the pointer-generator mix p_gen·P_vocab + (1 - p_gen)·copy
already applied, so a word copied from the source is averaged like any other. One beam search runs over
that mean: the ensemble picks what the members agree on, which can be a word none of them ranks first.

Details (`--json`, heat maps): `p_gen` is the members' mean, which is exactly the generation share of
the mixture (Σ_i p_gen_i P_vocab_i / n sums to mean p_gen); `attn` (N, S) and `head_attn` (N, H, S) are
the members' attentions weighted by their copy mass (1 - p_gen_i), i.e. where the mixture's copy
distribution points (the plain mean when no member copies, or without p_gen); a key some member lacks is
left out.

A second pass (`sumpipe.models.protocol.Refinable`: bert2stage's refine decoder, on by its
`arch.refine`) is not ensembled: such members are refused with a one-line error (averaging the drafts
and then refining with one member would be neither the ensemble nor that model). bert2stage members
with `arch.refine` off decode as any other family.

The members must read and write the same things (family, input selection, cut lengths, data set,
vocabulary): `load_ensemble` checks their folders first (`sumpipe.decode.members.check_ensemble`), a
one-line error naming the folders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from sumpipe.errors import SumpipeError
from sumpipe.models.card import ModelCard

NEG_INF = float("-inf")


@dataclass
class EnsembleState:
    """Each member's decoding state, in member order; every member's rows are the same N rows."""

    states: tuple[Any, ...]

    def index_select(self, idx: torch.Tensor) -> EnsembleState:
        return EnsembleState(tuple(state.index_select(idx) for state in self.states))


def mean_in_probability(log_probs: Sequence[torch.Tensor]) -> torch.Tensor:
    """log of the mean of exp(log_probs): n tensors (N, W_i) -> (N, max W_i) float32. A narrower member
    (fewer columns) gives those columns probability 0, as a model that cannot produce a word does."""
    width = max(lp.size(-1) for lp in log_probs)
    padded = [torch.nn.functional.pad(lp.float(), (0, width - lp.size(-1)), value=NEG_INF) for lp in log_probs]
    return torch.logsumexp(torch.stack(padded), dim=0) - math.log(len(log_probs))


def mean_details(infos: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The ensemble's `info` from its members' (module docstring): p_gen (N,) their mean; attn (N, S) and
    head_attn (N, H, S) weighted by each member's copy mass 1 - p_gen. A key some member lacks, or whose
    shapes differ between members, is left out."""
    out: dict[str, torch.Tensor] = {}
    shared = [key for key in ("p_gen", "attn", "head_attn")
              if all(key in info for info in infos) and len({info[key].shape for info in infos}) == 1]
    weights = None
    if "p_gen" in shared:
        p_gen = torch.stack([info["p_gen"].float() for info in infos])              # (n, N)
        out["p_gen"] = p_gen.mean(dim=0)
        copy = 1.0 - p_gen
        total = copy.sum(dim=0, keepdim=True)
        weights = torch.where(total > 0, copy / total.clamp_min(1e-30), torch.full_like(copy, 1.0 / len(infos)))
    for key in ("attn", "head_attn"):
        if key not in shared:
            continue
        stacked = torch.stack([info[key].float() for info in infos])                # (n, N, ...)
        if weights is None:
            out[key] = stacked.mean(dim=0)
        else:
            w = weights.reshape(*weights.shape, *([1] * (stacked.dim() - 2)))
            out[key] = (w * stacked).sum(dim=0)
    return out


def refines(model: Any) -> bool:
    """Whether `model` rewrites its drafts in a second pass (`Refinable`, and not switched off by its
    `arch.refine`)."""
    return callable(getattr(model, "refine", None)) and bool(getattr(getattr(model, "arch", None), "refine", True))


class EnsembleModel(torch.nn.Module):
    """n decodable models as one (module docstring). `vocab_size` is the members' (they must share it);
    the members are registered as submodules, so `.to()`, `.eval()` and `parameters()` reach them all."""

    def __init__(self, models: Sequence[Any]) -> None:
        super().__init__()
        if not models:
            raise SumpipeError("an ensemble needs at least one model")
        sizes = sorted({int(m.vocab_size) for m in models})
        if len(sizes) > 1:
            raise SumpipeError(f"an ensemble's members must share one vocabulary (sizes {sizes})")
        if any(refines(m) for m in models):
            raise SumpipeError("an ensemble cannot average a second (refine) pass: these models refine their "
                               "drafts (bert2stage with arch.refine on); decode them one seed at a time")
        self.members = torch.nn.ModuleList(models)
        self.vocab_size = sizes[0]

    def _decodables(self) -> list[Any]:
        """The members as the decoding protocol sees them (a ModuleList types them as plain modules)."""
        return list(self.members)

    def start_decoding(self, batch: Any) -> EnsembleState:
        return EnsembleState(tuple(m.start_decoding(batch) for m in self._decodables()))

    def decode_step(self, state: EnsembleState, prev_tokens: torch.Tensor
                    ) -> tuple[torch.Tensor, EnsembleState, dict[str, torch.Tensor]]:
        """prev_tokens (N,) -> the members' mean log P (N, V + n_oov) (module docstring), the advanced
        state, and the mean details."""
        steps = [m.decode_step(s, prev_tokens) for m, s in zip(self._decodables(), state.states)]
        log_probs = mean_in_probability([lp for lp, _, _ in steps])
        return log_probs, EnsembleState(tuple(s for _, s, _ in steps)), mean_details([i for _, _, i in steps])


def load_ensemble(folders: Sequence[Path], device: str | torch.device = "cpu") -> tuple[EnsembleModel, Any, ModelCard]:
    """(EnsembleModel in eval mode on `device`, the members' vocabulary, the first member's card) of the
    model folders `folders`, checked to fit together before any weights load (module docstring)."""
    from sumpipe.decode.batches import load_model
    from sumpipe.decode.members import check_ensemble

    check_ensemble(folders)
    loaded = [load_model(folder, device=device) for folder in folders]
    model = EnsembleModel([m for m, _, _ in loaded]).eval()
    return model, loaded[0][1], loaded[0][2]
