"""The headline decoding's validation runs and table (the README's log: "length control, headlines to a
75-byte budget", and "headlines that read"), run in experiments/gigaword after its data stages and the
training commands of that section (or `dvc repro train`, with `params current`).

    python length_validation.py params     # length-params.yaml: params.yaml + M1-len, PG-cov-len, *-lendrop
    python length_validation.py params current   # length-params.yaml: params.yaml as it is (its own models)
    python length_validation.py params current M1-d128=M1:d_model=128,d_ff=512 ...   # and size variants
    python length_validation.py run VARIANT MODEL [duc.KEY=VALUE ...] [giga.KEY=VALUE ...]
    python length_validation.py table MODEL:VARIANT ...

`run` decodes the model's 3 seeds on the Gigaword validation pairs (`decode.split: valid`, into
predictions-valid-VARIANT/) and on the DUC 2003 half held out for the choice (the documents whose stable id
hash falls in `valid` under ratios 0 / 0.5 / 0.5, 325 of 624; the other 299 are the test half), scored by
the crosseval stage with the DUC protocol (into crosseval-valid-VARIANT/); `duc.` and `giga.` keys are
`decode:` keys for each (e.g. duc.target_length=75 giga.target_length=48 duc.block_ngram_repeat=1).
A variant `NAME=MODEL:KEY=VALUE,...` is MODEL with those `arch` keys and its own runs (seeds 1-3), trained
with `sumpipe train --model NAME --params length-params.yaml` into models/NAME (delete it after the study:
`models/` is the train stage's output).
`table` prints one Markdown row per model, variant and seed and their mean: R-1/R-2/R-L F1 on Gigaword
valid, words and bytes per headline, unknown words (`duc_read.unknown_words`: in neither the training text
nor the document), the read quality of `sumpipe.evaluate.read_quality` (content words repeated, fragments,
a word twice in a row); on DUC, R-1/R-2 recall at 75 bytes (four references averaged, as the crosseval
stage scores them), words, the unknown words (a last word the 75-byte cut reached left out) and the same
read quality of the 75-byte headlines; `jam`, the jammed pairs (adjacent content words the source never writes
side by side), is the grammar guard. A first row gives the references' own read quality.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from duc_read import training_words, unknown_words

from sumpipe.evaluate.read_quality import read_quality
from sumpipe.evaluate.rouge import cut_bytes, score_pairs

SEEDS = (1, 2, 3)
PARAMS = "length-params.yaml"
# The experiment's params as the choice was made on them: the commit before params.yaml took the chosen
# settings (length control, no token twice), so that `base` is still the model and decoding before issue 54
CHOSEN_ON = "6060005~1"


def write_params() -> None:
    before = subprocess.run(["git", "show", f"{CHOSEN_ON}:experiments/gigaword/params.yaml"], check=True,
                            capture_output=True, text=True).stdout
    params = yaml.safe_load(before)
    models = params["models"]
    models["M1-len"] = {**models["M1"], "arch": {"length_control": "bytes"}}
    models["PG-cov-len"] = {**models["PG-cov"], "arch": {**models["PG-cov"]["arch"], "length_control": "bytes"}}
    models["M1-lendrop"] = {**models["M1"], "arch": {"length_control": "bytes", "length_dropout": 0.25}}
    models["PG-cov-lendrop"] = {**models["PG-cov"], "arch": {**models["PG-cov"]["arch"], "length_control": "bytes",
                                                             "length_dropout": 0.25}}
    Path(PARAMS).write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")


def add_variants(params: dict[str, Any], variants: list[str]) -> None:
    """Each `NAME=MODEL:KEY=VALUE,...`: MODEL's entry with those arch keys over its own, and a run per seed."""
    for variant in variants:
        name, _, spec = variant.partition("=")
        model, _, settings = spec.partition(":")
        entry = params["models"][model]
        arch = {**entry.get("arch", {}), **{k: value(v) for k, v in (s.split("=", 1) for s in settings.split(","))}}
        params["models"][name] = {**entry, "arch": arch}
        params["runs"].update({f"{name}-{seed}": {"model": name, "seed": seed} for seed in SEEDS})


def value(text: str) -> Any:
    return yaml.safe_load(text)


def run(variant: str, model: str, settings: list[str]) -> None:
    params = yaml.safe_load(Path(PARAMS).read_text(encoding="utf-8"))
    params["models"] = {model: params["models"][model]}
    params["ensembles"] = {}
    if "runs" in params:  # the pool's runs (params.yaml since the experiment trains through it): this model's
        params["runs"] = {name: run for name, run in params["runs"].items() if run["model"] == model}
    duc = {k[4:]: value(v) for k, v in (s.split("=", 1) for s in settings) if k.startswith("duc.")}
    giga = {k[5:]: value(v) for k, v in (s.split("=", 1) for s in settings) if k.startswith("giga.")}
    params["decode"] = {**params["decode"], "split": "valid", **giga}
    params["paths"].update(predictions=f"predictions-valid-{variant}", crosseval=f"crosseval-valid-{variant}",
                           metrics=f"metrics-valid-{variant}", timings=f"timings-valid-{variant}")
    params["crosseval"].update(models=[model], ensembles=[], split="valid", name="duc2003-valid", decode=duc)
    params["crosseval"]["data"] = {**params["crosseval"]["data"], "options": {"local": {"resplit": ["test"]}},
                                   "split_ratios": {"train": 0.0, "valid": 0.5, "test": 0.5}}
    path = Path(f"/tmp/length-valid-{variant}-{model}.yaml")
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    for seed in SEEDS:
        subprocess.run(["nice", "sumpipe", "decode", "--model", model, "--train-seed", str(seed), "--params",
                        str(path)], check=True)
    subprocess.run(["nice", "sumpipe", "crosseval", "--params", str(path)], check=True)


def words_and_bytes(texts: list[str]) -> tuple[float, float]:
    return (sum(len(t.split()) for t in texts) / len(texts),
            sum(len(" ".join(t.split()).encode()) for t in texts) / len(texts))


def quality(texts: list[str], sources: list[str], references: list[str]) -> dict[str, float]:
    figures = read_quality(texts, sources, references)
    return {"rep": figures["repeated_words"], "frag": figures["fragment_rate"], "adj": figures["adjacent_repeat"],
            "jam": figures["jammed_pairs"]}


def gigaword(folder: str, model: str, seed: int, sources: pd.Series) -> dict[str, float]:
    frame = pd.read_parquet(f"{folder}/{model}/seed-{seed}/valid.parquet")
    texts, refs = frame["prediction"].tolist(), frame["reference"].tolist()
    scores = score_pairs(texts, refs, rouge_types=("rouge1", "rouge2", "rougeL"))
    words, size = words_and_bytes(texts)
    own = sources.loc[frame["id"]].tolist()
    return {"R-1": 100 * scores["rouge1_fmeasure"].mean(), "R-2": 100 * scores["rouge2_fmeasure"].mean(),
            "R-L": 100 * scores["rougeL_fmeasure"].mean(), "words": words, "bytes": size,
            "unk": unknown_words(texts, own, training_words()), **quality(texts, own, refs)}


def duc(folder: str, model: str, seed: int) -> dict[str, float]:
    frame = pd.read_parquet(f"{folder}/{model}.parquet")
    frame = frame[frame["seed"] == seed]
    texts = frame["prediction"].tolist()
    words, _ = words_and_bytes(texts)
    out = {"DUC R-1": 100 * frame["rouge1_recall"].mean(), "DUC R-2": 100 * frame["rouge2_recall"].mean(),
           "DUC R-L": 100 * frame["rougeL_recall"].mean(), "DUC words": words}
    first_refs = [refs[0] for refs in frame["references"]]
    out["DUC unk"] = unknown_words(texts, frame["source"].tolist(), training_words(), cut_at=75)
    return {**out, **{f"DUC {k}": v for k, v in quality(texts, frame["source"].tolist(), first_refs).items()}}



def references(folder: str, model: str) -> dict[str, Any]:
    """The read quality of the references, the guard's yardstick: Gigaword's validation headlines, and on DUC
    the first of each document's four, cut to 75 bytes as the systems' headlines are."""
    giga = pd.read_parquet("data/extracted/first50/valid.parquet")
    refs, sources = giga["reference"].tolist(), giga["source"].tolist()
    frame = pd.read_parquet(f"{folder}/{model}.parquet")
    frame = frame[frame["seed"] == frame["seed"].min()]
    duc_refs = [cut_bytes(" ".join(r[0].split()), 75) for r in frame["references"]]
    words, _ = words_and_bytes(refs)
    duc_words, _ = words_and_bytes(duc_refs)
    return {"model": "references", "variant": "", "seed": "", "words": words, **quality(refs, sources, refs),
            "DUC words": duc_words,
            **{f"DUC {k}": v for k, v in quality(duc_refs, frame["source"].tolist(), duc_refs).items()}}


def table(systems: list[str]) -> str:
    sources = pd.read_parquet("data/extracted/first50/valid.parquet").set_index("id")["source"]
    model, _, variant = systems[0].partition(":")
    rows = [references(f"crosseval-valid-{variant}", model)]
    for system in systems:
        model, _, variant = system.partition(":")
        runs = [{"model": model, "variant": variant, "seed": str(s),
                 **gigaword(f"predictions-valid-{variant}", model, s, sources),
                 **duc(f"crosseval-valid-{variant}", model, s)} for s in SEEDS]
        rows += runs
        mean = pd.DataFrame(runs).drop(columns=["model", "variant", "seed"]).mean()
        rows.append({"model": f"**{model}**", "variant": f"**{variant}**", "seed": "mean", **mean.to_dict()})
    return pd.DataFrame(rows).to_markdown(index=False, floatfmt=".2f")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "params" and args[:1] == ["current"]:  # choices made on the pipeline's own models
        current = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
        add_variants(current, args[1:])
        Path(PARAMS).write_text(yaml.safe_dump(current, sort_keys=False), encoding="utf-8")
    elif command == "params":
        write_params()
    elif command == "run":
        run(args[0], args[1], args[2:])
    else:
        sys.stdout.write(table(args) + "\n")
