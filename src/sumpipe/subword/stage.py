"""The `subword` stage: a sentencepiece model on the train split's sources and references.

Roy Choudhury 2020 uses BERT's WordPiece vocabulary of 30,000 pieces; pre-trained BERT cannot be downloaded
here, so the vocabulary is learned from the corpus: BPE (merges of the most frequent pair, the
closest well-kept stand-in for WordPiece's greedy likelihood merges) or a unigram model, with
`subword.size` pieces (a soft limit: a small corpus may yield fewer).

The input is the preprocessed train split (`<processed>/train.parquet`): every sentence line of every
source, then of every reference, in file order. The result is deterministic: a fixed input order,
sentencepiece's identity normalisation (the text is already normalised by preprocess), its random
generator seeded from `subword.seed`, and `subword.threads` training threads (the output is the same
for a given thread count; the default 1 is the same on every machine).

Writes `<subword>/subword.model` (the serialized model) and `subword.vocab` (one piece and its score
a line, for people), both atomically, and returns statistics for `metrics/subword.json`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sumpipe.config import SubwordConfig
from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import atomic_path, read_parquet
from sumpipe.schemas import PROCESSED
from sumpipe.subword.pieces import MODEL_FILE, SPECIAL_OPTIONS, VOCAB_FILE, SubwordVocab


def training_lines(texts: list[str]) -> Iterator[str]:
    """Every non-empty sentence line of `texts`, in order."""
    for text in texts:
        for line in text.split("\n"):
            if line.strip():
                yield line


def train_sentencepiece(lines: Iterator[str], cfg: SubwordConfig) -> bytes:
    """A serialized sentencepiece model trained on `lines` per `cfg` (see the module docstring)."""
    import io

    import sentencepiece as spm

    spm.set_random_generator_seed(cfg.seed)
    proto = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=lines,
            model_writer=proto,
            vocab_size=cfg.size,
            model_type=cfg.model_type,
            character_coverage=cfg.character_coverage,
            hard_vocab_limit=False,
            normalization_rule_name="identity",
            input_sentence_size=cfg.max_sentences or 0,
            shuffle_input_sentence=True,
            max_sentence_length=1 << 16,
            num_threads=cfg.threads,
            minloglevel=2,
            **SPECIAL_OPTIONS,
        )
    except RuntimeError as exc:
        raise SumpipeError(f"subword: sentencepiece training failed ({str(exc).strip().splitlines()[0]})") from None
    return proto.getvalue()


def train_subword(processed_dir: str | Path, out_dir: str | Path, cfg: SubwordConfig) -> dict[str, Any]:
    """Train the model on `<processed_dir>/train.parquet` and write it to `out_dir`; return statistics."""
    train = read_parquet(Path(processed_dir) / "train.parquet", columns=["source", "reference"], contract=PROCESSED)
    if len(train) == 0:
        raise SumpipeError(f"{Path(processed_dir) / 'train.parquet'}: no training examples")
    sources, references = train["source"].tolist(), train["reference"].tolist()
    proto = train_sentencepiece(training_lines(sources + references), cfg)
    out_dir = Path(out_dir)
    with atomic_path(out_dir / MODEL_FILE) as tmp:
        tmp.write_bytes(proto)
    vocab = SubwordVocab(proto, str(out_dir / MODEL_FILE))
    with atomic_path(out_dir / VOCAB_FILE) as tmp:
        tmp.write_text("".join(f"{piece}\t{vocab.processor.GetScore(i):g}\n" for i, piece in enumerate(vocab.itos)),
                       encoding="utf-8")
    words = sum(len(t.split()) for t in sources)
    pieces = sum(len(ids) for ids in vocab.encode_many(sources))
    return {
        "pieces": len(vocab), "requested": cfg.size, "model_type": cfg.model_type,
        "train_examples": len(train), "source_words": words, "source_pieces": pieces,
        "pieces_per_word": round(pieces / max(words, 1), 4),
    }
