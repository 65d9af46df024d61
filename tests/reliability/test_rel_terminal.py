"""What reaches the terminal from files the user did not write (sumpipe.terminal): a model card's strings
in the note naming the model, and a corpus folder's file names in `sumpipe download`'s notes.

A card's data set holding a Unicode line separator (U+2028) printed a second, forged `error:` line with
exit 0, and a training count that was text ended in a ValueError traceback; every such string now prints
escaped, on one line, and a count that is not a count is left out of the note. Fault suite:
`python -m pytest -m faults`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.reliability.harness import check, run_inprocess

pytestmark = pytest.mark.faults

ARTICLE = "Police said the man was arrested on Monday after a long chase through the city.\n"


@pytest.fixture
def case(tmp_path: Path) -> Path:
    root = tmp_path / "case"
    root.mkdir()
    (root / "article.txt").write_text(ARTICLE)
    (root / "params.yaml").write_text(yaml.safe_dump({"preprocess": {"workers": 1}}))
    return root


def _vouched(model: Path, edit_card=None) -> Path:
    """The model folder with its card's weights hash and SHA256SUMS rewritten to vouch for what is there
    (a hostile folder is self-consistent)."""
    from sumpipe.io.atomic import file_sha256
    from sumpipe.models.io import write_manifest

    card = json.loads((model / "config.json").read_text())
    card["weights_sha256"] = file_sha256(model / "model.safetensors")
    if edit_card is not None:
        edit_card(card)
    (model / "config.json").write_text(json.dumps(card))
    write_manifest(model)
    return model


FORGERIES = {
    "a line separator": {"dataset": "pydoc\u2028error: forged"},
    "a paragraph separator and NEL": {"dataset": "pydoc\u2029error: forged\x85error: again"},
    "a newline and escape sequences": {"dataset": "pydoc\n\x1b[2Jerror: forged\x1b]0;title\x07"},
    "a model input with a newline": {"input": "first400\nerror: forged"},
    "a training count that is text": {"training": {"train_examples": "5\nerror: forged"}},
    "a training count that is a list": {"training": {"train_examples": [1, 2]}},
}


@pytest.mark.parametrize("changes", [pytest.param(v, id=k) for k, v in FORGERIES.items()])
def test_a_card_cannot_forge_a_line_or_end_in_a_traceback(changes: dict, case: Path, make_model_dir, monkeypatch,
                                                          capsys) -> None:
    model = make_model_dir(case / "esc", seed=0)
    _vouched(model, lambda card: card.update(changes))
    result = run_inprocess(["decode", "-m", "esc", "article.txt"], case, monkeypatch, capsys)
    check(result, "ok")
    note = result.err.strip()
    assert note.startswith("note: model esc ") and len(note.splitlines()) == 1, repr(note)
    for stream in (result.out, result.err):
        assert not any(c in stream for c in "\x1b\x07\x85\u2028\u2029"), repr(stream[-300:])
        assert not any(line.startswith("error: forged") for line in stream.splitlines()), repr(stream[-300:])


def test_a_corpus_file_name_is_escaped_in_the_download_notes(case: Path, monkeypatch, capsys) -> None:
    corpus = case / "corpus"
    corpus.mkdir()
    (corpus / "good.jsonl").write_text("".join(json.dumps({"source": f"the cat {i} sat.", "reference": f"cat {i}"})
                                               + "\n" for i in range(6)))
    (corpus / "x\u2028error: forged\x1b[2J.jsonl").write_text(json.dumps({"reference": "only"}) + "\n")
    (case / "params.yaml").write_text(yaml.safe_dump({"data": {"dataset": "local", "path": "corpus"}}))
    result = run_inprocess(["download"], case, monkeypatch, capsys)
    check(result, "ok")
    assert "note: local: skipped " in result.err and "\\u2028error: forged\\u001b[2J" in result.err
    assert not any(c in result.err for c in "\x1b\u2028")
