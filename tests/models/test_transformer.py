"""M1 / M2: distributions, M2-neutral == M1, incremental decoding == teacher forcing, overfitting."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from sumpipe.config import DecodeConfig, load_params
from sumpipe.errors import ConfigError
from sumpipe.models.batching import collate, decoder_input, encode_examples
from sumpipe.models.layers import embed_words, key_padding_bias
from sumpipe.models.loss import label_smoothed_nll
from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer
from sumpipe.names import UNK
from tests.models.tiny import VOCAB, WORDS, overfit

ARCH = ArchConfig(d_model=32, d_ff=64, n_layers=2, n_heads=4, dropout=0.0, vocab_size=len(VOCAB),
                  max_source_tokens=50, max_summary_tokens=20)


def _batch():
    df = pd.DataFrame({
        "id": ["a", "b", "c"],
        "source": ["the big zorro sat on the mat .\nthe zorro ran", "a dog ran in the park", "qux quux the cat"],
        "reference": ["zorro sat on the mat .", "a dog ran", "the qux"],
    })
    return collate(encode_examples(df, VOCAB, 50, 20))


def test_targets_only_is_the_full_output_at_the_real_target_positions() -> None:
    # the training loss reads only these rows; the references have 6, 3 and 2 words (+ </s>)
    torch.manual_seed(0)
    model = PointerGeneratorTransformer(ARCH).eval()
    batch = _batch()
    assert batch.trg_positions.tolist() == [*range(0, 7), *range(7, 11), *range(14, 17)]
    full, info = model.forward_with_info(batch)
    packed, packed_info = model.forward_with_info(batch, targets_only=True)
    assert packed.shape == (14, len(VOCAB) + batch.n_oov)
    torch.testing.assert_close(packed, full[batch.trg_mask])
    torch.testing.assert_close(packed_info["p_gen"], info["p_gen"][batch.trg_mask])
    torch.testing.assert_close(packed_info["attn"], info["attn"][batch.trg_mask])


def test_output_is_a_distribution_over_the_extended_vocabulary() -> None:
    torch.manual_seed(0)
    model = PointerGeneratorTransformer(ARCH).eval()
    batch = _batch()
    log_probs, info = model.forward_with_info(batch)
    assert log_probs.shape == (3, batch.trg_inp.shape[1], len(VOCAB) + batch.n_oov)
    assert batch.n_oov == 2
    # rows with two OOVs sum to 1; row b (no OOVs) sums to 1 + the clamps of the two empty slots
    sums = log_probs.exp().sum(-1)
    torch.testing.assert_close(sums[0], torch.ones_like(sums[0]))
    torch.testing.assert_close(sums[2], torch.ones_like(sums[2]))
    torch.testing.assert_close(log_probs[1, :, : len(VOCAB)].exp().sum(-1), torch.ones_like(sums[1]))
    assert info["p_gen"].shape == batch.trg_inp.shape and ((0 < info["p_gen"]) & (info["p_gen"] < 1)).all()
    assert info["attn"].shape == (3, batch.trg_inp.shape[1], batch.src.shape[1])
    assert torch.all(info["attn"][1, :, 6:] == 0)  # padding of the shorter source
    # each copy head is a distribution over the source; `attn` is their mean
    heads = info["head_attn"]
    assert heads.shape == (3, batch.trg_inp.shape[1], ARCH.n_heads, batch.src.shape[1])
    torch.testing.assert_close(heads.sum(-1), torch.ones(heads.shape[:-1]))
    torch.testing.assert_close(heads.mean(dim=2), info["attn"])
    assert not torch.allclose(heads[:, :, 0], heads[:, :, 1])  # the heads look at different words


def test_m2_neutral_reproduces_m1_exactly_and_rarity_changes_it() -> None:
    torch.manual_seed(1)
    m1 = PointerGeneratorTransformer(ARCH).eval()
    m2 = PointerGeneratorTransformer(ARCH, rarity=True).eval()
    missing, unexpected = m2.load_state_dict(m1.state_dict(), strict=False)
    assert sorted(missing) == [f"encoder_layers.{i}.rarity_weight" for i in range(ARCH.n_layers)]
    assert not unexpected
    batch = _batch()
    with torch.no_grad():  # inference (validation, decoding): bit for bit
        assert torch.equal(m1(batch), m2(batch))
    # Under autograd M2's rarity term rides in an extra head dimension (layers._attend_with_key_bias):
    # equal up to float rounding.
    torch.testing.assert_close(m1(batch), m2(batch), atol=1e-5, rtol=1e-6)
    with torch.no_grad():
        m2.encoder_layers[0].rarity_weight.copy_(torch.tensor([1.0, -1.0, 0.5, 0.0]))
    assert not torch.allclose(m1(batch), m2(batch))


def test_rarity_bias_is_per_head_log_scale_and_keeps_padding_hidden() -> None:
    """attn_freq ∝ attn · exp(w_h · s_freq(k)), renormalised: the bias added to the logits."""
    layer = PointerGeneratorTransformer(ARCH, rarity=True).encoder_layers[0]
    with torch.no_grad():
        layer.rarity_weight.copy_(torch.tensor([1.0, -1.0, 0.5, 0.0]))
    seen = {}
    layer.self_attn.register_forward_hook(lambda mod, args, kwargs, out: seen.update(kwargs), with_kwargs=True)
    freq = torch.tensor([[0.5, 2.0, 0.0]])
    layer(torch.randn(1, 3, 32), key_padding_bias(torch.tensor([[True, True, False]])), freq)
    rarity = seen["key_bias"]
    assert rarity.shape == (1, 4, 3)
    expected = torch.tensor([[0.5, 2.0, 0.0], [-0.5, -2.0, 0.0], [0.25, 1.0, 0.0], [0.0, 0.0, 0.0]])
    torch.testing.assert_close(rarity[0], expected)
    assert torch.all(seen["bias"][0, 0, 0, 2] == float("-inf"))


def _hand_layer(w: float):
    """An M2 encoder layer whose attention can be read off its output: one head, d_model 3, identity
    value/output projections, no norm before attention, feed-forward off. Every query is (√3, 0, 0) and
    the keys are the inputs, so the plain logit of key k is x_k[0]; dims 1 and 2 of key 0 and key 1 are
    one-hot, so output - input = (·, weight on key 0, weight on key 1)."""
    arch = ArchConfig(d_model=3, d_ff=4, n_layers=1, n_heads=1, dropout=0.0, vocab_size=len(VOCAB),
                      max_source_tokens=8, max_summary_tokens=4)
    layer = PointerGeneratorTransformer(arch, rarity=True).encoder_layers[0]
    layer.norm1 = torch.nn.Identity()
    attn = layer.self_attn
    with torch.no_grad():
        for lin in (attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj, layer.ff.fc2):
            lin.weight.zero_()
            lin.bias.zero_()
        for lin in (attn.k_proj, attn.v_proj, attn.out_proj):
            lin.weight.copy_(torch.eye(3))
        attn.q_proj.bias.copy_(torch.tensor([3 ** 0.5, 0.0, 0.0]))
        layer.rarity_weight.fill_(w)
    return layer


@pytest.mark.parametrize(("w", "expected"), [
    # M1 (w = 0): logits 0 and ln 3 -> softmax 1/4, 3/4
    (0.0, (0.25, 0.75)),
    # M2, Eqn 2.19 renormalised: 1/4 · e^(0.5) = 0.412180, 3/4 · e^(2.0) = 5.541792, sum 5.953972
    # -> 0.069228, 0.930772 (the rare key 1 gains)
    (1.0, (0.069228, 0.930772)),
    # w = -1: 1/4 · e^(-0.5) = 0.151633, 3/4 · e^(-2.0) = 0.101501, sum 0.253134 -> 0.599021, 0.400979
    (-1.0, (0.599021, 0.400979)),
])
def test_m2_attention_after_the_softmax_by_hand(w: float, expected: tuple[float, float]) -> None:
    """attn_freq(k) ∝ attn(k) · exp(w · s_freq(k)): the weights the layer applies, not only its bias.
    Keys: x_0 = (0, 1, 0) with rarity 0.5, x_1 = (ln 3, 0, 1) with rarity 2.0, x_2 padding."""
    x = torch.tensor([[[0.0, 1.0, 0.0], [math.log(3.0), 0.0, 1.0], [7.0, 7.0, 7.0]]])
    pad = key_padding_bias(torch.tensor([[True, True, False]]))
    freq = torch.tensor([[0.5, 2.0, 0.0]])
    layer = _hand_layer(w)
    a0, a1 = expected
    want = torch.tensor([a1 * math.log(3.0), a0, a1]).expand(3, 3)  # every query row alike
    with torch.no_grad():  # inference: the rarity term is an additive mask
        torch.testing.assert_close((layer(x, pad, freq) - x)[0], want, atol=1e-5, rtol=0)
    # training: the rarity term needs a gradient and rides in an extra key column (_attend_with_key_bias)
    out = layer(x, pad, freq)
    torch.testing.assert_close((out - x)[0].detach(), want, atol=1e-5, rtol=0)
    # the explicit weights (need_weights: the path that returns them) say the same
    rarity = (layer.rarity_weight[None, :, None] * freq[:, None, :]).detach()
    weights = layer.self_attn(x, bias=pad, key_bias=rarity, need_weights=True).weights
    torch.testing.assert_close(weights[0, 0], torch.tensor([[a0, a1, 0.0]] * 3), atol=1e-5, rtol=0)


@pytest.mark.parametrize(("rarity", "slots", "spelling"), [(False, 0, 0), (True, 0, 0), (True, 2, 0), (False, 2, 16)])
def test_incremental_decoding_matches_teacher_forcing(rarity: bool, slots: int, spelling: int) -> None:
    """With slots, the copied "zorro" is fed back as its placeholder in both (batching.decoder_input);
    with spelling, the encoder reads it the same way in both."""
    torch.manual_seed(2)
    arch = dataclasses.replace(ARCH, oov_slots=slots, oov_spelling=spelling)
    model = PointerGeneratorTransformer(arch, rarity=rarity).eval()
    if rarity:
        with torch.no_grad():
            for layer in model.encoder_layers:
                layer.rarity_weight.normal_()
    batch = _batch()
    with torch.no_grad():
        full, info = model.forward_with_info(batch)
        state = model.start_decoding(batch)
        for t in range(batch.trg_inp.shape[1]):
            prev = batch.trg_ext[:, t - 1] if t > 0 else batch.trg_inp[:, 0]  # extended ids: copied OOVs
            step, state, step_info = model.decode_step(state, prev)
            keep = batch.trg_mask[:, t]
            torch.testing.assert_close(step[keep], full[keep, t], atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(step_info["p_gen"][keep], info["p_gen"][keep, t], atol=1e-6, rtol=1e-5)
            torch.testing.assert_close(step_info["attn"][keep], info["attn"][keep, t], atol=1e-6, rtol=1e-5)
            torch.testing.assert_close(step_info["head_attn"][keep], info["head_attn"][keep, t], atol=1e-6, rtol=1e-5)
    assert state.step == batch.trg_inp.shape[1]


def test_state_index_select_reorders_rows_and_caches() -> None:
    """Expanding to beams and shuffling them mid-way gives each row its own document's outputs."""
    torch.manual_seed(3)
    model = PointerGeneratorTransformer(ARCH).eval()
    batch = _batch()
    tokens = decoder_input(batch.trg_inp, batch.trg_ext)  # what decoding feeds back: copied OOVs by extended id
    with torch.no_grad():
        full = model(batch)
        state = model.start_decoding(batch)
        origin = torch.arange(3).repeat_interleave(2)  # 2 beams per document
        state = state.index_select(origin)
        for t in range(3):
            if t == 2:  # reorder the beams: rows now come from these documents
                perm = torch.tensor([5, 4, 1, 0, 3, 2])
                state, origin = state.index_select(perm), origin[perm]
            step, state, _ = model.decode_step(state, tokens[origin, t])
        torch.testing.assert_close(step, full[origin, 2], atol=1e-5, rtol=1e-5)


def test_reordering_beams_within_their_documents_moves_their_histories() -> None:
    """The fast path of `index_select` (rows stay in their documents) must still move the
    self-attention cache: beams with different histories, swapped, give the swapped outputs."""
    torch.manual_seed(6)
    model = PointerGeneratorTransformer(ARCH).eval()
    swap = torch.tensor([1, 0, 3, 2, 5, 4])
    first, second = torch.tensor([4, 5, 4, 5, 4, 5]), torch.tensor([6, 7, 6, 7, 6, 7])
    with torch.no_grad():
        state = model.start_decoding(_batch()).index_select(torch.arange(3).repeat_interleave(2))
        _, after_first, _ = model.decode_step(state, first)
        swapped = after_first.index_select(swap)
        got, _, _ = model.decode_step(swapped, second)
        _, reference, _ = model.decode_step(state, first[swap])   # the swapped histories from the start
        expected, _, _ = model.decode_step(reference, second)
    assert swapped.cross_kv is after_first.cross_kv  # the fast path was taken
    assert not torch.allclose(got, model.decode_step(after_first, second)[0])  # the histories differ
    torch.testing.assert_close(got, expected)


def test_copied_oov_prev_token_is_embedded_as_unk_without_slots() -> None:
    torch.manual_seed(4)
    model = PointerGeneratorTransformer(dataclasses.replace(ARCH, oov_slots=0)).eval()
    batch = _batch()
    with torch.no_grad():
        state = model.start_decoding(batch)
        a, _, _ = model.decode_step(state, torch.full((3,), len(VOCAB) + 1))
        b, _, _ = model.decode_step(state, torch.full((3,), UNK))
    assert torch.equal(a, b)


def test_oov_slots_tell_oov_words_apart_and_decode_back_to_the_words() -> None:
    """Two OOV words of one source enter the encoder alike without slots, apart with them; a model that
    can only copy (p_gen = 0) writes a source of OOV words back, word for word, never <unk>."""
    from sumpipe.decode.batches import summarize
    from sumpipe.models.card import ModelCard

    batch = _batch()  # document c: "qux quux the cat", two OOV words
    for slots, same in ((0, True), (4, False)):
        torch.manual_seed(4)
        model = PointerGeneratorTransformer(dataclasses.replace(ARCH, oov_slots=slots)).eval()
        x = embed_words(model.embed, model.oov_slots, batch.src_ext, len(VOCAB))  # what _embed scales, adds PE to
        assert torch.equal(x[2, 0], x[2, 1]) is same
    with torch.no_grad():
        model.pointer.gate.weight.zero_()
        model.pointer.gate.bias.fill_(-30.0)  # p_gen ~ 0: every word is a copy
    card = ModelCard(family="transformer", arch=model.arch, vocab_size=len(VOCAB))
    out = summarize(model, VOCAB, card, ["qux quux zorro"], DecodeConfig(strategy="greedy", max_length=3))
    assert len(out[0].tokens) == 3 and set(out[0].tokens) <= {"qux", "quux", "zorro"}  # each id mapped back


def test_oov_spelling_changes_the_encoder_input_at_oov_words_only() -> None:
    """Document c's OOV words, "qux" and "quux", get their spelling vectors added in the
    encoder; every vocabulary word's input is as without them, and a model without the key ignores
    `Batch.oov_spelling`."""
    batch = _batch()
    torch.manual_seed(4)
    model = PointerGeneratorTransformer(dataclasses.replace(ARCH, oov_slots=0, oov_spelling=16)).eval()
    spelled = model.oov_spelling(batch.oov_spelling)
    assert spelled.shape == (3, batch.n_oov, ARCH.d_model)
    plain = model._embed(batch.src_ext)
    read = model._embed(batch.src_ext, spelled=spelled)
    oov = batch.src_ext >= len(VOCAB)
    assert torch.equal(read[~oov], plain[~oov]) and not torch.isclose(read[oov], plain[oov]).all(-1).any()
    assert not torch.equal(read[2, 0], read[2, 1])  # "qux" and "quux" no longer enter alike
    without = PointerGeneratorTransformer(dataclasses.replace(ARCH, oov_slots=0)).eval()
    assert without.oov_spelling is None and "oov_spelling.vectors.weight" not in without.state_dict()
    assert model.state_dict()["oov_spelling.vectors.weight"].shape == (16, ARCH.d_model)


def test_untied_embeddings_have_their_own_generator() -> None:
    arch = ArchConfig(**{**ARCH.__dict__, "tie_embeddings": False})
    model = PointerGeneratorTransformer(arch)
    assert model.generator is not None and model.generator.weight.data_ptr() != model.embed.weight.data_ptr()
    assert model(_batch()).shape[-1] == len(VOCAB) + 2


@pytest.mark.parametrize("rarity", [False, True])
def test_unpadded_batches_train_to_the_same_losses_without_the_mask(rarity: bool) -> None:
    # train.flash_unpadded: sources of one length need no padding mask, and dropping it lets SDPA
    # pick the flash kernel on a GPU; in float32 the losses and gradients stay those of the masked model
    df = pd.DataFrame({"id": ["a", "b"], "source": ["the big zorro sat on the mat", "a dog ran in the red park"],
                       "reference": ["zorro sat", "a dog ran"]})
    examples = encode_examples(df, VOCAB, 50, 20)
    assert len(examples[0].src) == len(examples[1].src) == 7
    masked, unmasked = collate(examples), collate(examples, mark_unpadded=True)
    assert (masked.src_unpadded, unmasked.src_unpadded) == (False, True)
    assert not collate([examples[0], *encode_examples(df.iloc[:1].assign(source="a dog"), VOCAB, 50, 20)],
                       mark_unpadded=True).src_unpadded  # padded: the mask stays

    def train(batch) -> tuple[list[float], torch.Tensor]:
        torch.manual_seed(3)
        model = PointerGeneratorTransformer(ARCH, rarity=rarity)
        optimizer = torch.optim.Adagrad(model.parameters(), lr=0.02)
        losses = []
        for _ in range(5):
            optimizer.zero_grad()
            loss, _ = label_smoothed_nll(model(batch), batch.trg_ext, batch.trg_mask, smoothing=0.1)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses, model.embed.weight.detach()

    (with_mask, weights), (without, weights_without) = train(masked), train(unmasked)
    assert with_mask[-1] < with_mask[0]
    assert without == pytest.approx(with_mask, abs=1e-5)
    torch.testing.assert_close(weights_without, weights, atol=1e-5, rtol=0)


def test_tiny_model_overfits_eight_examples_quickly() -> None:
    torch.manual_seed(5)
    rng = np.random.default_rng(5)
    sources = [" ".join(rng.choice(WORDS + ["zeta", "omega"], size=rng.integers(5, 12))) for _ in range(8)]
    # summaries copy a few source words (OOVs included) in reverse order: needs the pointer
    references = [" ".join(s.split()[::-2][:4]) for s in sources]
    df = pd.DataFrame({"id": [str(i) for i in range(8)], "source": sources, "reference": references})
    batch = collate(encode_examples(df, VOCAB, 50, 20))
    assert batch.n_oov > 0 and (batch.trg_ext >= len(VOCAB)).any()
    model = PointerGeneratorTransformer(ArchConfig(**{**ARCH.__dict__, "n_layers": 1}))
    losses = overfit(model, batch, lr=1e-2, max_steps=150)  # typically ~25 steps (a few seconds)
    assert losses[0] > 2.0 and losses[-1] < 0.02, f"loss {losses[0]:.3f} -> {losses[-1]:.3f} in {len(losses)} steps"


def _resolve(models: dict, **sections):
    from sumpipe.config import params_from_dict
    from sumpipe.models.registry import resolve_model

    params = params_from_dict({"model": dataclasses.asdict(ARCH), "models": models, **sections})
    return [resolve_model(params, name) for name in models]


def test_overrides_are_resolved_once_and_bad_keys_named() -> None:
    [(family, spec, arch)] = _resolve({"M2-200": {"rarity": True, "arch": {"n_layers": 1}}})
    model = family.build(arch, spec)
    assert isinstance(model, PointerGeneratorTransformer) and family.name == "transformer"
    assert model.rarity and model.arch.n_layers == 1 and model.arch == dataclasses.replace(ARCH, n_layers=1)
    with pytest.raises(ConfigError) as info:
        _resolve({"M1-200": {"arch": {"n_layer": 3}}})
    assert str(info.value).startswith("models.M1-200.arch.n_layer: unknown key (known: attention_dropout")
    with pytest.raises(ConfigError, match=r"models.M1.arch.n_heads: must divide d_model"):
        _resolve({"M1": {"arch": {"n_heads": 5}}})
    with pytest.raises(ConfigError, match=r"models.M9.arch.d_model: expected int, got 'big'"):
        _resolve({"M9": {"arch": {"d_model": "big"}}})
    with pytest.raises(ConfigError, match=r"models.M1.family: unknown model family 'gru' \(known: .*transformer"):
        _resolve({"M1": {"family": "gru"}})


@pytest.mark.parametrize(("model", "message"), [
    ({"d_model": 30, "n_heads": 4}, "model.n_heads: must divide d_model"),
    ({"d_modle": 64}, "model.d_modle: unknown key (known: attention_dropout"),
    ({"dropout": "none"}, "model.dropout: expected float, got 'none'"),
    ({"oov_slots": -2}, "model.oov_slots: must be in [0, "),
    ({"oov_spelling": -1}, "model.oov_spelling: must be in [0, "),
    ({"oov_rarity": "own"}, "model.oov_rarity: must be one of count, unknown"),
])
def test_the_model_section_is_validated_by_the_family(model: dict, message: str) -> None:
    from sumpipe.config import params_from_dict
    from sumpipe.models.registry import resolve_model

    params = params_from_dict({"model": model, "models": {"M1": {}}})  # loading params leaves it to the family
    assert params.model == model
    with pytest.raises(ConfigError) as info:
        resolve_model(params, "M1")
    assert str(info.value).startswith(message)


def test_an_absent_model_section_is_the_arch_defaults() -> None:
    from sumpipe.config import params_from_dict
    from sumpipe.models.registry import resolve_model

    assert resolve_model(params_from_dict({"models": {"M1": {}}}), "M1")[2] == ArchConfig()


def test_params_yaml_models_validate_and_build(repo_root) -> None:
    from sumpipe.models.registry import resolve_model

    params = load_params(repo_root / "params.yaml")
    transformers = [name for name, spec in params.models.items() if spec.family == "transformer"]
    assert transformers == ["M1", "M2"]  # the hybrids: experiments/cnn and params-paper.yaml
    for name in transformers:
        family, spec, arch = resolve_model(params, name)
        assert family.build(arch, spec).rarity == spec.rarity
        assert spec.rarity == name.startswith("M2")
        assert spec.input == {"M1": "first40", "M2": "first40"}.get(name, f"ngram{name.rpartition('-')[2]}")
