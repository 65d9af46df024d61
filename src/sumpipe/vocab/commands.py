"""`sumpipe vocab`: the vocabulary, rarity scores and n-gram table from the processed train split."""

from __future__ import annotations

from pathlib import Path

from sumpipe.options import ParamsOption
from sumpipe.terminal import echo


def vocab(params: ParamsOption = Path("params.yaml")) -> None:
    """Count the train split: vocabulary + rarity scores, word ids and the n-gram table."""
    from sumpipe.config import load_params
    from sumpipe.io.atomic import write_json
    from sumpipe.vocab.build import build_vocab

    p = load_params(params)
    stats = build_vocab(p.paths.processed, p.paths.vocab, p.vocab)
    write_json(stats, Path(p.paths.metrics) / "vocab.json")
    echo(
        f"vocab: {stats['vocab_size']:,} ids from {stats['distinct_words']:,} train words "
        f"(OOV tokens {stats['oov_token_rate']:.2%}, rarity shift {stats['rarity_shift']:.4f}); "
        f"{stats['ngrams_kept']:,} of {stats['ngrams_distinct']:,} distinct {stats['ngram_n']}-grams kept "
        f"-> {p.paths.vocab}"
    )
