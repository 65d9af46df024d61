"""The typed cards: a model directory's config.json (ModelCard) and the pretrain folder's (EncoderCard),
validated alike, with one-line errors naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sumpipe.config import EncoderConfig
from sumpipe.errors import SumpipeError
from sumpipe.models.card import (
    CARD_FORMAT,
    ENCODER_FORMAT,
    EncoderCard,
    parse_card,
    read_card,
    read_encoder_card,
    write_encoder_card,
)

ENCODER = EncoderConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=32)


def encoder_card(**changes) -> EncoderCard:
    fields = dict(encoder=ENCODER, vocab_size=60, subword_sha256="ab" * 32, mask_prob=0.15, max_tokens=12,
                  weights_sha256="cd" * 32, init=None, training={"steps": 44, "best_valid_loss": 3.47})
    return EncoderCard(**{**fields, **changes})


def test_encoder_card_round_trip_keeps_the_pretrain_stage_keys(tmp_path: Path):
    card = encoder_card(init={"from": "bert-tiny", "pieces_matched": 40, "pieces": 60})
    path = write_encoder_card(card, tmp_path)
    assert path == tmp_path / "config.json"
    data = json.loads(path.read_text())
    # the keys the pretrain stage wrote before the card was typed: the same bytes, the same dvc.lock
    assert sorted(data) == ["encoder", "format", "init", "mask_prob", "max_tokens", "subword_sha256", "training",
                            "vocab_size", "weights_sha256"]
    assert data["format"] == ENCODER_FORMAT == "sumpipe-bert-encoder/1" and data["encoder"]["d_model"] == 16
    assert read_encoder_card(tmp_path) == card


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="sumpipe-model/2"),
     "config.json: format 'sumpipe-model/2' is not 'sumpipe-bert-encoder/1' \\(an old or foreign encoder folder"),
    (lambda d: d.update(vocab_size="sixty"), "config.json: vocab_size: expected int, got 'sixty'"),
    (lambda d: d.update(vocab_size=10**9), "config.json: vocab_size: must be in \\[1, 2,000,000\\]"),
    (lambda d: d["encoder"].update(n_heads=3), "config.json: encoder.n_heads: must divide d_model"),
    (lambda d: d.update(extra=1), "config.json: extra: unknown key"),
    (lambda d: d.pop("subword_sha256"), "config.json: subword_sha256: required key is missing"),
])
def test_a_bad_encoder_card_is_one_line_naming_file_and_key(tmp_path: Path, edit, message):
    write_encoder_card(encoder_card(), tmp_path)
    data = json.loads((tmp_path / "config.json").read_text())
    edit(data)
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(SumpipeError, match=message) as caught:
        read_encoder_card(tmp_path)
    assert "\n" not in str(caught.value)


def test_missing_or_broken_card_files(tmp_path: Path):
    with pytest.raises(SumpipeError, match=r"config.json: no such file \(run `sumpipe pretrain`\)"):
        read_encoder_card(tmp_path)
    with pytest.raises(SumpipeError, match=r"config.json: no such file \(train the model first"):
        read_card(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    for read in (read_card, read_encoder_card):
        with pytest.raises(SumpipeError, match="config.json: not valid JSON"):
            read(tmp_path)


def test_model_card_and_encoder_card_refuse_each_other(tmp_path: Path):
    write_encoder_card(encoder_card(), tmp_path)
    with pytest.raises(SumpipeError, match="format 'sumpipe-bert-encoder/1' is not 'sumpipe-model/2' \\(an old or "
                                           "foreign model directory: retrain it"):
        read_card(tmp_path)
    card = parse_card({"format": CARD_FORMAT, "family": "transformer", "arch": {"d_model": 8}, "vocab_size": 9})
    assert card.arch == {"d_model": 8} and card.vocab_size == 9


def test_card_keys_that_contradict_the_architecture_or_the_folder_are_refused(tmp_path: Path, make_model_dir) -> None:
    """`vocab_size` and `seed` restate the arch and the run: a card whose copy disagrees was read unread."""
    from sumpipe.models.card import read_card

    folder = make_model_dir(tmp_path / "M1" / "seed-2", training_seed=2)
    assert read_card(folder).seed == 2
    card = json.loads((folder / "config.json").read_text())
    for change, message in [({"seed": 5}, f"{folder / 'config.json'}: seed is 5, but the folder is seed-2"),
                            ({"seed": -1}, f"{folder / 'config.json'}: seed: must be >= 0"),
                            ({"vocab_size": card["vocab_size"] + 1},
                             f"{folder / 'config.json'}: vocab_size: is {card['vocab_size'] + 1}, but arch.vocab_size "
                             f"is {card['arch']['vocab_size']}")]:
        (folder / "config.json").write_text(json.dumps({**card, **change}))
        with pytest.raises(SumpipeError) as refused:
            read_card(folder)
        assert str(refused.value) == message
