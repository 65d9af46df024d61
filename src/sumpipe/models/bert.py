"""A BERT-style encoder and its masked-LM head (Devlin et al. 2019; Roy Choudhury 2020 ch. 9).

    ids ─► word + learned position + segment-0 embeddings ─► LayerNorm ─► dropout ─► N × BertLayer ─► H
    BertLayer: x = LN(x + dropout(SelfAttention(x)));  x = LN(x + dropout(W2·GELU(W1·x)))   (post-LN)
    MLM head:  logits = LN(GELU(W·h))·Eᵀ + b   (E: the word embeddings, tied)

Shapes: B batch, L positions, D = `d_model`, V pieces. Padding (`<pad>`) is hidden from attention
by a key bias. Weights start as BERT's: N(0, 0.02) for every matrix and embedding, zero biases,
unit LayerNorms. Module names follow Hugging Face's BertModel closely enough that
`sumpipe.models.hf_bert` maps a local checkpoint onto them one to one. The attention and
feed-forward blocks are the shared layers of `sumpipe.models.layers`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from sumpipe.config import EncoderConfig
from sumpipe.models.card import CARD_FILE, ENCODER_FORMAT, EncoderCard, read_encoder_card, write_encoder_card
from sumpipe.models.layers import FeedForward, MultiHeadAttention, key_padding_bias
from sumpipe.models.linear import Linear, linear
from sumpipe.names import PAD

INIT_STD = 0.02


class BertEmbeddings(nn.Module):
    """word + position + segment embeddings, LayerNorm, dropout: (B, L) ids -> (B, L, D)."""

    def __init__(self, cfg: EncoderConfig, vocab_size: int) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab_size, cfg.d_model, padding_idx=PAD)
        self.position = nn.Embedding(cfg.max_positions, cfg.d_model)
        self.segment = nn.Embedding(cfg.type_vocab_size, cfg.d_model)  # one segment: row 0 (no NSP)
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.dropout)
        self.max_positions = cfg.max_positions

    def forward(self, ids: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """ids (B, L) at positions offset..offset+L-1 -> (B, L, D)."""
        end = offset + ids.shape[1]
        if end > self.max_positions:
            raise ValueError(f"position {end - 1} is beyond the encoder's {self.max_positions} positions")
        positions = torch.arange(offset, end, device=ids.device)
        x = self.word(ids) + self.position(positions)[None] + self.segment.weight[0]
        return self.dropout(self.norm(x))


class BertLayer(nn.Module):
    """Post-LN self-attention + GELU feed-forward block."""

    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, dropout=0.0)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, dropout=0.0, activation="gelu")
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """x (B, L, D), bias (B, 1, 1, L) additive (-inf at padding) -> (B, L, D)."""
        x = self.norm1(x + self.dropout(self.self_attn(x, bias=bias).out))
        return self.norm2(x + self.dropout(self.ff(x)))


class BertEncoder(nn.Module):
    """H = BERT(x) (Roy Choudhury 2020 Eqn 10.1): (B, L) piece ids + (B, L) keep-mask -> (B, L, D)."""

    def __init__(self, cfg: EncoderConfig, vocab_size: int) -> None:
        super().__init__()
        self.cfg, self.vocab_size = cfg, vocab_size
        self.embeddings = BertEmbeddings(cfg, vocab_size)
        self.layers = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.n_layers))
        init_bert_weights(self)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        bias = key_padding_bias(keep)
        x = self.embeddings(ids)
        for layer in self.layers:
            x = layer(x, bias)
        return x


class MLMHead(nn.Module):
    """BERT's prediction head: LN(GELU(W·h)) projected onto the tied word embeddings, plus a bias."""

    def __init__(self, cfg: EncoderConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.dense = Linear(cfg.d_model, cfg.d_model)
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.word = word_embeddings  # tied: not a parameter of its own
        self.bias = nn.Parameter(torch.zeros(word_embeddings.num_embeddings))
        init_bert_weights(self.dense)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """h (..., D) -> logits (..., V)."""
        return linear(self.norm(F.gelu(self.dense(h))), self.word.weight, self.bias)


class BertForMaskedLM(nn.Module):
    """The encoder with its MLM head: what the pretrain stage trains."""

    def __init__(self, cfg: EncoderConfig, vocab_size: int) -> None:
        super().__init__()
        self.encoder = BertEncoder(cfg, vocab_size)
        self.head = MLMHead(cfg, self.encoder.embeddings.word)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """ids, keep (B, L) -> logits (B, L, V); with targets (B, L) bool only theirs, (n_targets, V)
        (the head's V-wide projection is most of the cost, and MLM predicts 15 % of the positions)."""
        h = self.encoder(ids, keep)
        return self.head(h if targets is None else h[targets])


def init_bert_weights(module: nn.Module) -> None:
    """BERT's initialisation, in place: N(0, 0.02) matrices and embeddings, zero biases, unit LayerNorms."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=INIT_STD)
            if isinstance(m, nn.Embedding) and m.padding_idx is not None:
                with torch.no_grad():
                    m.weight[m.padding_idx].zero_()
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


# --------------------------------------------------------------------------------------------
# The pretrain stage's output folder: the weights and their card (`sumpipe.models.card.EncoderCard`)
# --------------------------------------------------------------------------------------------
ENCODER_WEIGHTS = "encoder.safetensors"
ENCODER_CARD = CARD_FILE  # the encoder card has the model card's file name, config.json


def save_encoder(model: BertForMaskedLM, folder: str | os.PathLike, card: EncoderCard) -> EncoderCard:
    """`encoder.safetensors` (encoder + MLM head) and its card, the weights' SHA-256 filled in here."""
    from sumpipe.io.atomic import file_sha256
    from sumpipe.io.weights import write_weights

    if (card.encoder, card.vocab_size) != (model.encoder.cfg, model.encoder.vocab_size):
        raise ValueError("the encoder card describes another architecture than the model's")
    folder = Path(folder)
    write_weights(model, folder / ENCODER_WEIGHTS, format=ENCODER_FORMAT)
    card = dataclasses.replace(card, weights_sha256=file_sha256(folder / ENCODER_WEIGHTS))
    write_encoder_card(card, folder)
    return card


def load_encoder(folder: str | os.PathLike) -> tuple[BertForMaskedLM, EncoderCard]:
    """(the pre-trained BertForMaskedLM on the CPU, its card); one-line errors for a bad folder."""
    from safetensors import SafetensorError
    from safetensors.torch import load_model

    from sumpipe.errors import SumpipeError
    from sumpipe.io.atomic import file_sha256
    from sumpipe.io.weights import checked_safetensors

    folder = Path(folder)
    for name in (ENCODER_CARD, ENCODER_WEIGHTS):
        if not (folder / name).is_file():
            raise SumpipeError(f"{folder}: {name} is missing (run `sumpipe pretrain`)")
    card = read_encoder_card(folder)
    if card.weights_sha256 != file_sha256(folder / ENCODER_WEIGHTS):
        raise SumpipeError(f"{folder / ENCODER_WEIGHTS}: does not match {ENCODER_CARD} (corrupt or half-written)")
    try:
        model = BertForMaskedLM(card.encoder, card.vocab_size)
        load_model(model, checked_safetensors(folder / ENCODER_WEIGHTS))
    except (SafetensorError, RuntimeError) as exc:
        raise SumpipeError(f"{folder}: unreadable encoder ({str(exc).splitlines()[0]})") from None
    return model, card
