"""The DVC `evaluate` stage: ROUGE of every trained model, each over its training seeds, and of the
extractive systems and baselines.

Systems, all on the test split (the split the predict stage summarised, `decode.split`):
- each model in params `models:`, every seed of `train.seeds` whose
  `predictions/<model>/seed-<s>/test.parquet` exists (`sumpipe decode --model M --train-seed S`);
- each ensemble of params `ensembles:` (a model's seeds decoded as one, `predictions/<name>/test.parquet`
  of `sumpipe decode --model NAME`): one system, scored like a deterministic one (one "seed"), compared with
  its model and the baselines (`sumpipe.evaluate.pairs.ensemble_pairs`), never a baseline itself;
- each extractive system of `extractive.systems` (`predictions/<system>/test.parquet`);
- `lead<k>`: the first `evaluate.lead_sentences` sentences of the preprocessed source (§5.4.1);
- `prefix<B>` for each B of `evaluate.prefix_bytes`: the first B bytes of the preprocessed source (Rush et
  al. 2015's "prefix" headline baseline, 75 bytes);
- every extract selection whose method is a baseline (`sumpipe.selection.methods`; today `first<N>`,
  the first N tokens), as written by the extract stage.

Every system is scored under `evaluate.protocol` (`sumpipe.config.ScoringProtocol`): each summary cut to
`max_bytes` first when set (what is stored and scored, rare words and abstractiveness included), several
references combined best-of or averaged, and the comparisons made on its `measure` (F1, or recall).

A model's figure is the mean over its seeds (and its examples), shown with the standard deviation over
the seeds' means and every seed's value; its interval and every comparison are the two-level bootstrap
of `sumpipe.evaluate.bootstrap` (seeds, then documents), so a difference is reported against the noise
of training as well as that of the test set. Deterministic systems are one "seed".

Outputs:
- `${paths.scores}/<system>.parquet`: id, (seed,) prediction and per-example P/R/F1 (fractions) of
  ROUGE-1, -2, -L, -Lsum, one row per example and seed;
- `${paths.scores}/summary.json`: the scoring set-up, per-system summaries, the comparisons of
  `sumpipe.evaluate.pairs` (difference, interval, p), abstractiveness and rare-word figures (read by
  `report`);
- `${paths.metrics}/headline.json`: each model's R-1, the only DVC metrics (`sumpipe.evaluate.headline`),
  and `${paths.metrics}/figures.json`: the headline figures in full (R-1 with its interval, R-2, R-L and
  rare-word recall per model, the lead's R-1, each training run's best validation loss from
  `${paths.models}/<model>/seed-<s>/train_log.csv`); it and the files below are plain outputs, in git;
- `${paths.metrics}/rouge.json`: `{"<system>": {"rouge1": F1 x 100, "rouge1_sd", "<type>_low",
  "<type>_high", "n", "n_seeds", "seeds": {"<seed>": {"rouge1": ..}}}}`
  (`_sd` and `seeds` for models trained with several seeds);
- `${paths.metrics}/comparisons.json`: the comparisons of `summary.json` keyed "A vs B" (difference,
  interval, p per ROUGE type), which the README's generated table carries;
- `${paths.metrics}/rare_words.json`: per system the mean share (x 100) of the reference's rare words
  that the summary contains, with its interval (`sumpipe.evaluate.rare_words`; word counts from
  `${paths.vocab}/words.parquet`), and the number of documents with a rare reference word; for a model
  or an ensemble also its `input` and `ceiling`, the recall of that input itself (what copying from it
  can reach); the comparisons of two systems carry the difference in rare-word recall
  (`rare_word_recall`: the same two-level bootstrap, so M2 - M1 is tested against the seeds' noise);
- `${paths.metrics}/copy_rate.json`: the share (x 100) of each system's summary tokens outside its output
  vocabulary, the first V words of `${paths.vocab}/vocab.parquet` (`sumpipe.evaluate.copy_rate`: a model's
  own V, the transformer's for every other system), models per seed with the mean and sd over seeds, and
  the references' own share against the same vocabulary as the anchor;
- `${paths.metrics}/abstractiveness.json`: per system novel n-grams, repetition, length, distinct and
  "twice" shares (`sumpipe.evaluate.abstractiveness`), for models the mean over seeds with `_sd` and
  every seed's figures;
- `${paths.metrics}/read_quality.json`: what a reader gets (`sumpipe.evaluate.read_quality`: fragments,
  sentences, repetition back to back and at a distance, unsupported words (stems), numbers and names):
  `{"references": {..}, "systems": {"<system>": {..}}}`, the references' own figures as the anchor of
  each, for models the mean over seeds with `_sd` and every seed's figures. Which words are names comes
  from the raw sources' spelling (`${paths.raw}/<split>.parquet`), and the names' dots from those of the
  train split's raw texts (`${paths.raw}/train.parquet`);
- with `decode.block_adjacent_repeat` on, `summary.json`'s `decoding_rule`: each model's figures with
  and without that decoding rule (the decode stage keeps both), so the rule's effect is never hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sumpipe.config import EvaluateConfig, ModelSpec, PathsConfig, ScoringProtocol
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.abstractiveness import abstractiveness
from sumpipe.evaluate.bootstrap import two_level_bootstrap
from sumpipe.evaluate.copy_rate import OutputVocabularies, copy_figures
from sumpipe.evaluate.headline import FIGURES_FILE, HEADLINE_FILE, dvc_headline, headline, valid_losses
from sumpipe.evaluate.pairs import Pair, baseline_pairs, ensemble_pairs, model_pairs
from sumpipe.evaluate.rare_words import rare_word_recall
from sumpipe.evaluate.read_quality import name_dots, read_quality
from sumpipe.evaluate.rouge import ROUGE_TYPES, FastRouge, MultiReference, cut_bytes, score_pairs
from sumpipe.evaluate.summary import ScoringSetup, compare_seeds, figure_key, summarize, summarize_seeds
from sumpipe.inputs import present_but_not_a_file
from sumpipe.io.atomic import open_parquet, read_parquet, write_json, write_parquet
from sumpipe.names import Seeds, seed_folder, seeds_for, without_rule_file
from sumpipe.schemas import EXTRACTED, PROCESSED, RAW, TEXT, Contract, references_of
from sumpipe.vocab.ngrams import WORDS_FILE
from sumpipe.vocab.vocabulary import VOCAB_FILE, Vocabulary

SPLIT = "test"
ONE_RUN = 0  # the "seed" of a deterministic system's one set of outputs

Runs = dict[int, pd.DataFrame]  # {seed: one run's outputs or scores}


@dataclass
class EvaluationResult:
    summaries: dict[str, dict]
    comparisons: list[dict]
    skipped: list[str] = field(default_factory=list)


def lead_sentences(source: str, k: int) -> str:
    """The first k sentences of a preprocessed source (sentences are separated by "\\n")."""
    return "\n".join(source.split("\n")[:k])


def source_prefix(source: str, size: int) -> str:
    """The first `size` bytes of a preprocessed source (Rush et al. 2015's prefix baseline)."""
    return cut_bytes(source, size)


def setup_of(cfg: EvaluateConfig, protocol: ScoringProtocol | None = None) -> ScoringSetup:
    """The scoring set-up of `cfg` under `protocol` (default: `cfg.protocol`; crosseval gives its own)."""
    protocol = protocol or cfg.protocol
    return ScoringSetup(use_stemmer=cfg.use_stemmer, bootstrap_samples=cfg.bootstrap_samples,
                        confidence=cfg.confidence, seed=cfg.seed, max_bytes=protocol.max_bytes,
                        references=protocol.references, measure=protocol.measure)


def cut_systems(systems: dict[str, Runs], max_bytes: int | None) -> dict[str, Runs]:
    """Every run's predictions cut to `max_bytes` (the protocol's byte limit; None: unchanged)."""
    if max_bytes is None:
        return systems
    return {name: {seed: df.assign(prediction=[cut_bytes(p, max_bytes) for p in df["prediction"]])
                   for seed, df in runs.items()} for name, runs in systems.items()}


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


def collect_systems(paths: PathsConfig, cfg: EvaluateConfig, models: list[str], seeds: Seeds,
                    extractive: list[str], baselines: list[str],
                    split: str = SPLIT, ensembles: Sequence[str] = ()) -> tuple[dict[str, Runs], list[str]]:
    """{system: {seed: DataFrame(id, prediction, references)}} in report order (models, ensembles, Lead-k,
    the byte prefixes, the extractive systems, the baseline selections), and the systems or seeds left out
    (no outputs)."""
    where = f"{paths.processed}/{split}.parquet"
    processed = read_parquet(Path(where), contract=PROCESSED)
    if processed.empty:
        raise SumpipeError(f"{where} has no examples")
    processed = processed.assign(references=references_of(processed))
    refs_by_id = dict(zip(processed["id"], processed["references"]))
    k = cfg.lead_sentences
    lead = pd.DataFrame({"id": processed["id"], "prediction": [lead_sentences(s, k) for s in processed["source"]],
                         "references": processed["references"]})

    systems: dict[str, Runs] = {}
    skipped: list[str] = []

    def read(path: Path, column: str, rerun: str) -> pd.DataFrame | None:
        if path.is_file():
            return read_system(path, column, refs_by_id, where, rerun)
        if (kind := present_but_not_a_file(path)) is not None:  # not "not decoded yet": never left out silently
            raise SumpipeError(f"{path}: is {kind}, not a Parquet file of outputs ({rerun})")
        return None

    def one_run(name: str, path: Path, column: str, rerun: str) -> None:
        """System `name` from one file of outputs, or left out (said in `skipped`) when there is none."""
        run = read(path, column, rerun)
        if run is None:
            skipped.append(name)
        else:
            systems[name] = {ONE_RUN: run}

    for name in models:  # the decode stage's `prediction`, one file per seed
        runs = {seed: read(Path(paths.predictions) / name / seed_folder(seed) / f"{split}.parquet", "prediction",
                           f"run `sumpipe decode --model {name} --train-seed {seed}` again")
                for seed in seeds_for(seeds, name)}
        skipped += [f"{name}/{seed_folder(seed)}" for seed, run in runs.items() if run is None]
        if any(run is not None for run in runs.values()):
            systems[name] = {seed: run for seed, run in runs.items() if run is not None}
    for name in ensembles:  # the decode-ensemble stage's `prediction`: one system
        one_run(name, Path(paths.predictions) / name / f"{split}.parquet", "prediction",
                f"run `sumpipe decode --model {name}` again")
    systems[f"lead{k}"] = {ONE_RUN: lead}
    for size in cfg.prefix_bytes:
        prefix = [source_prefix(s, size) for s in processed["source"]]
        systems[f"prefix{size}"] = {ONE_RUN: lead.assign(prediction=prefix)}
    for name in extractive:  # the extractive stage's `prediction`
        one_run(name, Path(paths.predictions) / name / f"{split}.parquet", "prediction",
                f"run `sumpipe extractive --system {name}` again")
    for name in baselines:  # the extract stage's selected `source`
        one_run(name, Path(paths.extracted) / name / f"{split}.parquet", "source", "run `sumpipe extract` again")
    return systems, skipped


def score_systems(systems: dict[str, Runs], use_stemmer: bool,
                  references: MultiReference = "best") -> dict[str, Runs]:
    """Per-example scores of each run: id, prediction and `<type>_<precision|recall|fmeasure>`, several
    references combined as `references` says (best, average)."""
    scorer = FastRouge(ROUGE_TYPES, use_stemmer, references)  # one engine for every system
    out: dict[str, Runs] = {}
    for name, runs in systems.items():
        out[name] = {}
        for seed, df in runs.items():
            refs = [r[0] if len(r) == 1 else r for r in df["references"]]
            scores = score_pairs(df["prediction"].tolist(), refs, scorer=scorer)
            out[name][seed] = pd.concat([df[["id", "prediction"]].reset_index(drop=True), scores], axis=1)
    return out


def scores_table(runs: Runs, seeded: bool) -> pd.DataFrame:
    """One system's per-example scores as one table: a `seed` column after `id` for a seeded model."""
    if not seeded:
        return runs[ONE_RUN]
    return pd.concat([df.assign(seed=seed) for seed, df in runs.items()], ignore_index=True)[
        ["id", "seed", *[c for c in runs[min(runs)].columns if c != "id"]]]


def per_seed(runs: Runs, figures, seeded: bool) -> dict:
    """`figures(run)` (a dict of numbers) for a deterministic system, else over its seeds: the mean of
    each figure, `<figure>_sd` over the seeds (two or more) and every seed's figures under "seeds"."""
    each = {seed: figures(df) for seed, df in runs.items()}
    if not seeded:
        return each[ONE_RUN]
    out: dict = {}
    for key in each[min(each)]:
        values = np.array([fig[key] for fig in each.values() if key in fig], dtype=np.float64)
        out[key] = round(float(values.mean()), 2)
        if len(values) > 1:
            out[f"{key}_sd"] = round(float(values.std(ddof=1)), 2)
    out["n_seeds"] = len(each)
    out["seeds"] = {str(seed): fig for seed, fig in each.items()}
    return out


def abstractiveness_of(paths: PathsConfig, systems: dict[str, Runs], models: list[str], split: str) -> dict[str, dict]:
    """Per system: novel n-grams, repeated 3-grams, length, compression, mean p_gen (`abstractiveness`)."""
    processed = read_parquet(Path(paths.processed) / f"{split}.parquet", contract=PROCESSED)
    sources = dict(zip(processed["id"], processed["source"].fillna("")))

    def figures(df: pd.DataFrame) -> dict:
        return abstractiveness(df["prediction"].tolist(), [sources.get(i, "") for i in df["id"]],
                               df["p_gen"] if "p_gen" in df.columns else None)

    return {name: per_seed(runs, figures, name in models) for name, runs in systems.items()}


def raw_texts_of(paths: PathsConfig, split: str) -> dict[str, tuple[str, str]]:
    """{id: (raw source, raw reference)} of `split` as downloaded (cased: read quality's names and the
    dots of names), bytes decoded."""
    raw = read_parquet(Path(paths.raw) / f"{split}.parquet", contract=RAW)

    def text(value: Any) -> str:
        return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else (value or "")

    firsts = [refs[0] if len(refs) else "" for refs in references_of(raw)]
    return {str(i): (text(s), text(r)) for i, s, r in zip(raw["id"], raw["source"], firsts)}


def corpus_name_dots(paths: PathsConfig) -> frozenset[tuple[str, str]]:
    """The names' dots of the train split's raw texts ("torch.nn.Module": `read_quality.NameDots`), so a
    name a model learnt there is no fragment in a summary of a text that does not write it."""
    return name_dots("\n".join(f"{source}\n{reference}" for source, reference in raw_texts_of(paths, "train").values()))


def read_quality_of(paths: PathsConfig, cfg: EvaluateConfig, systems: dict[str, Runs], models: list[str],
                    split: str) -> dict[str, Any]:
    """What a reader gets (`sumpipe.evaluate.read_quality`), per system (models: per seed and the mean
    and sd over seeds) and for the references themselves (the anchor: each example's first reference,
    whose own raw text also tells its names' dots from sentence ends)."""
    processed = read_parquet(Path(paths.processed) / f"{split}.parquet", contract=PROCESSED)
    sources = dict(zip(processed["id"], processed["source"].fillna("")))
    raw = raw_texts_of(paths, split)
    missing = [i for i in processed["id"] if i not in raw]
    if missing:
        raise SumpipeError(f"{paths.raw}/{split}.parquet: no raw source for {len(missing)} example(s) of "
                           f"{paths.processed}/{split}.parquet, e.g. {missing[0]!r} (run `sumpipe preprocess` again)")
    corpus = corpus_name_dots(paths)

    def figures(df: pd.DataFrame, with_raw_references: bool = False) -> dict:
        ids = list(df["id"])
        return read_quality(df["prediction"].tolist(), [sources[i] for i in ids],
                            [refs[0] for refs in df["references"]], [raw[i][0] for i in ids],
                            [raw[i][1] for i in ids] if with_raw_references else None, corpus)

    anchor = systems[f"lead{cfg.lead_sentences}"][ONE_RUN]  # every example of the split, its references
    return {"references": figures(anchor.assign(prediction=[refs[0] for refs in anchor["references"]]), True),
            "systems": {name: per_seed(runs, figures, name in models) for name, runs in systems.items()}}


def _no_nan(value: Any) -> Any:
    """`value` with every NaN (a rate over no token, e.g. of empty summaries) as None: JSON has no NaN."""
    if isinstance(value, dict):
        return {key: _no_nan(v) for key, v in value.items()}
    return None if isinstance(value, float) and value != value else value


def train_word_counts(paths: PathsConfig) -> dict[str, int]:
    """Every training word's count (the vocab stage's words.parquet): which reference words are rare."""
    words = read_parquet(Path(paths.vocab) / WORDS_FILE)
    return dict(zip(words["token"], words["count"].astype(int)))


RareTables = dict[str, pd.DataFrame]  # {system: recall x 100, documents with a rare reference word x seeds}


def rare_words_of(paths: PathsConfig, cfg: EvaluateConfig, systems: dict[str, Runs], models: list[str],
                  inputs: Mapping[str, str] | None = None, split: str = SPLIT) -> tuple[dict[str, dict], RareTables]:
    """Per system: rare-word recall x 100 with its interval (`sumpipe.evaluate.rare_words`), over the
    documents whose reference has a rare word (the same documents for every seed), and the per-document,
    per-seed tables behind them (indexed by id, in the first run's order: `rare_word_differences`).
    A system of `inputs` ({model or ensemble: the selection it reads}) gets its `ceiling` beside: the
    recall of that input itself (`${paths.extracted}/<input>/<split>.parquet`'s text), all a copy can reach."""
    counts = train_word_counts(paths)
    inputs = inputs or {}

    def recall(texts: list[str], references: pd.Series) -> np.ndarray:
        pooled = [" ".join(refs) for refs in references]  # several references: rare words pooled
        return rare_word_recall(texts, pooled, counts, cfg.rare_word_max_count)

    out: dict[str, dict[str, Any]] = {}
    tables: RareTables = {}
    ceilings: dict[str, float] = {}
    for name, runs in systems.items():
        first = runs[min(runs)]
        ids = list(first["id"])
        columns = {seed: pd.Series(recall(df["prediction"].tolist(), df["references"]), index=df["id"]).reindex(ids)
                   for seed, df in runs.items()}
        frame = pd.DataFrame(columns).dropna(axis=0, how="all") * 100.0  # rows: documents with a rare word
        if frame.empty:
            continue
        tables[name] = frame
        table = frame.to_numpy().T  # (seeds, documents)
        test = two_level_bootstrap(table, np.zeros((1, table.shape[1])), cfg.bootstrap_samples, cfg.confidence,
                                   cfg.seed)
        out[name] = {"recall": round(float(table.mean()), 2), "recall_low": round(test.low, 2),
                     "recall_high": round(test.high, 2), "n": int(table.shape[1])}
        if name in models:
            out[name]["n_seeds"] = len(runs)
            if len(runs) > 1:
                out[name]["recall_sd"] = round(float(table.mean(axis=1).std(ddof=1)), 2)
            out[name]["seeds"] = {str(seed): round(float(v), 2) for seed, v in zip(runs, table.mean(axis=1))}
        if name in inputs:
            selection = inputs[name]
            if selection not in ceilings:
                ceilings[selection] = _input_recall(paths, selection, split, first, recall)
            out[name] |= {"input": selection, "ceiling": ceilings[selection]}
    return out, tables


def _input_recall(paths: PathsConfig, selection: str, split: str, run: pd.DataFrame,
                  recall: Callable[[list[str], pd.Series], np.ndarray]) -> float:
    """Mean rare-word recall x 100 of the `selection` a model reads, on the documents of `run` that have a
    rare reference word: the ceiling of a model that copies from that input alone."""
    path = Path(paths.extracted) / selection / f"{split}.parquet"
    extracted = read_parquet(path, contract=EXTRACTED)
    texts = dict(zip(extracted["id"], extracted["source"].fillna("")))
    missing = [i for i in run["id"] if i not in texts]
    if missing:
        raise SumpipeError(f"{path}: no input for {len(missing)} example(s) the models summarised, e.g. "
                           f"{missing[0]!r} (run `sumpipe extract` again)")
    values = recall([texts[i] for i in run["id"]], run["references"])
    return round(float(np.nanmean(values) * 100.0), 2)


def rare_word_differences(comparisons: list[dict], tables: RareTables, cfg: EvaluateConfig) -> None:
    """Add to each comparison of two systems with rare-word tables its `rare_word_recall`: A - B in
    recall x 100 with the two-level bootstrap (seeds, then documents: `two_level_bootstrap`, as the ROUGE
    comparisons), its interval and two-sided p, on the documents with a rare reference word."""
    for comparison in comparisons:
        a, b = tables.get(comparison["a"]), tables.get(comparison["b"])
        if a is None or b is None:
            continue
        test = two_level_bootstrap(a.to_numpy().T, b.reindex(a.index).to_numpy().T, cfg.bootstrap_samples,
                                   cfg.confidence, cfg.seed)
        comparison["rare_word_recall"] = {"delta": round(test.delta, 4), "low": round(test.low, 4),
                                          "high": round(test.high, 4), "p_value": round(test.p_value, 4)}


def copy_rates_of(paths: PathsConfig, systems: dict[str, Runs], models: list[str], ensembles: Mapping[str, str],
                  sizes: OutputVocabularies, anchor_run: pd.DataFrame, split: str) -> dict[str, Any]:
    """The copy rate of every system and the share of those tokens its source holds
    (`sumpipe.evaluate.copy_rate`; models: per seed, the mean and sd over seeds), and the same of the
    references of `anchor_run` (every example of the split, each of its references), the anchor, against
    the same output vocabulary: `{"references": {"copy_rate", "in_source", "vocab_size"}, "systems":
    {"<system>": {"copy_rate", "in_source", ..., "vocab_size", "own_vocabulary", "references_copy_rate"}}}`;
    a figure with nothing to count is null."""
    itos = Vocabulary.load(Path(paths.vocab) / VOCAB_FILE).itos
    processed = read_parquet(Path(paths.processed) / f"{split}.parquet", contract=PROCESSED)
    sources = dict(zip(processed["id"], processed["source"].fillna("")))
    ids = [i for i, refs in zip(anchor_run["id"], anchor_run["references"]) for _ in refs]  # one per reference
    references = [reference for refs in anchor_run["references"] for reference in refs]
    their_sources = [sources[i] for i in ids]

    def figures(texts: Sequence[str], texts_sources: Sequence[str], size: int) -> dict[str, float]:
        return {key: round(value, 2)
                for key, value in copy_figures(texts, texts_sources, frozenset(itos[:size])).items()}

    def row(name: str, runs: Runs) -> dict[str, Any]:
        model = ensembles.get(name, name if name in models else None)  # an ensemble: its model's vocabulary
        size, own = sizes.size_of(model)
        each = per_seed(runs, lambda df: figures(list(df["prediction"]), [sources[i] for i in df["id"]], size),
                        name in models)
        return {**each, "vocab_size": min(size, len(itos)), "own_vocabulary": own,
                "references_copy_rate": figures(references, their_sources, size)["copy_rate"]}

    anchor = {**figures(references, their_sources, sizes.shared), "vocab_size": min(sizes.shared, len(itos))}
    return _no_nan({"references": anchor, "systems": {name: row(name, runs) for name, runs in systems.items()}})


def decoding_rule_of(paths: PathsConfig, systems: dict[str, Runs], scores: dict[str, Runs], models: list[str],
                     split: str, setup: ScoringSetup) -> dict[str, dict]:
    """Per model whose every seed has summaries decoded without `decode.block_adjacent_repeat` (the
    decode stage's `without_rule_file`): R-1/2/L, words repeated back to back, distinct summaries and
    length in words with the rule ("with": the model's own predictions) and without it, each the mean
    over seeds, and the seed-aware difference with - without (`compare_seeds`)."""
    out = {}
    for name in models:
        if name not in systems:
            continue
        runs = systems[name]
        files = {seed: Path(paths.predictions) / name / seed_folder(seed) / without_rule_file(split) for seed in runs}
        if not all(path.is_file() for path in files.values()):
            continue
        refs_by_id = dict(zip(runs[min(runs)]["id"], runs[min(runs)]["references"]))
        where = f"{paths.processed}/{split}.parquet"
        without = {seed: read_system(path, "prediction", refs_by_id, where,
                                     f"run `sumpipe decode --model {name} --train-seed {seed}` again")
                   for seed, path in files.items()}
        without = cut_systems({name: without}, setup.max_bytes)[name]  # scored as the models are
        scored = score_systems({name: without}, setup.use_stemmer, setup.references)[name]
        out[name] = {"with": _rule_figures(runs, scores[name]), "without": _rule_figures(without, scored),
                     "n_seeds": len(runs), **compare_seeds(scores[name], scored, setup)}
    return out


def _rule_figures(runs: Runs, scored: Runs) -> dict[str, float]:
    """Mean over seeds of R-1/2/L (F1 x 100) and the degeneracy figures of `abstractiveness`."""
    each = []
    for seed, df in runs.items():
        figures = abstractiveness(df["prediction"].tolist(), [""] * len(df))
        each.append({**{t: 100 * float(scored[seed][f"{t}_fmeasure"].mean()) for t in ("rouge1", "rouge2", "rougeL")},
                     **{k: figures[k] for k in ("adjacent_repeat", "distinct", "mean_words")}})
    return {key: round(float(np.mean([fig[key] for fig in each])), 2) for key in each[0]}


def best_extractive(summaries: dict[str, dict], candidates: list[str], reads_reference: list[str],
                    measure: str = "fmeasure") -> str | None:
    """The extractive system (or baseline) with the highest mean ROUGE-1 (`measure`: F1 or recall), of
    those that do not read the reference."""
    fair = [name for name in candidates if name in summaries and name not in reads_reference]
    return max(fair, key=lambda name: summaries[name][figure_key("rouge1", measure)]) if fair else None


def comparisons_of(pairs: list[Pair], scores: dict[str, Runs], setup: ScoringSetup) -> list[dict]:
    """Each pair's seed-aware comparison (`compare_seeds`), for the pairs whose systems were scored."""
    return [{"a": pair.a, "b": pair.b, "what": pair.what, **compare_seeds(scores[pair.a], scores[pair.b], setup)}
            for pair in pairs if pair.a in scores and pair.b in scores]


def run_evaluate(paths: PathsConfig, cfg: EvaluateConfig, models: Mapping[str, ModelSpec], seeds: Seeds,
                 extractive: list[str], baselines: list[str], split: str = SPLIT,
                 ensembles: Mapping[str, str] | None = None,
                 vocab_sizes: OutputVocabularies | None = None) -> EvaluationResult:
    """Score every system on `split` (the models over `seeds`, the `ensembles` ({name: its model}), the
    extractive systems, Lead-k and the `baselines` selections), write per-example scores, the summary and
    the metrics (module docstring); with `vocab_sizes` (`sumpipe.evaluate.copy_rate.output_vocabularies`)
    also every system's copy rate against those output vocabularies.
    Systems whose outputs carry a true `reads_reference` column (the extractive oracle) are listed as
    such in the summary and never taken for the best extractive system."""
    model_names = list(models)
    ensembles = dict(ensembles or {})
    processed, raw = Path(paths.processed), Path(paths.raw)
    # the split, then read quality's inputs (the cased raw sources and the train split's, whose names' dots
    # end no sentence), before any work
    for path, contract in ((processed / f"{split}.parquet", PROCESSED), (raw / f"{split}.parquet", RAW),
                           (raw / "train.parquet", RAW)):
        open_parquet(path, contract)
    if vocab_sizes is not None:  # the copy rate's vocabulary
        Vocabulary.load(Path(paths.vocab) / VOCAB_FILE)
    systems, skipped = collect_systems(paths, cfg, model_names, seeds, extractive, baselines, split, list(ensembles))
    systems = cut_systems(systems, cfg.protocol.max_bytes)
    setup = setup_of(cfg)
    scores = score_systems(systems, cfg.use_stemmer, cfg.protocol.references)

    scores_dir = Path(paths.scores)
    summaries = {}
    for name, runs in scores.items():
        seeded = name in models
        write_parquet(scores_table(runs, seeded), scores_dir / f"{name}.parquet")
        summaries[name] = summarize_seeds(runs, setup) if seeded else summarize(runs[ONE_RUN], setup)

    lead = f"lead{cfg.lead_sentences}"
    reads_reference = [n for n, runs in systems.items()
                       if any("reads_reference" in df.columns and bool(df["reads_reference"].any())
                              for df in runs.values())]
    others = [name for name in summaries if name not in models and name not in ensembles]
    best = best_extractive(summaries, others, reads_reference, cfg.protocol.measure)
    scored_models = [name for name in model_names if name in scores]
    prefixes = [f"prefix{b}" for b in cfg.prefix_bytes]
    pairs = model_pairs(models) + baseline_pairs(scored_models, lead, best, prefixes)
    pairs += ensemble_pairs({name: model for name, model in ensembles.items() if name in scores}, lead, best, prefixes)
    comparisons = comparisons_of(pairs, scores, setup)
    abstractive = abstractiveness_of(paths, systems, model_names, split)
    reading = read_quality_of(paths, cfg, systems, model_names, split)
    inputs = {name: spec.input for name, spec in models.items()}
    inputs |= {name: inputs[model] for name, model in ensembles.items() if model in inputs}  # its model's input
    rare, rare_tables = rare_words_of(paths, cfg, systems, model_names, inputs, split)
    rare_word_differences(comparisons, rare_tables, cfg)
    copying = None
    if vocab_sizes is not None:
        anchor = systems[lead][ONE_RUN]  # every example of the split, with its references
        copying = copy_rates_of(paths, systems, model_names, ensembles, vocab_sizes, anchor, split)
    rule = decoding_rule_of(paths, systems, scores, model_names, split, setup)
    lengths = np.array([len(refs[0].split()) for refs in systems[lead][ONE_RUN]["references"]])
    band = {"p10": float(np.percentile(lengths, 10)), "p90": float(np.percentile(lengths, 90)),
            "mean": round(float(lengths.mean()), 2)}
    # JSON keys are written sorted; `order` keeps the report's row order (models, then baselines).
    write_json({"split": split, "config": setup.as_dict(), "order": list(summaries), "systems": summaries,
                "comparisons": comparisons, "baselines": others, "best_extractive": best, "lead": lead,
                "reads_reference": reads_reference, "seeds": {name: seeds_for(seeds, name) for name in model_names},
                "ensembles": ensembles,
                "abstractiveness": abstractive, "read_quality": reading, "reference_length": band, "rare_words": rare,
                "decoding_rule": rule, "copy_rate": copying,
                "rare_word_max_count": cfg.rare_word_max_count, "left_out": skipped}, scores_dir / "summary.json")
    write_json(summaries, Path(paths.metrics) / "rouge.json")
    write_json({f"{c['a']} vs {c['b']}": c for c in comparisons}, Path(paths.metrics) / "comparisons.json")
    write_json(abstractive, Path(paths.metrics) / "abstractiveness.json")
    write_json(reading, Path(paths.metrics) / "read_quality.json")
    write_json(rare, Path(paths.metrics) / "rare_words.json")
    if copying is not None:
        write_json(copying, Path(paths.metrics) / "copy_rate.json")
    figures = headline(summaries, rare, model_names, lead, valid_losses(Path(paths.models), model_names, seeds))
    write_json(figures, Path(paths.metrics) / FIGURES_FILE, sort_keys=False)
    write_json(dvc_headline(figures, model_names), Path(paths.metrics) / HEADLINE_FILE, sort_keys=False)
    return EvaluationResult(summaries=summaries, comparisons=comparisons, skipped=skipped)
