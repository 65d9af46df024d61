"""The rare-words comparison on the validation split: do the pointer models copy the rare words they should?

    python experiments/rarewords/compare.py run SETTING MODEL SEED   # train, decode valid, write its figures
    python experiments/rarewords/compare.py table                    # results.md: mean ± sd over the seeds

settings.yaml (beside this file) names the settings, models and seeds. A run trains MODEL with SEED under
SETTING's keys (over the repository's params.yaml, on its `data/` artifacts; `dvc repro extract` first),
decodes the validation split with params.yaml's `decode:` settings and writes `runs/SETTING/MODEL-SEED.json`
(and the summaries beside it): ROUGE-1/2/L F1 x 100, rare-word recall (the share of the reference's
rare words, seen at most `evaluate.rare_word_max_count` times in training, that the summary holds;
`sumpipe.evaluate.rare_words`), the copy rate (% of summary tokens outside the model's vocabulary) and the
read-quality figures of the decoding guards (`sumpipe.studies.decoding.figures_of`). A run already done
is skipped, so the runs may go in any order, two at a time (`xargs -P 2`); a model folder already in
`runs/SETTING/models/MODEL/seed-SEED/` (copied from a pipeline run) is decoded without training. The table
puts the references' own figures and the one-sentence lead's beside the models'.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
TABLE_FIGURES = (("rouge1", "R-1"), ("rouge2", "R-2"), ("rougeL", "R-L"), ("rare_recall", "rare-word recall %"),
                 ("copy_rate", "copy rate %"), ("fragment_rate", "fragments %"), ("sentences_mean", "sentences"),
                 ("mean_words", "words"))


def settings() -> dict[str, Any]:
    return yaml.safe_load((HERE / "settings.yaml").read_text(encoding="utf-8"))


def _params(cfg: dict[str, Any], setting: str, out: Path) -> Any:
    """The repository's params with the setting's keys (and `common`'s) set; models under `out`."""
    from sumpipe.config import params_from_dict

    repo = (HERE / cfg["repo"]).resolve()
    raw = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    for layer in (cfg.get("common") or {}, cfg["settings"][setting] or {}):
        raw = _merged(raw, layer)
    paths = raw["paths"]
    for key in ("raw", "processed", "vocab", "extracted", "subword", "pretrain"):
        paths[key] = str(repo / paths[key])
    for key in ("models", "checkpoints", "timings"):
        paths[key] = str(out / key)
    return params_from_dict(raw)


def _merged(base: dict[str, Any], keys: dict[str, Any]) -> dict[str, Any]:
    """`base` with `keys` set, nested mappings merged key by key (`models: {PG-cov: {train: {...}}}`
    sets those train keys of PG-cov only)."""
    out = dict(base)
    for key, value in keys.items():
        out[key] = _merged(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def oov_share(texts: list[str], stoi: dict[str, int]) -> float:
    """% of the texts' tokens outside the vocabulary `stoi` (a token spelling a special is outside)."""
    from sumpipe.names import N_SPECIALS

    tokens = [t for text in texts for t in text.split()]
    outside = sum(1 for t in tokens if stoi.get(t, 0) < N_SPECIALS)
    return 100.0 * outside / max(len(tokens), 1)


class Split:
    """The validation split's texts the figures need, read once."""

    def __init__(self, params: Any, split: str) -> None:
        from sumpipe.evaluate.read_quality import name_dots
        from sumpipe.io.atomic import read_parquet
        from sumpipe.schemas import references_of
        from sumpipe.vocab.ngrams import WORDS_FILE

        self.params, self.split = params, split
        self.processed = read_parquet(Path(params.paths.processed) / f"{split}.parquet").set_index("id")
        self.raw = read_parquet(Path(params.paths.raw) / f"{split}.parquet").set_index("id")
        train = read_parquet(Path(params.paths.raw) / "train.parquet")
        self.corpus = name_dots("\n".join(f"{s}\n{refs[0] if len(refs) else ''}"
                                          for s, refs in zip(train["source"], references_of(train))))
        words = read_parquet(Path(params.paths.vocab) / WORDS_FILE)
        self.counts = dict(zip(words["token"], words["count"].astype(int)))
        vocab = read_parquet(Path(params.paths.vocab) / "vocab.parquet")  # the models' 2,000 words
        self.stoi = {t: int(i) for t, i in zip(vocab["token"], vocab["id"]) if i < params.model["vocab_size"]}

    def frame(self, selection: str) -> Any:
        from sumpipe.io.atomic import read_parquet

        return read_parquet(Path(self.params.paths.extracted) / selection / f"{self.split}.parquet")

    def rare_recall(self, texts: list[str], references: list[str]) -> float:
        from sumpipe.evaluate.rare_words import rare_word_recall

        recall = rare_word_recall(texts, references, self.counts, self.params.evaluate.rare_word_max_count)
        return 100.0 * float(np.nanmean(recall))


def run(setting: str, model_name: str, seed: int) -> Path:
    """Train, decode the split, write runs/SETTING/MODEL-SEED.json (skipped when it exists)."""
    import dataclasses
    import time

    from sumpipe.decode.batches import load_model, summarize
    from sumpipe.evaluate.rouge import FastRouge
    from sumpipe.io.atomic import write_json, write_text
    from sumpipe.studies.decoding import ROUGE_TYPES, figures_of
    from sumpipe.train.stage import resolve_inputs, train_model

    cfg = settings()
    out = HERE / cfg["out"] / setting
    result = out / f"{model_name}-{seed}.json"
    if result.exists():
        return result
    params = _params(cfg, setting, out)
    inputs = resolve_inputs(params, model_name, seed)
    trained = inputs.out_dir / "config.json"
    if trained.exists():  # a model trained elsewhere (copied in) is decoded as it is
        summary, seconds = json.loads(trained.read_text())["training"], None
    else:
        started = time.perf_counter()
        summary = train_model(inputs, resume=True, progress=False)
        seconds = round(time.perf_counter() - started, 1)
    model, vocab, card = load_model(inputs.out_dir)
    split = Split(params, cfg["split"])
    frame = split.frame(card.input)
    decode_cfg = dataclasses.replace(params.decode, device="cpu")
    texts = [s.text for s in summarize(model, vocab, card, frame["source"].tolist(), decode_cfg)]
    sources = [split.processed.loc[i, "source"] for i in frame["id"]]
    raw_sources = [split.raw.loc[i, "source"] for i in frame["id"]]
    references = frame["reference"].tolist()
    scorer = FastRouge(ROUGE_TYPES, params.evaluate.use_stemmer)
    figures = figures_of(texts, sources, references, raw_sources, split.corpus, scorer)
    figures |= {"rare_recall": split.rare_recall(texts, references),
                "copy_rate": oov_share(texts, vocab.stoi), "reference_copy_rate": oov_share(references, vocab.stoi),
                "train_seconds": seconds, "epochs": summary.get("epochs_completed")}
    write_text("\n".join(texts) + "\n", out / f"{model_name}-{seed}.txt")
    write_json(figures, result)
    return result


def table() -> str:
    """results.md: per setting and model, each figure's mean ± sd over the seeds done; the anchors."""
    from sumpipe.evaluate.rouge import FastRouge, score_pairs
    from sumpipe.evaluate.stage import lead_sentences
    from sumpipe.io.atomic import write_text
    from sumpipe.studies.decoding import reference_anchor

    cfg = settings()
    params = _params(cfg, next(iter(cfg["settings"])), HERE / cfg["out"])
    split = Split(params, cfg["split"])
    lines = [f"# The rare-word options, {cfg['split']} split (`python experiments/rarewords/compare.py table`)", "",
             "Mean ± sd over the seeds (n: seeds done); every run trained here on one torch thread. Copy rate: % of "
             "the summary tokens outside the model's 2,000-word vocabulary.", "",
             "| setting | model | n | " + " | ".join(label for _, label in TABLE_FIGURES) + " |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in TABLE_FIGURES) + " |"]
    ref_copy, copied = None, []
    for setting in cfg["settings"]:
        for model_name in cfg["models"]:
            folder = HERE / cfg["out"] / setting
            runs = [json.loads(p.read_text()) for p in sorted(folder.glob(f"{model_name}-*.json"))]
            copied += [f"{setting} {p.stem}" for p in sorted(folder.glob(f"{model_name}-*.json"))
                       if json.loads(p.read_text()).get("train_seconds") is None]
            if not runs:
                continue
            ref_copy = runs[0]["reference_copy_rate"]
            cells = []
            for key, _ in TABLE_FIGURES:
                values = np.array([r[key] for r in runs], dtype=float)
                sd = f" ± {values.std(ddof=1):.2f}" if len(values) > 1 else ""
                cells.append(f"{values.mean():.2f}{sd}")
            lines.append(f"| {setting} | {model_name} | {len(runs)} | " + " | ".join(cells) + " |")
    frame = split.frame(params.models[cfg["models"][0]].input)
    references = frame["reference"].tolist()
    sources = [split.processed.loc[i, "source"] for i in frame["id"]]
    lead = [lead_sentences(s, 1) for s in sources]
    scorer = FastRouge(("rouge1",), params.evaluate.use_stemmer)
    lead_r1 = 100 * float(score_pairs(lead, references, scorer=scorer)["rouge1_fmeasure"].mean())
    anchor = reference_anchor(split.processed, split.raw, split.corpus)
    lines.append(f"| *references* | | | | | | 100.00 | {ref_copy if ref_copy is not None else float('nan'):.2f} | "
                 f"{anchor['fragment_rate']:.2f} | {anchor['sentences_mean']:.2f} | {anchor['mean_words']:.2f} |")
    lines.append(f"| *lead (1 sentence)* | | | {lead_r1:.2f} | | | {split.rare_recall(lead, references):.2f} | "
                 f"{oov_share(lead, split.stoi):.2f} | | | |")
    lines += ["", f"Anchors on the same documents: the one-sentence lead R-1 {lead_r1:.2f}, rare-word recall "
              f"{split.rare_recall(lead, references):.2f} %; the models' input "
              f"({params.models[cfg['models'][0]].input}) "
              f"rare-word recall {split.rare_recall(frame['source'].tolist(), references):.2f} %; the references' "
              f"copy rate {ref_copy if ref_copy is not None else float('nan'):.2f} %.", ""]
    if copied:
        lines += ["Decoded from a model folder copied in, not trained by this script (a pipeline run's models, "
                  f"trained with that run's `train.threads`): {', '.join(copied)}.", ""]
    text = "\n".join(lines)
    write_text(text, HERE / "results.md")
    return text


def main(argv: list[str]) -> None:
    import torch

    torch.set_num_threads(1)
    if argv[:1] == ["run"] and len(argv) == 4:
        print(run(argv[1], argv[2], int(argv[3])))
    elif argv == ["table"]:
        print(table())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
