"""A trained sentencepiece model as the vocabulary of the subword families (Roy Choudhury 2020's WordPiece).

Piece ids 0-3 are the project's specials (`sumpipe.names`: `<unk>` 0, `<pad>` 1, `<s>` 2,
`</s>` 3), so the decoders of `sumpipe.decode.search` work on pieces unchanged; id 4 is `<mask>`,
BERT's [MASK], a control symbol: no text ever encodes to it. Words start with "▁" (sentencepiece's
word-boundary mark), so `decode` gives back the space-separated tokens of the text convention.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sumpipe.errors import SumpipeError
from sumpipe.names import BOS, EOS, PAD, SPECIAL_TOKENS, UNK

if TYPE_CHECKING:
    import pyarrow as pa

MASK = len(SPECIAL_TOKENS)  # 4
MASK_PIECE = "<mask>"
N_SPECIAL_PIECES = MASK + 1
MODEL_FILE = "subword.model"
VOCAB_FILE = "subword.vocab"
_PROTO_KEY = b"sentencepiece_model"

# sentencepiece trainer options that fix the special ids (the rest come from params.yaml)
SPECIAL_OPTIONS: dict[str, Any] = {
    "unk_id": UNK, "pad_id": PAD, "bos_id": BOS, "eos_id": EOS,
    "unk_piece": SPECIAL_TOKENS[UNK], "pad_piece": SPECIAL_TOKENS[PAD],
    "bos_piece": SPECIAL_TOKENS[BOS], "eos_piece": SPECIAL_TOKENS[EOS],
    "control_symbols": [MASK_PIECE],
}


class SubwordVocab:
    """Text <-> piece ids with a sentencepiece model; `itos` lists the pieces by id."""

    def __init__(self, model_proto: bytes, source: str = "subword model") -> None:
        import sentencepiece as spm

        self.processor = spm.SentencePieceProcessor()
        try:
            self.processor.LoadFromSerializedProto(model_proto)
        except (RuntimeError, OSError):
            raise SumpipeError(f"{source}: not a sentencepiece model") from None
        self.model_proto = model_proto
        self.itos = [self.processor.IdToPiece(i) for i in range(self.processor.GetPieceSize())]
        expected = [*SPECIAL_TOKENS, MASK_PIECE]
        if self.itos[:N_SPECIAL_PIECES] != expected:
            raise SumpipeError(f"{source}: special pieces {self.itos[:N_SPECIAL_PIECES]}, expected {expected}")

    @classmethod
    def load(cls, path: str | os.PathLike) -> SubwordVocab:
        """From a `.model` file or the folder that holds `subword.model`."""
        path = Path(path)
        if path.is_dir():
            path = path / MODEL_FILE
        if not path.is_file():
            raise SumpipeError(f"{path}: no such subword model (run `sumpipe subword`)")
        return cls(path.read_bytes(), str(path))

    @classmethod
    def from_table(cls, path: str | os.PathLike) -> SubwordVocab:
        """From a model directory's `vocab.parquet` (`to_table`)."""
        import pyarrow.parquet as pq

        path = Path(path)
        if not path.is_file():
            raise SumpipeError(f"{path}: no such file (an incomplete model directory)")
        try:
            metadata = pq.read_schema(path).metadata or {}
        except (OSError, ValueError) as exc:
            raise SumpipeError(f"{path}: not a Parquet file ({str(exc).splitlines()[0]})") from None
        if _PROTO_KEY not in metadata:
            raise SumpipeError(f"{path}: holds no sentencepiece model (not a subword model's vocabulary)")
        return cls(metadata[_PROTO_KEY], str(path))

    def to_table(self) -> pa.Table:
        """The pieces as the data contract's vocabulary table (id, token, count, rarity: no counts or
        rarity scores for pieces, 0), with the serialized sentencepiece model in the schema metadata,
        so one file makes a model directory self-contained."""
        import pyarrow as pa

        size = len(self)
        table = pa.table({"id": pa.array(np.arange(size, dtype=np.int32)), "token": pa.array(self.itos),
                          "count": pa.array(np.zeros(size, np.int64)), "rarity": pa.array(np.zeros(size))})
        return table.replace_schema_metadata({_PROTO_KEY: self.model_proto})

    def __len__(self) -> int:
        return len(self.itos)

    def special_mask(self) -> np.ndarray:
        """(V,) bool, True at the special pieces (`<unk>` .. `<mask>`): never masked, never generated."""
        mask = np.zeros(len(self), dtype=bool)
        mask[:N_SPECIAL_PIECES] = True
        return mask

    def encode(self, text: str) -> list[int]:
        """Text (text convention: tokens by spaces, sentences by lines) -> piece ids (no `<s>`/`</s>`)."""
        return self.processor.EncodeAsIds(" ".join(text.split()))

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        return self.processor.EncodeAsIds([" ".join(t.split()) for t in texts])

    def decode(self, ids: list[int]) -> str:
        """Piece ids -> space-separated words; specials are dropped."""
        return self.processor.DecodeIds([i for i in ids if i >= N_SPECIAL_PIECES])
