"""Corpus-level ROUGE summaries (mean F1 with bootstrap intervals) and the tables that show them.

Per-example scores are fractions; everything here is reported as F1 x 100 like the seed's tables.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

from sumpipe.evaluate.bootstrap import confidence_intervals, paired_bootstraps
from sumpipe.evaluate.rouge import FIELDS, ROUGE_TYPES, describe, engine, rouge_version

LABELS = {"rouge1": "R-1", "rouge2": "R-2", "rougeL": "R-L", "rougeLsum": "R-Lsum"}


@dataclass(frozen=True)
class ScoringSetup:
    """Everything a reader needs to reproduce a table's numbers."""

    use_stemmer: bool = True
    bootstrap_samples: int = 1000
    confidence: float = 0.95
    seed: int = 1234

    def as_dict(self) -> dict:
        return {
            "rouge_score_version": rouge_version(),
            "implementation": engine(),
            "tokenizer": "rouge-score DefaultTokenizer: lowercase, [^a-z0-9]+ as separators",
            "stemming": "Porter (nltk), words longer than 3 characters" if self.use_stemmer else "off",
            "rougeLsum_sentences": "split on newlines (split_summaries=False)",
            "multi_reference": "best reference per ROUGE type by F1, as RougeScorer.score_multi",
            "aggregate": "mean of per-example F1 x 100",
            "interval": f"percentile bootstrap, {self.confidence:.0%}, "
                        f"{self.bootstrap_samples} resamples, seed {self.seed}",
            "significance": "paired bootstrap, one-sided, Berg-Kirkpatrick et al. 2012 (same resamples)",
            **asdict(self),
        }

    def line(self) -> str:
        return (f"{describe(self.use_stemmer)}; F1 x 100, {self.confidence:.0%} percentile bootstrap "
                f"intervals ({self.bootstrap_samples} resamples, seed {self.seed})")


def fmeasure_columns(types=ROUGE_TYPES) -> list[str]:
    return [f"{t}_fmeasure" for t in types]


def summarize(scores: pd.DataFrame, setup: ScoringSetup, types=ROUGE_TYPES) -> dict:
    """Mean P/R/F1 x 100 per type, with a bootstrap interval for F1: {"rouge1": .., "rouge1_low": ..}."""
    if scores.empty:
        raise ValueError("no scored examples to summarize")
    intervals = confidence_intervals(scores[fmeasure_columns(types)].to_numpy() * 100.0,
                                     setup.bootstrap_samples, setup.confidence, setup.seed)
    out: dict = {"n": int(len(scores))}
    for name, ci in zip(types, intervals):
        out[name] = round(ci.mean, 4)
        out[f"{name}_low"] = round(ci.low, 4)
        out[f"{name}_high"] = round(ci.high, 4)
        for field in FIELDS[:2]:
            out[f"{name}_{field}"] = round(float(scores[f"{name}_{field}"].mean() * 100.0), 4)
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
    if name not in summary:
        return "–"
    if not intervals:
        return f"{summary[name]:.2f}"
    return f"{summary[name]:.2f} [{summary[name + '_low']:.2f}, {summary[name + '_high']:.2f}]"


def markdown_table(summaries: dict[str, dict], types=ROUGE_TYPES, intervals: bool = True,
                   first_column: str = "Model") -> str:
    """A pipe table in the shape of seed Table 5.1: one row per system, F1 x 100 [low, high]."""
    header = [first_column, *(LABELS.get(t, t) for t in types), "n"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for system, summary in summaries.items():
        row = [system, *(cell(summary, t, intervals) for t in types), str(summary.get("n", ""))]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
