"""ROUGE-N, ROUGE-L and ROUGE-Lsum with the exact numbers of Google's `rouge-score`, at Rust speed.

`rouge-score` (the Python re-implementation of ROUGE-1.5.5) defines the numbers: its tokenizer
(lowercase, every run of characters outside [a-z0-9] is a separator, NLTK's Porter stems for words
longer than three characters), clipped n-gram matches, LCS, and the summary-level union LCS of
ROUGE-Lsum over sentences separated by "\\n" (`split_summaries=False`).

The engine is `rouge-score-rs` (the `rougers` crate), an independent Rust implementation of exactly
that: same tokens, same stems, same LCS tie-breaking, and the same floats bit for bit (checked
against rouge-score by tests/evaluate/test_rouge.py on random and real pairs, several references,
newline-separated sentences, non-ASCII text and empty strings; and by bench/bench_rouge.py on all
56,670 XSum pairs). `score_batch` scores pairs on all cores without holding the GIL;
`RAYON_NUM_THREADS` limits its threads.

Scores are fractions in [0, 1]: `precision` is over the prediction, `recall` over the reference,
`fmeasure` is 2PR/(P+R). With several references per example the best reference is kept separately
for each ROUGE type, by F-measure (the first one on ties), exactly as `RougeScorer.score_multi`
(`references="best"`), or P, R and F1 are each averaged over the references (`references="average"`),
as ROUGE-1.5.5 does with `-f A` for DUC.

The DUC protocol (DUC 2003/2004 task 1; Rush et al. 2015) also cuts every summary to its first 75 bytes
before scoring (ROUGE-1.5.5 `-b 75`): `cut_bytes`. With rouge-score's tokenizer and stemmer, the first 75
bytes of each DUC 2003 input as stored in ../shared/data (lowercased, tokenized) score 21.75 / 6.34 / 19.02
R-1/R-2/R-L recall averaged over the four references (the same cut of the 1,036 Gigaword test pairs:
31.56 / 12.41 / 28.82 F1), the figures tests/evaluate/test_rouge.py pins; Rush et al. report 22.43 / 6.49
/ 19.65 for the prefix on DUC 2004 with ROUGE-1.5.5.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import numpy as np
from rouge_score_rs.rouge_scorer import RougeScorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
FIELDS = ("precision", "recall", "fmeasure")
Triple = tuple[float, float, float]
MultiReference = Literal["best", "average"]


def cut_bytes(text: str, max_bytes: int | None) -> str:
    """The first `max_bytes` bytes of `text` in UTF-8, as ROUGE-1.5.5's `-b`: a word may be cut in two (its
    piece still counts), a character cut in two is dropped; None: `text` whole. A sentence break ("\\n")
    is one byte, as the space ROUGE-1.5.5 joins a summary's lines with.

    >>> cut_bytes("israeli prime minister ariel sharon", 20)
    'israeli prime minist'
    """
    if max_bytes is None:
        return text
    data = text.encode("utf-8")
    return text if len(data) <= max_bytes else data[:max_bytes].decode("utf-8", errors="ignore")


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def rouge_version() -> str:
    """Installed rouge-score version: the reference whose numbers every table reports."""
    return _version("rouge-score")


def engine() -> str:
    """What computes the numbers, for the configuration of every table."""
    return f"rouge-score-rs {_version('rouge-score-rs')} (Rust), identical to rouge_score.rouge_scorer.RougeScorer"


def describe(use_stemmer: bool, references: MultiReference = "best") -> str:
    """One line that states how the scores were computed (printed under every table)."""
    return (f"rouge-score {rouge_version()} numbers (engine: rouge-score-rs {_version('rouge-score-rs')}); "
            f"tokenizer: rouge-score DefaultTokenizer (lowercase, [^a-z0-9]+ separators); "
            f"stemming: {'Porter, words > 3 chars' if use_stemmer else 'off'}; "
            f"ROUGE-Lsum sentences: split on newlines; multi-reference: {multi_reference_note(references)}")


def multi_reference_note(references: MultiReference) -> str:
    """How several references are combined, in words."""
    if references == "average":
        return "P, R and F1 averaged over the references (ROUGE-1.5.5 -f A)"
    return "best reference per ROUGE type by F1 (rouge-score's score_multi)"


def _check_types(rouge_types: Sequence[str]) -> tuple[str, ...]:
    for name in rouge_types:
        if name not in ("rougeL", "rougeLsum") and not re.fullmatch(r"rouge[1-9]", name):
            raise ValueError(f"unknown ROUGE type {name!r} (rouge1..rouge9, rougeL, rougeLsum)")
    return tuple(rouge_types)


class FastRouge:
    """Scores (prediction, reference) pairs with rouge-score's numbers.

    >>> FastRouge(["rouge1"]).score("the cat sat on the mat", "the cat lay on the mat")["rouge1"]
    (0.8333333333333334, 0.8333333333333334, 0.8333333333333334)
    """

    def __init__(self, rouge_types: Sequence[str] = ROUGE_TYPES, use_stemmer: bool = True,
                 references: MultiReference = "best"):
        if references not in ("best", "average"):
            raise ValueError(f"references must be 'best' or 'average', not {references!r}")
        self.rouge_types = _check_types(rouge_types)
        self.use_stemmer = use_stemmer
        self.references = references
        self._engine = RougeScorer(list(self.rouge_types), use_stemmer=use_stemmer)

    def score(self, target: str, prediction: str) -> dict[str, Triple]:
        """(precision, recall, fmeasure) per ROUGE type, argument order as `RougeScorer.score`."""
        scores = self._engine.score(target, prediction)
        return {name: _triple(scores[name]) for name in self.rouge_types}

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Triple]:
        """Best target per ROUGE type by F-measure, first on ties (as `RougeScorer.score_multi`), or the
        mean over the targets (`references="average"`)."""
        if not targets:
            raise ValueError("score_multi needs at least one reference")
        best = self.score_arrays([prediction], [list(targets)])[0]
        return {name: (float(p), float(r), float(f)) for name, (p, r, f) in zip(self.rouge_types, best)}

    def score_arrays(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> np.ndarray:
        """Scores of aligned pairs: array (n, n_types, 3) of P, R, F.

        Every (reference, prediction) pair, several references included, goes to one parallel
        `score_batch` call; the best reference per type is then picked with np.argmax over F1
        (the first maximum, as rouge-score's `score_multi`), or P, R, F1 averaged over an example's
        references (`references="average"`).
        """
        owner: list[int] = []  # example index of each flattened pair
        flat_refs: list[str] = []
        for row, ref in enumerate(references):
            refs = [ref] if isinstance(ref, str) else list(ref)
            if not refs:
                raise ValueError(f"example {row} has no reference")
            flat_refs.extend(refs)
            owner.extend([row] * len(refs))
        flat_preds = [predictions[row] for row in owner]
        results = self._engine.score_batch(flat_refs, flat_preds)
        names = self.rouge_types
        # fromiter over the floats: 5x faster than np.array on the nested Score tuples
        flat = np.fromiter((x for result in results for name in names for x in result[name]),
                           dtype=np.float64, count=len(results) * len(names) * 3).reshape(len(results), len(names), 3)
        if len(flat) == len(predictions):
            return flat
        if self.references == "average":
            return _mean_per_example(flat, np.asarray(owner), len(predictions))
        return _best_per_type(flat, np.asarray(owner), len(predictions))


def _triple(score) -> Triple:
    # rouge-score returns int 0 for an empty ROUGE-L; floats throughout here.
    return float(score.precision), float(score.recall), float(score.fmeasure)


def _best_per_type(flat: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """(pairs, types, 3) scores of consecutive reference groups -> (n, types, 3), keeping per example
    and type the first reference with the highest F1."""
    out = np.empty((n, flat.shape[1], 3), dtype=np.float64)
    starts = np.searchsorted(owner, np.arange(n))
    ends = np.append(starts[1:], len(owner))
    for row, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        group = flat[start:end]
        best = np.argmax(group[:, :, 2], axis=0)  # per type
        out[row] = group[best, np.arange(flat.shape[1])]
    return out


def _mean_per_example(flat: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """(pairs, types, 3) scores of consecutive reference groups -> (n, types, 3): each example's mean over
    its references, P, R and F1 separately (ROUGE-1.5.5's model average, `-f A`)."""
    sums = np.zeros((n, flat.shape[1], 3), dtype=np.float64)
    np.add.at(sums, owner, flat)
    return sums / np.bincount(owner, minlength=n)[:, None, None]


def score_pairs(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    rouge_types: Sequence[str] = ROUGE_TYPES,
    use_stemmer: bool = True,
    references_mode: MultiReference = "best",
    scorer: FastRouge | None = None,
):
    """Per-example ROUGE of aligned predictions and references (a str, or a list for several, combined
    as `references_mode` says: `FastRouge`).

    Returns a DataFrame with columns `<type>_precision`, `<type>_recall`, `<type>_fmeasure`
    (fractions in [0, 1]), one row per pair. `scorer`'s types, stemming and reference mode win over the
    keyword arguments.
    """
    import pandas as pd

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    scorer = scorer or FastRouge(rouge_types, use_stemmer, references_mode)
    arrays = scorer.score_arrays(list(predictions), list(references))
    columns = {
        f"{name}_{f}": arrays[:, k, j] for k, name in enumerate(scorer.rouge_types) for j, f in enumerate(FIELDS)
    }
    return pd.DataFrame(columns)
