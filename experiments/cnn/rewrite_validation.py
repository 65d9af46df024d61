"""Extract-then-rewrite on the 340 validation stories (README.md's log, "extract-then-rewrite, on
validation"), run in experiments/cnn after its data stages and the training of its models.

    python rewrite_validation.py params               # rewrite/params.yaml: the rewriter's workspace
    python rewrite_validation.py align                # rewrite/data/extracted/first60/{train,valid}.parquet
    nice sumpipe train --params rewrite/params.yaml --workers 1     # RW's seeds (rewrite/models/RW/seed-<s>)
    python rewrite_validation.py pipeline MODEL ...   # the experiment's MODEL, every seed, on the valid split
    python rewrite_validation.py extractive SYSTEM ...  # an extractive system on the valid split (its selection)
    python rewrite_validation.py rewrite SELECTION ... [rewriter=RW4]   # lead<k>[w<m>] or an extractive system's
                                                      # selection rewritten (by RW unless rewriter= says)
    python rewrite_validation.py table SYSTEM ...     # the table of docs/realtext.md (lead<k>, lead<k>cut<n>:
                                                      # computed baselines; else predictions-valid/SYSTEM)
    python rewrite_validation.py rewrites SELECTION+RW   # what RW does to each sentence (copies, truncations)
    python rewrite_validation.py read ID ...          # stories side by side (Lead-3, PG-cov, lead3+RW, reference)

The rewriter RW is trained by the project's `sumpipe train` on (story sentence -> highlight sentence) pairs
(`sumpipe.rewrite.align`): the pairs of the train stories but the last `HELD_OUT`, whose pairs are its
validation set (early stopping), so that the 340 validation stories, where it is measured, stay unseen.
Each selected sentence is rewritten by the decode stage (`decode_stage`, the experiment's decoding and its
guards at sentence lengths: `SENTENCE_DECODE`) and the rewrites are joined in story order
(`sumpipe.rewrite.compose`). Every system is scored as the evaluate stage scores experiments/cnn (its own
functions: ROUGE F1 with the stemmer, read quality with the raw texts, rare-word recall).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

SEEDS = (1, 2, 3)
WORK = Path("rewrite")                 # the rewriter's workspace (git-ignored)
PARAMS = WORK / "params.yaml"
VALID = "predictions-valid"            # the experiment's models and extractive systems on the valid split
HELD_OUT = 300                         # the last train stories: the rewriter's early-stopping pairs
SELECTION = "first60"                  # the rewriter's input selection: one sentence, cut at 60 tokens
# the experiment's decoding (params.yaml) at sentence lengths: a highlight sentence averages 13 tokens
SENTENCE_DECODE = {"split": "valid", "max_length": 40, "min_length": 1}


def write_params() -> None:
    """rewrite/params.yaml: experiments/cnn's params with the rewriter RW as the only model (PG-cov's recipe,
    See et al.: coverage after the first phase) at sentence lengths, trained on the aligned pairs."""
    params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
    params["paths"].update({key: str(WORK / value) for key, value in params["paths"].items()
                            if key in ("extracted", "models", "predictions", "scores", "reports", "metrics",
                                       "checkpoints", "timings", "crosseval")})
    params["paths"]["dvclive"] = str(WORK / "dvclive")
    params["extract"]["budgets"] = [{"method": "first", "tokens": 60}]
    params["model"].update(max_source_tokens=60, max_summary_tokens=30, vocab_size=5000)
    params["families"]["rnn"].update(vocab_size=5000, max_source_tokens=60, max_summary_tokens=30)
    recipe = {"batch_size": 32, "lr": 0.005, "epochs": 2, "label_smoothing": 0.0, "copy_attention_weight": 0.0}
    rewriter = {"family": "rnn", "input": SELECTION, "arch": {"coverage": True, "coverage_phase_steps": 100}}
    # RW: Gigaword's PG-cov epochs (2); RW4: 4 epochs, as RW's validation loss still fell after its second
    params["models"] = {"RW": {**rewriter, "train": recipe},
                        "RW4": {**rewriter, "arch": {**rewriter["arch"]}, "train": {**recipe, "epochs": 4}},
                        # the experiment's M1 (transformer, its train: recipe) as a sentence rewriter, 4 epochs
                        "RWT": {"family": "transformer", "input": SELECTION, "rarity": False, "train": {"epochs": 4}}}
    params["runs"] = {f"{model}-{s}": {"model": model, "seed": s} for model in params["models"] for s in SEEDS}
    params["decode"].update(SENTENCE_DECODE)
    PARAMS.parent.mkdir(exist_ok=True)
    PARAMS.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")


def align() -> None:
    from sumpipe.io.atomic import read_parquet, write_parquet
    from sumpipe.rewrite.align import align_frame

    train = read_parquet("data/processed/train.parquet")
    out = WORK / "data" / "extracted" / SELECTION
    for split, stories in (("train", train.iloc[:-HELD_OUT]), ("valid", train.iloc[-HELD_OUT:])):
        pairs = align_frame(stories)
        write_parquet(pairs, out / f"{split}.parquet")
        tokens = {column: pairs[column].str.split().str.len().mean() for column in ("source", "reference")}
        sys.stdout.write(f"{split}: {len(stories)} stories, {len(pairs)} pairs, mean recall "
                         f"{pairs['recall'].mean():.3f}, tokens: sentence {tokens['source']:.1f}, "
                         f"highlight {tokens['reference']:.1f}\n")


def valid_params(path: Path, **paths: str) -> Path:
    """experiments/cnn's params with the valid split decoded into predictions-valid/ (and `paths`)."""
    params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
    params["decode"]["split"] = "valid"
    params["paths"].update(predictions=VALID, timings=str(WORK / "timings-valid"), **paths)
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


def pipeline(models: list[str]) -> None:
    """Decode the experiment's trained MODELs, every seed, on the valid split (predictions-valid/)."""
    params = valid_params(Path("/tmp/rewrite-valid-params.yaml"))
    for model in models:
        for seed in SEEDS:
            subprocess.run(["nice", "sumpipe", "decode", "--model", model, "--train-seed", str(seed), "--params",
                           str(params)], check=True)


def extractive(systems: list[str]) -> None:
    """The experiment's extractive SYSTEMs on the valid split (predictions-valid/<system>/valid.parquet,
    with each story's `selected` sentences)."""
    params = valid_params(Path("/tmp/rewrite-valid-params.yaml"))
    for system in systems:
        subprocess.run(["nice", "sumpipe", "extractive", "--system", system, "--params", str(params)], check=True)


def selection_of(name: str, stories: pd.DataFrame) -> dict[str, list[int]]:
    """{story id: sentence indices}: `lead<k>` (the first k non-empty lines; lead3 as the evaluate stage's
    Lead-3), `lead<k>w<n>` (the first k lines of at least n words) or the `selected` sentences of an
    extractive system run by `extractive`."""
    from sumpipe.rewrite.compose import lead

    match = re.fullmatch(r"lead(\d+)(?:w(\d+))?", name)
    if match:
        k, least = int(match[1]), int(match[2] or 1)
        return {str(i): lead(source, k, least) for i, source in zip(stories["id"], stories["source"])}
    frame = pd.read_parquet(f"{VALID}/{name}/valid.parquet")
    return {str(i): [int(k) for k in chosen] for i, chosen in zip(frame["id"], frame["selected"])}


def rewrite(args: list[str]) -> None:
    """Each SELECTION's sentences of the valid stories rewritten by the rewriter's seeds (RW, or the model of
    a `rewriter=NAME` argument) and composed (predictions-valid/<selection>+<rewriter>/seed-<s>/valid.parquet:
    id, prediction, reference)."""
    rewriter = next((a.split("=", 1)[1] for a in args if a.startswith("rewriter=")), "RW")
    selections = [a for a in args if not a.startswith("rewriter=")]
    from sumpipe.config import load_params
    from sumpipe.decode.stage import decode_stage
    from sumpipe.io.atomic import write_parquet
    from sumpipe.rewrite.compose import compose, sentence_rows

    cfg = load_params(PARAMS).decode
    stories = pd.read_parquet("data/processed/valid.parquet")
    for name in selections:
        inputs = WORK / "inputs" / name
        rows = sentence_rows(stories, selection_of(name, stories))
        write_parquet(rows, inputs / SELECTION / "valid.parquet")
        for seed in SEEDS:
            rewritten = WORK / "predictions" / f"{name}+{rewriter}" / f"seed-{seed}"
            result = decode_stage(WORK / "models" / rewriter / f"seed-{seed}", inputs, rewritten, cfg)
            texts = compose(stories["id"].astype(str).tolist(), pd.read_parquet(rewritten / "valid.parquet"))
            write_parquet(pd.DataFrame({"id": stories["id"], "prediction": texts, "reference": stories["reference"]}),
                          Path(VALID) / f"{name}+{rewriter}" / f"seed-{seed}" / "valid.parquet")
            sys.stdout.write(f"{name}+{rewriter} seed {seed}: {len(rows)} sentences rewritten in "
                             f"{result.seconds:.1f} s\n")


def baseline(name: str) -> tuple[int, int, int | None] | None:
    """`lead<k>` (the first k non-empty sentences), `lead<k>w<m>` (of at least m words), either with `cut<n>`
    (each cut to its first n tokens, a "." added: what a rewriter that only truncates would write) ->
    (k, m, n or None); None for another name."""
    match = re.fullmatch(r"lead(\d+)(?:w(\d+))?(?:cut(\d+))?", name)
    return None if match is None else (int(match[1]), int(match[2] or 1), int(match[3]) if match[3] else None)


def lead_cut(source: str, k: int, least: int, cut: int | None) -> str:
    from sumpipe.rewrite.align import lines
    from sumpipe.rewrite.compose import lead

    sentences = [lines(source)[i] for i in lead(source, k, least)]
    if cut is None:
        return "\n".join(sentences)
    return "\n".join(" ".join(s.split()[:cut]) + ("" if len(s.split()) <= cut else " .") for s in sentences)


def systems_of(names: list[str]) -> tuple[dict[str, dict[int, pd.DataFrame]], list[str]]:
    """The systems of the table as the evaluate stage holds them ({name: {seed: id, prediction,
    references}}; Lead-3 computed as the evaluate stage does) and which of them are seeded."""
    from sumpipe.evaluate.stage import ONE_RUN, lead_sentences

    stories = pd.read_parquet("data/processed/valid.parquet")
    refs = {str(i): [r] for i, r in zip(stories["id"], stories["reference"])}
    lead = pd.DataFrame({"id": stories["id"].astype(str),
                         "prediction": [lead_sentences(source, 3) for source in stories["source"]]})
    systems = {"lead3": {ONE_RUN: lead}}
    seeded = []
    for name in names:
        folder = Path(VALID) / name
        if (spec := baseline(name)) is not None:
            k, least, cut = spec
            texts = [lead_cut(source, k, least, cut) for source in stories["source"]]
            systems[name] = {ONE_RUN: pd.DataFrame({"id": stories["id"].astype(str), "prediction": texts})}
        elif (folder / "valid.parquet").exists():
            systems[name] = {ONE_RUN: pd.read_parquet(folder / "valid.parquet")[["id", "prediction"]]}
        else:
            systems[name] = {s: pd.read_parquet(folder / f"seed-{s}" / "valid.parquet")[["id", "prediction"]]
                             for s in SEEDS if (folder / f"seed-{s}" / "valid.parquet").exists()}
            seeded.append(name)
    for runs in systems.values():
        for seed, df in runs.items():
            runs[seed] = df.assign(id=df["id"].astype(str), references=[refs[i] for i in df["id"].astype(str)])
    return systems, seeded


def table(names: list[str]) -> str:
    """One Markdown row per system and seed and each seeded system's mean and sd over seeds: ROUGE F1,
    rare-word recall, sentences, words, jammed pairs, repeated and unsupported words, fragments."""
    from sumpipe.config import load_params
    from sumpipe.evaluate.stage import rare_words_of, read_quality_of, score_systems

    params = load_params("params.yaml")
    systems, seeded = systems_of(names)
    scores = score_systems(systems, params.evaluate.use_stemmer, params.evaluate.protocol.references)
    quality = read_quality_of(params.paths, params.evaluate, systems, seeded, split="valid")
    rare, _ = rare_words_of(params.paths, params.evaluate, systems, seeded, split="valid")
    rows = []

    def figures(name: str, seed: int, read: dict[str, float]) -> dict[str, Any]:
        score, texts = scores[name][seed], systems[name][seed]["prediction"]
        rare_seed = rare[name]["seeds"][str(seed)] if name in seeded else rare[name]["recall"]
        return {"R-1": 100 * score["rouge1_fmeasure"].mean(), "R-2": 100 * score["rouge2_fmeasure"].mean(),
                "R-L": 100 * score["rougeL_fmeasure"].mean(), "R-Lsum": 100 * score["rougeLsum_fmeasure"].mean(),
                "rare %": rare_seed, "words": texts.str.split().str.len().mean(),
                "sentences": read["sentences_mean"], "jammed %": read["jammed_pairs"],
                "repeated %": read["repeated_words"], "unsupported %": read["unsupported_words"],
                "fragments %": read["fragment_rate"]}

    for name in ["lead3", *names]:
        read = quality["systems"][name]
        if name not in seeded:
            rows.append({"system": name, "seed": "-", **figures(name, 0, read)})
            continue
        runs = [figures(name, seed, read["seeds"][str(seed)]) for seed in systems[name]]
        rows += [{"system": name, "seed": str(seed), **run} for seed, run in zip(systems[name], runs)]
        frame = pd.DataFrame(runs)
        rows.append({"system": f"**{name}**", "seed": "mean", **frame.mean().to_dict()})
        if len(runs) > 1:
            rows.append({"system": f"**{name}**", "seed": "sd", **frame.std(ddof=1).to_dict()})
    refs = quality["references"]
    stories = pd.read_parquet("data/processed/valid.parquet")
    rows.append({"system": "references", "seed": "-", "words": stories["reference"].str.split().str.len().mean(),
                 "sentences": refs["sentences_mean"], "jammed %": refs["jammed_pairs"],
                 "repeated %": refs["repeated_words"], "unsupported %": refs["unsupported_words"],
                 "fragments %": refs["fragment_rate"]})
    return pd.DataFrame(rows).to_markdown(index=False, floatfmt=".2f")


def rewrites(system: str) -> str:
    """What the rewriter does to each sentence of `system` (`<selection>+<rewriter>`), per seed: words of the
    story sentence and of its rewrite, the share of rewrites that copy the sentence whole, that are a prefix
    of it (truncation: the rewrite's words, its final "." aside, are the sentence's first words), that end on
    a stop word before the "." (a clause cut in the middle), and of the rewrites' words those not in their
    sentence (new words)."""
    from sumpipe.evaluate.read_quality import stop_words
    from sumpipe.rewrite.align import lines

    selection = system.partition("+")[0]
    inputs = pd.read_parquet(WORK / "inputs" / selection / SELECTION / "valid.parquet").set_index("id")["source"]
    stops, rows = stop_words(), []
    for seed in SEEDS:
        out = pd.read_parquet(WORK / "predictions" / system / f"seed-{seed}" / "valid.parquet")
        counts = {"copy": 0, "prefix": 0, "stop end": 0, "new": 0, "words": 0, "source words": 0}
        for row, text in zip(out["id"], out["prediction"].fillna("")):
            source, words = inputs[row].split(), " ".join(lines(text)).split()
            body = words[:-1] if words and words[-1] == "." else words
            counts["copy"] += body == source[: len(source) - (source[-1:] == ["."])]
            counts["prefix"] += body == source[: len(body)]
            counts["stop end"] += bool(body) and body[-1] in stops
            counts["new"] += sum(w not in set(source) for w in words)
            counts["words"] += len(words)
            counts["source words"] += len(source)
        n = len(out)
        rows.append({"seed": seed, "sentence words": counts["source words"] / n, "rewrite words": counts["words"] / n,
                     "whole copy %": 100 * counts["copy"] / n, "prefix %": 100 * counts["prefix"] / n,
                     "ends on a stop word %": 100 * counts["stop end"] / n,
                     "new words %": 100 * counts["new"] / max(counts["words"], 1)})
    return pd.DataFrame(rows).to_markdown(index=False, floatfmt=".1f")


def read(ids: list[str], systems: list[str]) -> str:
    """The stories `ids` side by side: Lead-3, each of `systems` (name or name:seed), the reference."""
    stories = pd.read_parquet("data/processed/valid.parquet").set_index("id")
    out = []
    for story in ids:
        out.append(f"#### {story}\n\n- **Lead-3**: " + " / ".join(stories.loc[story, "source"].split("\n")[:3]))
        for system in systems:
            name, _, seed = system.partition(":")
            file = Path(VALID) / name / (f"seed-{seed}" if seed else "") / "valid.parquet"
            frame = pd.read_parquet(file).set_index("id")
            out.append(f"- **{system}**: " + " / ".join(str(frame.loc[story, "prediction"]).split("\n")))
        out.append("- **reference**: " + " / ".join(stories.loc[story, "reference"].split("\n")) + "\n")
    return "\n".join(out)


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    commands = {"pipeline": pipeline, "extractive": extractive, "rewrite": rewrite}
    if command == "params":
        write_params()
    elif command == "align":
        align()
    elif command in commands:
        commands[command](args)
    elif command == "table":
        sys.stdout.write(table(args) + "\n")
    elif command == "rewrites":
        sys.stdout.write(rewrites(args[0]) + "\n")
    elif command == "read":
        ids, _, systems = " ".join(args).partition(" -- ")
        sys.stdout.write(read(ids.split(), systems.split()) + "\n")
    else:
        raise SystemExit(f"unknown command {command!r}")
