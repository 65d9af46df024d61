"""The DVC `report` stage: one markdown (and HTML) report with Morozovskii 2022's tables and figures.

Reads what earlier stages wrote and draws nothing it cannot trace back to them:

| section | from | seed |
|---|---|---|
| ROUGE F1 x 100 (models: mean ± sd over seeds), 95% intervals | `${paths.scores}/summary.json` (evaluate) | 5.1 |
| seed-aware comparisons (two-level bootstrap, `sumpipe.evaluate.pairs`) | same | -- |
| input coverage by selection, bar charts | `${paths.metrics}/coverage.json` (extract) and its `selected` | Fig. 5.2 |
| sample summaries with per-example ROUGE | `${paths.scores}/<system>.parquet`, processed split | Tables 5.2-5.4 |
| attention heat maps | `${paths.predictions}/<model>/seed-<s>/<split>.attention.parquet` (decode) | Fig. 5.3 |
| training curves, every seed | `${paths.models}/<model>/seed-<s>/train_log.csv` | -- |

Samples and heat maps show one seed of each model: the one `sumpipe decode` uses (the lowest validation
loss, `sumpipe.decode.interactive.pick_seed`), named in the table.
| cross-data-set ROUGE | `${paths.crosseval}/summary.json` (crosseval stage), when present | Table 5.22 |

Everything goes to `${paths.reports}/`: `report.md`, `report.html` and `figures/*.png`. A section whose
inputs are absent says so in one line instead of failing: the report also serves half-built pipelines.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sumpipe.config import PathsConfig, ReportConfig
from sumpipe.decode.attention import KeptAttention, ReportExamples, attention_path, read_attention
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.summary import LABELS, MEASURES, figure_key, markdown_table
from sumpipe.io.atomic import read_json, read_parquet, write_text
from sumpipe.models.folders import pick_seed, seed_folders
from sumpipe.names import TRAIN_LOG_FILE, Seeds, folder_seed, seed_folder, seeds_for
from sumpipe.report import plots
from sumpipe.report.html import markdown_to_html
from sumpipe.selection.coverage import reference_hits, reference_words

TABLE_TYPES = ("rouge1", "rouge2", "rougeL")
FRAGMENT_WORDS = 80  # words of the input shown in the sample table (the thesis shows a fragment)


@dataclass
class ReportResult:
    markdown: Path
    html: Path
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_MARKUP = re.compile(r"([\\`*_\[\]<>|~!&])")  # characters that could open inline markdown (or end a cell)


def _escape(text: str) -> str:
    """A text (model output, a source) as literal markdown on one line, e.g. a table cell: sentences
    joined, markup characters backslash-escaped, so "__init__" or "*args" show as written."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _fragment(text: str, words: int = FRAGMENT_WORDS) -> str:
    tokens = str(text).split()
    return " ".join(tokens[:words]) + (" ..." if len(tokens) > words else "")


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------
def config_line(config: dict) -> str:
    """The set-up a ROUGE table depends on, in one line under the table."""
    length = f"scored length: {config['length']}; " if config.get("max_bytes") else ""
    return (f"*Configuration: rouge-score {config.get('rouge_score_version', '?')} numbers; tokenizer: "
            f"{config.get('tokenizer', '?')}; stemming: {config.get('stemming', '?')}; ROUGE-Lsum sentences: "
            f"{config.get('rougeLsum_sentences', '?')}; several references: {config.get('multi_reference', '?')}; "
            f"{length}intervals: {config.get('interval', '?')}.*")


def ordered_systems(summary: dict) -> dict[str, dict]:
    """Per-system summaries in the evaluate stage's order (models first, then the baselines)."""
    order = summary.get("order") or list(summary["systems"])
    return {name: summary["systems"][name] for name in order if name in summary["systems"]}


def measure_of(summary: dict) -> str:
    """The measure a stage's tables lead with (its protocol's; F1 for outputs written before protocols)."""
    return summary.get("config", {}).get("measure", "fmeasure")


def rouge_section(summary: dict) -> list[str]:
    systems = ordered_systems(summary)
    split = summary.get("split", "test")
    measure = measure_of(summary)
    best = {t: max(systems, key=lambda s: systems[s][figure_key(t, measure)]) for t in TABLE_TYPES}
    table = markdown_table(systems, types=(*TABLE_TYPES, "rougeLsum"), measure=measure)
    # Bold-face the best figure of each column, as Morozovskii 2022's tables do.
    lines = table.split("\n")
    names = list(systems)
    readers = set(summary.get("reads_reference", []))
    for row, name in enumerate(names, start=2):
        cells = lines[row].split(" | ")
        for col, t in enumerate(TABLE_TYPES, start=1):
            if best[t] == name:
                cells[col] = f"**{cells[col]}**"
        if name in readers:
            cells[0] += " ‡"
        lines[row] = " | ".join(cells)
    config = summary["config"]
    f1 = [] if measure == "fmeasure" else [
        "F1 x 100 of the same summaries:", "", markdown_table(systems, types=TABLE_TYPES, intervals=False), ""]
    return [
        f"## ROUGE on the {split} split (Morozovskii 2022 Table 5.1)",
        "",
        f"{MEASURES[measure]} x 100, mean over the {split} examples, with {config['confidence']:.0%} bootstrap "
        f"intervals [low, high]; best of each column in bold. A model trained with several seeds shows the mean "
        f"over its seeds ± the standard deviation of the seeds' means, and an interval from the two-level "
        f"bootstrap (seeds, then examples): what another training run would plausibly give. "
        f"Baselines: `lead*` = the first sentences of "
        f"the preprocessed source, `prefix<B>` = its first B bytes, `first<N>` = its first N tokens (the extract "
        f"stage's selection). Extractive systems (`extractive.systems`) are named by their method."
        + (f" Scored: {config['length']}." if config.get("max_bytes") else ""),
        "",
        *lines,
        "",
        *(["‡ reads the reference summary: an extractive upper bound, not a summarizer.", ""] if readers else []),
        *f1,
        config_line(config),
        "",
    ]


def significance_section(summary: dict) -> list[str]:
    """The seed-aware comparisons of the evaluate stage (`sumpipe.evaluate.pairs`)."""
    comparisons = summary.get("comparisons") or []
    out = ["## Which differences survive another seed (two-level bootstrap)", ""]
    if not comparisons:
        return out + ["No comparison available (needs two of the compared systems).", ""]
    return out + comparisons_table(comparisons)


def comparisons_table(comparisons: list[dict]) -> list[str]:
    """The seed-aware comparisons (`sumpipe.evaluate.summary.compare_seeds`) as a table with its legend."""
    measure = MEASURES[comparisons[0].get("measure", "fmeasure")]
    out = [
        f"Δ = mean {measure} x 100 of A minus that of B, each the mean over its training seeds and the examples both "
        "scored; [low, high] its 95% interval and p the two-sided p-value of \"no difference\" from a two-level "
        "bootstrap that resamples each system's seeds, then the examples (shared by A and B), so the interval "
        "holds the noise of training as well as that of the test set (Davison & Hinkley 1997 §3.8; "
        "`sumpipe.evaluate.bootstrap`). † marks p < 0.05. With 3 seeds the seed level is resampled coarsely: "
        "read it with the seeds' own values in the table above.",
        "",
        "| A | B | what | " + " | ".join(f"Δ{LABELS[t]} [95%] (p)" for t in TABLE_TYPES) + " | seeds A/B | n |",
        "|---|---|---|" + "---:|" * (len(TABLE_TYPES) + 2),
    ]
    for c in comparisons:
        cells = []
        for t in TABLE_TYPES:
            r = c[t]
            star = " †" if r["p_value"] < 0.05 else ""
            cells.append(f"{r['delta']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}] ({r['p_value']:.3f}){star}")
        out.append(f"| {c['a']} | {c['b']} | {c['what']} | " + " | ".join(cells)
                   + f" | {c['seeds_a']}/{c['seeds_b']} | {c['n']} |")
    return out + [""]


def abstractiveness_section(summary: dict) -> list[str]:
    """Novel n-grams, repetition, length and compression per system (evaluate's `abstractiveness`)."""
    table = summary.get("abstractiveness") or {}
    if not table:
        return []
    readers = set(summary.get("reads_reference", []))
    has_p_gen = any("mean_p_gen" in v for v in table.values())
    out = ["## Abstractiveness and redundancy", "",
           "Per system on the evaluated split (See et al. 2017): % of the summaries' n-grams absent from the "
           "source (pooled over summaries), % of 3-grams repeating an earlier 3-gram of the same summary, mean "
           "summary length in tokens and compression (source tokens / summary tokens)"
           + (", mean generation probability p_gen of pointer models" if has_p_gen else "") + ".", "",
           "Degeneracy: % of summaries that no other summary repeats (distinct) and % with a word repeated "
           "back to back (\"the the\")" + _reference_band(summary) + ".", "",
           "| system | novel 1-grams | 2-grams | 3-grams | 4-grams | repeated 3-grams | length | compression "
           "| distinct | word twice |" + (" p_gen |" if has_p_gen else ""),
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if has_p_gen else "")]
    for name in ordered_systems(summary):
        v = table.get(name)
        if v is None:
            continue
        row = (f"| {name}{' ‡' if name in readers else ''} | {v['novel_1gram']:.2f} | {v['novel_2gram']:.2f} | "
               f"{v['novel_3gram']:.2f} | {v['novel_4gram']:.2f} | {v['repeated_3gram']:.2f} | "
               f"{v['mean_length']:.1f} | {v['compression']:.2f} | {v.get('distinct', float('nan')):.1f} | "
               f"{v.get('adjacent_repeat', float('nan')):.1f} |")
        if has_p_gen:
            row += f" {v['mean_p_gen']:.3f} |" if "mean_p_gen" in v else " |"
        out.append(row)
    return out + [""]


# evaluate's read-quality figures as the report's table shows them: (key, column, decimals)
READ_QUALITY_COLUMNS = (("fragment_rate", "fragments %", 1), ("sentences_mean", "sentences", 2),
                        ("more_sentences_than_reference", "more sentences than ref. %", 1),
                        ("adjacent_repeat", "word twice %", 1), ("repeated_trigrams", "repeated 3-grams %", 1),
                        ("repeated_words", "repeated words %", 1), ("unsupported_stems", "unsupported words %", 1),
                        ("unsupported_numbers", "numbers %", 1), ("unsupported_names", "names %", 1),
                        ("jammed_pairs", "jammed pairs %", 1))


def _figure(values: dict, key: str, decimals: int) -> str:
    """`values[key]` with `± <key>_sd` when the figure is a mean over seeds; "–" when absent or null."""
    value = values.get(key)
    if value is None:
        return "–"
    sd = values.get(f"{key}_sd")
    return f"{value:.{decimals}f}" + (f" ± {sd:.{decimals}f}" if sd is not None else "")


def read_quality_section(summary: dict) -> list[str]:
    """What a reader gets, per system beside its ROUGE-1, the references' own figures first as the anchor
    (evaluate's `read_quality`: `sumpipe.evaluate.read_quality`)."""
    reading = summary.get("read_quality") or {}
    if not reading:
        return []
    systems, measure, readers = ordered_systems(summary), measure_of(summary), set(summary.get("reads_reference", []))
    out = ["## What a reader gets (read quality)", "",
           "Per system on the evaluated split, the references' own figures first (the anchor); a model's figure is "
           "the mean over its seeds ± their standard deviation. Sentences end at \".\", \"!\", \"?\" and at line "
           "breaks, except at the dot of a name the tokenizer split (\"torch . nn\": a dot that a word follows "
           "directly in the raw input or the train split's raw texts); a word is a token with a letter or digit.", "",
           "- fragments: % of summaries holding a sentence of at most two words (\"Degrees.\");",
           "- sentences: sentences per summary; more sentences than ref.: % of summaries with more sentences than "
           "their reference;",
           "- word twice: % of summaries with a word twice in a row; repeated 3-grams: % of 3-grams repeating an "
           "earlier one of the same summary;",
           "- repeated words: % of the summaries' content words (stop words aside) that repeat an earlier one more "
           "often than the source does (\"Convert degrees to degrees.\"): repetition at any distance, the fluency "
           "signal (on SummEval's expert judgments it tracks fluency; docs/measures.md);",
           "- unsupported words: % of the summaries' content words that the source does not contain, compared as "
           "ROUGE compares words (split at every character outside [a-z0-9], Porter stems: \"scored\" is supported "
           "by \"scores\") and clipped as ROUGE clips (a word used more often than the source uses it is unsupported "
           "beyond the source's count): the faithfulness signal, which on SummEval's expert judgments tracks "
           "consistency as well as ROUGE-1 precision against the source does, not better (docs/measures.md); "
           "numbers, names: the same over numbers and over names (words capitalised in the raw input) only, "
           "compared as tokens;",
           "- jammed pairs: % of the summaries' pairs of adjacent content words (no stop word nor punctuation between "
           "them) that the source never writes side by side (\"princess permission dock argentinean port\": copied "
           "names in a row with no grammar joining them), a second fluency signal (docs/measures.md). None of these "
           "says anything about coherence or relevance.", "",
           f"| system | R-1 {MEASURES[measure]} | " + " | ".join(c for _, c, _ in READ_QUALITY_COLUMNS) + " |",
           "|---|---:|" + "---:|" * len(READ_QUALITY_COLUMNS)]
    anchor = reading.get("references", {})
    out.append("| *references* | – | " + " | ".join(_figure(anchor, k, d) for k, _, d in READ_QUALITY_COLUMNS) + " |")
    for name, rouge in systems.items():
        values = reading.get("systems", {}).get(name)
        if values is None:
            continue
        r1 = _figure(rouge, figure_key("rouge1", measure), 2)
        out.append(f"| {name}{' ‡' if name in readers else ''} | {r1} | "
                   + " | ".join(_figure(values, k, d) for k, _, d in READ_QUALITY_COLUMNS) + " |")
    return out + [""]


def decoding_rule_section(summary: dict) -> list[str]:
    """Every model with and without `decode.block_adjacent_repeat` (evaluate's `decoding_rule`): a
    decoding rule that hides a trained habit must show what it hides."""
    table = summary.get("decoding_rule") or {}
    if not table:
        return []
    out = ["## The decoding rule: no token twice in a row", "",
           "`decode.block_adjacent_repeat` forbids the token just generated as the next one (\"the cache cache\"). "
           "The models learnt the habit (the tied output embedding favours it); the rule hides it at decoding time, "
           "so here is every model with the rule (its figures everywhere else in this report) and without it, "
           "means over the seeds; Δ R-1 is with minus without, with the two-level bootstrap's 95% interval.", "",
           "| model | R-1 with | R-1 without | Δ R-1 [95%] (p) | word twice % with / without "
           "| distinct % with / without | words with / without |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for name, v in table.items():
        w, wo, d = v["with"], v["without"], v["rouge1"]
        out.append(f"| {name} | {w['rouge1']:.2f} | {wo['rouge1']:.2f} | {d['delta']:+.2f} [{d['low']:+.2f}, "
                   f"{d['high']:+.2f}] ({d['p_value']:.3f}) | {w['adjacent_repeat']:.1f} / "
                   f"{wo['adjacent_repeat']:.1f} | "
                   f"{w['distinct']:.1f} / {wo['distinct']:.1f} | {w['mean_words']:.1f} / {wo['mean_words']:.1f} |")
    return out + [""]


def _reference_band(summary: dict) -> str:
    band = summary.get("reference_length")
    if not band:
        return ""
    return (f"; the references' lengths run from {band['p10']:.0f} (10th percentile) to {band['p90']:.0f} "
            f"tokens (90th), mean {band['mean']:.1f}")


def rare_words_section(summary: dict) -> list[str]:
    """The thesis's measure for M2: the share of the reference's rare words each summary contains, beside
    the ceiling of a model's input and the copy rate, the references' copy rate first as the
    anchor; then the seed-aware differences in rare-word recall between two models (M2 - M1)."""
    table = summary.get("rare_words") or {}
    if not table:
        return []
    readers = set(summary.get("reads_reference", []))
    max_count = summary.get("rare_word_max_count")
    copying = summary.get("copy_rate") or {}
    rates = copying.get("systems", {})
    out = ["## Rare words (Morozovskii 2022 §2.3.2: what M2 is for)", "",
           f"Per document, the share of the reference's rare content words (seen at most {max_count} times in the "
           "training split, or never: the top band of the rarity score 1/ln(1 + count) + shift) that the summary "
           "contains, exact tokens; mean x 100 (models: over their seeds, ± sd) with its 95% bootstrap interval "
           "over the documents whose reference has a rare word (n). **ceiling**: the same recall of the model's "
           "own input (the selection it reads), all that copying can reach. **copy rate**: % of the summary's "
           "tokens outside the output vocabulary (the first V words of the vocabulary, V as the model card "
           "says; for a system without a word vocabulary of its own, the extractive systems, the baselines and "
           "the sentencepiece model, the transformer's), words a generator can only copy; the references' own "
           "share first, the copying they ask for. **in source**: % of those tokens that the document's source "
           "holds (the rest are written, not copied).", "",
           "| system | rare-word recall | ceiling (input) | copy rate % | in source % | V | n |",
           "|---|---|---|---:|---:|---:|---:|"]
    if copying:
        anchor = copying["references"]
        out.append(f"| *references* | – | – | {_number(anchor.get('copy_rate'))} | {_number(anchor.get('in_source'))} "
                   f"| {anchor['vocab_size']:,} | – |")
    for name in ordered_systems(summary):
        v = table.get(name)
        if v is None:
            continue
        sd = f" ± {v['recall_sd']:.2f}" if "recall_sd" in v else ""
        ceiling = f"{v['ceiling']:.2f} ({v['input']})" if "ceiling" in v else "–"
        rate = rates.get(name, {})
        copy, source = (_figure(rate, key, 2) for key in ("copy_rate", "in_source"))
        size = f"{rate['vocab_size']:,}{'' if rate.get('own_vocabulary') else ' *'}" if rate else "–"
        recall = f"{v['recall']:.2f}{sd} [{v['recall_low']:.2f}, {v['recall_high']:.2f}]"
        out.append(f"| {name}{' ‡' if name in readers else ''} | {recall} | {ceiling} | {copy} | {source} | {size} "
                   f"| {v['n']} |")
    if rates:
        out += ["", "\\* the transformer's output vocabulary (not a word vocabulary of the system's own)."]
    return out + [""] + _rare_word_differences(summary)


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _rare_word_differences(summary: dict) -> list[str]:
    """The comparisons between two trained systems (models, ensembles) in rare-word recall: A - B with
    the two-level bootstrap's interval and p (seeds, then documents)."""
    trained = set(summary.get("seeds", {})) | set(summary.get("ensembles", {}))
    rows = [c for c in summary.get("comparisons", [])
            if "rare_word_recall" in c and c["a"] in trained and c["b"] in trained]
    if not rows:
        return []
    out = ["Differences in rare-word recall (x 100, A - B; 95% interval and two-sided p of the two-level "
           "bootstrap, seeds then documents):", "",
           "| A | B | what | Δ rare-word recall [95%] (p) | seeds |", "|---|---|---|---:|---:|"]
    for c in rows:
        d = c["rare_word_recall"]
        out.append(f"| {c['a']} | {c['b']} | {c['what']} | {d['delta']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] "
                   f"({d['p_value']:.3f}) | {c['seeds_a']}/{c['seeds_b']} |")
    return out + [""]


def keywords_section(extractive_dir: Path) -> list[str]:
    """The NMF topics of the references and their top words (Sokol 2022 §4.2, `extractive-fit`)."""
    path = extractive_dir / "keywords.parquet"
    if not path.is_file():
        return []
    keywords = read_parquet(path)
    if keywords.empty:
        return ["## Reference topics (NMF keywords, Sokol 2022 §4.2)", "", "No content words in the references.", ""]
    topics_path = extractive_dir / "topics.parquet"
    counts: dict[Hashable, int] = {}  # topic -> test references with it as their most probable topic
    if topics_path.is_file():
        topics = read_parquet(topics_path)
        counts = topics[topics["split"] == "test"]["topic"].value_counts().to_dict()
    out = ["## Reference topics (NMF keywords, Sokol 2022 §4.2)", "",
           "scikit-learn NMF of the TF-IDF matrix of the training references (as Sokol 2022's 10 topics over "
           "news headlines): each topic's highest-weighted words, and how many test references have it as their most "
           "probable topic.", "",
           "| topic | top words (weight) | test references |", "|---:|---|---:|"]
    for topic, group in keywords.groupby("topic", sort=True):
        ranked = group.sort_values("rank")
        words = ", ".join(f"{w} ({x:.2f})" for w, x in zip(ranked["word"], ranked["weight"]))
        out.append(f"| {topic} | {_escape(words)} | {counts.get(topic, 0)} |")
    return out + [""]


def coverage_section(
    coverage: dict | None, figures: Path, root: Path, example: dict | None
) -> tuple[list[str], list[Path]]:
    out = ["## Input coverage (Morozovskii 2022 Fig. 5.2)", ""]
    if not coverage:
        return out + ["No coverage metrics (`coverage.json` from the extract stage) yet.", ""], []
    per_split = {split: {k: v for k, v in stats.items() if isinstance(v, dict)} for split, stats in coverage.items()
                 if isinstance(stats, dict) and any(isinstance(v, dict) for v in stats.values())}
    if not per_split:
        return out + ["The coverage metrics hold no selection statistics.", ""], []
    out += [
        "How much of the reference each model input contains (extract stage): mean distinct reference content "
        "words present in the input, their share of the reference's content words, and the number of input "
        "tokens that are reference words (the thesis's count). `full` is the whole preprocessed document. "
        "`binds`: the share of documents longer than the budget, the only ones where a method had to choose "
        "(elsewhere every selection is the whole document); `differs`: the share whose selection is not the "
        "document's first tokens (it skipped a sentence for a later one).",
        "",
        "| split | input | words present | share | occurrences | binds | differs | examples |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for split, selections in per_split.items():
        examples = coverage[split].get("examples", "")
        for name in sorted(selections, key=lambda s: (s != "full", s)):
            s = selections[name]
            out.append(f"| {split} | {name} | {s.get('words_present', float('nan')):.2f} | "
                       f"{s.get('share', float('nan')):.3f} | {s.get('occurrences', float('nan')):.2f} | "
                       f"{s.get('binds', float('nan')):.3f} | {s.get('differs', float('nan')):.3f} | {examples} |")
    made = [plots.coverage_bars(per_split, figures / "coverage.png")]
    out += ["", f"![coverage]({_rel(made[0], root)})", ""]
    if example is not None:
        made.append(plots.sentence_coverage(example["panels"], figures / "coverage_example.png"))
        out += [f"Per sentence, for example `{example['id']}` (as the thesis's Fig. 5.2 for one story): "
                "reference words in each source sentence, blue where the selection keeps the sentence.", "",
                f"![coverage of one example]({_rel(made[1], root)})", ""]
    return out, made


def example_coverage(paths: PathsConfig, split: str, example_id: str, source: str, reference: str) -> dict:
    """Per-sentence reference-word counts of one example, and which sentences each selection kept."""
    ref_words = reference_words(reference)
    hits = [len(reference_hits(sentence.split(), ref_words)) for sentence in source.split("\n")]
    panels: dict[str, tuple[list[int], list[bool]]] = {}
    extracted = Path(paths.extracted)
    if extracted.is_dir():
        for folder in sorted(p for p in extracted.iterdir() if (p / f"{split}.parquet").is_file()):
            df = read_parquet(folder / f"{split}.parquet", columns=["id", "selected"])
            row = df[df["id"] == example_id]
            if len(row):
                chosen = set(int(i) for i in row.iloc[0]["selected"])
                panels[folder.name] = (hits, [i in chosen for i in range(len(hits))])
    if not panels:
        panels["full"] = (hits, [True] * len(hits))
    return {"id": example_id, "panels": panels}


def samples_section(examples: list[str], processed: pd.DataFrame, scores: dict[str, pd.DataFrame]) -> list[str]:
    out = ["## Sample summaries (Morozovskii 2022 Tables 5.2-5.4)", ""]
    if not examples:
        return out + ["No example scored by every system (or report.n_samples = 0).", ""]
    out += [f"{len(examples)} examples drawn with the evaluate seed; the input is the preprocessed "
            f"source (first {FRAGMENT_WORDS} words), ROUGE is F1 x 100 of that one summary. Each model is shown "
            "by the seed `sumpipe decode` uses (the lowest validation loss).", ""]
    by_id = processed.set_index("id")
    for example_id in examples:
        row = by_id.loc[example_id]
        has_references = "references" in by_id.columns and row["references"] is not None
        references = row["references"] if has_references else [row["reference"]]
        # pandas-stubs types a Series label lookup as a scalar or a Series (a label may repeat); ids are unique,
        # so these are a row's cells: a text and a list of texts
        out += [f"### Example `{example_id}`", "", "| Input text (fragment) | Annotated summary |", "|---|---|",
                f"| {_escape(_fragment(row['source']))} | {_escape(' // '.join(references))} |", "",  # type: ignore[arg-type]
                "| System | Generated summary | R-1 | R-2 | R-L |", "|---|---|---:|---:|---:|"]
        for name, df in scores.items():
            hit = df[df["id"] == example_id]
            if not len(hit):
                continue
            r = hit.iloc[0]
            figures = " | ".join(f"{r[f'{t}_fmeasure'] * 100:.0f}" for t in TABLE_TYPES)
            label = f"{name} (seed {r['seed']})" if "seed" in hit.columns else name
            out.append(f"| {label} | {_escape(r['prediction'])} | {figures} |")
        out.append("")
    return out


def heatmap_section(paths: PathsConfig, split: str, shown: dict[str, int], examples: list[str],
                    figures: Path, root: Path) -> tuple[list[str], list[Path], list[str]]:
    """Copy-attention heat maps of each decoded model (the seed `shown` names) on the examples, from the
    attention the decode stage kept for them (`sumpipe.decode.attention`): no model is loaded here."""
    out = ["## Attention heat maps (Morozovskii 2022 Fig. 5.3)", ""]
    if not examples:
        return out + ["No examples selected (report.n_heatmaps = 0 or nothing scored).", ""], [], []
    runs = {name: Path(paths.predictions) / name / seed_folder(seed) for name, seed in shown.items()}
    files = {name: attention_path(folder, split) for name, folder in runs.items()}
    model_names = list(shown)
    decoded = [name for name in model_names if files[name].is_file()]
    if not decoded:
        return out + [f"No attention kept by the decode stage in `{paths.predictions}` yet.", ""], [], []
    out += ["The decoder's copy attention over the model's input (rows: generated words, columns: input "
            "tokens; lighter = more attention), for the same examples as above, decoded with the "
            "`decode:` parameters.", ""]
    made: list[Path] = []
    notes: list[str] = []
    for name in model_names:  # predictions without attention: written before the decode stage kept it
        if name not in decoded and (runs[name] / f"{split}.parquet").is_file():
            out.append(f"- {name}: its decode kept no attention (run `sumpipe decode --model {name} "
                       f"--train-seed {shown[name]}` again)")
    for name in decoded:
        try:
            kept = read_attention(files[name])
        except SumpipeError as exc:  # a broken file must not sink the whole report
            notes.append(f"{name}: heat maps skipped ({exc})")
            out.append(f"- {notes[-1]}")
            continue
        for example_id in examples:
            out += _example_maps(name, shown[name], example_id, kept.get(example_id), figures, root, made)
    return out + [""], made, notes


def _example_maps(model: str, seed: int, example_id: str, s: KeptAttention | None, figures: Path, root: Path,
                  made: list[Path]) -> list[str]:
    """One model's heat map of one example (and its per-head grid), or the line saying why there is none."""
    name = f"{model} (seed {seed})"
    if s is None:
        return [f"- {name}, `{example_id}`: no attention kept for it (an empty input, or decoded with other "
                "`report:` settings)"]
    if s.attention is None or not len(s.tokens):
        return [f"- {name}, `{example_id}`: no attention returned"]
    # Ids come from the corpus: keep the file name (and so the markdown link) to safe characters.
    path = figures / (re.sub(r"[^\w.-]", "_", f"attention_{model}_{seed_folder(seed)}_{example_id}") + ".png")
    made.append(plots.attention_heatmap(s.attention, s.source_tokens, s.tokens, path, f"{name} on {example_id}"))
    out = [f"**{name}**, `{example_id}`: {_escape(s.prediction)}", "",
           f"![{name} {re.sub(r'[][]', '', example_id)}]({_rel(path, root)})", ""]
    return out + _head_grid(s.head_attention, s.source_tokens, s.tokens, path.with_name(path.stem + "_heads.png"),
                            f"{name} on {example_id}", made, root)


def _head_grid(heads: np.ndarray | None, source_tokens: list[str], tokens: list[str], path: Path, title: str,
               made: list[Path], root: Path) -> list[str]:
    """The per-head grid of Text Summarizing (blog, 2023) under the averaged map, for a model whose copy
    attention has heads (`KeptAttention.head_attention`, (H, T, S)); nothing for one without (the RNN's single
    attention)."""
    if heads is None or heads.shape[0] < 2:
        return []
    made.append(plots.attention_heads(heads, source_tokens, tokens, path, title))
    return [f"Per head ({heads.shape[0]} heads; the map above is their mean):", "",
            f"![{re.sub(r'[][]', '', title)} per head]({_rel(path, root)})", ""]


def _phase_starts(paths: PathsConfig, logs: dict[str, dict[int, pd.DataFrame]]) -> dict[str, float]:
    """{model: step} where the coverage phase starts (its card's `arch.coverage_phase_steps` before the last
    logged step; See et al. 2017's recipe), for the models trained in two phases."""
    import json

    starts: dict[str, float] = {}
    for name, runs in logs.items():
        for seed, log in runs.items():
            try:
                arch = json.loads((Path(paths.models) / name / seed_folder(seed) / "config.json").read_text())["arch"]
                steps = arch.get("coverage_phase_steps") if arch.get("coverage") else None
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                steps = None
            if isinstance(steps, int) and steps > 0:
                starts[name] = float(log["step"].max()) - steps
                break
    return starts


def training_section(
    paths: PathsConfig, model_names: list[str], seeds: Seeds, figures: Path, root: Path
) -> tuple[list[str], list[Path]]:
    out = ["## Training curves", ""]
    logs: dict[str, dict[int, pd.DataFrame]] = {}
    for name in model_names:
        for seed in seeds_for(seeds, name):
            path = Path(paths.models) / name / seed_folder(seed) / TRAIN_LOG_FILE
            if path.is_file():
                log = pd.read_csv(path)
                if {"step", "loss"} <= set(log.columns) and len(log):
                    if "valid_loss" not in log.columns:
                        log["valid_loss"] = np.nan
                    logs.setdefault(name, {})[seed] = log
    if not logs:
        return out + [f"No `{TRAIN_LOG_FILE}` in the model folders yet.", ""], []
    path = plots.training_curves(logs, figures / "training_curves.png", _phase_starts(paths, logs))
    out += ["| Model | seed | steps | epochs | last loss | best valid loss |", "|---|---:|---:|---:|---:|---:|"]
    for name, runs in logs.items():
        for seed, log in runs.items():
            valid = pd.to_numeric(log["valid_loss"], errors="coerce").dropna()
            epochs = f"{float(log['epoch'].max()):.2f}" if "epoch" in log.columns else ""
            out.append(f"| {name} | {seed} | {int(log['step'].max())} | {epochs} | {float(log['loss'].iloc[-1]):.4f} | "
                       f"{(f'{valid.min():.4f}' if len(valid) else '–')} |")
    return out + ["", f"![training curves]({_rel(path, root)})", ""], [path]


def crosseval_section(summary: dict | None) -> list[str]:
    if not summary or not summary.get("systems"):
        return []
    measure = measure_of(summary)
    systems = ordered_systems(summary)
    f1 = [] if measure == "fmeasure" else [
        "F1 x 100 of the same summaries:", "", markdown_table(systems, types=TABLE_TYPES, intervals=False), ""]
    comparisons = summary.get("comparisons") or []
    return [
        "## Cross-data-set evaluation (Morozovskii 2022 Table 5.22)",
        "",
        f"Models trained on this pipeline's corpus, tested on another corpus ({summary.get('corpus', '?')}, "
        f"split {summary.get('split', '?')}) with the same preprocessing and input selection; "
        f"{summary.get('references_note', '')} {MEASURES[measure]} x 100 (models: mean ± sd over seeds) "
        "[95% interval]; `prefix<B>` = the first B bytes of the preprocessed source.",
        "",
        markdown_table(systems, types=(*TABLE_TYPES, "rougeLsum"), measure=measure),
        "",
        *f1,
        *(["### Which differences survive another seed, on this corpus", "", *comparisons_table(comparisons)]
          if comparisons else []),
        *crosseval_degeneracy(summary),
        config_line(summary.get("config", {})),
        "",
    ]


def crosseval_degeneracy(summary: dict) -> list[str]:
    """Distinct summaries, words repeated back to back and length on the unseen corpus; rare-word recall
    where the stage measured it."""
    rows = {name: v for name, v in summary["systems"].items() if "distinct" in v}
    if not rows:
        return []
    band = summary.get("reference_length") or {}
    rare = any("rare_word_recall" in v for v in rows.values())
    out = ["Degeneracy on this unseen text: % distinct summaries, % with a word repeated back to back, mean "
           "length in tokens" + (f" (references: {band['p10']:.0f}-{band['p90']:.0f} tokens, 10th-90th percentile)"
                                  if band else "")
           + ("; rare-word recall %: the share of the references' content words seen at most "
              f"{summary.get('rare_word_max_count', '?')} times in training that the scored summary holds "
              "(references pooled; models: mean ± sd over seeds)" if rare else "")
           + ".", "",
           "| system | distinct | word twice | length |" + (" rare-word recall |" if rare else ""),
           "|---|---:|---:|---:|" + ("---:|" if rare else "")]
    out += [f"| {name} | {v['distinct']:.1f} | {v['adjacent_repeat']:.1f} | {v['mean_length']:.1f} |"
            + (f" {_rare_cell(v)} |" if rare else "") for name, v in rows.items()]
    return out + [""]


def _rare_cell(figures: dict) -> str:
    value, sd = figures.get("rare_word_recall"), figures.get("rare_word_recall_sd")
    if value is None:
        return "–"
    return f"{value:.2f}" + (f" ± {sd:.2f}" if sd is not None else "")


def config_section(summary: dict) -> list[str]:
    config = summary["config"]
    keys = ("rouge_score_version", "implementation", "tokenizer", "stemming", "rougeLsum_sentences",
            "multi_reference", "length", "aggregate", "interval", "significance")
    return ["## Scoring configuration", "", *(f"- {k}: {config[k]}" for k in keys if k in config), ""]


# --------------------------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------------------------
def shown_seeds(paths: PathsConfig, model_names: list[str]) -> dict[str, int]:
    """{model: the seed whose samples and heat maps the report shows}: the seed `sumpipe decode` picks."""
    shown = {}
    for name in model_names:
        folder = Path(paths.models) / name
        if seed_folders(folder):
            seed = folder_seed(pick_seed(folder).name)
            if seed is not None:
                shown[name] = seed
    return shown


def build_report(paths: PathsConfig, cfg: ReportConfig, model_names: list[str], seed: int, split: str = "test",
                 crosseval_summary: str | Path | None = None, seeds: Seeds | None = None) -> ReportResult:
    """Write `${paths.reports}/report.md`, `report.html` and `figures/` (`seed`: the evaluate seed that
    draws the examples; `seeds`: the training seeds, default those the evaluate stage scored)."""
    root = Path(paths.reports)
    figures = root / "figures"
    summary_path = Path(paths.scores) / "summary.json"
    if not summary_path.is_file():
        raise SumpipeError(f"{summary_path}: no such file (run `sumpipe evaluate` first)")
    summary = read_json(summary_path)
    split = summary.get("split", split)
    systems = list(ordered_systems(summary))
    seeds = seeds if seeds is not None else summary.get("seeds", [])
    shown = shown_seeds(paths, model_names)
    scores = {name: _shown_run(read_parquet(Path(paths.scores) / f"{name}.parquet"), shown.get(name))
              for name in systems}
    processed = read_parquet(Path(paths.processed) / f"{split}.parquet")

    shared = set(processed["id"])
    for df in scores.values():
        shared &= set(df["id"])
    ordered = [i for i in processed["id"] if i in shared]
    examples = ReportExamples(cfg.n_samples, cfg.n_heatmaps, seed)  # the decode stage kept their attention
    samples = examples.samples(ordered)
    heat_ids = examples.heatmaps(ordered)

    coverage_path = Path(paths.metrics) / "coverage.json"
    coverage = read_json(coverage_path) if coverage_path.is_file() else None
    example = None
    if samples:
        row = processed[processed["id"] == samples[0]].iloc[0]
        example = example_coverage(paths, split, samples[0], row["source"], row["reference"])

    cross = None
    if crosseval_summary is not None and Path(crosseval_summary).is_file():
        cross = read_json(crosseval_summary)

    n = summary["systems"][systems[0]]["n"] if systems else 0
    lines = ["# sumpipe report", "",
             f"{len(systems)} systems on the {split} split ({n} examples). Generated by `sumpipe report` from the "
             "outputs of `dvc repro`; every number below traces back to a file under the pipeline's folders.", ""]
    lines += rouge_section(summary)
    lines += read_quality_section(summary)
    lines += significance_section(summary)
    lines += rare_words_section(summary)
    lines += abstractiveness_section(summary)
    lines += decoding_rule_section(summary)
    lines += keywords_section(Path(paths.extractive))
    made: list[Path] = []
    section, figs = coverage_section(coverage, figures, root, example)
    lines += section
    made += figs
    lines += samples_section(samples, processed, scores)
    section, figs, notes = heatmap_section(paths, split, shown, heat_ids, figures, root)
    lines += section
    made += figs
    section, figs = training_section(paths, model_names, seeds, figures, root)
    lines += section
    made += figs
    lines += crosseval_section(cross)
    lines += config_section(summary)

    markdown = "\n".join(lines).rstrip() + "\n"
    md_path = write_text(markdown, root / "report.md")
    html_path = write_text(markdown_to_html(markdown, title="sumpipe report"), root / "report.html")
    return ReportResult(markdown=md_path, html=html_path, figures=made, notes=notes)



def _shown_run(scores: pd.DataFrame, seed: int | None) -> pd.DataFrame:
    """A system's per-example scores; of a model's seeds, those of `seed` (or of its first seed)."""
    if "seed" not in scores.columns:
        return scores
    return scores[scores["seed"] == (seed if seed is not None else scores["seed"].min())]
