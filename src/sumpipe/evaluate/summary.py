"""Corpus-level ROUGE summaries (mean F1 with bootstrap intervals) and the tables that show them.

Per-example scores are fractions; everything here is reported as F1 x 100 like Morozovskii 2022's tables.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from sumpipe.evaluate.bootstrap import confidence_intervals, paired_bootstraps, two_level_bootstrap
from sumpipe.evaluate.rouge import FIELDS, ROUGE_TYPES, MultiReference, describe, engine, rouge_version

LABELS = {"rouge1": "R-1", "rouge2": "R-2", "rougeL": "R-L", "rougeLsum": "R-Lsum"}
MEASURES = {"fmeasure": "F1", "recall": "recall"}


def figure_key(rouge_type: str, measure: str = "fmeasure") -> str:
    """The summary key of a ROUGE type's figure: `rouge1` for F1 (the tables' default), else `rouge1_recall`
    (with `_sd`, `_low`, `_high` beside it when it is the protocol's measure)."""
    return rouge_type if measure == "fmeasure" else f"{rouge_type}_{measure}"


@dataclass(frozen=True)
class ScoringSetup:
    """Everything a reader needs to reproduce a table's numbers: stemming, the bootstrap, and the scoring
    protocol (`sumpipe.config.ScoringProtocol`): the byte cut, how several references combine, and the
    measure the tables lead with (F1 is always kept, with its interval)."""

    use_stemmer: bool = True
    bootstrap_samples: int = 1000
    confidence: float = 0.95
    seed: int = 1234
    max_bytes: int | None = None
    references: MultiReference = "best"
    measure: str = "fmeasure"

    @property
    def measures(self) -> tuple[str, ...]:
        """The measures given intervals: F1, and the protocol's measure when it is another."""
        return ("fmeasure",) if self.measure == "fmeasure" else ("fmeasure", self.measure)

    def as_dict(self) -> dict:
        from sumpipe.evaluate.rouge import multi_reference_note

        cut = f"the first {self.max_bytes} bytes of every summary (ROUGE-1.5.5 -b {self.max_bytes})"
        return {
            "rouge_score_version": rouge_version(),
            "implementation": engine(),
            "tokenizer": "rouge-score DefaultTokenizer: lowercase, [^a-z0-9]+ as separators",
            "stemming": "Porter (nltk), words longer than 3 characters" if self.use_stemmer else "off",
            "rougeLsum_sentences": "split on newlines (split_summaries=False)",
            "multi_reference": multi_reference_note(self.references),
            "length": cut if self.max_bytes else "whole summaries",
            "aggregate": f"mean of per-example {MEASURES[self.measure]} x 100"
                         + ("" if self.measure == "fmeasure" else " (F1 beside it)"),
            "interval": f"percentile bootstrap, {self.confidence:.0%}, "
                        f"{self.bootstrap_samples} resamples, seed {self.seed}",
            "significance": "paired bootstrap, one-sided, Berg-Kirkpatrick et al. 2012 (same resamples)",
            "seeds": "a model's figure is the mean over its training seeds (sd over seeds beside it); its interval "
                     "and every comparison of the report are a two-level bootstrap, seeds then documents "
                     "(Davison & Hinkley 1997 §3.8), two-sided p",
            **asdict(self),
        }

    def line(self) -> str:
        cut = f"summaries cut to {self.max_bytes} bytes; " if self.max_bytes else ""
        return (f"{describe(self.use_stemmer, self.references)}; {cut}{MEASURES[self.measure]} x 100, "
                f"{self.confidence:.0%} percentile bootstrap intervals ({self.bootstrap_samples} resamples, "
                f"seed {self.seed})")


def fmeasure_columns(types=ROUGE_TYPES) -> list[str]:
    return [f"{t}_fmeasure" for t in types]


def summarize(scores: pd.DataFrame, setup: ScoringSetup, types=ROUGE_TYPES) -> dict:
    """Mean P/R/F1 x 100 per type, with a bootstrap interval for F1 (and for the protocol's measure when
    it is recall): {"rouge1": .., "rouge1_low": .., "rouge1_recall": .., "rouge1_recall_low": ..}."""
    if scores.empty:
        raise ValueError("no scored examples to summarize")
    out: dict = {"n": int(len(scores))}
    for name in types:
        for field in FIELDS[:2]:
            out[f"{name}_{field}"] = round(float(scores[f"{name}_{field}"].mean() * 100.0), 4)
    for measure in setup.measures:
        columns = [f"{name}_{measure}" for name in types]
        intervals = confidence_intervals(scores[columns].to_numpy() * 100.0, setup.bootstrap_samples,
                                         setup.confidence, setup.seed)
        for name, ci in zip(types, intervals):
            key = figure_key(name, measure)
            out[key] = round(ci.mean, 4)
            out[f"{key}_low"] = round(ci.low, 4)
            out[f"{key}_high"] = round(ci.high, 4)
    return out


def seed_table(runs: dict[int, pd.DataFrame], column: str, ids: list | None = None) -> np.ndarray:
    """(k, n) per-seed values of `column` (fractions -> x 100), rows in seed order, examples in the
    order of `ids` (default: the first run's; every run of a model scores the same examples)."""
    seeds = sorted(runs)
    ids = list(runs[seeds[0]]["id"]) if ids is None else ids
    rows = []
    for seed in seeds:
        run = runs[seed].set_index("id")[column]
        rows.append(run.reindex(ids).to_numpy(dtype=np.float64) * 100.0)
    table = np.vstack(rows)
    if np.isnan(table).any():
        raise ValueError(f"the seeds of one system scored different examples ({column})")
    return table


def summarize_seeds(runs: dict[int, pd.DataFrame], setup: ScoringSetup, types=ROUGE_TYPES) -> dict:
    """A model trained with several seeds: per type the mean F1 x 100 over seeds and examples, its sd
    over the seeds' means (with two seeds or more), a two-level bootstrap interval (seeds, then
    examples), mean P/R, and every seed's F1: {"rouge1": .., "rouge1_sd": .., "rouge1_low": ..,
    "n": examples, "n_seeds": k, "seeds": {"1": {"rouge1": ..}}}."""
    seeds = sorted(runs)
    out: dict = {"n": int(len(runs[seeds[0]])), "n_seeds": len(seeds)}
    per_seed: dict[str, dict] = {str(seed): {} for seed in seeds}
    for name in types:
        for field in FIELDS[:2]:
            out[f"{name}_{field}"] = round(float(seed_table(runs, f"{name}_{field}").mean()), 4)
        for measure in setup.measures:
            key = figure_key(name, measure)
            table = seed_table(runs, f"{name}_{measure}")
            zeros = np.zeros((1, table.shape[1]))
            test = two_level_bootstrap(table, zeros, setup.bootstrap_samples, setup.confidence, setup.seed)
            out[key] = round(float(table.mean()), 4)
            if len(seeds) > 1:
                out[f"{key}_sd"] = round(float(table.mean(axis=1).std(ddof=1)), 4)
            out[f"{key}_low"], out[f"{key}_high"] = round(test.low, 4), round(test.high, 4)
            for seed, value in zip(seeds, table.mean(axis=1)):
                per_seed[str(seed)][key] = round(float(value), 4)
    out["seeds"] = per_seed
    return out


def compare_seeds(a: dict[int, pd.DataFrame], b: dict[int, pd.DataFrame], setup: ScoringSetup,
                  types=("rouge1", "rouge2", "rougeL")) -> dict:
    """The seed-aware comparison of A against B (each {seed: per-example scores}; one deterministic
    system is one seed) on the examples both scored: per type the difference of the means of the
    protocol's measure (`setup.measure`, F1 by default), its two-level bootstrap interval and two-sided p
    (`sumpipe.evaluate.bootstrap.two_level_bootstrap`)."""
    first_b = set(b[min(b)]["id"])
    shared = [i for i in a[min(a)]["id"] if i in first_b]
    if not shared:
        raise ValueError("the two systems share no example ids")
    out: dict = {"n": len(shared), "seeds_a": len(a), "seeds_b": len(b), "measure": setup.measure}
    for name in types:
        column = f"{name}_{setup.measure}"
        test = two_level_bootstrap(seed_table(a, column, shared), seed_table(b, column, shared),
                                   setup.bootstrap_samples, setup.confidence, setup.seed)
        out[name] = {"delta": round(test.delta, 4), "low": round(test.low, 4), "high": round(test.high, 4),
                     "p_value": round(test.p_value, 4)}
    return out


def compare(a: pd.DataFrame, b: pd.DataFrame, setup: ScoringSetup, types=("rouge1", "rouge2", "rougeL")) -> dict:
    """Paired bootstrap of system A against B on the examples both scored (joined on `id`)."""
    joined = a.merge(b, on="id", suffixes=("_a", "_b"))
    if joined.empty:
        raise ValueError("the two systems share no example ids")
    out: dict = {"n": int(len(joined))}
    f1_a = joined[[f"{name}_fmeasure_a" for name in types]].to_numpy() * 100.0
    f1_b = joined[[f"{name}_fmeasure_b" for name in types]].to_numpy() * 100.0
    for name, test in zip(types, paired_bootstraps(f1_a, f1_b, setup.bootstrap_samples, setup.seed)):
        out[name] = {"delta": round(test.delta, 4), "p_value": test.p_value, "win_rate": test.win_rate}
    return out


def cell(summary: dict, name: str, intervals: bool = True) -> str:
    """One figure of a table: the mean, "± sd" over training seeds when it has several, then the
    interval [low, high]."""
    if name not in summary:
        return "–"
    text = f"{summary[name]:.2f}"
    if f"{name}_sd" in summary:
        text += f" ± {summary[name + '_sd']:.2f}"
    if intervals:
        text += f" [{summary[name + '_low']:.2f}, {summary[name + '_high']:.2f}]"
    return text


def markdown_table(summaries: dict[str, dict], types=ROUGE_TYPES, intervals: bool = True,
                   first_column: str = "Model", measure: str = "fmeasure") -> str:
    """A pipe table in the shape of Morozovskii 2022 Table 5.1: one row per system, F1 (or `measure`) x 100 (± sd over
    seeds) [low, high], the number of examples and of training seeds."""
    seeded = any("n_seeds" in summary for summary in summaries.values())
    suffix = "" if measure == "fmeasure" else f" {MEASURES[measure]}"
    header = [first_column, *(LABELS.get(t, t) + suffix for t in types), "n", *(["seeds"] if seeded else [])]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for system, summary in summaries.items():
        row = [system, *(cell(summary, figure_key(t, measure), intervals) for t in types), str(summary.get("n", ""))]
        if seeded:
            row.append(str(summary.get("n_seeds", "1")))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
