"""`sumpipe summarize`: raw text through the preprocessing and an extractive method."""

import re
from pathlib import Path

import pytest

from sumpipe.errors import SumpipeError

STORY = ("The storm hit the coast on Monday. Thousands of homes lost power as the storm moved inland. "
         "Markets were calm. Officials said the storm damage would take weeks to repair.")


def test_textrank_two_sentences_without_params(tmp_path: Path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)          # no params.yaml: statistics from the input alone
    (tmp_path / "a.txt").write_text(STORY)
    code, out, _ = cli("summarize", "--method", "textrank", "--sentences", "2", "a.txt")
    # the input's own sentences, as written, in document order; the off-topic one is left out
    assert code == 0 and out == ("The storm hit the coast on Monday. "
                                 "Thousands of homes lost power as the storm moved inland.\n")


def test_tokens_flag_prints_the_preprocessed_form(tmp_path: Path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, out, _ = cli("summarize", "--method", "textrank", "--sentences", "2", "--tokens",
                       "a.txt")
    assert code == 0 and out == ("the storm hit the coast on monday .\n"
                                 "thousands of homes lost power as the storm moved inland .\n")


def test_max_tokens_budget(tmp_path: Path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, out, _ = cli("summarize", "--method", "lead", "--max-tokens", "8", "a.txt")
    assert code == 0 and out == "The storm hit the coast on Monday.\n"   # 8 tokens with the full stop


@pytest.mark.parametrize("args, message", [
    (["--method", "oracle"], "reads the reference"),
    (["--method", "nope"], "unknown extractive method"),
])
def test_errors_are_one_line(tmp_path: Path, monkeypatch, cli, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, _, err = cli("summarize", *args, "a.txt")
    assert code == 1 and message in err and len(err.strip().split("\n")) == 1


def test_help_lists_every_method_of_the_registry(monkeypatch, cli):
    from sumpipe.extractive.methods import METHODS

    monkeypatch.setenv("COLUMNS", "400")
    code, out, _ = cli("summarize", "--help")
    listed = re.search(r"extractive method: (.*?)\s+\[default", out).group(1)
    assert code == 0 and listed.replace(" (reads the reference: refused)", "").split(", ") == METHODS.names()
    assert "oracle (reads the reference: refused)" in listed
    assert {"lead", "lsa", "lsa_gongliu", "lexrank_continuous", "klsum", "oracle"} <= set(METHODS.names())


def test_latin1_input_is_a_one_line_error(tmp_path: Path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_bytes(STORY.replace("Monday", "Montr\xe9al").encode("latin-1"))
    code, out, err = cli("summarize", "a.txt")
    assert (code, out) == (1, "")
    assert err == f"error: a.txt: not UTF-8 text (byte 0xe9 at offset {STORY.index('Monday') + 5}); " \
                  "save it as UTF-8, e.g. `iconv -f latin1 -t utf-8`\n"


def test_ngram_and_lsa_collection_summarize(tmp_path: Path, monkeypatch, cli):
    import numpy as np
    import yaml

    from sumpipe.vocab.ngrams import NgramTable

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    code, _, err = cli("summarize", "--method", "ngram", "a.txt")
    assert code == 1 and "needs the vocab stage's 3-gram table" in err   # no params.yaml, no table
    NgramTable(n=3, keys=np.zeros(0, np.uint64), counts=np.zeros(0, np.uint32), words=[]).save(
        tmp_path / "vocab" / "ngrams.parquet")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"paths": {"vocab": "vocab"}}))
    code, out, _ = cli("summarize", "--method", "ngram", "--sentences", "1", "a.txt")
    assert code == 0 and out == "The storm hit the coast on Monday.\n"   # first_k = 1: the lead sentence
    code, out, _ = cli("summarize", "--method", "lsa_collection", "--sentences", "2",
                       "--tokens", "a.txt")
    assert code == 0 and len(out.strip().split("\n")) == 2 and "markets were calm ." not in out


# --------------------------------------------------------------------------------------------
# The public API the command runs: sumpipe.load_extractive
# --------------------------------------------------------------------------------------------
def test_the_api_gives_what_the_command_prints(tmp_path: Path, monkeypatch, cli):
    from sumpipe.decode.extractive import load_extractive

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(STORY)
    _, out, _ = cli("summarize", "--method", "textrank", "--sentences", "2", "a.txt")
    summary = load_extractive("textrank").summarize(STORY, sentences=2)
    assert summary.text + "\n" == out and summary.sentences == [0, 1] and summary.score is None
    assert summary.tokenized == ("the storm hit the coast on monday .\n"
                                 "thousands of homes lost power as the storm moved inland .")
    assert summary.tokens == summary.tokenized.split() and len(summary.source_tokens) == 34  # 8 + 11 + 4 + 11


def test_options_are_keywords_over_params_yaml(tmp_path: Path):
    import yaml

    from sumpipe.decode.extractive import load_extractive

    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"extractive": {"options": {"lexrank": {"threshold": 0.3}}}}))
    assert load_extractive("lexrank", project=tmp_path).method.threshold == 0.3
    assert load_extractive("lexrank", project=tmp_path, threshold=0.2).method.threshold == 0.2
    assert load_extractive("lexrank").method.threshold == 0.1                   # no params.yaml here: the default


def test_a_list_gives_a_list_and_empty_texts_say_why():
    from sumpipe.decode.extractive import load_extractive

    lead = load_extractive("lead")
    out = lead.summarize([STORY, "!!!", "One sentence here."], sentences=1)
    assert [s.text for s in out] == ["The storm hit the coast on Monday.", "", "One sentence here."]
    assert out[1].error is not None and out[0].error is None and out[0].sentences == [0]
    with pytest.raises(SumpipeError, match="^the input has no Latin-script text"):
        lead.summarize("!!!")
    with pytest.raises(SumpipeError, match="^give sentences or max_tokens$"):
        lead.summarize(STORY, sentences=None)
    with pytest.raises(SumpipeError, match="^method: oracle reads the reference summary"):
        load_extractive("oracle")
