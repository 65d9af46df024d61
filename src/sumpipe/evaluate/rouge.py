"""ROUGE-N, ROUGE-L and ROUGE-Lsum with the exact numbers of Google's `rouge-score`, only faster.

`rouge-score` (the Python re-implementation of ROUGE-1.5.5) is the reference: same tokenizer
(lowercase, every run of characters outside [a-z0-9] is a separator, Porter stems for words longer
than three characters), same n-gram clipping, same LCS and same summary-level union-LCS for
ROUGE-Lsum, which reads sentences separated by "\n" (`split_summaries=False`). What makes it fast:

- every distinct text is tokenized once, and every distinct word is stemmed once (the Porter stemmer
  is most of rouge-score's run time); tokens become small ints so comparisons are cheap;
- the LCS length comes from the bit-parallel algorithm of Allison & Dix (1986) / Hyyrö (2004) on
  Python ints (one add, one subtract and two masks per candidate token), and the LCS *indices*
  that ROUGE-Lsum needs are read back from the same bit columns with rouge-score's own tie-breaking
  (`_backtrack_norec`), so the union LCS, and hence the score, is identical;
- large inputs are split between worker processes (forked, so they inherit the caches).

Scores are fractions in [0, 1]: `precision` is over the prediction, `recall` over the reference,
`fmeasure` is 2PR/(P+R), computed in that order so floats match rouge-score bit for bit.
With several references per example the best reference is kept separately for each ROUGE type,
by F-measure (first one on ties), exactly as `RougeScorer.score_multi`.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from nltk.stem import porter
from rouge_score.tokenize import NON_ALPHANUM_RE, SPACES_RE, VALID_TOKEN_RE

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
FIELDS = ("precision", "recall", "fmeasure")
PARALLEL_MIN_PAIRS = 2000  # below this, forking workers costs more than it saves


def fmeasure(precision: float, recall: float) -> float:
    """rouge-score's `scoring.fmeasure`, same operation order (so the same float)."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge_version() -> str:
    """Installed rouge-score version, for the configuration line of every table."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rouge-score")
    except PackageNotFoundError:
        return "unknown"


def describe(use_stemmer: bool) -> str:
    """One line that states how the scores were computed (printed under every table)."""
    return (f"rouge-score {rouge_version()} semantics (sumpipe fast path, identical numbers); "
            f"tokenizer: rouge-score DefaultTokenizer (lowercase, [^a-z0-9]+ separators); "
            f"stemming: {'Porter, words > 3 chars' if use_stemmer else 'off'}; "
            f"ROUGE-Lsum sentences: split on newlines; multi-reference: best reference per ROUGE type by F1")


# --------------------------------------------------------------------------------------------
# Tokenization
# --------------------------------------------------------------------------------------------
@dataclass
class Doc:
    """One tokenized text: tokens as ints, per sentence (newline-split, empty ones dropped)."""

    tokens: list[int]
    sentences: list[list[int]]
    _ngrams: dict[int, Counter] = field(default_factory=dict)
    _masks: dict[int, int] | None = None

    def ngrams(self, n: int) -> Counter:
        counts = self._ngrams.get(n)
        if counts is None:
            toks = self.tokens
            counts = Counter(toks) if n == 1 else Counter(zip(*(toks[i:] for i in range(n))))
            self._ngrams[n] = counts
        return counts

    def masks(self) -> dict[int, int]:
        """Token id -> bit mask of its positions, for the bit-parallel LCS with this text as rows."""
        if self._masks is None:
            self._masks = _position_masks(self.tokens)
        return self._masks


class Tokenizer:
    """rouge-score's DefaultTokenizer with memoised stems, caching whole texts too.

    `tokenize.tokenize` lowercases, turns [^a-z0-9]+ into spaces, splits on whitespace, stems words
    longer than 3 characters and drops anything that is not [a-z0-9]+; this does the same per word
    through a dict, so the stemmer runs once per distinct word.
    """

    def __init__(self, use_stemmer: bool = True):
        self.use_stemmer = use_stemmer
        self._stemmer = porter.PorterStemmer() if use_stemmer else None
        self._word_ids: dict[str, int] = {}  # raw lowercased word -> token id (-1: dropped)
        self._token_ids: dict[str, int] = {}  # stemmed token -> id
        self._docs: dict[str, Doc] = {}

    def _word_id(self, word: str) -> int:
        token = word
        if self._stemmer is not None and len(word) > 3:
            token = self._stemmer.stem(word)
        if not VALID_TOKEN_RE.match(token):
            ident = -1
        else:
            ident = self._token_ids.setdefault(token, len(self._token_ids))
        self._word_ids[word] = ident
        return ident

    def words(self, text: str) -> list[int]:
        """Token ids of one text, as rouge-score's tokenizer would produce them."""
        ids = self._word_ids
        out = []
        for word in SPACES_RE.split(NON_ALPHANUM_RE.sub(" ", text.lower())):
            ident = ids.get(word)
            if ident is None:
                ident = self._word_id(word)
            if ident >= 0:
                out.append(ident)
        return out

    def doc(self, text: str) -> Doc:
        doc = self._docs.get(text)
        if doc is None:
            # "\n" is a separator for the tokenizer too, so whole-text tokens = concatenated sentences.
            sentences = [s for s in (self.words(line) for line in text.split("\n") if line) if s]
            doc = Doc(tokens=[t for s in sentences for t in s], sentences=sentences)
            self._docs[text] = doc
        return doc


# --------------------------------------------------------------------------------------------
# LCS on bit vectors
# --------------------------------------------------------------------------------------------
def _position_masks(tokens: Sequence[int]) -> dict[int, int]:
    masks: dict[int, int] = {}
    for i, tok in enumerate(tokens):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    return masks


def lcs_length(ref: Sequence[int], can: Sequence[int], ref_masks: dict[int, int] | None = None) -> int:
    """Length of the longest common subsequence (bit-parallel, O(len(can)) big-int steps).

    Bit i of `v` is 1 where row i+1 of the LCS table does not increase over row i in the current
    column; the LCS length is the number of zero bits among the len(ref) low bits.
    """
    masks = ref_masks if ref_masks is not None else _position_masks(ref)
    full = (1 << len(ref)) - 1
    v = full
    for tok in can:
        m = masks.get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(ref) - v.bit_count()


def lcs_indices(ref: Sequence[int], can: Sequence[int]) -> list[int]:
    """Indices into `ref` of one LCS, the same one rouge-score's `lcs_ind` returns.

    The table entry t[i][j] (LCS of ref[:i] and can[:j]) is i - popcount(column_j & (2^i - 1));
    the backtrack follows `_backtrack_norec`: diagonal on a match, else left when
    t[i][j-1] > t[i-1][j], else up.
    """
    masks = _position_masks(ref)
    full = (1 << len(ref)) - 1
    columns = [full]
    v = full
    for tok in can:
        m = masks.get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
        columns.append(v)
    if v == full:
        return []
    out = []
    i, j = len(ref), len(can)
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            out.append(i - 1)
            i -= 1
            j -= 1
            continue
        low_i = (1 << i) - 1
        left = i - (columns[j - 1] & low_i).bit_count()
        up = (i - 1) - (columns[j] & (low_i >> 1)).bit_count()
        if left > up:
            j -= 1
        else:
            i -= 1
    out.reverse()
    return out


# --------------------------------------------------------------------------------------------
# Scores of one pair
# --------------------------------------------------------------------------------------------
def _prf(hits: int, pred_total: int, ref_total: int) -> tuple[float, float, float]:
    precision = hits / pred_total
    recall = hits / ref_total
    return precision, recall, fmeasure(precision, recall)


def score_ngrams(ref: Doc, pred: Doc, n: int) -> tuple[float, float, float]:
    """rouge-score's `_score_ngrams` on `_create_ngrams` counts (clipped n-gram matches)."""
    ref_counts, pred_counts = ref.ngrams(n), pred.ngrams(n)
    hits = 0
    for gram, count in ref_counts.items():
        other = pred_counts.get(gram)
        if other:
            hits += count if count < other else other
    precision = hits / max(len(pred.tokens) - n + 1, 1)
    recall = hits / max(len(ref.tokens) - n + 1, 1)
    return precision, recall, fmeasure(precision, recall)


def score_lcs(ref: Doc, pred: Doc) -> tuple[float, float, float]:
    """ROUGE-L over whole texts (rouge-score's `_score_lcs`)."""
    if not ref.tokens or not pred.tokens:
        return 0.0, 0.0, 0.0
    return _prf(lcs_length(ref.tokens, pred.tokens, ref.masks()), len(pred.tokens), len(ref.tokens))


def score_summary_lcs(ref: Doc, pred: Doc) -> tuple[float, float, float]:
    """ROUGE-Lsum (rouge-score's `_summary_level_lcs`): union LCS per reference sentence, with
    ROUGE-1.5.5's guard against counting a token more often than it occurs in either summary."""
    if not ref.tokens or not pred.tokens:
        return 0.0, 0.0, 0.0
    if len(ref.sentences) == 1 and len(pred.sentences) == 1:
        # The union is then one LCS, whose tokens pair up one to one, so nothing is clipped:
        # summary-level LCS = ROUGE-L (same hits, same denominators, same floats).
        return score_lcs(ref, pred)
    ref_left = ref.ngrams(1).copy()
    pred_left = pred.ngrams(1).copy()
    pred_sets = [set(s) for s in pred.sentences]
    hits = 0
    for sent in ref.sentences:
        words = set(sent)
        union: set[int] = set()
        for can, can_words in zip(pred.sentences, pred_sets):
            if not words.isdisjoint(can_words):
                union.update(lcs_indices(sent, can))
        for i in sorted(union):
            tok = sent[i]
            if pred_left[tok] > 0 and ref_left[tok] > 0:
                hits += 1
                pred_left[tok] -= 1
                ref_left[tok] -= 1
    return _prf(hits, len(pred.tokens), len(ref.tokens))


def _check_types(rouge_types: Sequence[str]) -> list[int | str]:
    kinds: list[int | str] = []
    for name in rouge_types:
        if name in ("rougeL", "rougeLsum"):
            kinds.append(name)
        elif re.fullmatch(r"rouge[1-9]", name):
            kinds.append(int(name[5:]))
        else:
            raise ValueError(f"unknown ROUGE type {name!r} (rouge1..rouge9, rougeL, rougeLsum)")
    return kinds


class FastRouge:
    """Scores many (prediction, reference) pairs; caches tokenized texts across calls.

    >>> FastRouge(["rouge1"]).score("the cat sat on the mat", "the cat lay on the mat")["rouge1"]
    (0.8333333333333334, 0.8333333333333334, 0.8333333333333334)
    """

    def __init__(self, rouge_types: Sequence[str] = ROUGE_TYPES, use_stemmer: bool = True):
        self.rouge_types = tuple(rouge_types)
        self._kinds = _check_types(self.rouge_types)
        self.use_stemmer = use_stemmer
        self.tokenizer = Tokenizer(use_stemmer)

    def _score_docs(self, ref: Doc, pred: Doc) -> list[tuple[float, float, float]]:
        out = []
        for kind in self._kinds:
            if kind == "rougeL":
                out.append(score_lcs(ref, pred))
            elif kind == "rougeLsum":
                out.append(score_summary_lcs(ref, pred))
            else:
                out.append(score_ngrams(ref, pred, kind))
        return out

    def score(self, target: str, prediction: str) -> dict[str, tuple[float, float, float]]:
        """(precision, recall, fmeasure) per ROUGE type, argument order as `RougeScorer.score`."""
        rows = self._score_docs(self.tokenizer.doc(target), self.tokenizer.doc(prediction))
        return dict(zip(self.rouge_types, rows))

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, tuple[float, float, float]]:
        """Best target per ROUGE type by F-measure, first on ties (as `RougeScorer.score_multi`)."""
        return dict(zip(self.rouge_types, self._best(list(targets), prediction)))

    def _best(self, targets: list[str], prediction: str) -> list[tuple[float, float, float]]:
        if not targets:
            raise ValueError("score_multi needs at least one reference")
        pred = self.tokenizer.doc(prediction)
        per_target = [self._score_docs(self.tokenizer.doc(t), pred) for t in targets]
        best = []
        for k in range(len(self._kinds)):
            # np.argmax semantics: the first maximum wins.
            index = max(range(len(per_target)), key=lambda r: (per_target[r][k][2], -r))
            best.append(per_target[index][k])
        return best

    def score_arrays(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> np.ndarray:
        """Scores of aligned pairs in this process: array (n, n_types, 3) of P, R, F."""
        out = np.zeros((len(predictions), len(self._kinds), 3), dtype=np.float64)
        for row, (pred, ref) in enumerate(zip(predictions, references)):
            if isinstance(ref, str):
                out[row] = self._score_docs(self.tokenizer.doc(ref), self.tokenizer.doc(pred))
            else:
                out[row] = self._best(list(ref), pred)
        return out


# --------------------------------------------------------------------------------------------
# Corpus-level entry point
# --------------------------------------------------------------------------------------------
_JOB: tuple[FastRouge, list[str], list] | None = None  # what forked workers score (inherited memory)


def _score_range(bounds: tuple[int, int]) -> np.ndarray:
    assert _JOB is not None
    scorer, predictions, references = _JOB
    start, end = bounds
    return scorer.score_arrays(predictions[start:end], references[start:end])


def default_processes() -> int:
    """Two workers when a second core is idle (1-minute load average), else one: on a busy
    machine the fork and the extra process cost more than they save."""
    cores = os.cpu_count() or 1
    try:
        idle = cores - os.getloadavg()[0]
    except OSError:
        idle = cores - 1
    return 2 if cores >= 2 and idle >= 1.0 else 1


def score_pairs(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    rouge_types: Sequence[str] = ROUGE_TYPES,
    use_stemmer: bool = True,
    processes: int | None = None,
    scorer: FastRouge | None = None,
):
    """Per-example ROUGE of aligned predictions and references (a str, or a list for several).

    Returns a DataFrame with columns `<type>_precision`, `<type>_recall`, `<type>_fmeasure`
    (fractions in [0, 1]), one row per pair. `scorer` reuses caches across calls (its types and
    stemming win over the keyword arguments). `processes` (default: up to 2) workers share the
    scoring of large inputs.
    """
    import pandas as pd

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    scorer = scorer or FastRouge(rouge_types, use_stemmer)
    predictions = list(predictions)
    references = [r if isinstance(r, str) else list(r) for r in references]
    processes = default_processes() if processes is None else processes
    if processes > 1 and len(predictions) >= PARALLEL_MIN_PAIRS and "fork" in multiprocessing.get_all_start_methods():
        arrays = _score_parallel(scorer, predictions, references, processes)
    else:
        arrays = scorer.score_arrays(predictions, references)
    columns = {f"{name}_{f}": arrays[:, k, j] for k, name in enumerate(scorer.rouge_types) for j, f in enumerate(FIELDS)}
    return pd.DataFrame(columns)


def _score_parallel(scorer: FastRouge, predictions: list[str], references: list, processes: int) -> np.ndarray:
    """Tokenize here (so the caches outlive this call), then score contiguous ranges in forked
    workers, which inherit the tokenized texts instead of receiving them through pipes."""
    global _JOB
    doc = scorer.tokenizer.doc
    for pred, ref in zip(predictions, references):
        doc(pred)
        for text in ([ref] if isinstance(ref, str) else ref):
            doc(text)
    edges = np.linspace(0, len(predictions), processes + 1).astype(int)
    _JOB = (scorer, predictions, references)
    try:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_score_range, list(zip(edges[:-1].tolist(), edges[1:].tolist())))
    finally:
        _JOB = None
    return np.concatenate(parts, axis=0)
