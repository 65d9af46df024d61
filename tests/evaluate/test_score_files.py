"""`sumpipe rouge` on small files of every format, and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import write_parquet

PREDS = ["the cat sat on the mat", "a dog ran home"]
REFS = ["the cat lay on the mat", "the dog ran home"]


def expected_r1() -> float:
    # pair 1: 5/6 (see evaluate/test_rouge.py); pair 2: "dog ran home" of 4 and 4 -> 3/4. Mean x 100.
    return (5 / 6 + 3 / 4) / 2 * 100


def test_rouge_on_line_files(tmp_path: Path, cli) -> None:
    (tmp_path / "p.txt").write_text("\n".join(PREDS) + "\n")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n")
    code, out, _ = cli("rouge", str(tmp_path / "p.txt"), str(tmp_path / "r.txt"), "--json", "--bootstrap", "50")
    assert code == 0
    result = json.loads(out)
    assert result["n"] == 2
    assert result["scores"]["rouge1"]["fmeasure"] == pytest.approx(expected_r1(), abs=1e-4)
    assert result["config"]["bootstrap_samples"] == 50
    assert result["config"]["rouge_score_version"]


def test_rouge_table_states_its_configuration(tmp_path: Path, cli) -> None:
    (tmp_path / "p.txt").write_text("\n".join(PREDS))
    (tmp_path / "r.txt").write_text("\n".join(REFS))
    code, out, _ = cli("rouge", str(tmp_path / "p.txt"), str(tmp_path / "r.txt"), "--no-stem")
    assert code == 0
    assert "R-1" in out and "R-Lsum" in out
    assert f"{expected_r1():.2f}" in out
    assert "stemming: off" in out and "1000 resamples, seed 1234" in out


def test_rouge_on_jsonl_with_nested_fields(tmp_path: Path, cli) -> None:
    rows = [{"id": i, "out": {"sys": p}, "reference": r} for i, (p, r) in enumerate(zip(PREDS, REFS))]
    path = tmp_path / "both.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, out, _ = cli("rouge", str(path), str(path), "--column", "out.sys", "--json")
    assert code == 0
    assert json.loads(out)["scores"]["rouge1"]["fmeasure"] == pytest.approx(expected_r1(), abs=1e-4)


def test_rouge_on_parquet_with_several_references(tmp_path: Path, cli) -> None:
    write_parquet(pd.DataFrame({"prediction": PREDS}), tmp_path / "p.parquet")
    # The second reference of example 1 is the prediction itself: best-of gives R-1 = 1 there.
    write_parquet(pd.DataFrame({"references": [["the cat lay on the mat", PREDS[0]], ["the dog ran home"]]}),
                  tmp_path / "r.parquet")
    code, out, _ = cli("rouge", str(tmp_path / "p.parquet"), str(tmp_path / "r.parquet"), "--json")
    assert code == 0
    assert json.loads(out)["scores"]["rouge1"]["fmeasure"] == pytest.approx((1 + 3 / 4) / 2 * 100, abs=1e-4)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "no such file"),
        ("lengths", "2 predictions but 1 references"),
        ("column", "no column 'summary_text'"),
        ("field", "has no field 'nope'"),
        ("badjson", "p.jsonl:1: not valid JSON (Expecting property name"),
        ("latin1", "not UTF-8 text"),
        ("badgzip", "p.txt.gz: cannot read (Not a gzipped file"),
        ("jsonarray", "p.json:1: expected a JSON object, got list"),
    ],
)
def test_rouge_errors_are_one_line(tmp_path: Path, cli, setup: str, message: str) -> None:
    pred, ref = tmp_path / "p.txt", tmp_path / "r.txt"
    pred.write_text("\n".join(PREDS))
    ref.write_text("\n".join(REFS))
    extra: list[str] = []
    if setup == "missing":
        pred = tmp_path / "absent.txt"
    elif setup == "lengths":
        ref.write_text(REFS[0])
    elif setup == "column":
        write_parquet(pd.DataFrame({"prediction": PREDS}), tmp_path / "p.parquet")
        pred = tmp_path / "p.parquet"
        extra = ["--column", "summary_text"]
    elif setup == "field":
        pred = tmp_path / "p.jsonl"
        pred.write_text(json.dumps({"prediction": "x"}) + "\n" + json.dumps({"prediction": "y"}) + "\n")
        extra = ["--column", "nope"]
    elif setup == "badjson":
        pred = tmp_path / "p.jsonl"
        pred.write_text("{not json\n")
    elif setup == "latin1":
        pred.write_bytes("café au lait\n".encode("latin-1"))
    elif setup == "badgzip":
        pred = tmp_path / "p.txt.gz"
        pred.write_text("\n".join(PREDS))
    elif setup == "jsonarray":
        pred = tmp_path / "p.json"
        pred.write_text(json.dumps([{"prediction": p} for p in PREDS]) + "\n")
    code, out, err = cli("rouge", str(pred), str(ref), *extra)
    assert code == 1
    assert err.startswith("error: ") and message in err
    assert err.strip().count("\n") == 0
    assert "Traceback" not in err


def test_split_sentences_makes_rouge_lsum_summary_level(tmp_path: Path, cli) -> None:
    # one summary per line; its two sentences come in the other order than the reference's
    (tmp_path / "p.txt").write_text("The storm hit the coast. Thousands lost power.\n")
    (tmp_path / "r.txt").write_text("Thousands lost power. The storm hit the coast.\n")
    results = {}
    for flag in ([], ["--split-sentences"]):
        code, out, _ = cli("rouge", str(tmp_path / "p.txt"), str(tmp_path / "r.txt"),
                           "--json", "--bootstrap", "10", *flag)
        assert code == 0
        results[bool(flag)] = json.loads(out)
    plain, split = results[False], results[True]
    assert plain["scores"]["rougeLsum"]["fmeasure"] == plain["scores"]["rougeL"]["fmeasure"] < 100
    assert split["scores"]["rougeLsum"]["fmeasure"] == pytest.approx(100.0)   # union LCS over sentences
    assert split["scores"]["rougeL"]["fmeasure"] == plain["scores"]["rougeL"]["fmeasure"]
    assert "Punkt" in split["config_line"] and "Punkt" not in plain["config_line"]


# --- the public sumpipe.rouge: the same numbers, as data -----------------------------------------
def test_rouge_of_lists_is_what_the_command_prints(tmp_path: Path, cli) -> None:
    from sumpipe.evaluate.score_files import RougeScore, rouge

    (tmp_path / "p.txt").write_text("\n".join(PREDS) + "\n")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n")
    printed = json.loads(cli("rouge", str(tmp_path / "p.txt"), str(tmp_path / "r.txt"), "--json").stdout)
    result = rouge(PREDS, REFS)
    assert result.n == 2 and result.scores["rouge1"].fmeasure == pytest.approx(expected_r1(), abs=1e-4)
    assert isinstance(result.scores["rougeLsum"], RougeScore)
    mine = result.as_dict()
    assert {k: v for k, v in printed.items() if k not in ("predictions", "references", "scoring_seconds")} == \
        {k: v for k, v in mine.items() if k != "scoring_seconds"}
    assert list(printed) == ["predictions", "references", *mine]                  # the same keys, in order
    assert result.table().splitlines()[1].split() == ["R-1", "79.17", "79.17", "79.17", "[", "75.00,", "83.33]"]


def test_rouge_takes_one_pair_and_several_references() -> None:
    from sumpipe.evaluate.score_files import rouge

    assert rouge("the cat sat", "the cat sat").scores["rouge1"].fmeasure == 100.0
    multi = rouge(["the cat sat"], [["a dog ran", "the cat sat"]])               # best of the references
    assert multi.scores["rougeL"].fmeasure == 100.0 and multi.n == 1
    with pytest.raises(SumpipeError, match="^2 predictions but 1 references"):
        rouge(PREDS, REFS[:1])
