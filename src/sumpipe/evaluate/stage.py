"""The DVC `evaluate` stage: ROUGE of every trained model and of the extractive baselines.

Systems, all on the test split (the split the decode stage summarised, `decode.split`):
- each model in params `models:` whose `predictions/<model>/test.parquet` exists (decode stage);
- `lead<k>`: the first `evaluate.lead_sentences` sentences of the preprocessed source (§5.4.1);
- every extract selection whose method is a baseline (`sumpipe.extract.methods`; today `first<N>`,
  the first N tokens), as written by the extract stage.

Outputs:
- `${paths.scores}/<system>.parquet`: id, prediction and per-example P/R/F1 (fractions) of
  ROUGE-1, -2, -L, -Lsum;
- `${paths.scores}/summary.json`: the scoring set-up, per-system means with bootstrap intervals,
  and paired bootstrap tests of every system against Lead-k and against M1 (read by `report`);
- `${paths.metrics}/rouge.json`: `{"<system>": {"rouge1": F1 x 100, "rouge2", "rougeL",
  "rougeLsum", "<type>_low", "<type>_high", "n"}}` for `dvc metrics show/diff`;
- `${paths.metrics}/rare_words.json`: per system the mean share (x 100) of the reference's rare words
  that the summary contains, with its bootstrap interval (`sumpipe.evaluate.rare_words`; word counts
  from `${paths.vocab}/words.parquet`), and the number of documents with a rare reference word.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sumpipe.config import EvaluateConfig, PathsConfig
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.abstractiveness import abstractiveness
from sumpipe.evaluate.bootstrap import confidence_intervals
from sumpipe.evaluate.rare_words import rare_word_recall
from sumpipe.evaluate.rouge import ROUGE_TYPES, FastRouge, score_pairs
from sumpipe.evaluate.summary import ScoringSetup, compare, summarize
from sumpipe.inputs import present_but_not_a_file
from sumpipe.io import read_parquet, write_json, write_parquet
from sumpipe.schemas import PROCESSED, TEXT, Contract, references_of
from sumpipe.vocab.ngrams import WORDS_FILE

SPLIT = "test"
REFERENCE_MODEL = "M1"


@dataclass
class EvaluationResult:
    summaries: dict[str, dict]
    comparisons: dict[str, dict]
    skipped: list[str] = field(default_factory=list)


def lead_sentences(source: str, k: int) -> str:
    """The first k sentences of a preprocessed source (sentences are separated by "\\n")."""
    return "\n".join(source.split("\n")[:k])


def setup_of(cfg: EvaluateConfig) -> ScoringSetup:
    return ScoringSetup(use_stemmer=cfg.use_stemmer, bootstrap_samples=cfg.bootstrap_samples,
                        confidence=cfg.confidence, seed=cfg.seed)


def read_system(path: Path, column: str, refs_by_id: dict, where: str, rerun: str) -> pd.DataFrame:
    """One system's outputs (`column` of `path`) as id, prediction, references (the processed split's,
    else the file's own); a file with no example of `where` is stale: a one-line error saying `rerun`."""
    # the kinds from the footer first: a column of lists (or numbers) is one line, not an Arrow cast error
    frame = read_parquet(path, contract=Contract("system outputs", {"id": TEXT, column: TEXT}, frozenset({column})))
    if not any(i in refs_by_id for i in frame["id"]):  # empty, or stale (another corpus or split)
        raise SumpipeError(f"{path}: no prediction for any example of {where} ({rerun})")
    _check_one_per_example(path, frame["id"], refs_by_id, where, rerun)
    own = references_of(frame) if {"reference", "references"} & set(frame.columns) else [None] * len(frame)
    refs = [refs_by_id.get(i, r) for i, r in zip(frame["id"], own)]
    if any(r is None for r in refs):
        raise SumpipeError(f"{path}: ids without a reference in {where}")
    out = pd.DataFrame({"id": frame["id"], "prediction": frame[column].fillna(""), "references": refs})
    if "p_gen" in frame.columns:  # pointer models' generation probabilities (abstractiveness)
        out["p_gen"] = frame["p_gen"].to_numpy()
    if "reads_reference" in frame.columns:  # the extractive oracle marks its outputs
        out["reads_reference"] = frame["reads_reference"].to_numpy()
    return out


def _check_one_per_example(path: Path, ids: pd.Series, refs_by_id: dict, where: str, rerun: str) -> None:
    """Exactly one output per example of the split: a system scored on a subset (a cut or padded
    file) would get a figure that is not comparable to the others'."""
    repeated = ids[ids.duplicated()]
    if len(repeated):
        raise SumpipeError(f"{path}: {len(repeated)} repeated id(s), e.g. {repeated.iloc[0]!r} ({rerun})")
    absent = len(set(refs_by_id) - set(ids))
    if absent:
        raise SumpipeError(f"{path}: {len(ids)} outputs for the {len(refs_by_id)} examples of {where}, "
                           f"{absent} missing ({rerun})")


def collect_systems(paths: PathsConfig, cfg: EvaluateConfig, model_names: list[str], baselines: list[str],
                    split: str = SPLIT) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """{system: DataFrame(id, prediction, references)} in report order, and the systems left out."""
    where = f"{paths.processed}/{split}.parquet"
    processed = read_parquet(Path(where), contract=PROCESSED)
    if processed.empty:
        raise SumpipeError(f"{where} has no examples")
    processed = processed.assign(references=references_of(processed))
    refs_by_id = dict(zip(processed["id"], processed["references"]))
    k = cfg.lead_sentences
    lead = pd.DataFrame({"id": processed["id"], "prediction": [lead_sentences(s, k) for s in processed["source"]],
                         "references": processed["references"]})

    systems: dict[str, pd.DataFrame] = {}
    skipped: list[str] = []

    def add(name: str, path: Path, column: str, rerun: str) -> None:
        if path.is_file():
            systems[name] = read_system(path, column, refs_by_id, where, rerun)
        elif (kind := present_but_not_a_file(path)) is not None:  # not "not decoded yet": never left out silently
            raise SumpipeError(f"{path}: is {kind}, not a Parquet file of outputs ({rerun})")
        else:
            skipped.append(name)

    for name in model_names:  # the decode stage's `prediction`
        add(name, Path(paths.predictions) / name / f"{split}.parquet", "prediction",
            f"run `sumpipe decode --model {name}` again")
    systems[f"lead{k}"] = lead
    for name in baselines:  # the extract stage's selected `source`
        add(name, Path(paths.extracted) / name / f"{split}.parquet", "source", "run `sumpipe extract` again")
    return systems, skipped


def score_systems(systems: dict[str, pd.DataFrame], use_stemmer: bool) -> dict[str, pd.DataFrame]:
    """Per-example scores of each system: id, prediction and `<type>_<precision|recall|fmeasure>`."""
    scorer = FastRouge(ROUGE_TYPES, use_stemmer)  # one engine for every system
    out = {}
    for name, df in systems.items():
        refs = [r[0] if len(r) == 1 else r for r in df["references"]]
        scores = score_pairs(df["prediction"].tolist(), refs, scorer=scorer)
        out[name] = pd.concat([df[["id", "prediction"]].reset_index(drop=True), scores], axis=1)
    return out


def abstractiveness_of(paths: PathsConfig, systems: dict[str, pd.DataFrame], split: str) -> dict[str, dict]:
    """Per system: novel n-grams, repeated 3-grams, length, compression, mean p_gen (`abstractiveness`)."""
    processed = read_parquet(Path(paths.processed) / f"{split}.parquet", contract=PROCESSED)
    sources = dict(zip(processed["id"], processed["source"].fillna("")))
    return {name: abstractiveness(df["prediction"].tolist(), [sources.get(i, "") for i in df["id"]],
                                  df["p_gen"] if "p_gen" in df.columns else None)
            for name, df in systems.items()}


def rare_words_of(paths: PathsConfig, cfg: EvaluateConfig, systems: dict[str, pd.DataFrame]) -> dict[str, dict]:
    """Per system: rare-word recall x 100 with its bootstrap interval (`sumpipe.evaluate.rare_words`)."""
    words = read_parquet(Path(paths.vocab) / WORDS_FILE)
    counts = dict(zip(words["token"], words["count"].astype(int)))
    out = {}
    for name, df in systems.items():
        references = [" ".join(refs) for refs in df["references"]]  # several references: their rare words pooled
        recall = rare_word_recall(df["prediction"].tolist(), references, counts, cfg.rare_word_max_count)
        scored = recall[~np.isnan(recall)]
        if scored.size == 0:
            continue
        interval = confidence_intervals(scored, cfg.bootstrap_samples, cfg.confidence, cfg.seed)[0]
        out[name] = {"recall": round(100 * interval.mean, 2), "recall_low": round(100 * interval.low, 2),
                     "recall_high": round(100 * interval.high, 2), "n": int(scored.size)}
    return out


def run_evaluate(paths: PathsConfig, cfg: EvaluateConfig, model_names: list[str], baselines: list[str],
                 split: str = SPLIT) -> EvaluationResult:
    """Score every system on `split` (the models and extractive systems by name, Lead-k, the
    `baselines` selections by name), write per-example scores, the summary, `rouge.json` and
    `abstractiveness.json`. Systems whose outputs carry a true `reads_reference` column (the extractive
    oracle) are listed as such in the summary."""
    systems, skipped = collect_systems(paths, cfg, model_names, baselines, split)
    setup = setup_of(cfg)
    scores = score_systems(systems, cfg.use_stemmer)

    scores_dir = Path(paths.scores)
    summaries = {}
    for name, df in scores.items():
        write_parquet(df, scores_dir / f"{name}.parquet")
        summaries[name] = summarize(df, setup)

    lead = f"lead{cfg.lead_sentences}"
    baselines = [b for b in (lead, REFERENCE_MODEL) if b in scores]
    comparisons = {
        name: {f"vs_{base}": compare(scores[name], scores[base], setup) for base in baselines if base != name}
        for name in scores
    }
    abstractive = abstractiveness_of(paths, systems, split)
    rare = rare_words_of(paths, cfg, systems)
    lengths = np.array([len(refs[0].split()) for refs in systems[f"lead{cfg.lead_sentences}"]["references"]])
    band = {"p10": float(np.percentile(lengths, 10)), "p90": float(np.percentile(lengths, 90)),
            "mean": round(float(lengths.mean()), 2)}
    # JSON keys are written sorted; `order` keeps the report's row order (models, then baselines).
    write_json({"split": split, "config": setup.as_dict(), "order": list(summaries), "systems": summaries,
                "comparisons": comparisons, "baselines": [b for b in summaries if b not in model_names],
                "reads_reference": [n for n, df in systems.items()
                                    if "reads_reference" in df.columns and bool(df["reads_reference"].any())],
                "abstractiveness": abstractive, "reference_length": band, "rare_words": rare,
                "rare_word_max_count": cfg.rare_word_max_count, "left_out": skipped}, scores_dir / "summary.json")
    write_json(summaries, Path(paths.metrics) / "rouge.json")
    write_json(abstractive, Path(paths.metrics) / "abstractiveness.json")
    write_json(rare, Path(paths.metrics) / "rare_words.json")
    return EvaluationResult(summaries=summaries, comparisons=comparisons, skipped=skipped)
