"""Aligned (story sentence -> highlight sentence) pairs: the rewriter's training data (Chen & Bansal 2018).

For each highlight sentence (a line of the reference) the aligned source is the story sentence (a line of
the source) with the highest ROUGE-L recall against it: LCS(story sentence, highlight) / |highlight| in
rouge-score's tokens (lowercase, [a-z0-9] runs, Porter stems when `use_stemmer`; `sumpipe.evaluate.rouge`,
the Rust engine with rouge-score's numbers). Recall, not F1, as Chen & Bansal: a long story sentence that
holds the whole highlight is the one to compress.

Choices:
- ties go to the EARLIER story sentence (news puts the point first; np.argmax keeps the first maximum);
- a highlight with no token, or whose best recall is 0 (no story sentence shares a word with it), yields
  no pair: there is nothing to rewrite it from;
- an empty story sentence scores 0 and so is never chosen (every positive recall beats it);
- a story sentence may be aligned with several highlights (one pair each).

The pairs are written in the extract stage's format (`sumpipe.schemas.EXTRACTED`: id, source, reference,
one row per pair), so `sumpipe train` reads them as `<paths.extracted>/<input>/{train,valid}.parquet`:
id `<story id>#<k>` (k: the highlight's 0-based line index in the reference), source the story sentence,
reference the highlight sentence; `sentence` (its 0-based line index in the story) and `recall` (x 1,
in [0, 1]) are kept beside for inspection.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sumpipe.errors import SumpipeError
from sumpipe.evaluate.rouge import FastRouge
from sumpipe.schemas import PROCESSED

PAIR_COLUMNS = ("id", "source", "reference", "sentence", "recall")


def lines(text: str) -> list[str]:
    """The sentences of a processed source or reference: its lines, each stripped (empty ones kept, so
    indices are line numbers)."""
    return [line.strip() for line in (text or "").split("\n")]


def recall_matrix(sentences: Sequence[str], highlights: Sequence[str], scorer: FastRouge) -> np.ndarray:
    """(len(highlights), len(sentences)) ROUGE-L recall of every story sentence against every highlight
    (`scorer` must score rougeL only); all zeros when either side is empty."""
    if not sentences or not highlights:
        return np.zeros((len(highlights), len(sentences)))
    predictions = [s for _ in highlights for s in sentences]
    references = [h for h in highlights for _ in sentences]
    scores = scorer.score_arrays(predictions, references)  # (n, 1, 3): P, R, F
    return scores[:, 0, 1].reshape(len(highlights), len(sentences))


def best_sentences(sentences: Sequence[str], highlights: Sequence[str],
                   scorer: FastRouge) -> list[tuple[int, float] | None]:
    """Per highlight: (index of the story sentence with the highest ROUGE-L recall, that recall), the
    earliest on ties; None when the best recall is 0 (module docstring)."""
    recall = recall_matrix(sentences, highlights, scorer)
    out: list[tuple[int, float] | None] = []
    for row in recall:
        best = int(np.argmax(row)) if row.size else 0
        out.append((best, float(row[best])) if row.size and row[best] > 0 else None)
    return out


def align_frame(frame: pd.DataFrame, use_stemmer: bool = True) -> pd.DataFrame:
    """The aligned pairs (`PAIR_COLUMNS`, module docstring) of a processed split (id, source, reference:
    sentences one a line), stories in order, highlights in reference order."""
    missing = sorted({"id", "source", "reference"} - set(frame.columns))
    if missing:
        raise SumpipeError(f"align: the split lacks column(s) {', '.join(missing)}")
    scorer = FastRouge(["rougeL"], use_stemmer=use_stemmer)
    rows: list[tuple[str, str, str, int, float]] = []
    for story, source, reference in zip(frame["id"].astype(str), frame["source"], frame["reference"]):
        sentences, highlights = lines(source), lines(reference)
        for k, (highlight, best) in enumerate(zip(highlights, best_sentences(sentences, highlights, scorer))):
            if best is not None:
                rows.append((f"{story}#{k}", sentences[best[0]], highlight, best[0], best[1]))
    out = pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
    return out.astype({"id": "string", "source": "string", "reference": "string", "sentence": "int32",
                       "recall": "float64"})


def align_split(processed: str | Path, out: str | Path, split: str, use_stemmer: bool = True) -> Path:
    """Write the pairs of `<processed>/<split>.parquet` to `<out>/<split>.parquet` (atomically)."""
    from sumpipe.io.atomic import read_parquet, write_parquet

    frame = read_parquet(Path(processed) / f"{split}.parquet", contract=PROCESSED)
    return write_parquet(align_frame(frame, use_stemmer), Path(out) / f"{split}.parquet")
