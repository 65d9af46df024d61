"""`sumpipe rouge` and the public `sumpipe.rouge`: corpus ROUGE of aligned summaries (lists, or two
files), with bootstrap intervals.

    result = sumpipe.rouge(["the cat sat on the mat"], ["the cat lay on the mat"])
    result.scores["rouge1"].fmeasure          # 83.3333 (F1 x 100); .precision, .recall, .fmeasure_low/high
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from sumpipe.errors import SumpipeError
from sumpipe.evaluate.files import PREDICTION_COLUMNS, REFERENCE_COLUMNS, read_summaries
from sumpipe.evaluate.rouge import ROUGE_TYPES, score_pairs
from sumpipe.evaluate.summary import LABELS, ScoringSetup, summarize
from sumpipe.validation import MAX_BOOTSTRAP


def punkt_lines(text: str) -> str:
    """`text` with one sentence per line (Punkt, `sumpipe.text.sentences`): what ROUGE-Lsum reads as
    summary sentences, like rouge-score's `split_summaries=True` (which uses NLTK's Punkt too)."""
    from sumpipe.text.sentences import split_sentences

    return "\n".join(split_sentences(text, "always"))


def _split(value: str | list[str] | None) -> str | list[str]:
    return [punkt_lines(v) for v in value] if isinstance(value, list) else punkt_lines(value or "")


@dataclass(frozen=True)
class RougeScore:
    """One ROUGE type over a corpus, x 100: mean precision, recall and F1, and F1's bootstrap interval."""

    precision: float
    recall: float
    fmeasure: float
    fmeasure_low: float
    fmeasure_high: float


@dataclass(frozen=True)
class RougeResult:
    """What `sumpipe rouge` prints, as data: `scores` by ROUGE type (rouge1, rouge2, rougeL, rougeLsum),
    `n` pairs, the configuration (`config`, and `config_line` in words) and the scoring time."""

    n: int
    scores: dict[str, RougeScore]
    config: dict[str, Any]
    config_line: str
    split_sentences: bool
    scoring_seconds: float

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `sumpipe rouge --json` (without the file names)."""
        return {"n": self.n, "scoring_seconds": self.scoring_seconds, "config": self.config,
                "scores": {name: asdict(score) for name, score in self.scores.items()},
                "split_sentences": self.split_sentences, "config_line": self.config_line}

    def table(self) -> str:
        """The plain-text table `sumpipe rouge` prints."""
        return render_rouge_table(self.as_dict())


def rouge(predictions: str | Sequence[str], references: str | Sequence[str | Sequence[str]], *, bootstrap: int = 1000,
          seed: int = 1234, confidence: float = 0.95, use_stemmer: bool = True,
          split_sentences: bool = False) -> RougeResult:
    """Corpus ROUGE-1/2/L/Lsum of aligned predictions and references (a reference may be a list:
    several references, scored best-of), every figure x 100 with `rouge-score`'s numbers, F1 with a
    percentile bootstrap interval (`bootstrap` resamples, `seed`, `confidence`). A summary's sentences
    are its lines (ROUGE-Lsum); `split_sentences`: split every text into sentences with Punkt first,
    so ROUGE-Lsum is summary-level over real sentences. One string each is one pair."""
    import sumpipe.arguments as arguments  # not `from sumpipe import`: the package is the API

    preds: list[str | list[str]] = list(arguments.texts(predictions, "predictions")[0])
    refs = arguments.references(references)
    bootstrap, seed = arguments.whole(bootstrap, "bootstrap", 1), arguments.whole(seed, "seed", 0)
    if bootstrap > MAX_BOOTSTRAP:
        raise SumpipeError(f"bootstrap: must be <= {MAX_BOOTSTRAP:,}, got {bootstrap:,}")
    confidence = arguments.fraction(confidence, "confidence")
    use_stemmer, split_sentences = arguments.flag(use_stemmer, "use_stemmer"), arguments.flag(split_sentences,
                                                                                            "split_sentences")
    return _rouge(preds, refs, ScoringSetup(use_stemmer=use_stemmer, bootstrap_samples=bootstrap,
                                            confidence=confidence, seed=seed), split_sentences)


def _rouge(predictions: list[str | list[str]], references: list[str | list[str]], setup: ScoringSetup,
           split_sentences: bool) -> RougeResult:
    if len(predictions) != len(references):
        raise SumpipeError(f"{len(predictions)} predictions but {len(references)} references: "
                           f"the files must have one summary per example, in the same order")
    if not predictions:
        raise SumpipeError("nothing to score: no summaries")
    if not all(isinstance(p, str) for p in predictions):
        raise SumpipeError("a prediction must be one string, not a list")
    if split_sentences:
        predictions = [_split(p) for p in predictions]
        references = [_split(r) for r in references]
    start = time.perf_counter()
    scores = score_pairs(cast(list[str], predictions), references, use_stemmer=setup.use_stemmer)  # checked above
    seconds = time.perf_counter() - start
    summary = summarize(scores, setup)
    table = {name: RougeScore(summary[f"{name}_precision"], summary[f"{name}_recall"], summary[name],
                              summary[f"{name}_low"], summary[f"{name}_high"]) for name in ROUGE_TYPES}
    lsum = ("summaries split into sentences by Punkt first (--split-sentences)" if split_sentences
            else "summaries not re-split: a summary's sentences are its lines")
    return RougeResult(len(predictions), table, setup.as_dict(), f"{setup.line()}; {lsum}", split_sentences,
                       round(seconds, 3))


def score_files(pred: str | Path, ref: str | Path, *, column: str | None = None, ref_column: str | None = None,
                bootstrap: int = 1000, seed: int = 1234, use_stemmer: bool = True,
                split_sentences: bool = False) -> dict:
    predictions = read_summaries(pred, column, PREDICTION_COLUMNS)
    listed = next((i for i, p in enumerate(predictions) if isinstance(p, list)), None)
    if listed is not None:  # a list is several references; a system writes one summary per example
        raise SumpipeError(f"{pred}: row {listed + 1}: a prediction must be one string, not a list")
    references = read_summaries(ref, ref_column, REFERENCE_COLUMNS)
    setup = ScoringSetup(use_stemmer=use_stemmer, bootstrap_samples=bootstrap, seed=seed)
    result = _rouge(predictions, references, setup, split_sentences)
    return {"predictions": str(pred), "references": str(ref), **result.as_dict()}


def render_rouge_table(result: dict) -> str:
    """A plain-text table: one row per ROUGE type, P / R / F1 [interval], then the configuration."""
    rows = [f"{'':8} {'P':>7} {'R':>7} {'F1':>7}  {'F1 interval':>17}"]
    for name, s in result["scores"].items():
        rows.append(f"{LABELS.get(name, name):8} {s['precision']:7.2f} {s['recall']:7.2f} {s['fmeasure']:7.2f}  "
                    f"[{s['fmeasure_low']:6.2f}, {s['fmeasure_high']:6.2f}]")
    rows.append(f"n = {result['n']}; {result['config_line']}")
    return "\n".join(rows)
