"""`sumpipe meta-eval` given a judgments file it must refuse (sumpipe.evaluate.meta_eval): too few
articles, an article twice, a score too long to read. Each is one `error:` line before any work, and no
results folder is made. Fault suite: `python -m pytest -m faults`.
"""

from __future__ import annotations

import gzip
import json

import pytest

from tests.reliability.harness import check, run_inprocess

pytestmark = pytest.mark.faults

ARTICLE = {"id": "a1", "source": "The cat sat on the mat . It was a sunny day .",
           "references": ["the cat sat on the mat ."],
           "system_outputs": {"S1": "the cat sat on the mat .", "S2": "a sunny day ."},
           "human_scores": {"S1": {"fluency": 5}, "S2": {"fluency": 2}}}


def _judgments(n: int) -> list[str]:
    return [json.dumps({**ARTICLE, "id": f"a{k}", "source": f"{ARTICLE['source']} Day {k} .",
                        "human_scores": {"S1": {"fluency": 1 + k % 5}, "S2": {"fluency": 5 - k % 5}}})
            for k in range(n)]


META_CASES = {
    "two articles": (lambda: _judgments(2),
                     "error: j.jsonl.gz: 2 articles, fewer than the 10 a meta-evaluation needs (min_articles)"),
    "an article twice": (lambda: [*_judgments(11), _judgments(11)[3]],
                         "error: j.jsonl.gz:12: the same article as line 4 (id 'a3'); each article once"),
    "a score of 401 digits": (lambda: [*_judgments(11), _judgments(12)[11].replace('"fluency": 2}', '"fluency": '
                                                                                   + "7" * 401 + "}", 1)],
                              "error: j.jsonl.gz:12: key human_scores.S1.fluency: a number of 401 digits"),
}


@pytest.mark.parametrize(("lines", "expected"), [pytest.param(*v, id=k) for k, v in META_CASES.items()])
def test_meta_eval_input(tmp_path, monkeypatch, capsys, lines, expected) -> None:
    """Refused before any work: no results folder is made (a 2-article file used to run a minute, write its
    results, then blame the protocol; an article twice counted twice in every mean)."""
    with gzip.open(tmp_path / "j.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(lines()) + "\n")
    (tmp_path / "params.yaml").write_text("judgments: j.jsonl.gz\nbootstrap: 20\npublished:\n"
                                          "  ROUGE-1: {fluency: 0.1}\n")
    check(run_inprocess(["meta-eval"], tmp_path, monkeypatch, capsys), expected)
    assert not (tmp_path / "results").exists()
