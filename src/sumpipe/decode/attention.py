"""The copy attention the decode stage keeps for the report's heat maps (Morozovskii 2022 Fig. 5.3).

The report shows `report.n_samples` examples of the decoded split, drawn with `evaluate.seed`, and
heat maps for the first `report.n_heatmaps` of them (`ReportExamples`). The decode stage computes the
attention of every summary it decodes; for those examples it keeps it, beside the predictions, so the
report draws without loading a model:

    predictions/<model>/<split>.attention.parquet   one row per example, in `ReportExamples.heatmaps` order
        id              string
        prediction      string                     the summary (text convention), as in <split>.parquet
        tokens          list<string>               its T words: the heat map's rows
        source_tokens   list<string>               the S tokens the model read: its columns
        attention       list<list<float>>          (T, S) copy attention; null: the family has none
        head_attention  list<list<list<float>>>    (H, T, S) each copy head's (the mean is `attention`);
                                                   null: a single attention (the RNN's)

The weights are the float32 values `sumpipe.decode.batches.summarize` returns, stored as float32. The
choice of examples lives here, below both stages, because both need it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sumpipe.errors import SumpipeError

F32 = pa.float32()
SCHEMA = pa.schema([
    ("id", pa.string()),
    ("prediction", pa.string()),
    ("tokens", pa.list_(pa.string())),
    ("source_tokens", pa.list_(pa.string())),
    ("attention", pa.list_(pa.list_(F32))),
    ("head_attention", pa.list_(pa.list_(pa.list_(F32)))),
])


def pick_examples(ids: Sequence[str], n: int, seed: int) -> list[str]:
    """n example ids drawn without replacement by a seeded Generator, in their original order."""
    if n <= 0 or not ids:
        return []
    rng = np.random.Generator(np.random.PCG64(seed))
    chosen = rng.choice(len(ids), size=min(n, len(ids)), replace=False)
    return [ids[i] for i in sorted(chosen)]


@dataclass(frozen=True)
class ReportExamples:
    """Which examples of a split the report shows: `n_samples` (`report.n_samples`) drawn with `seed`
    (`evaluate.seed`) get a sample-summary table, the first `n_heatmaps` of them (`report.n_heatmaps`)
    attention heat maps (drawn afresh when there are fewer samples than heat maps)."""

    n_samples: int
    n_heatmaps: int
    seed: int

    def samples(self, ids: Sequence[str]) -> list[str]:
        return pick_examples(ids, self.n_samples, self.seed)

    def heatmaps(self, ids: Sequence[str]) -> list[str]:
        samples = self.samples(ids)
        if len(samples) >= self.n_heatmaps:
            return samples[: self.n_heatmaps]
        return pick_examples(ids, self.n_heatmaps, self.seed)


@dataclass(frozen=True)
class KeptAttention:
    """One example's row of the attention file, the weights as float32 numpy arrays."""

    prediction: str
    tokens: list[str]
    source_tokens: list[str]
    attention: np.ndarray | None  # (T, S)
    head_attention: np.ndarray | None  # (H, T, S)


def attention_path(predictions_dir: str | os.PathLike, split: str) -> Path:
    """`<predictions_dir>/<split>.attention.parquet`."""
    return Path(predictions_dir) / f"{split}.attention.parquet"


def _nested(values: Any) -> list | None:
    return None if values is None else np.asarray(values, dtype=np.float32).tolist()


def attention_table(ids: Sequence[str], summaries: Sequence[Any]) -> pa.Table:
    """The file's table from `sumpipe.decode.batches.Decoded` objects decoded with details, one per id."""
    return pa.Table.from_pylist([
        {"id": i, "prediction": s.text, "tokens": list(s.tokens), "source_tokens": list(s.source_tokens),
         "attention": _nested(s.attention), "head_attention": _nested(s.head_attention)}
        for i, s in zip(ids, summaries)], schema=SCHEMA)


def read_attention(path: str | os.PathLike) -> dict[str, KeptAttention]:
    """id -> its kept attention; a file that is not one is a one-line SumpipeError naming it."""
    from sumpipe.io.atomic import read_table

    table = read_table(path)
    missing = sorted(set(SCHEMA.names) - set(table.column_names))
    if missing:
        raise SumpipeError(f"{path}: not an attention file (no column {missing[0]}; run `sumpipe decode` again)")

    def weights(value: Any) -> np.ndarray | None:
        return None if value is None else np.asarray(value, dtype=np.float32)

    return {row["id"]: KeptAttention(row["prediction"], row["tokens"], row["source_tokens"],
                                     weights(row["attention"]), weights(row["head_attention"]))
            for row in table.to_pylist()}
