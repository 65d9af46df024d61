"""CNN/DailyMail, XSum and Gigaword through Hugging Face `datasets` (optional: `sumpipe[hf]`).

Needs the package and a network connection (or a warm Hugging Face cache). Without either, the
error says how to get the same result offline: download the files and use `data.dataset: local`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sumpipe.config import DataConfig
from sumpipe.data.datasets import DATASETS, Dataset, Lengths, NoOptions, Rows
from sumpipe.data.split import normalize_split
from sumpipe.errors import SumpipeError


@dataclass(frozen=True)
class HubCorpus:
    repo: str
    config: str | None
    source: str  # column names in the hub data set
    reference: str


OFFLINE_HINT = "or, offline, set data.dataset: local and data.path: a JSONL/CSV/Parquet file or folder"


def load_hub(corpus: HubCorpus, cfg: DataConfig, options: NoOptions) -> Rows:
    """All splits of `corpus` as rows {id, source, reference, references, split}, and stats; ids and
    messages name it `cfg.dataset`."""
    name = cfg.dataset
    try:
        import datasets
    except ImportError:
        raise SumpipeError(
            f"data.dataset: {name} needs the Hugging Face `datasets` package: pip install 'sumpipe[hf]', "
            + OFFLINE_HINT
        ) from None
    try:
        parts = datasets.load_dataset(corpus.repo, corpus.config)
    except Exception as exc:  # network, hub and cache failures all end the same way for the user
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SumpipeError(
            f"data.dataset: {name}: could not load {corpus.repo} ({type(exc).__name__}: {detail}); "
            + OFFLINE_HINT
        ) from None

    rows: list[dict] = []
    for split_name in sorted(parts):
        part = parts[split_name]
        split = normalize_split(split_name, f"{corpus.repo} split")
        missing = [c for c in (corpus.source, corpus.reference) if c not in part.column_names]
        if missing:
            raise SumpipeError(f"{corpus.repo}: split {split_name} has no column {missing[0]!r}")
        sources, references = part[corpus.source], part[corpus.reference]
        ids = part["id"] if "id" in part.column_names else [f"{name}-{split}-{i:07d}" for i in range(len(sources))]
        for example_id, source, reference in zip(ids, sources, references):
            rows.append({"id": str(example_id), "source": (source or "").strip(),
                         "reference": (reference or "").strip(), "references": [], "split": split})
    kept = [r for r in rows if r["source"] and r["reference"]]
    return kept, {"repo": corpus.repo, "config": corpus.config, "rows": len(rows),
                  "dropped_empty": len(rows) - len(kept)}


def hub_dataset(corpus: HubCorpus, lengths: Lengths, aliases: tuple[str, ...] = ()) -> Dataset:
    """The registry entry of a hub corpus (its examples' ids start with the name it is registered under)."""
    return Dataset(load=functools.partial(load_hub, corpus), lengths=lengths, aliases=aliases)


# Lengths: Morozovskii 2022 Table 4.3; DUC 2004, the Gigaword models' test set, shares Gigaword's 25.
DATASETS.register("cnn_dailymail", hub_dataset(HubCorpus("abisee/cnn_dailymail", "3.0.0", "article", "highlights"),
                                               Lengths(max_summary=120), aliases=("cnndm",)))
DATASETS.register("xsum", hub_dataset(HubCorpus("EdinburghNLP/xsum", None, "document", "summary"),
                                      Lengths(max_summary=30)))
DATASETS.register("gigaword", hub_dataset(HubCorpus("Harvard/gigaword", None, "document", "summary"),
                                          Lengths(max_summary=25), aliases=("duc", "duc2004")))
