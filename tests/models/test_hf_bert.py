"""Starting the encoder from a local Hugging Face BERT folder (a tiny one the test writes itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from sumpipe.config import EncoderConfig
from sumpipe.errors import SumpipeError
from sumpipe.models.bert import BertForMaskedLM
from sumpipe.models.hf_bert import load_hf_bert, wordpiece_for

CFG = EncoderConfig(d_model=8, n_layers=1, n_heads=2, d_ff=16, max_positions=12)
WORDPIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "##s", "cat"]
PIECES = ["<unk>", "<pad>", "<s>", "</s>", "<mask>", "\u2581the", "s", "\u2581cat", "\u2581dog"]


def hf_tensors(prefix: str = "bert.") -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    r = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    t = {"embeddings.word_embeddings.weight": r(len(WORDPIECES), 8), "embeddings.position_embeddings.weight": r(12, 8),
         "embeddings.token_type_embeddings.weight": r(2, 8), "embeddings.LayerNorm.gamma": r(8),
         "embeddings.LayerNorm.beta": r(8)}
    layer = "encoder.layer.0."
    shapes = {"attention.self.query": (8, 8), "attention.self.key": (8, 8), "attention.self.value": (8, 8),
              "attention.output.dense": (8, 8), "intermediate.dense": (16, 8), "output.dense": (8, 16)}
    for name, shape in shapes.items():
        t[f"{layer}{name}.weight"], t[f"{layer}{name}.bias"] = r(*shape), r(shape[0])
    for name in ("attention.output.LayerNorm", "output.LayerNorm"):
        t[f"{layer}{name}.weight"], t[f"{layer}{name}.bias"] = r(8), r(8)
    t = {prefix + k: v for k, v in t.items()}
    t["cls.predictions.bias"] = r(len(WORDPIECES))
    t["cls.predictions.transform.dense.weight"], t["cls.predictions.transform.dense.bias"] = r(8, 8), r(8)
    t["cls.predictions.transform.LayerNorm.weight"], t["cls.predictions.transform.LayerNorm.bias"] = r(8), r(8)
    return t


def write_checkpoint(folder: Path, tensors: dict[str, torch.Tensor] | None = None, **config: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    base = {"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 16, "max_position_embeddings": 12, "type_vocab_size": 2, "hidden_act": "gelu"}
    (folder / "config.json").write_text(json.dumps({**base, **config}))
    (folder / "vocab.txt").write_text("\n".join(WORDPIECES) + "\n")
    save_file(hf_tensors() if tensors is None else tensors, str(folder / "model.safetensors"))
    return folder


def test_wordpiece_spelling_of_pieces() -> None:
    assert [wordpiece_for(p) for p in PIECES] == ["[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]", "the", "##s",
                                                  "cat", "dog"]


def test_checkpoint_is_copied_in_and_pieces_are_mapped(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "bert")
    torch.manual_seed(0)
    model = BertForMaskedLM(CFG, len(PIECES))
    dog_before = model.encoder.embeddings.word.weight[8].clone()
    stats = load_hf_bert(model, folder, PIECES, CFG)
    assert stats == {"pieces_matched": 8, "pieces": 9}
    hf = hf_tensors("")
    emb = model.encoder.embeddings
    assert torch.equal(emb.position.weight, hf["embeddings.position_embeddings.weight"])
    assert torch.equal(emb.norm.weight, hf["embeddings.LayerNorm.gamma"])  # old gamma/beta names
    layer = model.encoder.layers[0]
    assert torch.equal(layer.self_attn.q_proj.weight, hf["encoder.layer.0.attention.self.query.weight"])
    assert torch.equal(layer.ff.fc2.bias, hf["encoder.layer.0.output.dense.bias"])
    assert torch.equal(layer.norm2.weight, hf["encoder.layer.0.output.LayerNorm.weight"])
    words = hf["embeddings.word_embeddings.weight"]
    assert torch.equal(emb.word.weight[5], words[5])  # ▁the = the
    assert torch.equal(emb.word.weight[6], words[6])  # s = ##s
    assert torch.equal(emb.word.weight[2], words[2])  # <s> = [CLS]
    assert torch.equal(emb.word.weight[8], dog_before)  # BERT has no "dog": fresh weights stay
    assert torch.equal(model.head.bias[7], hf["cls.predictions.bias"][7])
    assert torch.equal(model.head.dense.weight, hf["cls.predictions.transform.dense.weight"])
    logits = model(torch.tensor([[2, 5, 7, 3]]), torch.ones(1, 4, dtype=torch.bool))
    assert logits.shape == (1, 4, 9) and torch.isfinite(logits).all()


@pytest.mark.parametrize("case, message", [
    ("no folder", "no such Hugging Face BERT folder"),
    ("wrong size", "pretrain.encoder.d_model is 8 but .*hidden_size 16"),
    ("missing tensor", "tensor encoder.layer.0.intermediate.dense.weight is missing"),
    ("pickle only", "model.safetensors is missing"),
    ("no vocab", "vocab.txt is missing"),
])
def test_missing_or_mismatched_checkpoint_is_a_one_line_error(tmp_path: Path, case: str, message: str) -> None:
    folder = tmp_path / "bert"
    if case == "wrong size":
        write_checkpoint(folder, hidden_size=16)
    elif case == "missing tensor":
        tensors = hf_tensors()
        del tensors["bert.encoder.layer.0.intermediate.dense.weight"]
        write_checkpoint(folder, tensors)
    elif case == "pickle only":
        write_checkpoint(folder)
        (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    elif case == "no vocab":
        write_checkpoint(folder)
        (folder / "vocab.txt").unlink()
    with pytest.raises(SumpipeError, match=message) as info:
        load_hf_bert(BertForMaskedLM(CFG, len(PIECES)), folder, PIECES, CFG)
    assert "\n" not in str(info.value)


def _with_tensor(name: str, shape: tuple[int, ...]):
    def damage(folder: Path) -> None:
        tensors = hf_tensors()
        tensors[name] = torch.zeros(shape)
        write_checkpoint(folder, tensors)
    return damage


def _written(**config: object):
    return lambda folder: write_checkpoint(folder, **config)


def _then(first, second):
    return lambda folder: (first(folder), second(folder))


# a damaged or foreign folder at pretrain.init_from -> one line naming the file
DAMAGES = {
    "config.json is a list": (_then(_written(), lambda f: (f / "config.json").write_text("[1, 2]")),
                              r"config.json: not a BERT config \(a JSON list"),
    "config.json size a string": (_written(hidden_size="8"), r"config.json: hidden_size must be an int"),
    "config.json vocab_size 10**12": (_written(vocab_size=10**12), r"config.json: vocab_size must be an int"),
    "config.json layer_norm_eps 0": (_written(layer_norm_eps=0), r"config.json: layer_norm_eps must be"),
    "vocab.txt in Latin-1": (_then(_written(), lambda f: (f / "vocab.txt").write_bytes(
        "\n".join(WORDPIECES[:-1] + ["caf\xe9"]).encode("latin-1"))), r"vocab.txt: not UTF-8 text"),
    "word embeddings of the wrong width": (_with_tensor("bert.embeddings.word_embeddings.weight", (len(WORDPIECES), 6)),
                                           r"embeddings.word_embeddings.weight has shape \(8, 6\), expected \(8, 8\)"),
    "short cls.predictions.bias": (_with_tensor("cls.predictions.bias", (3,)),
                                   r"cls.predictions.bias has shape \(3,\), expected \(8,\)"),
    "layer weight of the wrong shape": (_with_tensor("bert.encoder.layer.0.output.dense.weight", (8, 15)),
                                        r"output.dense.weight has shape \(8, 15\), expected \(8, 16\)"),
    "safetensors header garbage": (_then(_written(), lambda f: (f / "model.safetensors").write_bytes(b"\xff" * 32)),
                                   r"model.safetensors: not a readable safetensors file"),
}


@pytest.mark.parametrize(("damage", "message"), [pytest.param(*v, id=k) for k, v in DAMAGES.items()])
def test_damaged_hf_folder_is_a_one_line_error_before_any_tensor_is_read(tmp_path: Path, damage, message) -> None:
    folder = tmp_path / "bert"
    damage(folder)
    model = BertForMaskedLM(CFG, len(PIECES))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(SumpipeError, match=message) as info:
        load_hf_bert(model, folder, PIECES, CFG)
    assert "\n" not in str(info.value)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # nothing half-copied
