"""The DVC `crosseval` stage: trained models tested on another corpus (seed Table 5.22).

The thesis trains on CNN/DM, XSum or Gigaword and tests every model on DUC 2004 task 1 (four
references per document). Here `crosseval.data` names the other corpus exactly as the `data:`
section does and is read with the download stage's loaders; each source then goes through what
the model's own training data went through (`sumpipe.decode.batches.prepare_raw`: preprocessing, and the
model's input selection with the training n-gram table), is decoded with the `decode:` parameters,
and is scored against every reference, preprocessed the same way, keeping the best per ROUGE type
(as rouge-score's `score_multi`).

Beside ROUGE, each model's summaries of this unseen text are checked for degeneracy: % distinct
summaries, % with a word repeated back to back and mean length (`sumpipe.evaluate.abstractiveness`),
next to the corpus's reference lengths (10th-90th percentile) and its Lead-3 baseline.

Every seed of `train.seeds` of each model is tested; a model's figures are the mean over its seeds
(sd and every seed's value beside it, as in the evaluate stage). Baselines: the one-sentence lead and
Lead-k.

Outputs: `${paths.crosseval}/<model>.parquet` (id, source, seed, prediction, references, per-example
scores), `${paths.crosseval}/summary.json` (set-up, per-model means with intervals, degeneracy) and
`${paths.metrics}/crosseval.json` for `dvc metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sumpipe.config import CrossEvalConfig, DecodeConfig, EvaluateConfig, PathsConfig
from sumpipe.errors import SumpipeError
from sumpipe.evaluate.abstractiveness import abstractiveness
from sumpipe.evaluate.rouge import ROUGE_TYPES, FastRouge, score_pairs
from sumpipe.evaluate.stage import lead_sentences, setup_of
from sumpipe.evaluate.summary import summarize, summarize_seeds
from sumpipe.io.atomic import write_json, write_parquet
from sumpipe.names import seed_folder


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


def decode_corpus(model_dir: Path, sources: list[str], vocab_dir: str, decode_cfg: DecodeConfig) -> list[str]:
    """The model's summary of each raw source ("" where preprocessing leaves no words), decoded on
    the device `decode.device` asks for."""
    from sumpipe.decode import batches
    from sumpipe.device import resolve_device

    model, vocab, card = batches.load_model(model_dir, device=resolve_device(decode_cfg.device, "decode.device"))
    docs = [batches.prepare_raw(s, card, vocab_dir=vocab_dir) for s in sources]
    keep = [i for i, d in enumerate(docs) if batches.has_words(d)]
    summaries = batches.summarize(model, vocab, card, [docs[i] for i in keep], decode_cfg)
    out = [""] * len(docs)
    for i, s in zip(keep, summaries):
        out[i] = s.text
    return out


def degeneracy(summaries: list[str]) -> dict[str, float]:
    """% distinct summaries, % with a word repeated back to back, mean length in tokens."""
    figures = abstractiveness(summaries, [""] * len(summaries))
    return {key: figures[key] for key in ("distinct", "adjacent_repeat", "mean_length")}


@dataclass
class CrossEvalResult:
    summaries: dict[str, dict]  # "<model> (<corpus>)" -> ROUGE means and intervals
    notes: list[str] = field(default_factory=list)  # what the command should tell the user


def run_crosseval(paths: PathsConfig, cfg: CrossEvalConfig, decode_cfg: DecodeConfig,
                  eval_cfg: EvaluateConfig, seeds: list[int]) -> CrossEvalResult:
    """Decode and score the corpus with every seed of every configured model; write outputs; return the
    summaries (a model's: the mean over its seeds, as the evaluate stage's)."""
    from sumpipe.text.preprocess import preprocess_text

    runs = {name: {seed: Path(paths.models) / name / seed_folder(seed) for seed in seeds} for name in cfg.models}
    for name, folders in runs.items():
        missing = [seed for seed, folder in folders.items() if not folder.is_dir()]
        if missing:
            raise SumpipeError(f"crosseval.models: no trained model {name!r} seed {missing[0]} in "
                               f"{paths.models}/ (run `sumpipe train --model {name} --seed {missing[0]}`)")
    corpus = load_corpus(cfg)
    references = [[preprocess_text(r) for r in refs] for refs in corpus["references"]]
    setup = setup_of(eval_cfg)
    scorer = FastRouge(ROUGE_TYPES, eval_cfg.use_stemmer)
    out_dir = Path(paths.crosseval)
    summaries = {}
    notes = []
    for name, folders in runs.items():
        scored, frames, predicted = {}, [], {}
        for seed, folder in folders.items():
            predictions = decode_corpus(folder, corpus["source"].tolist(), paths.vocab, decode_cfg)
            empty = sum(1 for p in predictions if not p)
            if empty:
                notes.append(f"{name} seed {seed}: {empty} sources had no words left after preprocessing (scored 0)")
            scores = score_pairs(predictions, references, scorer=scorer)
            scored[seed] = pd.concat([corpus[["id"]].reset_index(drop=True), scores], axis=1)
            frames.append(pd.concat([corpus[["id", "source"]].reset_index(drop=True),
                                     pd.DataFrame({"seed": seed, "prediction": predictions, "references": references}),
                                     scores], axis=1))
            predicted[seed] = predictions
        write_parquet(pd.concat(frames, ignore_index=True), out_dir / f"{name}.parquet")
        summaries[f"{name} ({cfg.name})"] = {**summarize_seeds(scored, setup), **_mean_degeneracy(predicted)}
    lead_k = sorted({1, eval_cfg.lead_sentences})  # the one-sentence lead and Lead-k
    for k in lead_k:
        lead = [lead_sentences(preprocess_text(s), k) for s in corpus["source"]]
        summaries[f"lead{k} ({cfg.name})"] = {
            **summarize(score_pairs(lead, references, scorer=scorer), setup), **degeneracy(lead)}
    n_refs = sorted({len(r) for r in references})
    note = (f"{'/'.join(map(str, n_refs))} reference(s) per example; with several, the best per ROUGE type "
            "(rouge-score's score_multi).")
    lengths = [len(refs[0].split()) for refs in references]
    band = {"p10": float(np.percentile(lengths, 10)), "p90": float(np.percentile(lengths, 90))}
    write_json({"corpus": cfg.name, "split": cfg.split, "models": cfg.models, "seeds": seeds,
                "config": setup.as_dict(), "references_note": note, "reference_length": band,
                "systems": summaries}, out_dir / "summary.json")
    write_json(summaries, Path(paths.metrics) / "crosseval.json")
    return CrossEvalResult(summaries, notes)


def _mean_degeneracy(predicted: dict[int, list[str]]) -> dict[str, float]:
    """`degeneracy` averaged over a model's seeds."""
    each = [degeneracy(predictions) for predictions in predicted.values()]
    return {key: round(float(np.mean([fig[key] for fig in each])), 2) for key in each[0]}
