"""Damaged model folders given to `sumpipe decode --model DIR`: one line naming the file, never a
traceback, and never unpickled code.

MUTATIONS maps a case to a function that damages a copy of a good model folder. A family whose
model folder holds other files (a sentencepiece model, a pretrained encoder) adds its cases here.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.harness import check, run_inprocess

ARTICLE = "Police said the man was arrested on Monday after a long chase through the city.\n"
MARKER = "pwned"  # a file the malicious pickle would create


class _Exploit:
    """Unpickling this calls Path.touch on the marker: proof that code ran."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self):
        return (Path.touch, (self.target,))


def _card(d: Path) -> dict:
    return json.loads((d / "config.json").read_text())


def _write_card(d: Path, card: dict) -> None:
    (d / "config.json").write_text(json.dumps(card))


def _rehash(d: Path) -> None:
    """Make config.json vouch for whatever model.safetensors now holds, and SHA256SUMS for the rest
    (an attacker controls every file)."""
    from sumpipe.models.io import write_manifest

    card = _card(d)
    card["weights_sha256"] = hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest()
    _write_card(d, card)
    write_manifest(d)


def _permute_vocab(d: Path) -> None:
    """The same words in another order: every id decodes to a wrong word."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(d / "vocab.parquet")
    order = list(range(table.num_rows))
    order[4], order[5] = order[5], order[4]
    tokens = table.column("token").take(pa.array(order))
    pq.write_table(table.set_column(table.schema.get_field_index("token"), "token", tokens), d / "vocab.parquet")


def _counts(change: Callable[[Any], Any]) -> Callable[[Path], None]:
    """vocab.parquet's `count` column changed by `change` (a numpy array in, one out), SHA256SUMS rewritten
    to vouch for it (a count below -1 was a decimal.InvalidOperation; all 0, an empty summary)."""
    def mutate(d: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from sumpipe.models.io import write_manifest

        table = pq.read_table(d / "vocab.parquet")
        counts = change(table.column("count").to_numpy().copy())
        table = table.set_column(table.schema.get_field_index("count"), "count", pa.array(counts, pa.int64()))
        pq.write_table(table, d / "vocab.parquet")
        write_manifest(d)
    return mutate


def _card_text(edit: Callable[[str], str]) -> Callable[[Path], None]:
    """config.json's text changed by `edit` (str in, str out: numbers json.dumps cannot write), re-vouched."""
    def mutate(d: Path) -> None:
        from sumpipe.models.io import write_manifest

        (d / "config.json").write_text(edit((d / "config.json").read_text()))
        write_manifest(d)
    return mutate


def _minus_two(counts):
    counts[5] = -2
    return counts


def _zero(counts):
    counts[:] = 0
    return counts


def _truncate(d: Path) -> None:
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])


def _pickle(d: Path) -> None:
    (d / "model.safetensors").write_bytes(pickle.dumps(_Exploit(d / MARKER)))


def _set(key: str, value):
    def mutate(d: Path) -> None:
        card = _card(d)
        card[key] = value
        _write_card(d, card)
    return mutate


def _set_arch(key: str, value):
    def mutate(d: Path) -> None:
        card = _card(d)
        card["arch"][key] = value
        _write_card(d, card)
    return mutate


def _other_weights(d: Path) -> None:
    """Weights of a differently shaped model, with a matching hash."""
    card = _card(d)
    card["arch"]["d_model"] = 32
    card["arch"]["d_ff"] = 64
    _write_card(d, card)


def _both(*fs):
    def mutate(d: Path) -> None:
        for f in fs:
            f(d)
    return mutate


def _header(header: bytes) -> Callable[[Path], None]:
    """model.safetensors holding only `header` behind its 8-byte length, the card and SHA256SUMS rewritten to
    vouch for it (JSON nested 100,000 deep was a RecursionError in json.loads)."""
    def mutate(d: Path) -> None:
        (d / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    return _both(mutate, _rehash)


MUTATIONS = {
    # numbers out of range, with every checksum rewritten to vouch for them
    "vocab.parquet count -2, sums updated": (_counts(_minus_two),
                                             "error: vocab.parquet: vocabulary row 5 ("),
    "vocab.parquet every count 0, sums updated": (_counts(_zero), "error: vocab.parquet: every word's count is 0"),
    "config.json vocab_size contradicts arch": (
        _both(lambda d: _write_card(d, {**_card(d), "vocab_size": _card(d)["vocab_size"] + 1}), _rehash),
        "error: config.json: vocab_size: is "),
    "config.json 5,000-digit number": (
        _card_text(lambda t: t.replace("{", '{"padding": ' + "9" * 5000 + ", ", 1)),
        "error: config.json: key padding: a number of 5,000 digits, too large to read"),
    "config.json NaN": (_card_text(lambda t: t.replace("{", '{"weird": NaN, ', 1)),
                        "error: config.json: key weird: NaN is not a finite number"),
    "truncated model.safetensors": (_truncate, "error: model.safetensors: does not match config.json"),
    "truncated weights, hash updated": (_both(_truncate, _rehash), "error: model.safetensors: not a readable"),
    "weights deleted": (lambda d: (d / "model.safetensors").unlink(), "error: model.safetensors is missing"),
    "config.json not JSON": (lambda d: (d / "config.json").write_text("{'family': transformer"),
                             "error: config.json: not valid JSON"),
    "config.json is a list": (lambda d: (d / "config.json").write_text("[1, 2]"), "error: config.json: format"),
    "config.json non-UTF-8": (lambda d: (d / "config.json").write_bytes(b"{\"format\": \"\xff\xfe\"}"),
                              "error: config.json: not valid JSON"),
    "config.json deleted": (lambda d: (d / "config.json").unlink(), "error: unknown model"),
    "config.json of an unknown family": (_set("family", "quantum"), "error: unknown model family 'quantum'"),
    "config.json of another family's arch": (_set_arch("hidden_size", 128), "error: config.json: arch.hidden_size"),
    "config.json says rnn, transformer arch and weights": (_set("family", "rnn"), "error: config.json: arch."),
    "config.json arch wrong type": (_set_arch("d_model", "wide"), "error: config.json: arch.d_model"),
    "config.json arch zero size": (_set_arch("n_heads", 0), "error: config.json: arch.n_heads"),
    "config.json vs other weights": (_other_weights, "error: config.json: does not match SHA256SUMS"),
    "config.json vs other weights, checksums updated": (_both(_other_weights, _rehash),
                                                        "error: model.safetensors: does not fit the architecture"),
    "config.json claims 10**9 words": (_both(_set_arch("vocab_size", 10**9), _set("vocab_size", 10**9), _rehash),
                                       "error: config.json: arch.vocab_size: must be <="),
    "config.json claims 10**6 words, checksums updated": (_both(_set_arch("vocab_size", 10**6), _rehash),
                                                          # the card's own vocab_size contradicts it
                                                          "error: config.json: vocab_size: is 24, but arch.vocab_size"),
    "config.json d_model 65536": (_both(_set_arch("d_model", 65536), _rehash), "error: config.json: arch.d_model"),
    "vocab.parquet rows permuted": (_permute_vocab, "error: vocab.parquet: does not match SHA256SUMS"),
    "vocab.parquet permuted, checksums updated": (_both(_permute_vocab, _rehash), "ok"),  # cannot be told apart
    "SHA256SUMS deleted": (lambda d: (d / "SHA256SUMS").unlink(), "error: SHA256SUMS is missing"),
    "SHA256SUMS garbage": (lambda d: (d / "SHA256SUMS").write_text("hello\n"),
                           "error: SHA256SUMS: not a checksum list"),
    "SHA256SUMS without config.json": (lambda d: (d / "SHA256SUMS").write_text(""),
                                       "error: SHA256SUMS: does not cover config.json"),
    "safetensors header length absurd": (_both(lambda d: (d / "model.safetensors").write_bytes(b"\xff" * 64), _rehash),
                                         "error: model.safetensors: not a readable safetensors file"),
    "safetensors header lists 100,000 deep": (
        _header(b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        "error: model.safetensors: not a readable safetensors file (header nested deeper than 16 levels)"),
    "safetensors header mappings 5,000 deep": (
        _header(b'{"__metadata__": ' + b'{"a":' * 5_000 + b"1" + b"}" * 5_000 + b"}"),
        "error: model.safetensors: not a readable safetensors file (header nested deeper than 16 levels)"),
    "vocab.parquet deleted": (lambda d: (d / "vocab.parquet").unlink(), "error: vocab.parquet"),
    "vocab.parquet truncated": (lambda d: (d / "vocab.parquet").write_bytes(b"PAR1\x00\x00"), "error: vocab.parquet"),
    "pickle as weights": (_pickle, "error: model.safetensors: does not match config.json"),
    "pickle as weights, hash updated": (_both(_pickle, _rehash), "error: model.safetensors: not a readable"),
}


@pytest.fixture(scope="module")
def good_model(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    return make_model_dir(tmp_path_factory.mktemp("rel-models") / "M1", seed=0)


@pytest.mark.parametrize(("mutate", "expected"), [pytest.param(*v, id=k) for k, v in MUTATIONS.items()])
def test_damaged_model_folder(mutate, expected, good_model, tmp_path, monkeypatch, capsys) -> None:
    model = tmp_path / "model"
    shutil.copytree(good_model, model)
    mutate(model)
    (tmp_path / "article.txt").write_text(ARTICLE)
    result = run_inprocess(["decode", "--model", str(model), "article.txt"], tmp_path, monkeypatch, capsys)
    check(result, expected)
    assert not (model / MARKER).exists(), "unpickling ran code from the model folder"
