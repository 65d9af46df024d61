"""The vocab stage on a hand-made processed corpus: exact word and 3-gram counts, files, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from sumpipe.config import VocabConfig
from sumpipe.errors import SumpipeError
from sumpipe.vocab.build import build_vocab, tokenized_sentences
from sumpipe.vocab.ngrams import NgramTable, unpack_ngrams
from sumpipe.vocab.vocabulary import Vocabulary

TRAIN = pd.DataFrame({
    "id": ["a", "b"],
    "source": [
        "the british and irish lions won .\nwales , british and irish lions fly-half scored .",
        "british and irish lions fly-half ran .\nthe lions won .",
    ],
    "reference": ["british and irish lions win", "lions won"],
})


def write_processed(root, train=TRAIN):
    processed = root / "processed"
    processed.mkdir()
    train.to_parquet(processed / "train.parquet", index=False)
    return processed


def test_tokenized_sentences_reads_the_text_convention():
    assert tokenized_sentences("the cat sat .\n\n  \nit ran") == [["the", "cat", "sat", "."], ["it", "ran"]]
    assert tokenized_sentences("") == []


def test_counts_exact(tmp_path):
    processed = write_processed(tmp_path)
    stats = build_vocab(processed, tmp_path / "vocab", VocabConfig(size=10), progress=False)

    table = NgramTable.load(tmp_path / "vocab" / "ngrams.parquet")
    grams = {tuple(table.words[i] for i in row): int(c)
             for row, c in zip(unpack_ngrams(table.keys, 3), table.counts)}
    # Sentence by sentence, stop words and "," removed ("won" is one: NLTK lists it, from "won't"),
    # never across sentences, sources only: (british irish lions) x3, (irish lions fly-half) x2;
    # (wales british irish), (lions fly-half scored), (lions fly-half ran) once each -> dropped.
    assert grams == {("british", "irish", "lions"): 3, ("irish", "lions", "fly-half"): 2}
    assert stats["ngrams_total"] == 8 and stats["ngrams_distinct"] == 5 and stats["ngrams_kept"] == 2

    vocab = Vocabulary.load(tmp_path / "vocab" / "vocab.parquet")
    counts = dict(zip(vocab.itos, vocab.counts.tolist()))
    assert counts["lions"] == 4 + 2  # source + reference tokens
    assert counts["won"] == 2 + 1
    assert len(vocab) == 10 and vocab.itos[4:9] == ["lions", ".", "and", "british", "irish"]  # 6, then ties at 4
    words = pd.read_parquet(tmp_path / "vocab" / "words.parquet")
    assert words["token"].tolist()[:3] == ["the", "british", "and"]  # first-seen order
    assert words.set_index("token")["count"]["british"] == 4
    assert stats["train_documents"] == 2 and stats["distinct_words"] == len(words)


def test_rarity_mean_one_on_stage_output(tmp_path):
    build_vocab(write_processed(tmp_path), tmp_path / "vocab", VocabConfig(size=8), progress=False)
    frame = pd.read_parquet(tmp_path / "vocab" / "vocab.parquet")
    assert frame["rarity"].iloc[4:].mean() == pytest.approx(1.0)
    assert frame["id"].tolist() == list(range(8))
    assert np.all(np.diff(frame["count"].iloc[4:]) <= 0)


def test_errors(tmp_path):
    with pytest.raises(SumpipeError, match="no such folder"):
        build_vocab(tmp_path / "nope", tmp_path / "vocab", VocabConfig(), progress=False)
    (tmp_path / "p1").mkdir()
    with pytest.raises(SumpipeError, match="train.parquet: no such file"):
        build_vocab(tmp_path / "p1", tmp_path / "vocab", VocabConfig(), progress=False)
    (tmp_path / "p2").mkdir()
    TRAIN.iloc[:0].to_parquet(tmp_path / "p2" / "train.parquet", index=False)
    with pytest.raises(SumpipeError, match="train split is empty") as exc:
        build_vocab(tmp_path / "p2", tmp_path / "vocab", VocabConfig(), progress=False)
    assert "\n" not in str(exc.value)


def test_command(tmp_path, cli):
    write_processed(tmp_path)
    params = {"paths": {"processed": "processed", "vocab": "vocab", "metrics": "metrics"},
              "vocab": {"size": 10, "ngram_n": 3, "ngram_min_count": 2}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    result = cli("vocab", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "2 of 5 distinct 3-grams kept" in result.stdout
    assert (tmp_path / "metrics" / "vocab.json").is_file()
    assert (tmp_path / "vocab" / "ngrams.parquet").is_file()
