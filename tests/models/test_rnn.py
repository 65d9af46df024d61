"""The recurrent family: attention, the no-attention bottleneck, coverage, the pointer mix, incremental
decoding against teacher forcing (GRU and LSTM, beams reordered), the NLL + λ·coverage loss, and a tiny
model that overfits 8 examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sumpipe.config import TrainConfig
from sumpipe.decode.search import sample_search
from sumpipe.errors import ConfigError
from sumpipe.models.batching import Batch, Example, collate
from sumpipe.models.rnn import RNNArch, RNNSummarizationTask, StepsOutput, build_rnn
from sumpipe.names import BOS, EOS, UNK
from sumpipe.train.engine import fit, seed_everything

V = 40


def example(seed: int, src_len: int, trg: list[int], n_oov: int = 2) -> Example:
    """Random in-vocabulary source with OOV words at positions 0, 2, ... (extended ids V, V+1, ...)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(4, V, src_len)
    src_ext = src.copy()
    for j in range(n_oov):
        src[2 * j], src_ext[2 * j] = 0, V + j
    y = np.asarray(trg, dtype=np.int64)
    return Example(str(seed), src, src_ext, np.zeros(src_len, np.float32), np.concatenate([[BOS], y]),
                   np.concatenate([y, [EOS]]), [f"oov{j}" for j in range(n_oov)])


def model(seed: int = 0, **arch) -> torch.nn.Module:
    torch.manual_seed(seed)
    base = dict(cell="gru", embedding_dim=8, hidden_dim=12, layers=2, attention="bahdanau", pointer=True,
                coverage=True, vocab_size=V)
    m = build_rnn(RNNArch(**{**base, **arch}))
    return m.eval()


def batch() -> Batch:
    # different source lengths (padding in row 1) and a copied OOV target (V + 1) in row 0
    return collate([example(1, 7, [5, V + 1, 9, 6]), example(2, 4, [7, 8])])


def test_arch_is_validated_with_one_line_errors():
    with pytest.raises(ConfigError, match="^arch.pointer: .*needs attention"):
        RNNArch.from_dict({"attention": "none", "pointer": True})
    with pytest.raises(ConfigError, match="^arch.cell: expected one of"):
        RNNArch.from_dict({"cell": "rnn"})
    with pytest.raises(ConfigError, match="^arch.coverage_phase_steps: .*coverage: true"):
        RNNArch.from_dict({"coverage": False, "coverage_phase_steps": 10})
    with pytest.raises(ConfigError, match=r"^arch.oov_slots: must be in \[0, "):
        RNNArch.from_dict({"oov_slots": -1})


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_attention_sums_to_one_over_unpadded_positions(cell):
    b = batch()
    _, info = model(cell=cell).forward_with_info(b)
    attn = info["attn"]  # (B, T, S)
    assert attn.shape == (2, 5, 7)
    torch.testing.assert_close(attn.sum(-1), torch.ones(2, 5))
    assert torch.all(attn[1, :, 4:] == 0)  # row 1 has 4 real source tokens
    assert torch.all(attn[1, :, :4] > 0)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_encoder_never_reads_padding_and_matches_a_packed_bidirectional_rnn(cell):
    """Each row alone, unpadded, gives the same outputs and final state as inside a padded batch; and
    the outputs equal torch's own packed bidirectional RNN with the same weights."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    m = model(cell=cell, layers=1)
    b = batch()
    x = m.embed(b.src)
    outputs, final = m.encoder(x, b.src_mask)
    alone, alone_final = m.encoder(x[1:, :4], b.src_mask[1:, :4])
    torch.testing.assert_close(outputs[1:, :4], alone, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(final[1:], alone_final, rtol=1e-5, atol=1e-6)
    assert torch.all(outputs[1, 4:] == 0)
    reference = (torch.nn.GRU if cell == "gru" else torch.nn.LSTM)(8, 12, bidirectional=True, batch_first=True)
    fwd, bwd = m.encoder.forward_rnns[0], m.encoder.backward_rnns[0]
    with torch.no_grad():
        for name, value in fwd.named_parameters():
            getattr(reference, name).copy_(value)
        for name, value in bwd.named_parameters():
            getattr(reference, f"{name}_reverse").copy_(value)
    packed, h_n = reference(pack_padded_sequence(x, b.src_mask.sum(1), batch_first=True, enforce_sorted=False))
    expected, _ = pad_packed_sequence(packed, batch_first=True, total_length=7)
    torch.testing.assert_close(outputs, expected, rtol=1e-5, atol=1e-6)
    h_n = h_n[0] if isinstance(h_n, tuple) else h_n
    torch.testing.assert_close(final, torch.cat([h_n[0], h_n[1]], dim=-1), rtol=1e-5, atol=1e-6)


def _perturb_encoder_outputs(module, inputs, output):
    """Forward hook: change every encoder output h_i but not the final state."""
    outputs, final = output
    return outputs + torch.randn(outputs.shape, generator=torch.Generator().manual_seed(9)), final


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_no_attention_decoder_reads_only_the_final_encoder_state(cell):
    b = batch()
    plain = model(cell=cell, attention="none", pointer=False, coverage=False)
    before = plain(b)
    plain.encoder.register_forward_hook(_perturb_encoder_outputs)
    torch.testing.assert_close(plain(b), before, rtol=0, atol=0)
    # the same perturbation does reach an attentional decoder: the hook really changes h_i
    attentive = model(cell=cell, pointer=False, coverage=False)
    before = attentive(b)
    attentive.encoder.register_forward_hook(_perturb_encoder_outputs)
    assert (attentive(b) - before)[..., :V].abs().max() > 1e-3
    # and the extended (copy) columns of a model without the pointer are impossible
    assert torch.all(before[..., V:] == -math.inf)


def test_coverage_loss_is_the_sum_of_min_attention_and_earlier_attention():
    b = batch()
    out = model()(b, steps=True)
    a = out.attn.detach().numpy().astype(np.float64)  # (B, T, S)
    expected = np.zeros(a.shape[:2])
    for row in range(a.shape[0]):
        coverage = np.zeros(a.shape[2])
        for t in range(a.shape[1]):  # See et al. Eqn 12: covloss_t = Σ_i min(a^t_i, c^t_i), c^t = Σ_{t'<t} a^t'
            expected[row, t] = sum(min(x, c) for x, c in zip(a[row, t], coverage))
            coverage = coverage + a[row, t]
    assert expected[:, 0].tolist() == [0.0, 0.0]  # nothing is covered before the first step
    np.testing.assert_allclose(out.coverage_loss.detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_coverage_feeds_the_attention_only_when_active():
    b = batch()
    m = model()
    with_coverage = m(b)
    m.set_coverage(False)
    out = m(b, steps=True)
    assert out.coverage_loss is None
    assert (out.log_probs - with_coverage).abs().max() > 1e-4
    with pytest.raises(ValueError, match="no coverage parameters"):
        model(coverage=False).set_coverage(True)


def test_pointer_mix_matches_eqn_2():
    """P(w) = p_gen·P_vocab(w) + (1 − p_gen)·Σ_{i: w_i = w} a_i: an OOV column holds only the copy
    term, and the distribution sums to 1 over the extended vocabulary."""
    b = batch()
    log_probs, info = model().forward_with_info(b)
    p = log_probs.exp().double()
    torch.testing.assert_close(p.sum(-1), torch.ones(2, 5, dtype=torch.float64))
    p_gen, attn = info["p_gen"].double(), info["attn"].double()
    for row in range(2):
        for j in range(2):  # each OOV word occurs once, at source position 2j
            torch.testing.assert_close(p[row, :, V + j], (1 - p_gen[row]) * attn[row, :, 2 * j])
    # a vocabulary word of the source gets both terms
    word = int(b.src_ext[0, 5])
    copy = attn[0][:, (b.src_ext[0] == word).nonzero().flatten()].sum(-1)
    assert torch.all(p[0, :, word] > (1 - p_gen[0]) * copy)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
@pytest.mark.parametrize("kind", [dict(), dict(pointer=False, coverage=False), dict(attention="none", pointer=False,
                                                                                    coverage=False),
                                  dict(oov_slots=1),  # a copied OOV fed back as its slot; slot 1 is past K
                                  dict(oov_spelling=8)])  # the encoder reads the OOV words' spelling
def test_incremental_decoding_equals_teacher_forcing_with_beams_reordered(cell, kind):
    """Two documents × two beams, each beam fed its own target; beams are swapped within their document
    every step, and once moved across documents; every row must match teacher forcing of what it fed."""
    m = model(cell=cell, **kind)
    targets = {(0, 0): [5, V + 1, 9, 6], (0, 1): [7, 7, V, 11], (1, 0): [7, 8, 12, 13], (1, 1): [20, V, 4, 30]}
    sources = {0: (1, 7), 1: (2, 4)}
    keys = sorted(targets)
    reference = m(collate([example(*sources[doc], targets[doc, j]) for doc, j in keys]))  # (4, 5, X)
    docs = collate([example(*sources[doc], targets[doc, 0]) for doc in (0, 1)])
    state = m.start_decoding(docs).index_select(torch.tensor([0, 0, 1, 1]))
    which = list(keys)  # which (doc, beam) target row r is following
    reorders = [torch.tensor([1, 0, 3, 2]), torch.tensor([0, 1, 2, 3]), torch.tensor([1, 0, 2, 3]),
                torch.tensor([3, 2, 2, 3])]  # the last one moves rows 0-1 to document 1
    for t in range(5):
        prev = torch.tensor([([BOS] + targets[w])[t] for w in which])
        log_probs, state, info = m.decode_step(state, prev)
        expected = torch.stack([reference[keys.index(w), t] for w in which])
        finite = torch.isfinite(expected)
        assert torch.equal(finite, torch.isfinite(log_probs))
        torch.testing.assert_close(log_probs[finite], expected[finite], rtol=1e-4, atol=1e-5)
        assert set(info) == ({"p_gen", "attn"} if kind.get("pointer", True) else
                             set() if kind.get("attention") == "none" else {"attn"})
        if t < 4:
            idx = reorders[t]
            state = state.index_select(idx)
            which = [which[i] for i in idx.tolist()]


# ---- training: the loss, overfitting ------------------------------------------------------------


def pair(i: int, src: list[int], trg: list[int]) -> Example:
    s = np.asarray(src, dtype=np.int64)
    y = np.asarray(trg, dtype=np.int64)
    src_ids = np.where(s >= V, UNK, s)
    return Example(f"ex{i}", src_ids, s, np.zeros(len(s), np.float32),
                   np.concatenate([[BOS], np.where(y >= V, UNK, y)]), np.concatenate([y, [EOS]]),
                   [f"oov{j}" for j in range(int((s >= V).sum()))])


def reversal_examples(n: int, seed: int = 0) -> list[Example]:
    """Target = the source reversed; one source word is OOV (id V) and must be copied."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        src = rng.integers(4, V, int(rng.integers(3, 6))).tolist()
        src[int(rng.integers(len(src)))] = V
        out.append(pair(i, src, src[::-1]))
    return out


def task_for(train, valid, arch: RNNArch, batch_size: int = 4, smoothing: float = 0.0) -> RNNSummarizationTask:
    return RNNSummarizationTask(train, valid, batch_size=batch_size, seed=3, label_smoothing=smoothing, vocab_size=V,
                                pointer=arch.pointer, coverage_weight=arch.coverage_weight)


class FixedOutput(torch.nn.Module):
    """Returns planted log-probabilities and coverage losses, whatever the batch."""

    def __init__(self, out: StepsOutput) -> None:
        super().__init__()
        self.out = out

    def forward(self, batch, steps: bool = False):
        return self.out


def test_loss_adds_lambda_times_coverage_over_real_target_tokens():
    batch = collate([pair(0, [5, 6, 7], [5, 6]), pair(1, [8, 9, 10], [8])])  # targets: 3 and 2 positions
    log_probs = torch.full((2, 3, V), math.log(1.0 / V))
    coverage = torch.tensor([[0.0, 0.7, 0.25], [0.0, 0.5, 9.0]])  # 9.0 sits on padding: ignored
    task = task_for([], [], RNNArch(coverage=True, coverage_weight=0.5, vocab_size=V))
    total, n = task.loss(FixedOutput(StepsOutput(log_probs, None, None, coverage)), batch)
    assert n.item() == 5
    # 5 tokens × −log(1/V) + λ·(0 + 0.7 + 0.25 + 0 + 0.5)
    assert total.item() == pytest.approx(5 * math.log(V) + 0.5 * 1.45, rel=1e-6)
    without = task_for([], [], RNNArch(coverage=True, coverage_weight=0.0, vocab_size=V))
    assert without.loss(FixedOutput(StepsOutput(log_probs, None, None, coverage)), batch)[0].item() == \
        pytest.approx(5 * math.log(V), rel=1e-6)


def test_a_model_without_pointer_learns_unk_for_copied_words():
    batch = collate([pair(0, [5, V, 7], [V, 6])])  # the target's first word is the copyable OOV
    log_probs = torch.full((1, 3, V + 1), -math.inf)
    log_probs[..., :V] = math.log(1.0 / V)
    log_probs[0, 0, UNK] = math.log(0.5)
    task = task_for([], [], RNNArch(attention="bahdanau", pointer=False, vocab_size=V))
    total, _ = task.loss(FixedOutput(StepsOutput(log_probs, None, None, None)), batch)
    assert total.item() == pytest.approx(math.log(2) + 2 * math.log(V), rel=1e-6)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_tiny_pointer_generator_with_coverage_overfits_8_examples(cell):
    arch = RNNArch(cell=cell, embedding_dim=16, hidden_dim=32, pointer=True, coverage=True, vocab_size=V)
    data = reversal_examples(8)
    seed_everything(0)
    model = build_rnn(arch)
    cfg = TrainConfig(optimizer="adam", lr=0.02, warmup_steps=20, batch_size=8, epochs=60, device="cpu",
                      label_smoothing=0.0, grad_clip=5.0, threads=1, log_every=50, checkpoint_every=1000, patience=None)
    result = fit(model, task_for(data, data[:2], arch, batch_size=8), cfg, None, progress=False)
    # from ln 30 = 3.4 per token; what remains is mostly the coverage term of the </s> step, where every
    # source word has been attended once already (≈ 1 per summary of 4-6 tokens)
    assert result.log_rows[0]["loss"] > 3.0 and result.log_rows[-1]["loss"] < 0.3
    model.eval()
    hyps = sample_search(model, collate(data), greedy=True, max_length=8, min_length=0, alpha=0.0, block_ngram=0)
    assert [h.tokens for h in hyps] == [e.trg_ext[:-1].tolist() for e in data]  # copied OOVs included


def test_oov_spelling_reaches_the_encoder_at_oov_words_only():
    batch = collate([example(1, 7, [5, 6])])  # OOV words at positions 0 (V) and 2 (V + 1)
    m = model(oov_slots=0, oov_spelling=8)
    spelled = m.oov_spelling(batch.oov_spelling)
    plain, read = m._embed(batch.src_ext), m._embed(batch.src_ext, spelled)
    oov = batch.src_ext >= V
    assert torch.equal(read[~oov], plain[~oov]) and not torch.equal(read[0, 0], read[0, 2])
    memory, _ = m.encode(batch.src_ext, batch.src_mask, batch.oov_spelling)
    assert not torch.equal(memory, m.encode(batch.src_ext, batch.src_mask)[0])
    with pytest.raises(ConfigError, match=r"^arch.oov_spelling: must be in \[0, "):
        RNNArch.from_dict({"oov_spelling": -1})


def test_oov_slots_tell_the_source_oov_words_apart():
    """Without slots the encoder reads OOV words V and V + 1 alike (one <unk>); with them it does not."""
    batch = collate([example(1, 7, [5, 6])])  # OOV words at positions 0 (V) and 2 (V + 1)
    for slots, same in ((0, True), (2, False)):
        m = model(oov_slots=slots)
        x = m._embed(batch.src_ext)
        assert torch.equal(x[0, 0], x[0, 2]) is same
        assert torch.equal(x[0, 0], m.embed.weight[UNK]) is same
