"""The summaries of the first four validation stories by each model of this folder (seed 1), under the
decoding settings of decoding.yaml, beside the highlights: `python quotes.py [model ...]` in this folder
after training (../README.md's log, "news in sentences"). Prints markdown."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from sumpipe.config import load_params
from sumpipe.decode.batches import load_model, summarize
from sumpipe.io.atomic import read_parquet
from sumpipe.studies.decoding import DecodingSweep, setting_configs
from sumpipe.validation import from_dict

STORIES = 4


def main(models: list[str]) -> None:
    params = load_params(Path("params.yaml"))
    sweep = from_dict(DecodingSweep, yaml.safe_load(Path("decoding.yaml").read_text(encoding="utf-8")))
    configs = setting_configs(sweep, params.decode)
    frame = read_parquet(Path(params.paths.extracted) / "first400" / "valid.parquet").head(STORIES)
    outputs = {}
    for name in models:
        model, vocab, card = load_model(Path(params.paths.models) / name / "seed-1")
        for setting, cfg in configs.items():
            outputs[name, setting] = [s.text for s in summarize(model, vocab, card, frame["source"].tolist(), cfg)]
    for i, (story, reference) in enumerate(zip(frame["id"], frame["reference"])):
        print(f"**Valid story {i + 1}** (`{story}`). Highlights: " + " / ".join(reference.split("\n")) + "\n")
        for (name, setting), texts in outputs.items():
            print(f"- {name}, `{setting}`: " + " / ".join(texts[i].split("\n")))
        print()


if __name__ == "__main__":
    main(sys.argv[1:] or ["M1", "M1-ends"])
