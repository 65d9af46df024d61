"""A tiny word vocabulary the model tests share (a helper module: test files import no other test file)."""

from __future__ import annotations

import numpy as np

WORDS = "the a cat dog sat ran on in mat park big small red quick and ." .split()


class TinyVocab:
    def __init__(self) -> None:
        self.itos = ["<unk>", "<pad>", "<s>", "</s>", *WORDS]
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.rarity = np.linspace(0.5, 2.0, len(self.itos)).astype(np.float32)
        self.unknown_rarity = 2.2

    def oov_rarity(self, word: str) -> float:
        return self.unknown_rarity

    def __len__(self) -> int:
        return len(self.itos)


VOCAB = TinyVocab()
