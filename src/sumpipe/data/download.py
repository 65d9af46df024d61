"""The `download` stage: one corpus -> `{out_dir}/{train,valid,test}.parquet` + `stats.json`.

Columns: `id`, `source`, `reference` and, only when some example has several references (DUC),
`references` (list of all of them). Examples without a split of their own get the stable hash split
(`data.split_ratios`). `data.max_examples` keeps the examples whose id hashes lowest (a fixed,
order-independent sample, so the splits keep their proportions), in their original order.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from sumpipe.config import DataConfig
from sumpipe.data.datasets import Rows, load_dataset
from sumpipe.data.split import stable_split, unit_hash
from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import write_json, write_parquet
from sumpipe.names import SPLITS


def load_examples(cfg: DataConfig, key: str = "data") -> Rows:
    """Rows {id, source, reference, references, split (or None)} of `cfg.dataset`, and its stats.
    `key` names the config section in errors ("data", "crosseval.data")."""
    rows, info = load_dataset(cfg, key)
    if not rows:
        raise SumpipeError(f"{key}.dataset: {cfg.dataset}: no examples (empty data set)")
    return rows, info


def cap_examples(rows: list[dict], max_examples: int | None) -> list[dict]:
    """At most `max_examples` rows: those whose id hashes lowest, kept in their original order."""
    if max_examples is None or len(rows) <= max_examples:
        return rows
    ranked = sorted(range(len(rows)), key=lambda i: (unit_hash(rows[i]["id"], salt="cap:"), i))
    keep = sorted(ranked[:max_examples])
    return [rows[i] for i in keep]


def split_table(rows: list[dict], with_references: bool) -> pa.Table:
    """Arrow table with the raw-data schema (typed even when empty)."""
    columns = {
        "id": pa.array([r["id"] for r in rows], pa.string()),
        "source": pa.array([r["source"] for r in rows], pa.string()),
        "reference": pa.array([r["reference"] for r in rows], pa.string()),
    }
    if with_references:
        columns["references"] = pa.array([r.get("references") or [r["reference"]] for r in rows],
                                         pa.list_(pa.string()))
    return pa.table(columns)


def _mean_words(rows: list[dict], key: str) -> float:
    return round(sum(len(r[key].split()) for r in rows) / len(rows), 2) if rows else 0.0


def download(cfg: DataConfig, out_dir: Path) -> dict:
    """Build the raw splits of `cfg.dataset` in `out_dir`; return the stats also written there."""
    rows, info = load_examples(cfg)
    total = len(rows)
    rows = cap_examples(rows, cfg.max_examples)
    with_references = any(len(r.get("references") or []) > 1 for r in rows)

    by_split: dict[str, list[dict]] = {name: [] for name in SPLITS}
    for row in rows:
        split = row.get("split") or stable_split(row["id"], cfg.split_ratios)
        by_split[split].append(row)

    out_dir = Path(out_dir)
    for name, split_rows in by_split.items():
        write_parquet(split_table(split_rows, with_references), out_dir / f"{name}.parquet")
    stats = {
        "dataset": cfg.dataset,
        "examples": len(rows),
        "dropped_by_max_examples": total - len(rows),
        "counts": {name: len(split_rows) for name, split_rows in by_split.items()},
        "mean_source_words": {name: _mean_words(r, "source") for name, r in by_split.items()},
        "mean_reference_words": {name: _mean_words(r, "reference") for name, r in by_split.items()},
        "multiple_references": with_references,
        cfg.dataset: info,
    }
    write_json(stats, out_dir / "stats.json")
    return stats
