"""Read them: ten test stories, every model's summary (seed 1) beside the highlights, and a model from before
the sentence ends decoded on the same stories. `python stories.py [--before FOLDER]` in this folder after
`dvc repro`; prints markdown (README.md's log, "news in sentences").

The stories: the five the report samples (`reports/report.md`, drawn with the evaluate seed; the report of
the run before this one shows every model of that run on them) and the first five of the test split in file
order. `--before` names a trained model folder (e.g. `sentences/models/M1/seed-1`: M1 without sentence ends,
trained as this experiment trains, one thread) decoded here with this folder's `decode:` settings.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sumpipe.config import load_params
from sumpipe.decode.batches import load_model, summarize
from sumpipe.io.atomic import read_parquet

REPORT_STORIES = ["cnn-1223", "cnn-2632", "cnn-6837", "cnn-6964", "cnn-6978"]
FIRST_STORIES = 5


def one_line(text: str) -> str:
    """A summary or the highlights on one line, " / " where a line (a sentence) ends."""
    return " / ".join(line.strip() for line in text.split("\n") if line.strip())


def main(before: Path | None) -> None:
    params = load_params(Path("params.yaml"))
    split = params.decode.split
    sources = read_parquet(Path(params.paths.extracted) / "first400" / f"{split}.parquet").set_index("id")
    ids = REPORT_STORIES + [i for i in sources.index if i not in REPORT_STORIES][:FIRST_STORIES]
    summaries = {}
    for name in params.models:
        frame = read_parquet(Path(params.paths.predictions) / name / "seed-1" / f"{split}.parquet").set_index("id")
        summaries[name] = frame["prediction"]
    if before is not None:
        model, vocab, card = load_model(before)
        texts = summarize(model, vocab, card, sources.loc[ids, "source"].tolist(), params.decode)
        summaries[f"before: {before.parent.name} {before.name}"] = dict(zip(ids, (t.text for t in texts)))
    for story in ids:
        print(f"**`{story}`**. Highlights: {one_line(sources.loc[story, 'reference'])}\n")
        for name, texts in summaries.items():
            print(f"- {name}: {one_line(texts[story])}")
        print()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a model folder from before (decoded on the same stories)")
    main(parser.parse_args().before)
