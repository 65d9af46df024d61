"""Label-smoothed cross-entropy over the extended vocabulary (Morozovskii 2022 §1.7: "KL with label smoothing").

The smoothed target of a position with gold id y is

    q = (1 − ε)·onehot(y) + ε·uniform(columns 0..K−1)

and the loss is the cross-entropy −Σ_j q_j log p_j = (1 − ε)·(−log p_y) + ε·mean_{j<K}(−log p_j).
It differs from KL(q ‖ p) only by the entropy of q, a constant, so both have the same gradients;
the cross-entropy is reported because with ε = 0 it is the plain NLL (and perplexity = exp(loss)).

Where the smoothing mass goes: K = `n_smooth` columns. Pass the fixed vocabulary size V (the
trainer does) to spread it over the vocabulary words only — the extended columns V.. are
per-example OOV slots, and those a row does not have hold probability 0 (clamped), so smoothing
towards them would only add a constant. With `n_smooth=None` it spreads over all V + n_oov columns.
The gold token still gets its 1 − ε when it is an extended (copied) id. Padding positions
(mask False) are ignored.

`<unk>` targets: a reference word outside the vocabulary that the source does not hold
cannot be copied, and is a `<unk>` target (`batching.encode_example`). On the pydoc corpus 74 % of the
OOV target words are such; trained at full weight, they teach the model that `<unk>` is the likeliest
word wherever a rare word comes — in training the mass goes there rather than to the pointer, and
decoding, which never writes `<unk>`, falls back on a frequent word ("Convert degrees to degrees.").
`target_weights` gives such targets a weight w (`train.unk_target_weight`): 1 is See et al.'s loss,
0 drops them (the model learns nothing at those positions but what comes after them).

Copied targets (`train.copy_target_weight`): a reference word outside the vocabulary that the source
holds is 3 % of the target tokens on the pydoc corpus, so the loss spends 3 % of its weight on teaching
the one thing only the pointer can do. `target_weights` gives such targets a weight w >= 1 (the
weighted mean stays a mean: Σ w·ℓ / Σ w), so the model's capacity goes where the rare words are.

Copy-attention supervision (`copy_attention_nll`, `train.copy_attention_weight`): the mixture trains
the copy distribution a only through (1 − p_gen)·Σ a_i, and on the default corpus the pointer learnt to
spread its mass: at the steps that should copy a source word outside the vocabulary, a put 0.09-0.15 on
that word's positions (experiments/rarewords). The term −log Σ_{i: src_ext_i = y} a_i, at every target
word y the source holds, tells the pointer where the word is whatever p_gen does — the alignment that
OpenNMT-py's copy generator trains (its `copy_attn_force` instead drops the generator's share from the
NLL of such words; here the mixture stays, and the gate learns from it when copying pays).
"""

from __future__ import annotations

import torch

from sumpipe.names import UNK


def label_smoothed_nll(
    log_probs: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor,
    smoothing: float = 0.0,
    n_smooth: int | None = None,
    weight: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """log_probs (B, T, X) float, target (B, T) long extended ids, mask (B, T) bool; optional
    weight (B, T) float, each token's weight (`target_weights`).

    Returns (loss: scalar tensor, the mean over unmasked target tokens; n_tokens: 0-dim long
    tensor, the number of unmasked tokens). With `weight`: the weighted mean Σ w·ℓ / Σ w and the
    float Σ w over unmasked tokens. No host sync: both stay on the device (sum-reduce
    loss × n_tokens across workers for an exact global mean).
    """
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    log_probs = log_probs.float()
    mask = mask.bool()
    safe_target = target.masked_fill(~mask, 0)  # padding ids may be anything; they are masked out
    nll = -log_probs.gather(-1, safe_target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    if smoothing > 0.0:
        k = log_probs.shape[-1] if n_smooth is None else n_smooth
        uniform = -log_probs[..., :k].mean(dim=-1)  # (B, T)
        per_token = (1.0 - smoothing) * nll + smoothing * uniform
    else:
        per_token = nll
    if weight is None:
        n_tokens = mask.sum()
        loss = torch.where(mask, per_token, 0.0).sum() / n_tokens.clamp_min(1)
        return loss, n_tokens
    weight = torch.where(mask, weight.float(), 0.0)
    n_weighted = weight.sum()
    return (weight * torch.where(mask, per_token, 0.0)).sum() / n_weighted.clamp_min(1e-12), n_weighted


def copy_attention_nll(
    attn: torch.Tensor, src_ext: torch.Tensor, src_mask: torch.Tensor, target: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """attn (..., S) copy distributions, src_ext and src_mask (..., S) (broadcastable: the positions'
    own source), target and mask (...) -> (Σ over the unmasked targets the source holds of
    −log Σ_{i: src_ext_i = target} attn_i, how many there are). Float32, on the device."""
    on_target = (src_ext == target[..., None]) & src_mask  # (..., S)
    held = on_target.any(dim=-1) & mask
    aim = (attn.float() * on_target).sum(dim=-1).clamp_min(1e-12)
    return torch.where(held, -aim.log(), 0.0).sum(), held.sum()


def target_weights(target: torch.Tensor, unk_weight: float, copy_weight: float = 1.0,
                   vocab_size: int | None = None) -> torch.Tensor | None:
    """target (...) long extended ids -> (...) float: `unk_weight` at `<unk>` targets (a word outside
    the vocabulary the source lacks), `copy_weight` at copied targets (extended ids >= `vocab_size`: a
    word outside the vocabulary the source holds), 1 elsewhere; None when both are 1 (the plain loss)."""
    if unk_weight == 1.0 and copy_weight == 1.0:
        return None
    weight = torch.where(target == UNK, unk_weight, 1.0)
    if copy_weight != 1.0:
        if vocab_size is None:
            raise ValueError("target_weights: copy_weight needs vocab_size (where the extended ids start)")
        weight = torch.where(target >= vocab_size, copy_weight, weight)
    return weight.to(torch.float32)
