"""Start the encoder from a local Hugging Face BERT checkpoint instead of random weights.

The folder holds `config.json` (hidden_size, num_hidden_layers, num_attention_heads,
intermediate_size, max_position_embeddings, type_vocab_size, layer_norm_eps), `model.safetensors`
(read with safetensors: nothing is unpickled) and `vocab.txt` (WordPiece, one piece a line).

BERT's WordPiece vocabulary is not the corpus's sentencepiece vocabulary, so word embeddings (and
the MLM output bias) are carried over piece by piece where the two agree: a word-initial piece
"▁word" is WordPiece "word", a continuation "ing" is "##ing", and the specials map to [UNK],
[PAD], [CLS], [SEP], [MASK]. Pieces BERT lacks keep their fresh initialisation; the pretrain stage
then adapts them with masked-LM training on the corpus. Every other tensor must match in shape.

Both the bare `BertModel` names and the `bert.`-prefixed names of BertForMaskedLM /
BertForPreTraining are accepted; the MLM head (`cls.predictions.*`) is loaded when present.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from sumpipe.config import EncoderConfig
from sumpipe.errors import SumpipeError
from sumpipe.models.bert import BertForMaskedLM

HF_CONFIG_KEYS = {  # EncoderConfig field -> Hugging Face config.json key
    "d_model": "hidden_size", "n_layers": "num_hidden_layers", "n_heads": "num_attention_heads",
    "d_ff": "intermediate_size", "max_positions": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
}
SPECIAL_WORDPIECES = {"<unk>": "[UNK]", "<pad>": "[PAD]", "<s>": "[CLS]", "</s>": "[SEP]", "<mask>": "[MASK]"}


def _hf_layer_names(i: int) -> dict[str, str]:
    """Our parameter name -> Hugging Face name for encoder layer i (weights and biases alike)."""
    ours, hf = f"encoder.layers.{i}.", f"encoder.layer.{i}."
    pairs = {
        "self_attn.q_proj": "attention.self.query", "self_attn.k_proj": "attention.self.key",
        "self_attn.v_proj": "attention.self.value", "self_attn.out_proj": "attention.output.dense",
        "norm1": "attention.output.LayerNorm", "ff.fc1": "intermediate.dense", "ff.fc2": "output.dense",
        "norm2": "output.LayerNorm",
    }
    return {f"{ours}{a}.{p}": f"{hf}{b}.{p}" for a, b in pairs.items() for p in ("weight", "bias")}


def hf_name_map(n_layers: int) -> dict[str, str]:
    """Every tensor of `BertForMaskedLM` except the word embeddings and the head bias -> its HF name."""
    names = {
        "encoder.embeddings.position.weight": "embeddings.position_embeddings.weight",
        "encoder.embeddings.segment.weight": "embeddings.token_type_embeddings.weight",
        "encoder.embeddings.norm.weight": "embeddings.LayerNorm.weight",
        "encoder.embeddings.norm.bias": "embeddings.LayerNorm.bias",
    }
    for i in range(n_layers):
        names.update(_hf_layer_names(i))
    return names


HEAD_NAMES = {"head.dense.weight": "cls.predictions.transform.dense.weight",
              "head.dense.bias": "cls.predictions.transform.dense.bias",
              "head.norm.weight": "cls.predictions.transform.LayerNorm.weight",
              "head.norm.bias": "cls.predictions.transform.LayerNorm.bias"}


def read_hf_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    if not path.is_file():
        raise SumpipeError(f"{folder}: not a Hugging Face BERT folder (config.json is missing)")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise SumpipeError(f"{path}: not valid JSON") from None
    if not isinstance(config, dict) or config.get("model_type", "bert") != "bert":
        raise SumpipeError(f"{path}: not a BERT config (model_type {config.get('model_type')!r})")
    return config


def check_encoder_config(cfg: EncoderConfig, hf: dict[str, Any], folder: Path, key: str) -> None:
    """One-line error when params' encoder section disagrees with the checkpoint's config.json."""
    for ours, theirs in HF_CONFIG_KEYS.items():
        if theirs not in hf:
            raise SumpipeError(f"{folder / 'config.json'}: {theirs} is missing")
        if getattr(cfg, ours) != hf[theirs]:
            raise SumpipeError(f"{key}.{ours} is {getattr(cfg, ours)} but {folder / 'config.json'} has "
                               f"{theirs} {hf[theirs]}: set it to the checkpoint's value")
    act = hf.get("hidden_act", "gelu")
    if act != "gelu":
        raise SumpipeError(f"{folder / 'config.json'}: hidden_act {act!r}, only 'gelu' is supported")


def _read_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    if not path.is_file():
        raise SumpipeError(f"{path.parent}: model.safetensors is missing (only safetensors checkpoints are read)")
    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError) as exc:
        raise SumpipeError(f"{path}: cannot be read ({str(exc).splitlines()[0]})") from None
    # old checkpoints call LayerNorm parameters gamma/beta; BertForMaskedLM prefixes `bert.`
    renamed = {}
    for name, tensor in tensors.items():
        name = name.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight").replace(
            "LayerNorm.beta", "LayerNorm.bias")
        renamed[name] = tensor
    return renamed


def wordpiece_for(piece: str) -> str:
    """The WordPiece spelling of a sentencepiece piece: "▁word" -> "word", "ing" -> "##ing"."""
    if piece in SPECIAL_WORDPIECES:
        return SPECIAL_WORDPIECES[piece]
    return piece[1:] if piece.startswith("\u2581") else "##" + piece


def load_hf_bert(model: BertForMaskedLM, folder: str | os.PathLike, pieces: list[str], cfg: EncoderConfig,
                 key: str = "pretrain.encoder") -> dict[str, int]:
    """Copy a local HF BERT checkpoint into `model` in place (see the module docstring).

    Returns {"pieces_matched", "pieces"}. Every problem is a one-line SumpipeError.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise SumpipeError(f"{folder}: no such Hugging Face BERT folder (pretrain.init_from)")
    check_encoder_config(cfg, read_hf_config(folder), folder, key)
    tensors = _read_tensors(folder / "model.safetensors")
    vocab_path = folder / "vocab.txt"
    if not vocab_path.is_file():
        raise SumpipeError(f"{folder}: vocab.txt is missing (needed to map its word embeddings onto the pieces)")
    wordpieces = {w: i for i, w in enumerate(vocab_path.read_text(encoding="utf-8").splitlines())}
    word_key = "embeddings.word_embeddings.weight"
    names = {**hf_name_map(cfg.n_layers), **{k: v for k, v in HEAD_NAMES.items() if v in tensors}}
    missing = [theirs for theirs in [*names.values(), word_key] if theirs not in tensors]
    if missing:
        raise SumpipeError(f"{folder / 'model.safetensors'}: tensor {missing[0]} is missing "
                           f"({len(missing)} missing; not a BERT checkpoint of this size)")
    if tensors[word_key].shape[0] != len(wordpieces):
        raise SumpipeError(f"{folder}: vocab.txt has {len(wordpieces)} pieces, the word embeddings "
                           f"{tensors[word_key].shape[0]}")
    state = model.state_dict()
    with torch.no_grad():
        for ours, theirs in names.items():
            if state[ours].shape != tensors[theirs].shape:
                raise SumpipeError(f"{folder / 'model.safetensors'}: {theirs} has shape "
                                   f"{tuple(tensors[theirs].shape)}, expected {tuple(state[ours].shape)}")
            state[ours].copy_(tensors[theirs])
        rows = [(i, wordpieces[w]) for i, w in enumerate(map(wordpiece_for, pieces)) if w in wordpieces]
        ours_idx = torch.tensor([r[0] for r in rows], dtype=torch.long)
        theirs_idx = torch.tensor([r[1] for r in rows], dtype=torch.long)
        state["encoder.embeddings.word.weight"][ours_idx] = tensors[word_key][theirs_idx].to(torch.float32)
        bias = tensors.get("cls.predictions.bias")
        if bias is not None:
            state["head.bias"][ours_idx] = bias[theirs_idx].to(torch.float32)
    return {"pieces_matched": len(rows), "pieces": len(pieces)}
