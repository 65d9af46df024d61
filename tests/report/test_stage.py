"""The report stage from small fixtures."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd
import pytest

from sumpipe.config import DecodeConfig, EvaluateConfig, ModelSpec, ReportConfig
from sumpipe.decode.attention import ReportExamples
from sumpipe.decode.stage import decode_stage
from sumpipe.evaluate.stage import run_evaluate
from sumpipe.io.atomic import read_parquet, write_json
from sumpipe.report.html import markdown_to_html
from sumpipe.report.stage import _escape, build_report

PNG = b"\x89PNG\r\n\x1a\n"
EVAL = EvaluateConfig(bootstrap_samples=100, seed=5)
DECODE = DecodeConfig(beam_size=2, max_length=6, batch_size=4)
SPECS = {"M1": ModelSpec(input="first200"), "M2": ModelSpec(input="first200", rarity=True)}


def evaluate(paths, names: list[str]) -> None:
    run_evaluate(paths, EVAL, {n: SPECS[n] for n in names}, [1], [], ["first200"])


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, make_eval_model, eval_corpus):
    root = tmp_path_factory.mktemp("pipeline")
    paths = eval_corpus.make_tree(root)
    evaluate(paths, ["M1", "M2"])
    write_json({"test": {"examples": 6, "reference_words": 5.5,
                         "full": {"words_present": 4.0, "share": 0.8, "occurrences": 6.0},
                         "first200": {"words_present": 3.0, "share": 0.6, "occurrences": 4.0}},
                "train": {"examples": 60, "reference_words": 5.0,
                          "full": {"words_present": 4.2, "share": 0.85, "occurrences": 6.5},
                          "first200": {"words_present": 3.1, "share": 0.62, "occurrences": 4.1}}},
               Path(paths.metrics) / "coverage.json")
    make_eval_model(Path(paths.models) / "M1" / "seed-1", seed=1)
    # the decode stage keeps the attention of the report's heat-map examples (its predictions replace the
    # fixture's, which evaluate has scored already)
    decode_stage(Path(paths.models) / "M1" / "seed-1", paths.extracted, Path(paths.predictions) / "M1" / "seed-1",
                 DECODE, report_examples=ReportExamples(n_samples=2, n_heatmaps=1, seed=5))
    pd.DataFrame({"step": [10, 20, 30, 40], "epoch": [1, 1, 2, 2], "loss": [5.0, 4.0, 3.5, 3.0],
                  "valid_loss": [None, 4.2, None, 3.6], "lr": [1e-3] * 4, "tokens_per_s": [100.0] * 4}
                 ).to_csv(Path(paths.models) / "M1" / "seed-1" / "train_log.csv", index=False)
    return paths


def test_report_builds_from_fixtures(pipeline) -> None:
    result = build_report(pipeline, ReportConfig(n_samples=2, n_heatmaps=1), ["M1", "M2"], seed=5)
    md = result.markdown.read_text()
    for heading in ("ROUGE on the test split (Morozovskii 2022 Table 5.1)",
                    "Which differences survive another seed (two-level bootstrap)",
                    "Input coverage (Morozovskii 2022 Fig. 5.2)", "Sample summaries", "Attention heat maps",
                    "Training curves", "Scoring configuration"):
        assert f"## {heading}" in md
    # Table 5.1 shape: one row per system with the interval, the baselines included.
    summary = json.loads((Path(pipeline.scores) / "summary.json").read_text())
    m1 = summary["systems"]["M1"]
    assert f"{m1['rouge1']:.2f} [{m1['rouge1_low']:.2f}, {m1['rouge1_high']:.2f}]" in md
    for system in ("| M1 |", "| M2 |", "| lead3 |", "| first200 |"):
        assert system in md
    # The seed-aware comparisons (M2 against M1, each model against Lead-3), and the stated method.
    assert "| M2 | M1 | rarity-scaled attention |" in md and "| M1 | lead3 | against lead3 |" in md
    assert "Davison & Hinkley" in md
    assert "| lead3 | M1 |" not in md  # a baseline is only compared with Lead-3
    # Models first, then the baselines, as the evaluate stage ordered them.
    assert md.index("| M1 | **") < md.index("| M2 |") < md.index("| lead3 |") < md.index("| first200 |")
    # Two sample tables in the shape of Table 5.3, each with every system's output.
    assert md.count("### Example `") == 2
    # The configuration every table depends on.
    assert "Porter" in md and "100 resamples" in md and "split on newlines" in md
    names = {p.name for p in result.figures}
    assert {"coverage.png", "coverage_example.png", "training_curves.png"} <= names
    # the heat map of the tiny model, from the attention its decode kept, on the first sample example
    heat_id = ReportExamples(2, 1, seed=5).heatmaps([f"ex{i}" for i in range(6)])[0]
    assert md.index(f"### Example `{heat_id}`") < md.index("## Attention heat maps")
    assert {f"attention_M1_seed-1_{heat_id}.png", f"attention_M1_seed-1_{heat_id}_heads.png"} <= names
    prediction = read_parquet(Path(pipeline.predictions) / "M1" / "seed-1" / "test.parquet").set_index("id")
    assert f"**M1 (seed 1)**, `{heat_id}`: {_escape(prediction['prediction'][heat_id])}" in md
    # the sample tables name the seed shown; the training table lists each run
    assert "| M1 (seed 1) | " in md and "| M1 | 1 | 40 | 2.00 | 3.0000 | 3.6000 |" in md
    for path in result.figures:
        assert path.read_bytes()[:8] == PNG
        assert f"]({path.relative_to(Path(pipeline.reports)).as_posix()})" in md
    html = result.html.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html and '<img src="figures/coverage.png"' in html


def test_the_read_quality_table_has_the_references_first(pipeline, tmp_path: Path) -> None:
    import dataclasses

    paths = dataclasses.replace(pipeline, reports=str(tmp_path / "reports"))
    md = build_report(paths, ReportConfig(n_samples=0, n_heatmaps=0), ["M1", "M2"], seed=5).markdown.read_text()
    reading = json.loads((Path(pipeline.metrics) / "read_quality.json").read_text())
    section = md[md.index("## What a reader gets (read quality)"):md.index("## Which differences survive")]
    assert md.index("## ROUGE on the test split") < md.index("## What a reader gets")
    assert "| system | R-1 F1 | fragments % | sentences |" in section
    # the anchor: the references, one sentence each with every content word in the source
    assert reading["references"]["unsupported_stems"] == 0.0
    assert "| *references* | – | 0.0 | 1.00 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |" in section
    # M2 writes one-word summaries ("cat ."): every one a fragment, each word from its source
    summary = json.loads((Path(pipeline.scores) / "summary.json").read_text())
    m2 = f"| M2 | {summary['systems']['M2']['rouge1']:.2f} | 100.0 | 1.00 | 0.0 |"
    assert m2 in section and section.index("| *references* |") < section.index("| M1 |") < section.index(m2)
    assert "| repeated words % | unsupported words % |" in section and "Kneser-Ney" not in section
    assert section.count("| jammed pairs % |") == 1 and "princess permission dock" in section


def test_report_draws_heat_maps_without_torch(pipeline, tmp_path: Path) -> None:
    """The heat maps come from the attention the decode stage kept: the report loads neither torch nor a model."""
    import dataclasses
    import subprocess
    import sys

    paths = dataclasses.replace(pipeline, reports=str(tmp_path / "reports"))
    code = ("import json, sys\n"
            "from sumpipe.config import PathsConfig, ReportConfig\n"
            "from sumpipe.report.stage import build_report\n"
            "r = build_report(PathsConfig(**json.loads(sys.argv[1])), ReportConfig(2, 1), ['M1', 'M2'], seed=5)\n"
            "print(sorted(p.name for p in r.figures if p.name.startswith('attention_')), 'torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code, json.dumps(dataclasses.asdict(paths))], capture_output=True,
                         text=True, check=True)
    figures, torch_loaded = run.stdout.strip().rsplit(" ", 1)
    assert "attention_M1_" in figures and torch_loaded == "False"


def test_report_without_optional_inputs(tmp_path: Path, eval_corpus) -> None:
    paths = eval_corpus.make_tree(tmp_path, models={"M1": ["x ."] * 6})
    evaluate(paths, ["M1"])
    result = build_report(paths, ReportConfig(n_samples=1, n_heatmaps=1), ["M1"], seed=1)
    md = result.markdown.read_text()
    assert "No coverage metrics" in md
    assert f"No attention kept by the decode stage in `{paths.predictions}` yet." in md
    assert "No `train_log.csv`" in md
    assert result.figures == []


def test_markdown_to_html_tables_and_escaping() -> None:
    page = markdown_to_html("# T\n\n| a | b |\n|---|---:|\n| x \\| y | **1.0** |\n\n- `c` <d>\n", "t")
    assert "<h1>T</h1>" in page
    assert '<th>a</th>\n<th style="text-align:right">b</th>' in page
    assert '<td>x | y</td>\n<td style="text-align:right"><strong>1.0</strong></td>' in page
    assert "<li><code>c</code> &lt;d&gt;</li>" in page  # raw HTML is escaped, never passed through


def test_markdown_to_html_links_images_and_takes_broken_markup_as_text() -> None:
    # "#tag" and a broken "![" line once stalled the hand-written converter forever.
    page = markdown_to_html("#tag\n\n![M1 d(1)](figures/attention_M1_d(1).png)\n\n![broken (x\n", "t")
    assert "<p>#tag</p>" in page
    assert ('<a href="figures/attention_M1_d(1).png"><img src="figures/attention_M1_d(1).png" alt="M1 d(1)" /></a>'
            in page)
    assert "<p>![broken (x</p>" in page


def test_sample_text_renders_as_written() -> None:
    text = "__init__ ( *args , **kwargs ) | <unk> `x` [1](y) ~a~ &amp; !"
    page = markdown_to_html(f"| s |\n|---|\n| {_escape(text)} |\n", "t")
    assert f"<td>{html.escape(text, quote=False)}</td>" in page


def test_a_recall_protocol_leads_the_tables_with_recall_and_keeps_f1_beside(tmp_path: Path, eval_corpus) -> None:
    """Under the DUC protocol (here a 12-byte cut, recall): the ROUGE table shows recall with its intervals,
    an F1 table follows, the comparisons say they test recall; the crosseval section likewise, with its own
    comparisons (`sumpipe.report.stage.crosseval_section`)."""
    from sumpipe.config import ScoringProtocol
    from sumpipe.report.stage import crosseval_section

    paths = eval_corpus.make_tree(tmp_path)
    cfg = EvaluateConfig(bootstrap_samples=50, seed=5, prefix_bytes=[75],
                         protocol=ScoringProtocol(max_bytes=12, references="average", measure="recall"))
    result = run_evaluate(paths, cfg, SPECS, [1], [], [])
    md = build_report(paths, ReportConfig(n_samples=1, n_heatmaps=0), ["M1", "M2"], seed=1).markdown.read_text()
    recall = result.summaries["M1"]["rouge1_recall"]
    assert "| Model | R-1 recall | R-2 recall | R-L recall | R-Lsum recall | n | seeds |" in md
    assert f"| M1 | **{recall:.2f} [" in md and "F1 x 100 of the same summaries:" in md
    assert "Δ = mean recall x 100 of A minus that of B" in md and "| M1 | prefix75 | against prefix75 |" in md
    assert "Scored: the first 12 bytes of every summary (ROUGE-1.5.5 -b 12)." in md
    m1 = result.summaries["M1"]
    cross = {"corpus": "duc", "split": "all", "config": {"measure": "recall"}, "references_note": "4 refs.",
             "systems": {"M1 (duc)": m1},
             "comparisons": [{"a": "M1 (duc)", "b": "lead1 (duc)", "what": "against lead1 (duc)", "n": 6, "seeds_a": 1,
                              "seeds_b": 1, "measure": "recall",
                              **{t: {"delta": 1.0, "low": 0.5, "high": 1.5, "p_value": 0.01}
                                 for t in ("rouge1", "rouge2", "rougeL")}}]}
    section = "\n".join(crosseval_section(cross))
    assert f"| M1 (duc) | {recall:.2f} [" in section and "F1 x 100 of the same summaries:" in section
    assert "| M1 (duc) | lead1 (duc) | against lead1 (duc) | +1.00 [+0.50, +1.50] (0.010) †" in section


def test_the_crosseval_degeneracy_table_shows_rare_word_recall_when_measured() -> None:
    from sumpipe.report.stage import crosseval_degeneracy

    figures = {"distinct": 99.0, "adjacent_repeat": 0.5, "mean_length": 8.25}
    summary = {"rare_word_max_count": 5, "reference_length": {"p10": 6, "p90": 12},
               "systems": {"M1 (duc)": {**figures, "rare_word_recall": 12.345, "rare_word_recall_sd": 1.5},
                           "lead1 (duc)": {**figures, "rare_word_recall": None}}}
    lines = crosseval_degeneracy(summary)
    assert "content words seen at most 5 times in training" in lines[0]
    assert lines[2:] == ["| system | distinct | word twice | length | rare-word recall |", "|---|---:|---:|---:|---:|",
                         "| M1 (duc) | 99.0 | 0.5 | 8.2 | 12.35 ± 1.50 |", "| lead1 (duc) | 99.0 | 0.5 | 8.2 | – |", ""]
    older = {"systems": {"M1 (duc)": figures}}  # a summary.json written before the stage measured it
    assert crosseval_degeneracy(older)[2] == "| system | distinct | word twice | length |"


def test_the_decoding_rule_table_shows_both_sides() -> None:
    from sumpipe.report.stage import decoding_rule_section

    side = {"rouge1": 23.5, "rouge2": 5.0, "rougeL": 21.0, "adjacent_repeat": 0.0, "distinct": 95.0, "mean_words": 8.2}
    rule = {"M1": {"with": side, "without": {**side, "rouge1": 23.9, "adjacent_repeat": 6.4, "mean_words": 8.4},
                   "n_seeds": 3, "rouge1": {"delta": -0.4, "low": -0.7, "high": -0.1, "p_value": 0.01}}}
    lines = decoding_rule_section({"decoding_rule": rule})
    assert lines[0] == "## The decoding rule: no token twice in a row"
    assert "| M1 | 23.50 | 23.90 | -0.40 [-0.70, -0.10] (0.010) | 0.0 / 6.4 | 95.0 / 95.0 | 8.2 / 8.4 |" in lines
    assert decoding_rule_section({}) == []


def test_the_rare_words_section_has_the_ceiling_the_copy_rate_and_m2_minus_m1() -> None:
    """Rare-word recall beside its ceiling (the model's input) and the copy rate, the references'
    copy rate first as the anchor, and the difference between two models with its seed-aware test (a model
    against a baseline is in the significance section, not here)."""
    from sumpipe.report.stage import rare_words_section

    systems = ["M1", "M2", "first40"]
    rare = {"M1": {"recall": 3.01, "recall_sd": 0.67, "recall_low": 1.35, "recall_high": 5.28, "n": 201,
                   "input": "first40", "ceiling": 30.35},
            "M2": {"recall": 2.87, "recall_low": 1.24, "recall_high": 5.25, "n": 201},
            "first40": {"recall": 30.35, "recall_low": 24.38, "recall_high": 36.28, "n": 201}}
    copying = {"references": {"copy_rate": 13.8, "in_source": 26.0, "vocab_size": 2000},
               "systems": {"M1": {"copy_rate": 1.61, "copy_rate_sd": 0.3, "in_source": 100.0, "in_source_sd": 0.0,
                                  "vocab_size": 2000, "own_vocabulary": True},
                           "first40": {"copy_rate": 20.1, "in_source": 100.0, "vocab_size": 2000,
                                       "own_vocabulary": False}}}
    test = {"delta": -0.14, "low": -2.5, "high": 2.1, "p_value": 0.91}
    comparisons = [{"a": "M2", "b": "M1", "what": "rarity-scaled attention", "seeds_a": 3, "seeds_b": 3,
                    "rare_word_recall": test},
                   {"a": "M1", "b": "first40", "what": "against first40", "seeds_a": 3, "seeds_b": 1,
                    "rare_word_recall": test}]
    summary = {"rare_word_max_count": 5, "order": systems, "systems": {name: {} for name in systems},
               "seeds": {"M1": [1, 2, 3], "M2": [1, 2, 3]}, "rare_words": rare, "copy_rate": copying,
               "comparisons": comparisons}
    lines = rare_words_section(summary)
    table = lines[lines.index("| system | rare-word recall | ceiling (input) | copy rate % | in source % | V | n |"):]
    assert table[2:6] == ["| *references* | – | – | 13.80 | 26.00 | 2,000 | – |",
                          "| M1 | 3.01 ± 0.67 [1.35, 5.28] | 30.35 (first40) | 1.61 ± 0.30 | 100.00 ± 0.00 | 2,000 "
                          "| 201 |",
                          "| M2 | 2.87 [1.24, 5.25] | – | – | – | – | 201 |",
                          "| first40 | 30.35 [24.38, 36.28] | – | 20.10 | 100.00 | 2,000 * | 201 |"]
    differences = [line for line in lines if line.startswith("| M")][2:]  # after the rows of M1 and M2
    assert differences == ["| M2 | M1 | rarity-scaled attention | -0.14 [-2.50, +2.10] (0.910) | 3/3 |"]
    # an evaluate run from before the copy rate (no copy rates, no ceilings, no differences): the recall alone
    old = rare_words_section({**summary, "copy_rate": None, "comparisons": []})
    assert "| M2 | 2.87 [1.24, 5.25] | – | – | – | – | 201 |" in old and not any("references" in x for x in old[4:])
