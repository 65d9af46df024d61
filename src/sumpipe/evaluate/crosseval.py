"""The DVC `crosseval` stage: trained models tested on another corpus (Morozovskii 2022 Table 5.22).

The thesis trains on CNN/DM, XSum or Gigaword and tests every model on DUC 2004 task 1 (four
references per document). Here `crosseval.data` names the other corpus exactly as the `data:`
section does and is read with the download stage's loaders; each source then goes through what
the model's own training data went through (`sumpipe.decode.batches.prepare_raw`: preprocessing, and the
model's input selection with the training n-gram table), is decoded with the `decode:` parameters,
and is scored against every reference, preprocessed the same way, under `crosseval.protocol`
(`sumpipe.config.ScoringProtocol`): by default the best reference per ROUGE type (as rouge-score's
`score_multi`); the DUC protocol cuts every summary, baselines included, to its first 75 bytes and
averages recall over the four references (ROUGE-1.5.5 `-b 75 -f A`), F1 beside it.

Beside ROUGE, each model's summaries of this unseen text are checked for degeneracy: % distinct
summaries, % with a word repeated back to back and mean length (`sumpipe.evaluate.abstractiveness`),
next to the corpus's reference lengths (10th-90th percentile) and its Lead-3 baseline; and every
system gets the thesis's measure, rare-word recall x 100 (`sumpipe.evaluate.rare_words`: the references'
content words seen at most `evaluate.rare_word_max_count` times in the training split, the vocab
stage's words.parquet; several references pooled, as the evaluate stage pools them), on the text the
protocol scores (the first `max_bytes` bytes under DUC's).

Every seed of `train.seeds` of each model is tested; a model's figures are the mean over its seeds
(sd and every seed's value beside it, as in the evaluate stage). Each ensemble of `crosseval.ensembles`
(names of params `ensembles:`, none by default) is its model's seeds decoded as one summarizer
(`sumpipe.decode.ensemble`, as the predict stage decodes it, with this corpus's `decode`, so a length
budget reaches every member when they were trained with length control): one system, scored as one "seed"
(as the evaluate stage scores ensembles), compared with its model (when tested too) and the baselines.
Baselines: the one-sentence lead, Lead-k (`evaluate.lead_sentences`) and the byte prefixes of
`evaluate.prefix_bytes` (Rush et al. 2015's 75-byte prefix). Comparisons, seed-aware as the evaluate
stage's (`sumpipe.evaluate.pairs`): M2 against M1 and a hybrid against its base among the tested models,
and every model and ensemble against each baseline, on the protocol's measure.

Outputs: `${paths.crosseval}/<model or ensemble>.parquet` (id, source, seed, prediction, references,
per-example scores; an ensemble's seed is 0, `ONE_RUN`), `${paths.crosseval}/summary.json` (set-up,
per-model means with intervals, degeneracy; `ensembles`, each one's model and seeds, only when some are
tested) and `${paths.metrics}/crosseval.json` for `dvc metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sumpipe.config import CrossEvalConfig, DecodeConfig, EvaluateConfig, ModelSpec, PathsConfig
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.abstractiveness import abstractiveness
from sumpipe.evaluate.pairs import Pair, baseline_pairs, ensemble_pairs, model_pairs
from sumpipe.evaluate.rare_words import rare_word_recall
from sumpipe.evaluate.rouge import ROUGE_TYPES, FastRouge, cut_bytes, multi_reference_note, score_pairs
from sumpipe.evaluate.stage import (
    ONE_RUN,
    best_extractive,
    comparisons_of,
    lead_sentences,
    setup_of,
    source_prefix,
    train_word_counts,
)
from sumpipe.evaluate.summary import summarize, summarize_seeds
from sumpipe.io.atomic import write_json, write_parquet
from sumpipe.names import Seeds, folder_seed, seed_folder, seeds_for
from sumpipe.vocab.ngrams import WORDS_FILE


def load_corpus(cfg: CrossEvalConfig) -> pd.DataFrame:
    """id, source, references (list) of the configured corpus and split, capped to max_examples."""
    from sumpipe.data.download import cap_examples, load_examples
    from sumpipe.data.split import stable_split

    rows, _ = load_examples(cfg.data, "crosseval.data")
    if cfg.split != "all":
        rows = [r for r in rows if (r.get("split") or stable_split(r["id"], cfg.data.split_ratios)) == cfg.split]
    rows = cap_examples(rows, cfg.max_examples)
    if not rows:
        raise SumpipeError(f"crosseval: {cfg.name} has no examples in split {cfg.split!r}")
    return pd.DataFrame({
        "id": [r["id"] for r in rows],
        "source": [r["source"] for r in rows],
        "references": [list(r.get("references") or [r["reference"]]) for r in rows],
    })


def decode_corpus(model_dir: Path | Sequence[Path], sources: list[str], vocab_dir: str,
                  decode_cfg: DecodeConfig) -> list[str]:
    """The model's summary of each raw source ("" where preprocessing leaves no words), decoded on
    the device `decode.device` asks for; `model_dir` a list of seed folders: those decoded as one ensemble
    (`sumpipe.decode.ensemble.load_ensemble`, the first member's card: the members share input and arch)."""
    from sumpipe.decode import batches
    from sumpipe.device import resolve_device

    device = resolve_device(decode_cfg.device, "decode.device")
    if isinstance(model_dir, Path):
        model, vocab, card = batches.load_model(model_dir, device=device)
    else:
        from sumpipe.decode.ensemble import load_ensemble

        model, vocab, card = load_ensemble(list(model_dir), device=device)
    docs = [batches.prepare_raw(s, card, vocab_dir=vocab_dir) for s in sources]
    keep = [i for i, d in enumerate(docs) if batches.has_words(d)]
    summaries = batches.summarize(model, vocab, card, [docs[i] for i in keep], batches.stage_config(decode_cfg, card))
    out = [""] * len(docs)
    for i, s in zip(keep, summaries):
        out[i] = s.text
    return out


def check_word_counts(paths: PathsConfig) -> None:
    """The vocab stage's words.parquet is there, before any decoding (rare-word recall reads it)."""
    words_file = Path(paths.vocab) / WORDS_FILE
    if not words_file.is_file():
        raise SumpipeError(f"{words_file}: no training word counts (rare-word recall needs them); "
                           "run `sumpipe vocab` first")


def rare_recall(predictions: list[str], references: list[list[str]], counts: Mapping[str, int],
                max_count: int) -> float | None:
    """Rare-word recall x 100 over the documents whose references (pooled) hold a rare word; None where
    none does."""
    recall = rare_word_recall(predictions, [" ".join(refs) for refs in references], counts, max_count)
    return None if np.isnan(recall).all() else round(100 * float(np.nanmean(recall)), 2)


def degeneracy(summaries: list[str]) -> dict[str, float]:
    """% distinct summaries, % with a word repeated back to back, mean length in tokens."""
    figures = abstractiveness(summaries, [""] * len(summaries))
    return {key: figures[key] for key in ("distinct", "adjacent_repeat", "mean_length")}


@dataclass(frozen=True)
class CrossEnsemble:
    """An ensemble the stage tests: `model`'s `seeds` decoded as one (params `ensembles:`)."""

    model: str
    seeds: list[int]


@dataclass
class CrossEvalResult:
    summaries: dict[str, dict]  # "<model> (<corpus>)" -> ROUGE means and intervals
    notes: list[str] = field(default_factory=list)  # what the command should tell the user
    comparisons: list[dict] = field(default_factory=list)  # seed-aware, on the protocol's measure


def crosseval_pairs(specs: Mapping[str, ModelSpec], label: dict[str, str], lead: str,
                    baselines: list[str]) -> list[Pair]:
    """The comparisons among the tested models (`sumpipe.evaluate.pairs`, by their table labels): rarity and
    selection pairs, and every model against Lead-k and each other baseline."""
    among = [Pair(label[p.a], label[p.b], p.what) for p in model_pairs(specs) if p.a in label and p.b in label]
    return among + baseline_pairs(list(label.values()), lead, None, baselines)


def run_crosseval(paths: PathsConfig, cfg: CrossEvalConfig, decode_cfg: DecodeConfig,
                  eval_cfg: EvaluateConfig, seeds: Seeds,
                  specs: Mapping[str, ModelSpec] | None = None,
                  ensembles: Mapping[str, CrossEnsemble] | None = None) -> CrossEvalResult:
    """Decode and score the corpus with every seed of every configured model and with each of `ensembles`
    (those of `cfg.ensembles`, resolved from params `ensembles:`); write outputs; return the summaries (a
    model's: the mean over its seeds, as the evaluate stage's; an ensemble's: its one run) and the comparisons
    (`specs`: the tested models' params entries, for M2-against-M1 and hybrid-against-base pairs)."""
    from sumpipe.text.preprocess import preprocess_text

    ensembles = dict(ensembles or {})
    unknown = [name for name in cfg.ensembles if name not in ensembles]
    if unknown:
        raise SumpipeError(f"crosseval.ensembles: {unknown[0]!r} is not an ensemble of params `ensembles:` "
                           f"(known: {', '.join(ensembles) or 'none'})")
    runs = {name: {seed: Path(paths.models) / name / seed_folder(seed) for seed in seeds_for(seeds, name)}
            for name in cfg.models}
    # an ensemble is one run of its members' folders (ONE_RUN: scored as one "seed")
    members = {name: [Path(paths.models) / ensembles[name].model / seed_folder(s) for s in ensembles[name].seeds]
               for name in cfg.ensembles}
    for name, folders in runs.items():
        missing = [seed for seed, folder in folders.items() if not folder.is_dir()]
        if missing:
            raise SumpipeError(f"crosseval.models: no trained model {name!r} seed {missing[0]} in "
                               f"{paths.models}/ (run `sumpipe train --model {name} --seed {missing[0]}`)")
    for name, seed_dirs in members.items():
        absent = [folder for folder in seed_dirs if not folder.is_dir()]
        if absent:
            raise SumpipeError(f"crosseval.ensembles: {name} needs the trained model {absent[0]} (run `sumpipe "
                               f"train --model {ensembles[name].model} --seed {folder_seed(absent[0].name)}`)")
    corpus = load_corpus(cfg)
    check_word_counts(paths)
    counts = train_word_counts(paths)
    references = [[preprocess_text(r) for r in refs] for refs in corpus["references"]]

    def rare(predictions: list[str]) -> float | None:
        return rare_recall(predictions, references, counts, eval_cfg.rare_word_max_count)

    protocol = cfg.protocol
    setup = setup_of(eval_cfg, protocol)
    scorer = FastRouge(ROUGE_TYPES, eval_cfg.use_stemmer, protocol.references)
    out_dir = Path(paths.crosseval)
    summaries = {}
    notes = []
    scored_runs: dict[str, dict[int, pd.DataFrame]] = {}  # label -> {seed: per-example scores}
    label = {name: f"{name} ({cfg.name})" for name in runs}
    tested: dict[str, Mapping[int, Path | list[Path]]] = {**runs, **{name: {ONE_RUN: seed_dirs}
                                                                      for name, seed_dirs in members.items()}}
    for name, decoders in tested.items():
        scored, frames, predicted = {}, [], {}
        for seed, folder in decoders.items():
            decoded = decode_corpus(folder, corpus["source"].tolist(), paths.vocab, decode_cfg)
            empty = sum(1 for p in decoded if not p)
            if empty:
                notes.append(f"{name} seed {seed}: {empty} sources had no words left after preprocessing (scored 0)")
            predictions = [cut_bytes(p, protocol.max_bytes) for p in decoded]
            scores = score_pairs(predictions, references, scorer=scorer)
            scored[seed] = pd.concat([corpus[["id"]].reset_index(drop=True), scores], axis=1)
            frames.append(pd.concat([corpus[["id", "source"]].reset_index(drop=True),
                                     pd.DataFrame({"seed": seed, "prediction": predictions, "references": references}),
                                     scores], axis=1))
            predicted[seed] = predictions
        write_parquet(pd.concat(frames, ignore_index=True), out_dir / f"{name}.parquet")
        system = f"{name} ({cfg.name})"
        if name in members:  # one run, as the evaluate stage's ensembles and baselines
            summaries[system] = {**summarize(scored[ONE_RUN], setup), **degeneracy(predicted[ONE_RUN]),
                                 "rare_word_recall": rare(predicted[ONE_RUN])}
        else:
            figures = summarize_seeds(scored, setup)
            summaries[system] = {**figures, **_mean_degeneracy(predicted),
                                 **_seed_rare_recall(figures["seeds"], {seed: rare(texts) for seed, texts in
                                                                        predicted.items()})}
        scored_runs[system] = scored
    sources = [preprocess_text(s) for s in corpus["source"]]
    baselines = {f"lead{k}": [lead_sentences(s, k) for s in sources]  # the one-sentence lead and Lead-k
                 for k in sorted({1, eval_cfg.lead_sentences})}
    baselines |= {f"prefix{size}": [source_prefix(s, size) for s in sources] for size in eval_cfg.prefix_bytes}
    for base, texts in baselines.items():
        cut = [cut_bytes(text, protocol.max_bytes) for text in texts]
        scores = pd.concat([corpus[["id"]].reset_index(drop=True), score_pairs(cut, references, scorer=scorer)],
                           axis=1)
        summaries[f"{base} ({cfg.name})"] = {**summarize(scores, setup), **degeneracy(cut),
                                             "rare_word_recall": rare(cut)}
        scored_runs[f"{base} ({cfg.name})"] = {ONE_RUN: scores}
    lead = f"lead{eval_cfg.lead_sentences} ({cfg.name})"
    named = [f"{base} ({cfg.name})" for base in baselines]
    best = best_extractive(summaries, named, [], protocol.measure)
    pairs = crosseval_pairs(specs or {}, label, lead, named)
    # each ensemble against its model's seeds (where that model is tested too) and against the baselines
    by_label = {f"{name} ({cfg.name})": f"{ensembles[name].model} ({cfg.name})" for name in members}
    pairs += ensemble_pairs(by_label, lead, None, named)  # comparisons_of skips a model not tested
    comparisons = comparisons_of(pairs, scored_runs, setup)
    n_refs = sorted({len(r) for r in references})
    note = (f"{'/'.join(map(str, n_refs))} reference(s) per example; with several, "
            f"{multi_reference_note(protocol.references)}")
    if protocol.max_bytes:
        note += f"; every summary cut to its first {protocol.max_bytes} bytes"
    lengths = [len(refs[0].split()) for refs in references]
    band = {"p10": float(np.percentile(lengths, 10)), "p90": float(np.percentile(lengths, 90))}
    # the ensembles' key only where some are tested: a run without them writes what it always wrote
    tested_ensembles = ({"ensembles": {name: {"model": ensembles[name].model, "seeds": ensembles[name].seeds}
                                       for name in members}} if members else {})
    write_json({"corpus": cfg.name, "split": cfg.split, "models": cfg.models, **tested_ensembles,
                "seeds": {name: seeds_for(seeds, name) for name in cfg.models},
                "config": setup.as_dict(), "measure": protocol.measure, "references_note": note + ".",
                "reference_length": band, "order": list(summaries), "systems": summaries,
                "comparisons": comparisons, "lead": lead, "best_baseline": best,
                "rare_word_max_count": eval_cfg.rare_word_max_count}, out_dir / "summary.json")
    write_json(summaries, Path(paths.metrics) / "crosseval.json")
    return CrossEvalResult(summaries, notes, comparisons)


def _seed_rare_recall(seeds: dict[str, dict], recall: dict[int, float | None]) -> dict[str, Any]:
    """A model's rare-word recall: the mean over its seeds, their sd (with 2 or more), and each seed's
    beside its ROUGE in `seeds`."""
    for seed, value in recall.items():
        seeds[str(seed)]["rare_word_recall"] = value
    values = [v for v in recall.values() if v is not None]
    out: dict[str, Any] = {"rare_word_recall": round(float(np.mean(values)), 2) if values else None, "seeds": seeds}
    if len(values) > 1:
        out["rare_word_recall_sd"] = round(float(np.std(values, ddof=1)), 2)
    return out


def _mean_degeneracy(predicted: dict[int, list[str]]) -> dict[str, float]:
    """`degeneracy` averaged over a model's seeds."""
    each = [degeneracy(predictions) for predictions in predicted.values()]
    return {key: round(float(np.mean([fig[key] for fig in each])), 2) for key in each[0]}
