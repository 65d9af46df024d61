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

import os
from pathlib import Path
from typing import Any

import torch

from sumpipe.config import EncoderConfig
from sumpipe.errors import SumpipeError
from sumpipe.inputs import loads_json, read_capped
from sumpipe.models.bert import BertForMaskedLM
from sumpipe.names import SPECIAL_TOKENS
from sumpipe.subword.pieces import MASK_PIECE
from sumpipe.validation import MAX_FF_WIDTH, MAX_HEADS, MAX_LAYERS, MAX_POSITIONS, MAX_VOCAB, MAX_WIDTH

HF_CONFIG_KEYS = {  # EncoderConfig field -> Hugging Face config.json key
    "d_model": "hidden_size", "n_layers": "num_hidden_layers", "n_heads": "num_attention_heads",
    "d_ff": "intermediate_size", "max_positions": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
}
# our specials (`sumpipe.names`, then `<mask>`) -> BERT's WordPiece specials
SPECIAL_WORDPIECES = {**dict(zip(SPECIAL_TOKENS, ("[UNK]", "[PAD]", "[CLS]", "[SEP]"))), MASK_PIECE: "[MASK]"}


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


# config.json's schema: the sizes we read, each an int in [1, bound] (the bounds of params.yaml)
HF_SIZE_BOUNDS = {"hidden_size": MAX_WIDTH, "num_hidden_layers": MAX_LAYERS, "num_attention_heads": MAX_HEADS,
                  "intermediate_size": MAX_FF_WIDTH, "max_position_embeddings": MAX_POSITIONS,
                  "type_vocab_size": 1024, "vocab_size": MAX_VOCAB}
MAX_CONFIG_BYTES = 1 << 20
HF_CONFIG_FILE = "config.json"  # Hugging Face's names for a checkpoint folder's files
HF_WEIGHTS_FILE = "model.safetensors"
HF_VOCAB_FILE = "vocab.txt"
MAX_VOCAB_TXT_BYTES = 64 << 20


def read_hf_config(folder: Path) -> dict[str, Any]:
    """config.json, checked against its schema: a mapping, model_type bert, every size an int in range."""
    path = folder / HF_CONFIG_FILE
    if not path.is_file():
        raise SumpipeError(f"{folder}: not a Hugging Face BERT folder (config.json is missing)")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise SumpipeError(f"{path}: too large to be a BERT config")
    config = loads_json(read_capped(path, MAX_CONFIG_BYTES, "a BERT config"), str(path))
    if not isinstance(config, dict):
        raise SumpipeError(f"{path}: not a BERT config (a JSON {type(config).__name__}, not an object)")
    if config.get("model_type", "bert") != "bert":
        raise SumpipeError(f"{path}: not a BERT config (model_type {config.get('model_type')!r})")
    for key, bound in HF_SIZE_BOUNDS.items():
        value = config.get(key)
        if key in config and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= bound):
            raise SumpipeError(f"{path}: {key} must be an int in [1, {bound:,}], got {value!r}"[:300])
    eps = config.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise SumpipeError(f"{path}: layer_norm_eps must be a number in (0, 1), got {eps!r}"[:300])
    return config


def read_vocab_txt(path: Path) -> list[str]:
    """vocab.txt (UTF-8, one WordPiece a line): the pieces in row order."""
    if not path.is_file():
        raise SumpipeError(f"{path.parent}: vocab.txt is missing (needed to map its word embeddings onto the pieces)")
    if path.stat().st_size > MAX_VOCAB_TXT_BYTES:
        raise SumpipeError(f"{path}: larger than {MAX_VOCAB_TXT_BYTES >> 20} MB, not a WordPiece vocabulary")
    try:
        lines = read_capped(path, MAX_VOCAB_TXT_BYTES, "a WordPiece vocabulary").decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise SumpipeError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return lines


def check_header_shapes(folder: Path, shapes: dict[str, tuple[int, ...]], state: dict[str, torch.Tensor],
                        names: dict[str, str], n_wordpieces: int) -> None:
    """The checkpoint's tensors, from the safetensors header alone, have the shapes the encoder and
    vocab.txt need: checked before a tensor is read, so a wrong width is one line, not a traceback."""
    weights = folder / HF_WEIGHTS_FILE
    for ours, theirs in names.items():
        if theirs in shapes and shapes[theirs] != tuple(state[ours].shape):
            raise SumpipeError(f"{weights}: {theirs} has shape {shapes[theirs]}, expected {tuple(state[ours].shape)}")
    d_model = state["encoder.embeddings.word.weight"].shape[1]
    expected = {"embeddings.word_embeddings.weight": (n_wordpieces, d_model), "cls.predictions.bias": (n_wordpieces,)}
    for name, shape in expected.items():
        if name in shapes and shapes[name] != shape:
            raise SumpipeError(f"{weights}: {name} has shape {shapes[name]}, expected {shape} "
                               f"({n_wordpieces} pieces in vocab.txt, width {d_model})")


def check_encoder_config(cfg: EncoderConfig, hf: dict[str, Any], folder: Path, key: str) -> None:
    """One-line error when params' encoder section disagrees with the checkpoint's config.json."""
    for ours, theirs in HF_CONFIG_KEYS.items():
        if theirs not in hf:
            raise SumpipeError(f"{folder / HF_CONFIG_FILE}: {theirs} is missing")
        if getattr(cfg, ours) != hf[theirs]:
            raise SumpipeError(f"{key}.{ours} is {getattr(cfg, ours)} but {folder / HF_CONFIG_FILE} has "
                               f"{theirs} {hf[theirs]}: set it to the checkpoint's value")
    act = hf.get("hidden_act", "gelu")
    if act != "gelu":
        raise SumpipeError(f"{folder / HF_CONFIG_FILE}: hidden_act {act!r}, only 'gelu' is supported")


def _hf_name(name: str) -> str:
    """Old checkpoints call LayerNorm parameters gamma/beta; BertForMaskedLM prefixes `bert.`."""
    return name.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight").replace(
        "LayerNorm.beta", "LayerNorm.bias")


def _read_shapes(path: Path) -> dict[str, tuple[int, ...]]:
    from sumpipe.io.weights import safetensors_shapes

    if not path.is_file():
        raise SumpipeError(f"{path.parent}: model.safetensors is missing (only safetensors checkpoints are read)")
    return {_hf_name(name): shape for name, shape in safetensors_shapes(path).items()}


def _read_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from sumpipe.io.weights import checked_safetensors

    if not path.is_file():
        raise SumpipeError(f"{path.parent}: model.safetensors is missing (only safetensors checkpoints are read)")
    try:
        tensors = load_file(checked_safetensors(path))
    except (SafetensorError, OSError) as exc:
        raise SumpipeError(f"{path}: cannot be read ({str(exc).splitlines()[0]})") from None
    return {_hf_name(name): tensor for name, tensor in tensors.items()}


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
    shapes = _read_shapes(folder / HF_WEIGHTS_FILE)
    lines = read_vocab_txt(folder / HF_VOCAB_FILE)
    wordpieces = {w: i for i, w in enumerate(lines)}
    word_key = "embeddings.word_embeddings.weight"
    names = {**hf_name_map(cfg.n_layers), **{k: v for k, v in HEAD_NAMES.items() if v in shapes}}
    missing = [theirs for theirs in [*names.values(), word_key] if theirs not in shapes]
    if missing:
        raise SumpipeError(f"{folder / HF_WEIGHTS_FILE}: tensor {missing[0]} is missing "
                           f"({len(missing)} missing; not a BERT checkpoint of this size)")
    if shapes[word_key][0] != len(lines):
        raise SumpipeError(f"{folder}: vocab.txt has {len(lines)} pieces, the word embeddings "
                           f"{shapes[word_key][0]}")
    state = model.state_dict()
    check_header_shapes(folder, shapes, state, names, len(lines))
    tensors = _read_tensors(folder / HF_WEIGHTS_FILE)
    with torch.no_grad():
        for ours, theirs in names.items():
            if state[ours].shape != tensors[theirs].shape:
                raise SumpipeError(f"{folder / HF_WEIGHTS_FILE}: {theirs} has shape "
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
