"""Meta-evaluation: does a measure track what people judge? `sumpipe meta-eval`.

    experiments/measures/params.yaml ─► run_meta_eval(cfg, folder) ─► <out>/meta_eval.json, <out>/meta_eval.md

Reads a set of human-scored summaries (gzipped JSON Lines, one article a line: `id`, `source`,
`references` (a list), `system_outputs` {system: text}, `human_scores` {system: {score: value}}; every
article the same systems and scores; SummEval's layout, ../shared/judgments/README.md), scores every
summary with ROUGE-1/2/L, the trivial baselines and every read-quality measure, and correlates each
measure with each human score in SummEval's published protocols (Fabbri et al. 2021; G-Eval's Table 1):

- `article`: Kendall's tau-b (`scipy.stats.kendalltau`) between the measure and the human score across
  the systems of each article, averaged over the articles (SummEval's "summary level"). An article whose
  human scores are all equal ranks nothing and is left out, for every measure alike; an article where the
  measure gives every system the same value ranks nothing right, and counts as tau 0 (leaving it out
  instead would flatter a measure that is rarely non-zero: `adjacent_repeat` on SummEval).
- `system`: Kendall's tau-b between the systems' means over the articles (SummEval's "system level").
- `pooled`: Spearman's rho (`scipy.stats.spearmanr`) over every (article, system) pair.
A constant measure correlates 0 at every level (scipy's NaN would drop it from an average).

The baselines (`BASELINES`): what a measure of the summary against its source must beat to be worth a
column. ROUGE-1 and ROUGE-2 precision of the summary against its own source (rouge-score, stems as
`use_stemmer`), the share of its 1-, 2- and 3-grams that the source does not hold
(`abstractiveness.novel_ngrams`; lower is better) and its length in words (longer is higher: a negative
figure says people prefer the shorter). They read the texts as the read-quality measures do (below).

Each correlation with a 95 % percentile interval from `bootstrap` resamples of the articles (numpy's
default_rng seeded with `seed`; every measure and score sees the same resamples), and its difference from
the `baseline` row (ROUGE-1 precision against the source by default) with the interval of that difference
over the same resamples (a paired bootstrap: a measure that does not beat the baseline has an interval
that holds 0). The statistics are not means of per-article values at every level (a system-level tau of
a resample is not), so the resamples are drawn here once for all levels rather than by
`sumpipe.evaluate.bootstrap`, whose resampled means they would otherwise repeat. A measure for which lower
is better (`read_quality.LOWER_IS_BETTER`: unsupported words, fragments, ...; the novel n-grams) is
negated first, so a positive correlation always means the measure agrees with the people. ROUGE is
rouge-score's F1 (stemmed; Porter stems as `sumpipe.evaluate.rouge`), averaged over an article's
references, as the published ROUGE-1 row was computed; the run checks that row (`reproduce`, within
`tolerance`) and says so.

The held-out half (`halves`): the articles in the order of their ids, the even positions (0, 2, ...) the
fitting half and the odd ones the reporting half. Every correlation is also given on the reporting half
(resampled alone, same seed), so that a measure with fitted weights is fitted on the one half and judged
on the other, never on what it was fitted to.

How the read-quality measures see a judged summary: every text (summary, source, references) goes through
the pipeline's own preprocessing (`sumpipe.text.preprocess.preprocess_text`: lowercase, the project's
tokenizer, one sentence a line), so each measure reads SummEval's summaries exactly as it reads the
pipeline's; the source as given (cased) is the raw source that says which words are names; a measure that
compares with "the reference" (`more_sentences_than_reference`) reads the article's first reference (the
highlights). `sentences_mean` has no better direction and is not meta-evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sumpipe.validation import require, require_finite

RESULTS_JSON = "meta_eval.json"
RESULTS_MD = "meta_eval.md"
ROUGE_ROWS = {"ROUGE-1": "rouge1", "ROUGE-2": "rouge2", "ROUGE-L": "rougeL"}
# the trivial baselines (module docstring), and those for which lower is better
SOURCE_PRECISION = {"ROUGE-1 P vs source": "rouge1", "ROUGE-2 P vs source": "rouge2"}
NOVEL = {f"novel {n}-grams": n for n in (1, 2, 3)}
LENGTH = "length (words)"
BASELINES = (*SOURCE_PRECISION, *NOVEL, LENGTH)
BASELINES_LOWER_IS_BETTER = frozenset(NOVEL)
LEVELS = ("article", "system", "pooled")
RECORD_KEYS = ("id", "source", "references", "system_outputs", "human_scores")
MIN_ARTICLES = 10  # fewer: each bootstrap resample repeats a handful of articles, and the per-article mean
#                    of taus cannot reproduce a published row (a 2-article file ran a minute, then blamed
#                    the protocol); SummEval has 100


@dataclass(frozen=True)
class MetaEvaluation:
    """experiments/measures/params.yaml: the `judgments` file (relative to the params file's folder), the
    number of `bootstrap` resamples of the articles and their `seed`, ROUGE's `use_stemmer`, the
    `published` per-article Kendall rows ({measure: {human score: tau}}) shown beside the measured ones, the
    row the protocol must reproduce (`reproduce`, a key of `published` and of `ROUGE_ROWS`) within `tolerance`,
    the `out` folder of the results, the fewest articles a judgments file must hold (`min_articles`,
    at least 2: a per-article mean and a bootstrap over articles need several), and the `baseline` row
    every measure's correlations are compared with (a ROUGE row or one of `BASELINES`)."""

    judgments: str = "../../../shared/judgments/summeval_cnndm_test100.jsonl.gz"
    bootstrap: int = 1000
    seed: int = 0
    use_stemmer: bool = True
    published: dict[str, dict[str, float]] = field(default_factory=dict)
    reproduce: str = "ROUGE-1"
    tolerance: float = 0.01
    out: str = "results"
    min_articles: int = MIN_ARTICLES
    baseline: str = "ROUGE-1 P vs source"

    def check(self, key: str) -> None:
        key = f"{key}." if key else ""
        require(self.bootstrap >= 1, f"{key}bootstrap", "must be >= 1")
        require(self.min_articles >= 2, f"{key}min_articles", "must be >= 2")
        require(self.seed >= 0, f"{key}seed", "must be >= 0")
        require_finite(self.tolerance, f"{key}tolerance")
        require(self.tolerance > 0, f"{key}tolerance", "must be > 0")
        require(self.reproduce in ROUGE_ROWS, f"{key}reproduce", f"must be one of {', '.join(ROUGE_ROWS)}")
        require(self.reproduce in self.published, f"{key}reproduce", f"{self.reproduce!r} has no row in published")
        require(self.baseline in (*ROUGE_ROWS, *BASELINES), f"{key}baseline",
                f"must be one of {', '.join((*ROUGE_ROWS, *BASELINES))}")
        for name, row in self.published.items():
            for score, tau in row.items():
                require_finite(tau, f"{key}published.{name}.{score}")
                require(-1 <= tau <= 1, f"{key}published.{name}.{score}", "must be a Kendall tau in [-1, 1]")


@dataclass(frozen=True)
class Judgments:
    """A judgments file as arrays: `systems` (sorted), `scores` (the human scores' names, sorted), and per
    article its `ids`, `sources`, `references` and `outputs` [article][system]; `human`: {score: array
    (articles, systems)}."""

    systems: tuple[str, ...]
    scores: tuple[str, ...]
    ids: list[str]
    sources: list[str]
    references: list[list[str]]
    outputs: list[list[str]]
    human: dict[str, np.ndarray]

    def subset(self, rows: Sequence[int]) -> Judgments:
        """The judgments of the articles at `rows` (in that order)."""
        return Judgments(self.systems, self.scores, [self.ids[r] for r in rows], [self.sources[r] for r in rows],
                         [self.references[r] for r in rows], [self.outputs[r] for r in rows],
                         {score: values[list(rows)] for score, values in self.human.items()})


def halves(ids: Sequence[str]) -> tuple[list[int], list[int]]:
    """(fitting half, reporting half): the indices of the articles at even and at odd positions when sorted
    by id (module docstring). ["c", "a", "b"] -> ([1, 0], [2]): "a" and "c" fit, "b" reports."""
    order = sorted(range(len(ids)), key=lambda a: ids[a])
    return order[0::2], order[1::2]


def read_judgments(path: Path) -> Judgments:
    """The judgments of `path` (gzipped or plain JSON Lines, read within `sumpipe.inputs`' limits), checked
    whole before any scoring: a missing field, a system or score missing from an article, an empty text,
    a non-numeric score, fewer than two systems, bytes that are not UTF-8 (they would be replaced, and the
    text scored changed) and an article given twice (by id, or by its source and outputs under another id:
    it would count twice in every mean) are each one line naming the file, the line and the key. Blank
    lines are skipped, but a file of mostly blank lines is refused as it streams (`iter_jsonl`)."""
    from sumpipe.errors import SumpipeError
    from sumpipe.io.userfiles import iter_jsonl

    if not path.is_file():
        from sumpipe.inputs import present_but_not_a_file

        kind = present_but_not_a_file(path)
        raise SumpipeError(f"{path}: is {kind}, not a judgments file" if kind else
                           f"{path}: no such judgments file (judgments: in the meta-evaluation's params)")
    systems: tuple[str, ...] = ()
    scores: tuple[str, ...] = ()
    ids, sources, references, outputs, human = [], [], [], [], []
    seen: dict[Any, int] = {}  # an article's id, and its source with its outputs -> its line
    for line, record, replaced in iter_jsonl(path):
        where = f"{path}:{line}"
        if replaced:
            raise SumpipeError(f"{where}: bytes that are not UTF-8 (judgments must be UTF-8 text: a replaced "
                               "byte changes the text scored)")
        missing = [key for key in RECORD_KEYS if key not in record]
        if missing:
            raise SumpipeError(f"{where}: no {missing[0]!r} field (an article needs {', '.join(RECORD_KEYS)})")
        outs, judged = record["system_outputs"], record["human_scores"]
        if not isinstance(outs, dict) or not isinstance(judged, dict) or not outs:
            raise SumpipeError(f"{where}: system_outputs and human_scores must be non-empty objects")
        if not systems:
            systems = tuple(sorted(outs))
            if len(systems) < 2:
                raise SumpipeError(f"{where}: system_outputs names one system; a correlation across an "
                                   "article's systems needs at least 2")
            first = judged.get(systems[0])
            scores = tuple(sorted(first)) if isinstance(first, dict) else ()
            if not scores:
                raise SumpipeError(f"{where}: human_scores.{systems[0]} names no score")
        if tuple(sorted(outs)) != systems or tuple(sorted(judged)) != systems:
            raise SumpipeError(f"{where}: the systems differ from the first article's ({', '.join(systems)})")
        refs = record["references"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r.strip() for r in refs):
            raise SumpipeError(f"{where}: references must be a non-empty list of non-empty texts")
        texts = [record["source"], *(outs[s] for s in systems)]
        if not all(isinstance(t, str) and t.strip() for t in texts):
            raise SumpipeError(f"{where}: source and every system output must be non-empty texts")
        row = []
        for system in systems:
            given = judged[system]
            if not isinstance(given, dict) or tuple(sorted(given)) != scores:
                raise SumpipeError(f"{where}: human_scores.{system} must score exactly {', '.join(scores)}")
            values = [given[s] for s in scores]
            if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values):
                raise SumpipeError(f"{where}: human_scores.{system}: every score must be a finite number")
            row.append(values)
        for key, what in ((("id", str(record["id"])), f"id {str(record['id'])!r}"),
                          (("text", record["source"], *texts[1:]), "source and system outputs")):
            if key in seen:
                raise SumpipeError(f"{where}: the same article as line {seen[key]} ({what}); each article "
                                   "once (a repeat counts twice in every mean)")
            seen[key] = line
        ids.append(str(record["id"]))
        sources.append(record["source"])
        references.append(refs)
        outputs.append([outs[s] for s in systems])
        human.append(row)
    if not ids:
        raise SumpipeError(f"{path}: no article")
    table = np.asarray(human, dtype=np.float64)  # (articles, systems, scores)
    return Judgments(systems, scores, ids, sources, references, outputs,
                     {score: table[:, :, k] for k, score in enumerate(scores)})


def rouge_measures(judgments: Judgments, use_stemmer: bool) -> dict[str, np.ndarray]:
    """{"ROUGE-1": F1 (articles, systems), ...}: each summary's F1 averaged over its article's references."""
    from sumpipe.evaluate.rouge import FastRouge

    scorer = FastRouge(list(ROUGE_ROWS.values()), use_stemmer, references="average")
    shape = (len(judgments.ids), len(judgments.systems))
    predictions = [text for row in judgments.outputs for text in row]
    references = [refs for refs, row in zip(judgments.references, judgments.outputs) for _ in row]
    arrays = scorer.score_arrays(predictions, references)
    return {name: arrays[:, k, 2].reshape(shape) for k, name in enumerate(ROUGE_ROWS)}


def baseline_measures(judgments: Judgments, use_stemmer: bool) -> dict[str, np.ndarray]:
    """{baseline: value (articles, systems)} for every row of `BASELINES`, each summary against its own
    source, both preprocessed as the read-quality measures read them (module docstring): ROUGE-1/2
    precision, the % of novel 1-, 2- and 3-grams (0 for a summary without any), the words."""
    from sumpipe.evaluate.abstractiveness import novel_ngrams
    from sumpipe.evaluate.read_quality import is_word
    from sumpipe.evaluate.rouge import FastRouge
    from sumpipe.text.preprocess import preprocess_text

    shape = (len(judgments.ids), len(judgments.systems))
    sources = [preprocess_text(raw) for raw in judgments.sources]
    pairs = [(preprocess_text(output), source) for source, row in zip(sources, judgments.outputs) for output in row]
    scorer = FastRouge(list(SOURCE_PRECISION.values()), use_stemmer)
    arrays = scorer.score_arrays([summary for summary, _ in pairs], [source for _, source in pairs])
    out = {name: arrays[:, k, 0].reshape(shape) for k, name in enumerate(SOURCE_PRECISION)}
    for name, n in NOVEL.items():
        counts = [novel_ngrams(summary, source, n) for summary, source in pairs]
        out[name] = np.array([100 * new / grams if grams else 0.0 for new, grams in counts]).reshape(shape)
    words = [sum(map(is_word, summary.split())) for summary, _ in pairs]
    out[LENGTH] = np.array(words, dtype=np.float64).reshape(shape)
    return out


def read_quality_measures(judgments: Judgments) -> dict[str, np.ndarray]:
    """{measure: value (articles, systems)} for every read-quality measure with a better direction
    (`read_quality.ORIENTED`), each summary alone, read as the module docstring says."""
    from sumpipe.evaluate.read_quality import ORIENTED, NameDots, casing, figures, summary_counts
    from sumpipe.text.preprocess import preprocess_text

    everywhere = casing("\n".join(judgments.sources))
    out = {key: np.zeros((len(judgments.ids), len(judgments.systems))) for key in ORIENTED}
    for a, (raw, refs, row) in enumerate(zip(judgments.sources, judgments.references, judgments.outputs)):
        source, reference, own = preprocess_text(raw), preprocess_text(refs[0]), casing(raw)
        for s, output in enumerate(row):
            counts = summary_counts(preprocess_text(output), source, reference, NameDots(), own, everywhere)
            values = figures(counts, 1)
            for key in ORIENTED:
                out[key][a, s] = values[key]
    return out


def article_taus(measure: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per article (row) across the systems: NaN where the human scores are all equal (the
    article ranks nothing), 0 where the measure's are (it ranks nothing right)."""
    taus = np.full(len(measure), np.nan)
    for a, (m, h) in enumerate(zip(measure, human)):
        if np.ptp(h) > 0:
            taus[a] = _kendall(m, h)
    return taus


def _kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b; 0 where either side is constant (it ranks nothing: scipy would give NaN)."""
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic) if np.ptp(a) > 0 and np.ptp(b) > 0 else 0.0


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho; 0 where either side is constant."""
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic) if np.ptp(a) > 0 and np.ptp(b) > 0 else 0.0


def correlations(measure: np.ndarray, human: np.ndarray) -> dict[str, float]:
    """The three published correlations (module docstring) of one measure (articles, systems), oriented so
    higher is better, with one human score of the same shape; a constant measure correlates 0."""
    taus = article_taus(measure, human)
    return {"article": float(np.nanmean(taus)) if not np.isnan(taus).all() else math.nan,
            "system": _kendall(measure.mean(axis=0), human.mean(axis=0)),
            "pooled": _spearman(measure.ravel(), human.ravel())}


def bootstrap_draws(measure: np.ndarray, human: np.ndarray, resamples: np.ndarray) -> dict[str, np.ndarray]:
    """{level: the `correlations` of each of `resamples` (resamples, articles) of article indices}; an article
    drawn k times counts k times. A resample without an article whose human scores differ has no per-article
    figure: NaN there."""
    taus = article_taus(measure, human)
    draws = {level: np.full(len(resamples), np.nan) for level in LEVELS}
    for b, rows in enumerate(resamples):
        m, h, t = measure[rows], human[rows], taus[rows]
        if not np.isnan(t).all():
            draws["article"][b] = float(np.nanmean(t))
        draws["system"][b] = _kendall(m.mean(axis=0), h.mean(axis=0))
        draws["pooled"][b] = _spearman(m.ravel(), h.ravel())
    return draws


def percentile_interval(draws: np.ndarray) -> list[float]:
    """The 95 % percentile interval of `draws`, NaNs left out ([nan, nan] when nothing is left)."""
    kept = draws[~np.isnan(draws)]
    return [float(np.percentile(kept, 2.5)), float(np.percentile(kept, 97.5))] if len(kept) else [math.nan, math.nan]


def bootstrap_intervals(measure: np.ndarray, human: np.ndarray, resamples: np.ndarray) -> dict[str, list[float]]:
    """95 % percentile intervals of `correlations` over `resamples` (`bootstrap_draws`)."""
    return {level: percentile_interval(v) for level, v in bootstrap_draws(measure, human, resamples).items()}


def meta_evaluate(judgments: Judgments, measures: dict[str, np.ndarray], bootstrap: int, seed: int,
                  progress: Any = None, baseline: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """{measure: {human score: {level: value, f"{level}_interval": [low, high]}}} for already oriented
    `measures` (higher is better); with a `baseline` (one of `measures`), every other measure's entry also
    holds `vs_baseline`: {level: its correlation minus the baseline's, f"{level}_interval": the interval of
    that difference over the same resamples}. `progress(done)` is called after each measure."""
    resamples = np.random.default_rng(seed).integers(0, len(judgments.ids), size=(bootstrap, len(judgments.ids)))
    order = sorted(measures, key=lambda name: name != baseline)  # the baseline first: the others need its draws
    table: dict[str, dict[str, dict[str, Any]]] = {}
    reference: dict[str, tuple[dict[str, float], dict[str, np.ndarray]]] = {}
    for name in order:
        values = measures[name]
        table[name] = {}
        for score in judgments.scores:
            human = judgments.human[score]
            point, draws = correlations(values, human), bootstrap_draws(values, human, resamples)
            entry: dict[str, Any] = {level: round(point[level], 4) for level in LEVELS} | {
                f"{level}_interval": [round(x, 4) for x in percentile_interval(draws[level])] for level in LEVELS}
            if name == baseline:
                reference[score] = point, draws
            elif baseline is not None:
                base_point, base_draws = reference[score]
                entry["vs_baseline"] = {level: round(point[level] - base_point[level], 4) for level in LEVELS} | {
                    f"{level}_interval": [round(x, 4) for x in percentile_interval(draws[level] - base_draws[level])]
                    for level in LEVELS}
            table[name][score] = entry
        if progress is not None:
            progress(1)
    return {name: table[name] for name in measures}


def oriented(measures: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`measures` with every lower-is-better measure negated (`read_quality.LOWER_IS_BETTER`, the novel
    n-grams of `BASELINES_LOWER_IS_BETTER`)."""
    from sumpipe.evaluate.read_quality import LOWER_IS_BETTER

    lower = LOWER_IS_BETTER | BASELINES_LOWER_IS_BETTER
    return {name: -values if name in lower else values for name, values in measures.items()}


def reproduction_check(table: dict[str, dict[str, dict[str, Any]]], published: dict[str, float],
                       name: str, tolerance: float) -> dict[str, Any]:
    """Whether `name`'s measured per-article taus are within `tolerance` of the `published` row."""
    measured = {score: table[name][score]["article"] for score in published if score in table[name]}
    worst = max(abs(measured[s] - published[s]) for s in measured) if measured else math.inf
    return {"measure": name, "published": published, "measured": measured, "max_difference": round(worst, 4),
            "tolerance": tolerance, "passed": bool(worst <= tolerance)}


def run_meta_eval(cfg: MetaEvaluation, folder: Path) -> dict[str, Any]:
    """Read the judgments (`cfg.judgments`, relative to `folder`), score and correlate every measure,
    write `<folder>/<out>/meta_eval.{json,md}` and return the results (module docstring)."""
    from tqdm import tqdm

    from sumpipe.errors import SumpipeError
    from sumpipe.io.atomic import require_writable_folder, write_json, write_text

    judgments = read_judgments(folder / cfg.judgments)
    if len(judgments.ids) < cfg.min_articles:
        raise SumpipeError(f"{cfg.judgments}: {len(judgments.ids)} article{'s' * (len(judgments.ids) != 1)}, "
                           f"fewer than the {cfg.min_articles} a meta-evaluation needs (min_articles)")
    out = require_writable_folder(folder / cfg.out)
    ranked = [s for s in judgments.scores if np.all(np.ptp(judgments.human[s], axis=1) == 0)]
    if ranked:
        raise SumpipeError(f"{cfg.judgments}: no article's systems differ in {ranked[0]!r}: nothing to correlate")
    unknown = [(row, s) for row, scores in cfg.published.items() for s in scores if s not in judgments.scores]
    if unknown:
        raise SumpipeError(f"published.{unknown[0][0]}.{unknown[0][1]}: no such human score in {cfg.judgments} "
                           f"({', '.join(judgments.scores)})")
    measures = oriented(rouge_measures(judgments, cfg.use_stemmer) | baseline_measures(judgments, cfg.use_stemmer)
                        | read_quality_measures(judgments))
    fit, report = halves(judgments.ids)
    with tqdm(total=2 * len(measures), desc="meta-eval: bootstrap", unit="measure", disable=None, leave=False) as bar:
        table = meta_evaluate(judgments, measures, cfg.bootstrap, cfg.seed, bar.update, cfg.baseline)
        held_out = meta_evaluate(judgments.subset(report), {name: values[report] for name, values in measures.items()},
                                 cfg.bootstrap, cfg.seed, bar.update, cfg.baseline)
    results = {"judgments": Path(cfg.judgments).name, "articles": len(judgments.ids),
               "systems": list(judgments.systems), "scores": list(judgments.scores),
               "left_out_articles": {s: int(np.sum(np.ptp(judgments.human[s], axis=1) == 0)) for s in judgments.scores},
               "bootstrap": cfg.bootstrap, "seed": cfg.seed, "use_stemmer": cfg.use_stemmer,
               "measures": table, "published": cfg.published, "baseline": cfg.baseline,
               "baselines": list(BASELINES),
               "halves": {"rule": "sorted by id: even positions fit, odd positions report",
                          "fit": sorted(judgments.ids[a] for a in fit),
                          "report": sorted(judgments.ids[a] for a in report)},
               "held_out": held_out,
               # JSON objects are written with sorted keys: the row order of the tables, kept
               "rows": list(measures), "published_rows": list(cfg.published),
               "check": reproduction_check(table, cfg.published[cfg.reproduce], cfg.reproduce, cfg.tolerance)}
    write_json(results, out / RESULTS_JSON)
    write_text(markdown_table(results) + "\n", out / RESULTS_MD)
    return results


def _cell(entry: dict[str, Any], level: str) -> str:
    low, high = entry[f"{level}_interval"]
    return f"{entry[level]:+.3f} [{low:+.3f}, {high:+.3f}]"


TITLES = {"article": "Kendall's tau per article across the systems, averaged over the articles (summary level)",
          "system": "Kendall's tau over the systems' means (system level)",
          "pooled": "Spearman's rho over every (article, system) pair (pooled)"}


def _rows(table: dict[str, Any], names: Sequence[str], scores: Sequence[str], level: str,
          difference: bool = False) -> list[str]:
    """One table row per measure of `names`: each score's correlation at `level` (or, `difference`, its
    difference from the baseline, the baseline's own row left out) with its interval."""
    return [f"| {name} | " + " | ".join(_cell(table[name][s]["vs_baseline"] if difference else table[name][s], level)
                                        for s in scores) + " |"
            for name in names if not difference or "vs_baseline" in table[name][scores[0]]]


def markdown_table(results: dict[str, Any], levels: Sequence[str] = LEVELS) -> str:
    """The results as Markdown: per correlation level, the table of measure x human score (the 95 % interval
    in brackets; the per-article one with the published rows below the measured ones, in italics) and the
    table of each measure's difference from the baseline (paired); then the per-article tables of the
    held-out half."""
    scores, rows, baseline = results["scores"], results["rows"], results["baseline"]
    header = "| measure | " + " | ".join(scores) + " |\n|---|" + "---:|" * len(scores)
    measured, published = results["measures"], results["published"]
    trivial = ", ".join(name for name in results["baselines"] if name in rows)
    parts = [f"Baselines (what a measure of the summary against its source must beat): {trivial}. Each cell: the "
             "correlation and its 95 % bootstrap interval over the articles; in the difference tables, the "
             f"correlation minus {baseline}'s over the same resamples (paired): an interval holding 0 is no "
             "difference."]
    for level in levels:
        lines = _rows(measured, rows, scores, level)
        if level == "article":
            lines += [f"| *{name} (published)* | " + " | ".join(
                f"{published[name][s]:+.3f}" if s in published[name] else "–" for s in scores) + " |"
                for name in results["published_rows"]]
        parts.append(f"**{TITLES[level]}**\n\n{header}\n" + "\n".join(lines))
        parts.append(f"**The same, minus {baseline} (paired)**\n\n{header}\n"
                     + "\n".join(_rows(measured, rows, scores, level, difference=True)))
    held_out, report = results["held_out"], results["halves"]["report"]
    size = f"{len(report)} article{'s' * (len(report) != 1)}"
    what = f"The held-out half ({size}: {results['halves']['rule']}; resampled alone)"
    parts.append(f"**{what}: Kendall's tau per article**\n\n{header}\n"
                 + "\n".join(_rows(held_out, rows, scores, "article")))
    parts.append(f"**The held-out half, minus {baseline} per article (paired)**\n\n{header}\n"
                 + "\n".join(_rows(held_out, rows, scores, "article", difference=True)))
    check = results["check"]
    parts.append(f"Check: {check['measure']} per article within {check['tolerance']} of the published row: "
                 f"{'passed' if check['passed'] else 'FAILED'} (largest difference {check['max_difference']:.4f}).")
    return "\n\n".join(parts)
