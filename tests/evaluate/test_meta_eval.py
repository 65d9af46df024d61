"""The meta-evaluation: hand-computed taus on a tiny judgments file, its boundary checks, and the real
SummEval file (skipped when ../shared is absent)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import rankdata

from sumpipe.config import ConfigError
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.meta_eval import (
    BASELINES,
    MetaEvaluation,
    article_taus,
    baseline_measures,
    correlations,
    halves,
    markdown_table,
    meta_evaluate,
    oriented,
    read_judgments,
    run_meta_eval,
)
from sumpipe.validation import from_dict

SUMMEVAL = Path(__file__).resolve().parents[2].parent / "shared" / "judgments" / "summeval_cnndm_test100.jsonl.gz"

# 3 articles x 3 systems. Article 1: m = 1 2 3, h = 1 3 2: pairs (0,1) and (0,2) concordant, (1,2)
# discordant: tau = (2 - 1) / 3. Article 2: the measure is constant: 0. Article 3: the human scores are
# constant: left out. Mean over the two articles: 1/6.
MEASURE = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [1.0, 2.0, 3.0]])
HUMAN = np.array([[1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [4.0, 4.0, 4.0]])


def test_per_article_taus_by_hand() -> None:
    taus = article_taus(MEASURE, HUMAN)
    assert taus[0] == pytest.approx(1 / 3) and taus[1] == 0.0 and np.isnan(taus[2])
    out = correlations(MEASURE, HUMAN)
    assert out["article"] == pytest.approx(1 / 6)
    # the systems' means: measure 7/3, 3, 11/3; human 7/3, 8/3, 3: the same order, tau 1
    assert out["system"] == pytest.approx(1.0)
    # pooled: Pearson's r of the 9 pairs' average ranks
    expected = np.corrcoef(rankdata(MEASURE.ravel()), rankdata(HUMAN.ravel()))[0, 1]
    assert out["pooled"] == pytest.approx(expected)


def test_a_lower_is_better_measure_is_negated() -> None:
    measures = oriented({"unsupported_stems": MEASURE, "novel 2-grams": MEASURE, "ROUGE-1": MEASURE,
                         "ROUGE-1 P vs source": MEASURE, "length (words)": MEASURE})
    assert correlations(measures["unsupported_stems"], HUMAN)["article"] == pytest.approx(-1 / 6)
    assert correlations(measures["novel 2-grams"], HUMAN)["article"] == pytest.approx(-1 / 6)
    for name in ("ROUGE-1", "ROUGE-1 P vs source", "length (words)"):
        assert correlations(measures[name], HUMAN)["article"] == pytest.approx(1 / 6)


def test_the_halves_alternate_in_the_order_of_the_ids() -> None:
    assert halves(["c", "a", "b"]) == ([1, 0], [2])           # a, c fit; b reports
    assert halves(["d", "b", "a", "c"]) == ([2, 3], [1, 0])   # a, c fit; b, d report
    assert halves([]) == ([], [])


ARTICLES = [
    {"id": "a1", "source": "The cat sat on the mat . It was a sunny day .",
     "references": ["the cat sat on the mat .", "a cat sat on a mat on a sunny day ."],
     "system_outputs": {"S1": "the cat sat on the mat .", "S2": "the dog dog barked at the mat .",
                        "S3": "a sunny day ."},
     "human_scores": {"S1": {"consistency": 5, "fluency": 5}, "S2": {"consistency": 1, "fluency": 2},
                      "S3": {"consistency": 4, "fluency": 4}}},
    {"id": "a2", "source": "Stocks fell on Monday . Investors worried about rates .",
     "references": ["stocks fell as investors worried .", "stocks fell on monday ."],
     "system_outputs": {"S1": "stocks fell on monday .", "S2": "stocks stocks fell on friday .",
                        "S3": "investors worried about rates ."},
     "human_scores": {"S1": {"consistency": 5, "fluency": 5}, "S2": {"consistency": 2, "fluency": 3},
                      "S3": {"consistency": 5, "fluency": 5}}},
]


def write_judgments(path: Path, articles: list[dict]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(json.dumps(a) for a in articles) + "\n")
    return path


def test_read_judgments(tmp_path: Path) -> None:
    judgments = read_judgments(write_judgments(tmp_path / "j.jsonl.gz", ARTICLES))
    assert judgments.systems == ("S1", "S2", "S3") and judgments.scores == ("consistency", "fluency")
    assert judgments.ids == ["a1", "a2"] and judgments.outputs[1][1] == "stocks stocks fell on friday ."
    assert judgments.human["fluency"].tolist() == [[5, 2, 4], [5, 3, 5]]


@pytest.mark.parametrize(("change", "message"), [
    (lambda a: a.pop("references"), r"j.jsonl.gz:2: no 'references' field"),
    (lambda a: a["system_outputs"].pop("S3"), r"j.jsonl.gz:2: the systems differ from the first article's"),
    (lambda a: a["human_scores"]["S2"].update(fluency="good"), r":2: human_scores.S2: every score must be a finite"),
    (lambda a: a["human_scores"]["S2"].pop("fluency"), r":2: human_scores.S2 must score exactly consistency, fluency"),
    (lambda a: a["system_outputs"].update(S1=" "), r":2: source and every system output must be non-empty texts"),
    (lambda a: a.update(references=[]), r":2: references must be a non-empty list"),
])
def test_a_bad_article_is_one_line_naming_the_file_and_line(tmp_path: Path, change, message) -> None:
    articles = json.loads(json.dumps(ARTICLES))
    change(articles[1])
    with pytest.raises(SumpipeError, match=message):
        read_judgments(write_judgments(tmp_path / "j.jsonl.gz", articles))


def _many(n: int) -> list[dict]:
    """`n` distinct articles: ARTICLES' two, then copies of the first under new ids and sources."""
    out = json.loads(json.dumps(ARTICLES))
    for k in range(2, n):
        article = json.loads(json.dumps(ARTICLES[0]))
        article.update(id=f"a{k + 1}", source=f"{article['source']} Day {k} .")
        out.append(article)
    return out


@pytest.mark.parametrize(("change", "message"), [
    (lambda a: a[3].update(id="a1"), r"j.jsonl.gz:4: the same article as line 1 \(id 'a1'\); each article once"),
    (lambda a: a[3].update(source=a[2]["source"]),
     r"j.jsonl.gz:4: the same article as line 3 \(source and system outputs\); each article once"),
    (lambda a: a[1]["human_scores"]["S2"].update(fluency="@401"),
     r"j.jsonl.gz:2: key human_scores.S2.fluency: a number of 401 digits, too large to read \(at most 308\)"),
    (lambda a: a[1]["human_scores"]["S2"].update(fluency="@5000"),
     r"j.jsonl.gz:2: key human_scores.S2.fluency: a number of 5,000 digits, too large to read"),
    (lambda a: a[1]["human_scores"]["S2"].update(fluency=float("inf")),
     r"j.jsonl.gz:2: key human_scores.S2.fluency: Infinity is not a finite number"),
    (lambda a: [x["system_outputs"].pop(s) or x["human_scores"].pop(s) for x in a for s in ("S2", "S3")],
     r"j.jsonl.gz:1: system_outputs names one system; a correlation across an article's systems needs at least 2"),
])
def test_repeated_articles_unreadable_scores_and_one_system_are_refused(tmp_path: Path, change, message) -> None:
    """An article given twice counted twice in every mean (150 "articles" from 100); a score of
    401 digits was an OverflowError, of 5,000 a ValueError; one system correlated nothing, late."""
    articles = _many(12)
    change(articles)
    path = tmp_path / "j.jsonl.gz"
    text = "\n".join(json.dumps(a) for a in articles)  # a number json.dumps cannot write, put in as text
    text = text.replace('"@401"', "7" * 401).replace('"@5000"', "7" * 5000)
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(SumpipeError, match=message) as refused:
        read_judgments(path)
    assert "\n" not in str(refused.value)


def test_too_few_articles_are_refused_before_any_work(tmp_path: Path) -> None:
    write_judgments(tmp_path / "j.jsonl.gz", ARTICLES)
    cfg = MetaEvaluation(judgments="j.jsonl.gz", bootstrap=20, published={"ROUGE-1": {"fluency": 0.9}})
    with pytest.raises(SumpipeError) as refused:
        run_meta_eval(cfg, tmp_path)
    assert str(refused.value) == "j.jsonl.gz: 2 articles, fewer than the 10 a meta-evaluation needs (min_articles)"
    assert not (tmp_path / "results").exists()  # before the results folder, before any scoring
    with pytest.raises(ConfigError, match=r"min_articles: must be >= 2"):
        from_dict(MetaEvaluation, {"min_articles": 1, "published": {"ROUGE-1": {}}})


def test_a_gzip_of_blank_lines_is_refused_as_it_streams(tmp_path: Path) -> None:
    """64 MiB of newlines (a gzip of 64 KiB) took 42 s to stream through before "no article"."""
    import time

    path = tmp_path / "j.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n" * (64 << 20), compresslevel=1))
    start = time.monotonic()
    with pytest.raises(SumpipeError) as refused:
        read_judgments(path)
    assert str(refused.value) == (f"{path}:10001: 10,001 blank lines and 0 JSON objects so far: not a JSON Lines "
                                  "file (one object a line)")
    assert time.monotonic() - start < 5


def test_a_folder_as_the_judgments_file_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "j.jsonl.gz").mkdir()
    with pytest.raises(SumpipeError) as refused:
        read_judgments(tmp_path / "j.jsonl.gz")
    assert str(refused.value) == f"{tmp_path / 'j.jsonl.gz'}: is a directory, not a judgments file"


def test_judgments_bytes_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    lines = [json.dumps(a).encode() for a in _many(12)]
    lines[1] = lines[1].replace(b"Stocks fell", b"Stocks f\xe9ll")
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(SumpipeError) as refused:
        read_judgments(path)
    assert str(refused.value) == (f"{path}:2: bytes that are not UTF-8 (judgments must be UTF-8 text: a replaced "
                                  "byte changes the text scored)")


def test_a_missing_file_and_bad_params_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SumpipeError, match="no such judgments file"):
        run_meta_eval(MetaEvaluation(judgments="nothing.jsonl.gz", published={"ROUGE-1": {}}), tmp_path)
    assert not (tmp_path / "results").exists()
    with pytest.raises(ConfigError, match=r"reproduce: 'ROUGE-1' has no row in published"):
        from_dict(MetaEvaluation, {"published": {"UniEval": {"fluency": 0.371}}})
    with pytest.raises(ConfigError, match=r"published.R.fluency: must be a Kendall tau in \[-1, 1\]"):
        from_dict(MetaEvaluation, {"published": {"ROUGE-1": {}, "R": {"fluency": 3}}})
    with pytest.raises(ConfigError, match=r"bootstrap: must be >= 1"):
        from_dict(MetaEvaluation, {"bootstrap": 0, "published": {"ROUGE-1": {}}})
    with pytest.raises(ConfigError, match=r"baseline: must be one of ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-1 P vs source"):
        from_dict(MetaEvaluation, {"baseline": "BLEU", "published": {"ROUGE-1": {}}})


def test_the_run_writes_the_tables_and_checks_the_published_row(tmp_path: Path) -> None:
    write_judgments(tmp_path / "j.jsonl.gz", ARTICLES)
    cfg = MetaEvaluation(judgments="j.jsonl.gz", bootstrap=20, published={"ROUGE-1": {"fluency": 0.9}, "X": {}},
                         min_articles=2)
    results = run_meta_eval(cfg, tmp_path)
    assert results["check"]["passed"] is False and results["check"]["measured"] == {
        "fluency": results["measures"]["ROUGE-1"]["fluency"]["article"]}
    # repeated words: S2 repeats "dog" (article 1) and "stocks" (article 2), the others nothing; oriented
    # (negated), the measure ranks S2 below S1 and S3, as the fluency scores do: article 1 (5, 2, 4) against
    # (0, -x, 0): one tie in the measure, tau-b = 2 / sqrt(2 * 3); article 2 (5, 3, 5) against (0, -y, 0): 1
    repeated = results["measures"]["repeated_words"]["fluency"]
    assert repeated["article"] == pytest.approx(round((2 / np.sqrt(6) + 1) / 2, 4))
    low, high = repeated["article_interval"]
    assert low <= repeated["article"] <= high
    assert results["rows"][:9] == ["ROUGE-1", "ROUGE-2", "ROUGE-L", *BASELINES]
    assert "sentences_mean" not in results["rows"] and "unsupported_stems" in results["rows"]
    # every measure but the baseline is also given minus the baseline, on all articles and on the held-out half
    assert "vs_baseline" not in results["measures"]["ROUGE-1 P vs source"]["fluency"]
    assert set(results["measures"]["repeated_words"]["fluency"]["vs_baseline"]) == {
        "article", "system", "pooled", "article_interval", "system_interval", "pooled_interval"}
    assert results["halves"] == {"rule": "sorted by id: even positions fit, odd positions report",
                                 "fit": ["a1"], "report": ["a2"]}
    # the held-out half is article a2 alone: repeated words rank S2 below S1 and S3 as its fluency does (tau 1)
    assert results["held_out"]["repeated_words"]["fluency"]["article"] == 1.0
    saved = json.loads((tmp_path / "results" / "meta_eval.json").read_text())
    assert saved["rows"] == results["rows"] and saved["published_rows"] == ["ROUGE-1", "X"]
    table = (tmp_path / "results" / "meta_eval.md").read_text()
    assert "| *ROUGE-1 (published)* | – | +0.900 |" in table and "FAILED" in table
    assert "**The same, minus ROUGE-1 P vs source (paired)**" in table
    assert "**The held-out half (1 article: sorted by id" in table
    assert table == markdown_table(saved) + "\n"


def test_the_baselines_by_hand(tmp_path: Path) -> None:
    judgments = read_judgments(write_judgments(tmp_path / "j.jsonl.gz", ARTICLES))
    out = baseline_measures(judgments, use_stemmer=True)
    assert list(out) == list(BASELINES)
    # a1's S2 "the dog dog barked at the mat ." against "the cat sat on the mat .\nit was a sunny day .":
    # rouge-score's tokens the dog dog bark at the mat: the x2 and mat match (clipped by the source's two
    # "the"): 3 of 7; of its 2-grams only "the mat": 1 of 6
    assert out["ROUGE-1 P vs source"][0, 1] == pytest.approx(3 / 7)
    assert out["ROUGE-2 P vs source"][0, 1] == pytest.approx(1 / 6)
    # tokens (punctuation too, within lines): dog, dog, barked, at of 8 are new; 2-grams: "the mat" and
    # "mat ." of 7 are in the source
    assert out["novel 1-grams"][0, 1] == pytest.approx(100 * 4 / 8)
    assert out["novel 2-grams"][0, 1] == pytest.approx(100 * 5 / 7)
    assert out["length (words)"][0, 1] == 7.0
    # S1 and S3 copy a sentence: everything supported, nothing new
    assert out["ROUGE-1 P vs source"][0, [0, 2]].tolist() == [1.0, 1.0]
    assert out["novel 3-grams"][0, [0, 2]].tolist() == [0.0, 0.0]


def test_each_measure_minus_the_baseline_is_paired(tmp_path: Path) -> None:
    judgments = read_judgments(write_judgments(tmp_path / "j.jsonl.gz", ARTICLES))
    ranks = np.array([[3.0, 1.0, 2.0], [3.0, 1.0, 2.0]])
    measures = {"base": ranks, "same": ranks.copy(), "flat": np.ones((2, 3))}
    table = meta_evaluate(judgments, measures, bootstrap=200, seed=1, baseline="base")
    assert list(table) == ["base", "same", "flat"] and "vs_baseline" not in table["base"]["fluency"]
    # fluency (5, 2, 4) and (5, 3, 5): ranks agree with article 1 (tau 1) and with article 2 but for the tie
    # (tau-b 2 / sqrt(3 * 2)); a constant measure ranks nothing (0), so "flat" is the whole mean below
    base = (1 + 2 / np.sqrt(6)) / 2
    assert table["base"]["fluency"]["article"] == pytest.approx(round(base, 4))
    same, flat = table["same"]["fluency"]["vs_baseline"], table["flat"]["fluency"]["vs_baseline"]
    assert same["article"] == 0.0 and same["article_interval"] == [0.0, 0.0]
    assert flat["article"] == pytest.approx(round(-base, 4))
    # every resample's difference is minus the baseline's mean of its drawn articles: within [-1, -0.8165]
    low, high = flat["article_interval"]
    assert -1.0 <= low <= high <= round(-2 / np.sqrt(6), 4) + 1e-9


def test_the_bootstrap_is_seeded(tmp_path: Path) -> None:
    judgments = read_judgments(write_judgments(tmp_path / "j.jsonl.gz", ARTICLES))
    measures = {"m": np.array([[1.0, 0.0, 2.0], [2.0, 0.0, 2.0]])}
    first = meta_evaluate(judgments, measures, bootstrap=50, seed=3)
    assert first == meta_evaluate(judgments, measures, bootstrap=50, seed=3)


@pytest.mark.skipif(not SUMMEVAL.is_file(), reason="../shared/judgments (research data) is not here")
def test_summeval_reproduces_the_published_rouge_row_and_the_goals(tmp_path: Path) -> None:
    cfg = MetaEvaluation(judgments=str(SUMMEVAL), bootstrap=10, out=str(tmp_path),
                         published={"ROUGE-1": {"coherence": 0.126, "consistency": 0.130, "fluency": 0.094,
                                                "relevance": 0.252}})
    results = run_meta_eval(cfg, tmp_path)
    assert results["articles"] == 100 and len(results["systems"]) == 16
    assert results["check"]["passed"] and results["check"]["max_difference"] <= 0.01
    measures, held_out = results["measures"], results["held_out"]
    assert measures["repeated_words"]["fluency"]["article"] == 0.262            # the fluency measure's
    assert measures["repeated_words"]["fluency"]["system"] > 0
    assert measures["jammed_pairs"]["fluency"]["article"] >= 0.25                # the second fluency bar
    assert measures["jammed_pairs"]["fluency"]["system"] > 0
    # the faithfulness measure against the trivial baseline (docs/measures.md): level with it, not above
    # (the points do not depend on the resamples)
    assert measures["ROUGE-1 P vs source"]["consistency"]["article"] == 0.4325
    assert measures["unsupported_stems"]["consistency"]["article"] == 0.4348
    assert measures["unsupported_stems"]["consistency"]["vs_baseline"]["article"] == 0.0024
    assert held_out["ROUGE-1 P vs source"]["consistency"]["article"] == 0.4474
    assert held_out["unsupported_stems"]["consistency"]["article"] == 0.4436
    assert results["halves"]["fit"][0] == "cnn-test-404f859482d47c127868964a9a39d1a7645dd2e9"
    assert len(results["halves"]["fit"]) == len(results["halves"]["report"]) == 50
