"""`sumpipe rouge`: corpus ROUGE of two aligned files, with bootstrap intervals."""

from __future__ import annotations

import time
from pathlib import Path

from sumpipe.errors import SumpipeError
from sumpipe.evaluate.files import PREDICTION_COLUMNS, REFERENCE_COLUMNS, read_summaries
from sumpipe.evaluate.rouge import ROUGE_TYPES, score_pairs
from sumpipe.evaluate.summary import LABELS, ScoringSetup, summarize


def punkt_lines(text: str) -> str:
    """`text` with one sentence per line (Punkt, `sumpipe.text.sentences`): what ROUGE-Lsum reads as
    summary sentences, like rouge-score's `split_summaries=True` (which uses NLTK's Punkt too)."""
    from sumpipe.text.sentences import split_sentences

    return "\n".join(split_sentences(text, "always"))


def _split(value: str | list[str] | None) -> str | list[str]:
    return [punkt_lines(v) for v in value] if isinstance(value, list) else punkt_lines(value or "")


def score_texts(predictions: list, references: list, *, bootstrap: int = 1000, seed: int = 1234,
                confidence: float = 0.95, use_stemmer: bool = True, split_sentences: bool = False) -> dict:
    """Corpus ROUGE of aligned lists: {"n", "config", "scores": {type: {precision, recall, fmeasure,
    fmeasure_low, fmeasure_high}}} with every figure x 100. `split_sentences`: split every text into
    sentences with Punkt first, so that ROUGE-Lsum is summary-level over real sentences even when a
    file holds one summary per line (otherwise a summary's sentences are its lines)."""
    if len(predictions) != len(references):
        raise SumpipeError(f"{len(predictions)} predictions but {len(references)} references: "
                           f"the files must have one summary per example, in the same order")
    if not predictions:
        raise SumpipeError("nothing to score: no summaries")
    if any(isinstance(p, list) for p in predictions):
        raise SumpipeError("a prediction must be one string, not a list")
    setup = ScoringSetup(use_stemmer=use_stemmer, bootstrap_samples=bootstrap, confidence=confidence, seed=seed)
    if split_sentences:
        predictions = [_split(p) for p in predictions]
        references = [_split(r) for r in references]
    start = time.perf_counter()
    scores = score_pairs(predictions, references, use_stemmer=use_stemmer)
    seconds = time.perf_counter() - start
    summary = summarize(scores, setup)
    table = {
        name: {"precision": summary[f"{name}_precision"], "recall": summary[f"{name}_recall"],
               "fmeasure": summary[name], "fmeasure_low": summary[f"{name}_low"],
               "fmeasure_high": summary[f"{name}_high"]}
        for name in ROUGE_TYPES
    }
    lsum = ("summaries split into sentences by Punkt first (--split-sentences)" if split_sentences
            else "summaries not re-split: a summary's sentences are its lines")
    return {"n": len(predictions), "scoring_seconds": round(seconds, 3), "config": setup.as_dict(), "scores": table,
            "split_sentences": split_sentences, "config_line": f"{setup.line()}; {lsum}"}


def score_files(pred: str | Path, ref: str | Path, *, column: str | None = None, ref_column: str | None = None,
                bootstrap: int = 1000, seed: int = 1234, use_stemmer: bool = True,
                split_sentences: bool = False) -> dict:
    predictions = read_summaries(pred, column, PREDICTION_COLUMNS)
    listed = next((i for i, p in enumerate(predictions) if isinstance(p, list)), None)
    if listed is not None:  # a list is several references; a system writes one summary per example
        raise SumpipeError(f"{pred}: row {listed + 1}: a prediction must be one string, not a list")
    references = read_summaries(ref, ref_column, REFERENCE_COLUMNS)
    result = score_texts(predictions, references, bootstrap=bootstrap, seed=seed, use_stemmer=use_stemmer,
                         split_sentences=split_sentences)
    return {"predictions": str(pred), "references": str(ref), **result}


def render_rouge_table(result: dict) -> str:
    """A plain-text table: one row per ROUGE type, P / R / F1 [interval], then the configuration."""
    rows = [f"{'':8} {'P':>7} {'R':>7} {'F1':>7}  {'F1 interval':>17}"]
    for name, s in result["scores"].items():
        rows.append(f"{LABELS.get(name, name):8} {s['precision']:7.2f} {s['recall']:7.2f} {s['fmeasure']:7.2f}  "
                    f"[{s['fmeasure_low']:6.2f}, {s['fmeasure_high']:6.2f}]")
    rows.append(f"n = {result['n']}; {result['config_line']}")
    return "\n".join(rows)
