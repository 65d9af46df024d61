"""save_pretrained / load_pretrained: identical outputs after a round trip, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from sumpipe.config import Budget
from sumpipe.errors import SumpipeError
from sumpipe.models.batching import collate, encode_examples
from sumpipe.models.io import load_pretrained, save_pretrained, write_manifest
from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer
from sumpipe.vocab.vocabulary import Vocabulary

COUNTS = {"the": 50, "cat": 7, "sat": 5, "on": 20, "mat": 3, "a": 40, "dog": 2, ".": 60}


def _setup(tie: bool = True, rarity: bool = True):
    vocab = Vocabulary.from_counts(COUNTS, size=10)  # 4 specials + the 6 most frequent words
    arch = ArchConfig(d_model=16, d_ff=32, n_layers=1, n_heads=2, dropout=0.0, vocab_size=len(vocab),
                      max_source_tokens=20, max_summary_tokens=10, tie_embeddings=tie)
    torch.manual_seed(0)
    model = PointerGeneratorTransformer(arch, rarity=rarity).eval()
    if rarity:
        with torch.no_grad():
            model.encoder_layers[0].rarity_weight.copy_(torch.tensor([0.7, -0.3]))
    df = pd.DataFrame({"id": ["1", "2"], "source": ["the cat sat on the zebra mat", "a dog ."],
                       "reference": ["zebra sat", "the dog"]})
    return model, vocab, collate(encode_examples(df, vocab, 20, 10))


@pytest.mark.parametrize("tie", [True, False])
def test_round_trip_gives_identical_outputs(tmp_path: Path, tie: bool, transformer_card) -> None:
    model, vocab, batch = _setup(tie=tie)
    save_pretrained(model, tmp_path / "M2", vocab, transformer_card(model, Budget("ngram", 200, 5), "pydoc"))
    assert sorted(p.name for p in (tmp_path / "M2").iterdir()) == ["SHA256SUMS", "config.json", "model.safetensors",
                                                                    "vocab.parquet"]
    loaded, loaded_vocab, card = load_pretrained(tmp_path / "M2")
    assert not loaded.training and loaded.rarity and loaded.arch == model.arch
    assert card.arch == model.arch and card.family == "transformer" and card.spec.rarity
    assert card.input == "ngram200" and card.selection == Budget("ngram", 200, 5)
    assert card.dataset == "pydoc" and card.vocab_size == 10
    assert loaded_vocab.itos == vocab.itos
    assert loaded_vocab.rarity.tolist() == vocab.rarity.tolist()
    with torch.no_grad():
        assert torch.equal(loaded(batch), model(batch))
    if tie:  # the shared matrix is stored once and still shared after loading
        assert loaded.generator is None


def test_missing_and_corrupt_directories_are_one_line_errors(tmp_path: Path, transformer_card) -> None:
    model, vocab, _ = _setup()
    with pytest.raises(SumpipeError, match="no such model directory"):
        load_pretrained(tmp_path / "nope")
    model_dir = save_pretrained(model, tmp_path / "m", vocab, transformer_card(model))
    weights = model_dir / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(SumpipeError, match="does not match config.json") as info:
        load_pretrained(model_dir)
    assert "\n" not in str(info.value)
    (model_dir / "config.json").write_text("{not json")
    with pytest.raises(SumpipeError, match="not valid JSON"):
        load_pretrained(model_dir)
    weights.unlink()
    with pytest.raises(SumpipeError, match="model.safetensors is missing"):
        load_pretrained(model_dir)


def test_weights_of_another_architecture_are_rejected(tmp_path: Path, transformer_card) -> None:
    model, vocab, _ = _setup()
    model_dir = save_pretrained(model, tmp_path / "m", vocab, transformer_card(model))
    config = json.loads((model_dir / "config.json").read_text())
    config["arch"]["d_ff"] = 64
    (model_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(SumpipeError, match=r"config.json: does not match SHA256SUMS"):
        load_pretrained(model_dir)
    write_manifest(model_dir)  # a card edited together with its checksum: the header check still refuses it
    with pytest.raises(SumpipeError, match=r"does not fit the architecture in config.json \(size mismatch for"):
        load_pretrained(model_dir)
    config["arch"].update(d_ff=32, n_layers=2)
    (model_dir / "config.json").write_text(json.dumps(config))
    write_manifest(model_dir)
    with pytest.raises(SumpipeError, match=r"does not fit .*missing \['decoder_layers.1"):
        load_pretrained(model_dir)


@pytest.mark.parametrize(("change", "message"), [
    ({"format": "sumpipe-pointer-generator-transformer/1"}, "is not 'sumpipe-model/2' (an old or foreign model"),
    ({"family": "gru"}, "family: unknown model family 'gru' (known: "),
    ({"arch": {"d_model": "wide"}}, "arch.d_model: expected int, got 'wide'"),
    ({"selection": {"method": "first"}}, "selection.tokens: required key is missing"),
    ({"vocab_sizes": 3}, "vocab_sizes: unknown key"),
])
def test_old_or_corrupt_cards_are_one_line_errors(tmp_path: Path, change: dict, message: str, transformer_card) -> None:
    model, vocab, _ = _setup()
    model_dir = save_pretrained(model, tmp_path / "m", vocab, transformer_card(model))
    config = json.loads((model_dir / "config.json").read_text())
    for key, value in change.items():
        config[key] = {**config[key], **value} if isinstance(config.get(key), dict) else value
    (model_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(SumpipeError) as info:
        load_pretrained(model_dir)
    assert message in str(info.value) and "config.json: " in str(info.value) and "\n" not in str(info.value)


def test_the_card_gets_its_family_arch_type_when_the_model_loads(tmp_path: Path, transformer_card) -> None:
    """read_card leaves `arch` a mapping (no family import); load_pretrained types it, and a bad arch
    or family is one line naming config.json and the key."""
    from sumpipe.models.card import read_card
    from sumpipe.models.io import read_typed_card

    model, vocab, _ = _setup()
    model_dir = save_pretrained(model, tmp_path / "M2", vocab, transformer_card(model))
    assert isinstance(read_card(model_dir).arch, dict)
    family, card = read_typed_card(model_dir)
    assert isinstance(card.arch, family.arch_type) and card.arch == load_pretrained(model_dir)[2].arch
    data = json.loads((model_dir / "config.json").read_text())
    for edit, message in ((lambda d: d["arch"].update(n_layers="two"), "arch.n_layers: expected int"),
                          (lambda d: d.update(family="lstm"), "family: unknown model family 'lstm'")):
        broken = json.loads(json.dumps(data))
        edit(broken)
        (model_dir / "config.json").write_text(json.dumps(broken))
        with pytest.raises(SumpipeError, match=f"config.json: {message}"):
            read_typed_card(model_dir)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_weights_holding_nan_or_infinity_are_refused_at_load(tmp_path: Path, make_model_dir, bad: float) -> None:
    """A diverged model used to decode every input to an empty summary with exit status 0."""
    model_dir = make_model_dir(tmp_path / "M", scale=bad)  # its checksums vouch for the NaN weights
    with pytest.raises(SumpipeError, match=r"M/model\.safetensors: tensor '[\w.]+' holds NaN or infinite values"):
        load_pretrained(model_dir)


def test_a_checksum_list_line_is_never_quoted(tmp_path: Path, make_model_dir) -> None:
    """SHA256SUMS may be a symbolic link to any file: its content must not reach the error message."""
    model_dir = make_model_dir(tmp_path / "M")
    (tmp_path / "secret").write_text("root:$6$SECRET:19000::\n")
    (model_dir / "SHA256SUMS").unlink()
    (model_dir / "SHA256SUMS").symlink_to(tmp_path / "secret")
    with pytest.raises(SumpipeError, match=r"SHA256SUMS: not a checksum list \(line 1 is not") as info:
        load_pretrained(model_dir)
    assert "SECRET" not in str(info.value)


def test_a_card_from_before_oov_slots_loads_as_the_model_it_was(tmp_path: Path, transformer_card) -> None:
    """`oov_slots` came later: a card without the key is a model built without placeholders (0),
    whatever the key's default is now, and loads with the outputs it had."""
    import dataclasses

    from sumpipe.models.transformer import FAMILY

    _, vocab, batch = _setup()
    torch.manual_seed(0)
    model = PointerGeneratorTransformer(dataclasses.replace(_setup()[0].arch, oov_slots=0), rarity=True).eval()
    assert ArchConfig().oov_slots > 0  # the default now
    model_dir = save_pretrained(model, tmp_path / "M2", vocab, transformer_card(model))
    data = json.loads((model_dir / "config.json").read_text())
    # the card itself leaves out the keys at their legacy values: it reads as one written before them
    assert FAMILY.legacy_arch == {"oov_slots": 0, "oov_rarity": "unknown", "oov_spelling": 0,
                                 "length_control": "none", "length_dropout": 0.0}
    assert "oov_slots" not in data["arch"] and "oov_rarity" not in data["arch"] and data["arch"]["n_layers"] == 1
    loaded, _, card = load_pretrained(model_dir)
    assert card.arch.oov_slots == 0 and loaded.oov_slots is None
    with torch.no_grad():
        assert torch.equal(loaded(batch), model(batch))


def test_m2_with_oov_rarity_count_keeps_its_oov_counts(tmp_path: Path, transformer_card) -> None:
    """`oov_rarity: count`: "mat" (seen 3 times, outside the 6-word vocabulary) enters M2 at
    its own score, "zebra" (never seen) at the unknown one; the model folder keeps the counts and the
    loaded model reads the same scores and gives the same outputs."""
    import dataclasses

    from sumpipe.models.vocabulary import WORD_VOCABULARY

    Vocabulary.from_counts(COUNTS, size=100).save(tmp_path / "vocab.parquet")
    arch = dataclasses.replace(_setup()[0].arch, oov_rarity="count")
    vocab, _ = WORD_VOCABULARY.for_training(tmp_path, arch)
    assert vocab.oov_counts == {"mat": 3, "dog": 2}
    df = pd.DataFrame({"id": ["1"], "source": ["the cat sat on the zebra mat"], "reference": ["zebra sat"]})
    batch = collate(encode_examples(df, vocab, 20, 10))
    mat, zebra = batch.src_freq[0, 6].item(), batch.src_freq[0, 5].item()
    assert mat == pytest.approx(1 / np.log(4) + vocab.shift) and zebra == pytest.approx(vocab.unknown_rarity)
    torch.manual_seed(0)
    model = PointerGeneratorTransformer(arch, rarity=True).eval()
    model_dir = save_pretrained(model, tmp_path / "M2", vocab, transformer_card(model))
    assert json.loads((model_dir / "config.json").read_text())["arch"]["oov_rarity"] == "count"
    loaded, loaded_vocab, card = load_pretrained(model_dir)
    assert card.arch.oov_rarity == "count" and loaded_vocab.oov_counts == vocab.oov_counts
    again = collate(encode_examples(df, loaded_vocab, 20, 10))
    assert torch.equal(again.src_freq, batch.src_freq)
    with torch.no_grad():
        assert torch.equal(loaded(again), model(batch))
